// Part 4: plots (kind "plot"): series over an x axis (numeric, log 2 or named), lines with their dashes and
// point shapes or vertical bars; the point nearest the pointer (or the bar under it) says its tooltip.
// --- plots (charts.plot.PlotCanvas): lines and vertical bars over an x axis ---
const NEAREST = 16;

function legendRows(d, W, g) {  // the series' legend entries, placed in rows (above: one per row)
  const named = d.series.filter((s) => s.name), out = [];
  g.font = "12px " + d.font;
  let x = 0, row = 0;
  for (const s of named) {
    const w = 34 + Math.min(260, g.measureText(s.name).width) + 16;
    if (d.legend_top ? out.length : x + w > W && x > 0) { x = 0; row += 1; }
    out.push({ s, x, row });
    x += w;
  }
  return { entries: out, rows: out.length ? row + 1 : 0 };
}

function plotLayout(d, W, g) {
  g.font = "11px " + d.font;
  const tickW = Math.max(...d.y_ticks.map((t) => g.measureText(num(t)).width));
  const leg = legendRows(d, W, g), legH = leg.rows * 20;
  const left = (d.y_title ? 20 : 0) + tickW + 8, right = W - PAD - 12;
  const top = titleHeight(g, d, W, 4) + (d.legend_top ? legH + 4 : 0) + 14, bottom = top + d.height;
  const [x0, x1] = d.x_domain, [y0, y1] = d.y_domain;
  const lx = (v) => (d.x_log ? Math.log2(v) : v);
  const x = (v) => left + ((lx(v) - lx(x0)) / (lx(x1) - lx(x0) || 1)) * (right - left);
  const y = (v) => bottom - ((v - y0) / (y1 - y0 || 1)) * (bottom - top);
  const legendTop = d.legend_top ? top - 14 - legH - 4 : bottom + 20 + (d.x_title ? 20 : 0) + 6;
  return { left, right, top, bottom, x, y, leg, legendTop, H: d.legend_top ? bottom + 44 : legendTop + legH + 2 };
}

function symbol(g, shape, x, y, r) {  // a point's symbol, filled (Vega's shapes, so that series stay apart in grey)
  g.beginPath();
  if (shape === "square") g.rect(x - r, y - r, 2 * r, 2 * r);
  else if (shape === "diamond") { g.moveTo(x, y - r * 1.3); g.lineTo(x + r, y); g.lineTo(x, y + r * 1.3); g.lineTo(x - r, y); }
  else if (shape.startsWith("triangle")) {
    const turn = { "triangle-up": 0, "triangle-right": 0.5, "triangle-down": 1, "triangle-left": 1.5 }[shape] * Math.PI;
    for (let k = 0; k < 3; k++) {
      const a = turn - Math.PI / 2 + (k * 2 * Math.PI) / 3;
      g[k ? "lineTo" : "moveTo"](x + 1.3 * r * Math.cos(a), y + 1.3 * r * Math.sin(a));
    }
  } else if (shape === "cross") {
    const a = r * 0.4;
    g.moveTo(x - a, y - r); g.lineTo(x + a, y - r); g.lineTo(x + a, y - a); g.lineTo(x + r, y - a); g.lineTo(x + r, y + a);
    g.lineTo(x + a, y + a); g.lineTo(x + a, y + r); g.lineTo(x - a, y + r); g.lineTo(x - a, y + a); g.lineTo(x - r, y + a);
    g.lineTo(x - r, y - a); g.lineTo(x - a, y - a);
  } else g.arc(x, y, r, 0, 2 * Math.PI);
  g.closePath(); g.fill();
}

function drawPlot(box) {
  const { d, c, g, ink, W } = start(box);
  const L = plotLayout(d, W, g);
  sized(c, g, d, W, L.H, ink);
  g.font = "11px " + d.font; g.lineWidth = 1;
  g.textAlign = "right";
  for (const t of d.y_ticks) {  // gridlines and labels of the y axis
    const yy = Math.round(L.y(t)) + 0.5;
    g.strokeStyle = "rgba(128,128,128,0.25)"; g.beginPath(); g.moveTo(L.left, yy); g.lineTo(L.right, yy); g.stroke();
    g.fillStyle = ink; g.fillText(num(t), L.left - 6, yy);
  }
  g.textAlign = "center";
  const names = d.x_names.length, every = Math.ceil(d.x_ticks.length / Math.max(1, Math.floor((L.right - L.left) / 34)));
  d.x_ticks.forEach((t, k) => {
    if (k % every) return;
    const xx = Math.round(L.x(t)) + 0.5;
    if (!names) { g.strokeStyle = "rgba(128,128,128,0.25)"; g.beginPath(); g.moveTo(xx, L.top); g.lineTo(xx, L.bottom); g.stroke(); }
    g.fillStyle = ink; g.fillText(names ? d.x_names[k] : num(t), xx, L.bottom + 10);
  });
  g.font = "600 12px " + d.font;
  if (d.x_title) g.fillText(fit(g, d.x_title, L.right - L.left), (L.left + L.right) / 2, L.bottom + 30);
  if (d.y_title) {
    g.save(); g.translate(8, (L.top + L.bottom) / 2); g.rotate(-Math.PI / 2);
    g.fillText(fit(g, d.y_title, L.bottom - L.top), 0, 0); g.restore();
  }
  const band = names ? (L.right - L.left) / names : 0;
  for (const s of d.series) {
    const colourOf = (i) => s.point_colours[i] || s.colour;
    if (s.mark === "bar") {
      s.xs.forEach((xv, i) => {
        const top = L.y(Math.max(0, s.ys[i])), base = L.y(Math.min(0, s.ys[i]));
        g.fillStyle = colourOf(i); g.fillRect(L.x(xv) - band * 0.45, top, band * 0.9, Math.max(1, base - top));
      });
    } else {
      g.strokeStyle = s.colour; g.lineWidth = 2; g.setLineDash(s.dash);
      g.beginPath();
      s.xs.forEach((xv, i) => g[i ? "lineTo" : "moveTo"](L.x(xv), L.y(s.ys[i])));
      g.stroke(); g.setLineDash([]);
      if (s.shape) s.xs.forEach((xv, i) => { g.fillStyle = colourOf(i); symbol(g, s.shape, L.x(xv), L.y(s.ys[i]), 4); });
    }
    g.fillStyle = ink; g.font = "10px " + d.font; g.textAlign = "center";
    s.labels.forEach((text, i) => g.fillText(text, L.x(s.xs[i]), L.y(Math.max(0, s.ys[i])) - 7));
  }
  g.font = "12px " + d.font; g.textAlign = "left";
  for (const { s, x, row } of L.leg.entries) {  // a short stretch of each line, in its dash, and its name
    const yy = L.legendTop + row * 20 + 10;
    g.strokeStyle = s.colour; g.lineWidth = 3; g.setLineDash(s.dash);
    g.beginPath(); g.moveTo(x, yy); g.lineTo(x + 26, yy); g.stroke(); g.setLineDash([]);
    if (s.shape) { g.fillStyle = s.colour; symbol(g, s.shape, x + 13, yy, 4); }
    g.fillStyle = ink; g.fillText(fit(g, s.name, 260), x + 34, yy);
  }
  box._layout = L; box._w = W;
  c.dataset.drawn = d.digest;
}

function plotHit(box, ex, ey) {  // the bar under a point, else the point nearest it (within NEAREST px): [series, i]
  const d = box._data, L = box._layout;
  if (!L) return null;
  let best = null, bestD = NEAREST;
  d.series.forEach((s, j) => s.xs.forEach((xv, i) => {
    const px = L.x(xv), py = L.y(s.ys[i]);
    if (s.mark === "bar") {
      const half = ((L.right - L.left) / d.x_names.length) * 0.45;
      if (Math.abs(ex - px) <= half && ey >= Math.min(py, L.y(0)) - 4 && ey <= Math.max(py, L.y(0))) { best = [j, i]; bestD = 0; }
      return;
    }
    const dist = Math.hypot(ex - px, ey - py);
    if (dist <= bestD) { bestD = dist; best = [j, i]; }  // a tie: the later series, drawn on top
  }));
  return best;
}

function plotTip(box, e) {
  const rect = box._canvas.getBoundingClientRect(), ex = e.clientX - rect.left, ey = e.clientY - rect.top;
  const hit = plotHit(box, ex, ey);
  if (!hit) { box._tip.style.display = "none"; return; }
  place(box, box._data.series[hit[0]].tips[hit[1]], ex, ey);
}
