// MHA Lab's canvas charts, part 1 of 5 (ui.canvas joins the parts in order: matrix, lines, bars, plot, mount).
// The shared drawing helpers and the matrix charts (charts.matrix.MatrixCanvas): the server sends every cell's
// colour and value; this paints them on one canvas with the chart's title, axes, legend and a tooltip per cell
// (mouse and touch).
const GAP = 12, PAD = 4, LABEL_MAX = 70, MIN_PANEL = 96, LATTICE_GAP = 4;

function bytes(b64) {
  const s = atob(b64), out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function decode(d) {  // each panel's picture (one pixel per cell) and values, once per data
  return d.panels.map((p) => {
    const px = document.createElement("canvas");
    px.width = p.n_cols; px.height = p.n_rows;
    const rgba = bytes(p.rgba);
    px.getContext("2d").putImageData(new ImageData(new Uint8ClampedArray(rgba.buffer), p.n_cols, p.n_rows), 0, 0);
    return { px, values: new Float32Array(bytes(p.values).buffer), n: p.n_rows, m: p.n_cols, title: p.title,
      notes: p.note_of ? bytes(p.note_of) : null };
  });
}

function fit(g, text, width) {  // the label cut to width, with an ellipsis
  if (g.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && g.measureText(s + "…").width > width) s = s.slice(0, -1);
  return s + "…";
}

function num(v) {
  if (!Number.isFinite(v)) return "—";
  const a = Math.abs(v);
  if (Number.isInteger(v) && a >= 1000 && a < 1e9) return v.toLocaleString("en-US");  // 1,024: an axis's tokens
  return a !== 0 && (a < 0.01 || a >= 1000) ? v.toPrecision(2) : String(Number(v.toFixed(2)));
}

function latticeLayout(d, panels, W, g) {  // small panels in rows (layers) and columns (heads), labelled once
  g.font = "11px " + d.font;
  const [nr, nc] = d.lattice;
  const left = (d.lattice_row_title ? 18 : 0) + Math.max(0, ...d.lattice_rows.map((r) => g.measureText(r).width)) + 6;
  const top = titleHeight(g, d, W, 4);
  const pw = Math.max(4, Math.floor((W - left - PAD - (nc - 1) * LATTICE_GAP) / nc));
  const ph = Math.max(12, Math.min(pw, Math.floor(d.height / nr) - LATTICE_GAP));
  const boxes = panels.map((p, i) => ({ x: left + (i % nc) * (pw + LATTICE_GAP),
    y: top + Math.floor(i / nc) * (ph + LATTICE_GAP), w: pw, h: ph, p, first: false }));
  const gridBottom = top + nr * (ph + LATTICE_GAP) - LATTICE_GAP;
  const below = 16 + (d.lattice_col_title ? 18 : 0);
  return { left, top, below, boxes, legendTop: gridBottom + below + 8, perRow: nc, pw, ph, lattice: true, gridBottom };
}

function latticeLabels(g, d, L, ink) {  // L0… beside each row, H0… under each column, and the two axis titles
  g.fillStyle = ink; g.font = "11px " + d.font;
  const [nr, nc] = d.lattice;
  g.textAlign = "right";
  for (let r = 0; r < nr; r++) g.fillText(d.lattice_rows[r], L.left - 6, L.top + r * (L.ph + LATTICE_GAP) + L.ph / 2);
  g.textAlign = "center";
  const step = Math.ceil(nc / Math.max(1, Math.floor((nc * (L.pw + LATTICE_GAP)) / 26)));
  for (let c = 0; c < nc; c += step) g.fillText(d.lattice_cols[c], L.left + c * (L.pw + LATTICE_GAP) + L.pw / 2, L.gridBottom + 9);
  g.font = "600 12px " + d.font;
  const width = nc * (L.pw + LATTICE_GAP) - LATTICE_GAP;
  if (d.lattice_col_title) g.fillText(fit(g, d.lattice_col_title, width), L.left + width / 2, L.gridBottom + 27);
  if (d.lattice_row_title) {
    g.save(); g.translate(8, (L.top + L.gridBottom) / 2); g.rotate(-Math.PI / 2);
    g.fillText(fit(g, d.lattice_row_title, L.gridBottom - L.top), 0, 0); g.restore();
  }
}

function layout(d, panels, W, g) {  // where everything goes, in CSS pixels
  if (d.lattice.length) return latticeLayout(d, panels, W, g);
  g.font = "11px " + d.font;
  const rowW = Math.min(LABEL_MAX, Math.max(0, ...d.rows.map((r) => g.measureText(r).width)));
  const left = (d.row_title && d.row_axis_title ? 18 : 0) + rowW + 6;
  const colW = d.show_col_labels ? Math.min(LABEL_MAX, Math.max(0, ...d.cols.map((c) => g.measureText(c).width))) : 0;
  const below = (d.show_col_labels ? colW * 0.87 + 12 : 4) + (d.col_title ? 18 : 0);
  const top = titleHeight(g, d, W, 4);
  const grid = d.per_row > 0;
  const perRow = grid ? Math.max(1, Math.min(d.per_row, panels.length,
    Math.floor((W - left + GAP) / (MIN_PANEL + GAP)))) : 1;
  const pw = grid ? Math.min(d.height, Math.floor((W - left - PAD - (perRow - 1) * GAP) / perRow)) : W - left - PAD;
  const ph = grid ? pw : d.height;
  const head = grid ? 20 : 0;  // a panel's title
  const boxes = panels.map((p, i) => {
    const r = Math.floor(i / perRow), c = i % perRow;
    return { x: left + c * (pw + GAP), y: top + r * (head + ph + below + GAP) + head, w: pw, h: ph, p, first: c === 0 };
  });
  const gridRows = Math.ceil(panels.length / perRow);
  const legendTop = top + gridRows * (head + ph + below + GAP) - GAP + 8;
  return { left, top, below, boxes, legendTop, perRow, pw, ph };
}

function legendHeight(d, W, g) {
  if (!d.legend.swatches.length && !d.legend.ramp.length) return 0;
  if (d.legend.swatches.length) {
    g.font = "12px " + d.font;
    let x = 0, lines = 1;
    for (const [label] of d.legend.swatches) {
      const w = 16 + g.measureText(label).width + 14;
      if (x + w > W && x > 0) { lines += 1; x = 0; }
      x += w;
    }
    return lines * 18 + 4;
  }
  return (d.legend.title ? 16 : 0) + 12 + 16;
}

function start(box) {  // a chart's data, context, text colour and width; its font is the page's
  const d = box._data, c = box._canvas, g = c.getContext("2d"), css = getComputedStyle(box);
  d.font = css.fontFamily || "sans-serif";
  return { d, c, g, ink: css.color || "#31333f", W: Math.max(160, box.clientWidth || 600) };
}

function sized(c, g, d, W, H, ink) {  // the canvas W × H CSS px at the screen's pixels, cleared, with the title
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(W * dpr); c.height = Math.round(H * dpr); c.style.height = H + "px";
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, W, H);
  g.fillStyle = ink; g.textBaseline = "middle";
  g.font = TITLE_FONT + d.font; g.textAlign = "left";
  wrap(g, d.title, W).forEach((line, k) => g.fillText(line, 0, 12 + k * TITLE_LINE));
}

const TITLE_FONT = "600 14px ", TITLE_LINE = 19;

function wrap(g, text, width) {  // text in lines of at most width px: at a space if the line has one, else anywhere
  const lines = [];                // (Chinese has no spaces)
  let line = "";
  for (const ch of text || "") {
    if (line && g.measureText(line + ch).width > width) {
      const cut = ch !== " " && line.lastIndexOf(" ") > 0 ? line.lastIndexOf(" ") : line.length;
      lines.push(line.slice(0, cut)); line = line.slice(cut).trimStart();
    }
    if (line || ch !== " ") line += ch;
  }
  if (line.trim()) lines.push(line);
  return lines;
}

function titleHeight(g, d, W, none) {  // px above the chart for its title's lines (``none`` without a title)
  if (!d.title) return none;
  g.font = TITLE_FONT + d.font;
  return wrap(g, d.title, W).length * TITLE_LINE + 7;
}

function draw(box) {
  const { d, c, g, ink, W } = start(box);
  if (box._digest !== d.digest) { box._panels = decode(d); box._digest = d.digest; }
  const L = layout(d, box._panels, W, g);
  const H = Math.ceil(L.legendTop + legendHeight(d, W - L.left, g) + 4);
  sized(c, g, d, W, H, ink);
  for (const b of L.boxes) panelAt(g, d, b, L, ink);
  if (L.lattice) latticeLabels(g, d, L, ink);
  legendAt(g, d, L.left, L.legendTop, W - L.left, ink);
  box._layout = L; box._w = W;
  c.dataset.drawn = d.digest;  // a DOM change when the paint is done (benchmarks and tests wait on it)
}

function panelAt(g, d, b, L, ink) {
  const { p } = b;
  if (p.title && !L.lattice) { g.font = "600 13px " + d.font; g.textAlign = "center"; g.fillStyle = ink;
    g.fillText(fit(g, p.title, b.w + GAP), b.x + b.w / 2, b.y - 10); }
  g.imageSmoothingEnabled = false;
  g.drawImage(p.px, b.x, b.y, b.w, b.h);
  if (d.gaps && b.w / p.m >= 6 && b.h / p.n >= 6) {  // a thin white line between cells, as Vega's cell stroke
    g.strokeStyle = "#ffffff"; g.lineWidth = 1; g.beginPath();
    for (let k = 1; k < p.m; k++) { const x = b.x + (k / p.m) * b.w; g.moveTo(x, b.y); g.lineTo(x, b.y + b.h); }
    for (let r = 1; r < p.n; r++) { const y = b.y + (r / p.n) * b.h; g.moveTo(b.x, y); g.lineTo(b.x + b.w, y); }
    g.stroke();
  }
  g.strokeStyle = "rgba(128,128,128,0.35)"; g.lineWidth = 1;
  g.strokeRect(b.x - 0.5, b.y - 0.5, b.w + 1, b.h + 1);
  if (d.outline.length) {  // the newest cache slot or key
    const ow = b.w / p.m, oh = b.h / p.n;
    g.strokeStyle = d.outline_colour; g.lineWidth = 2;
    for (const [r, k] of d.outline) g.strokeRect(b.x + k * ow + 1, b.y + r * oh + 1, ow - 2, oh - 2);
  }
  if (d.head_starts.length > 1) {  // a thin line between heads' column blocks
    g.strokeStyle = "#ffffff"; g.lineWidth = 1.5;
    for (const k of d.head_starts.slice(1)) {
      const x = b.x + (k / p.m) * b.w;
      g.beginPath(); g.moveTo(x, b.y); g.lineTo(x, b.y + b.h); g.stroke();
    }
  }
  g.fillStyle = ink; g.font = "11px " + d.font;
  const ch = b.h / p.n, most = Math.max(1, Math.min(d.row_labels, Math.floor(b.h / 12)));
  const rstep = Math.ceil(p.n / most);
  if (b.first) {
    g.textAlign = "right";
    for (let r = 0; r < p.n; r += rstep) {
      g.fillStyle = d.row_colours[r] || ink;
      g.fillText(fit(g, d.rows[r] ?? "", LABEL_MAX), b.x - 6, b.y + (r + 0.5) * ch);
    }
    g.fillStyle = ink;
    if (d.row_title && d.row_axis_title) {
      g.save(); g.translate(8, b.y + b.h / 2); g.rotate(-Math.PI / 2); g.textAlign = "center";
      g.font = "600 12px " + d.font; g.fillText(fit(g, d.row_title, b.h), 0, 0); g.restore();
    }
  }
  const cw = b.w / p.m;
  if (d.show_col_labels) {
    const cstep = Math.ceil(p.m / Math.max(1, Math.floor(b.w / 13)));
    g.textAlign = "right";
    for (let k = 0; k < p.m; k += cstep) {
      g.save(); g.translate(b.x + (k + 0.5) * cw, b.y + b.h + 6); g.rotate(-Math.PI / 3);
      g.fillText(fit(g, d.cols[k] ?? "", LABEL_MAX), 0, 0); g.restore();
    }
  }
  if (d.col_title && !L.lattice) {
    g.font = "600 12px " + d.font; g.textAlign = "center";
    g.fillText(fit(g, d.col_title, b.w + GAP), b.x + b.w / 2, b.y + b.h + L.below - 9);
  }
}

function legendAt(g, d, x0, y0, W, ink) {
  const lg = d.legend;
  g.fillStyle = ink; g.textAlign = "left";
  if (lg.swatches.length) {
    g.font = "12px " + d.font;
    let x = x0, y = y0 + 9;
    for (const [label, colour] of lg.swatches) {
      const w = 16 + g.measureText(label).width + 14;
      if (x + w > x0 + W && x > x0) { x = x0; y += 18; }
      g.fillStyle = colour; g.fillRect(x, y - 6, 12, 12);
      g.fillStyle = ink; g.fillText(label, x + 16, y); x += w;
    }
    return;
  }
  if (!lg.ramp.length) return;
  let y = y0;
  if (lg.title) { g.font = "600 12px " + d.font; g.fillText(fit(g, lg.title, W), x0, y + 7); y += 16; }
  const w = Math.min(200, W);
  const grad = g.createLinearGradient(x0, 0, x0 + w, 0);
  lg.ramp.forEach((col, i) => grad.addColorStop(i / (lg.ramp.length - 1), col));
  g.fillStyle = grad; g.fillRect(x0, y, w, 10);
  g.fillStyle = ink; g.font = "11px " + d.font;
  const [lo, hi] = lg.domain;
  g.textAlign = "left"; g.fillText(num(lo), x0, y + 18);
  g.textAlign = "right"; g.fillText(num(hi), x0 + w, y + 18);
  if (lo < 0 && hi > 0) { g.textAlign = "center"; g.fillText("0", x0 + (w * -lo) / (hi - lo), y + 18); }
}

function cellAt(box, ex, ey) {  // the panel, row and column under a point (CSS pixels in the canvas), or null
  const L = box._layout;
  if (!L) return null;
  for (const b of L.boxes) {
    if (ex >= b.x && ex < b.x + b.w && ey >= b.y && ey < b.y + b.h) {
      const r = Math.floor(((ey - b.y) / b.h) * b.p.n), k = Math.floor(((ex - b.x) / b.w) * b.p.m);
      return { b, r, k };
    }
  }
  return null;
}

function tipText(d, hit) {
  const { b, r, k } = hit, lines = [];
  if (b.p.title) lines.push(b.p.title);
  if (d.col_heads.length) lines.push(d.col_heads[k]);
  lines.push(`${d.row_title || d.words[0]}: ${d.rows[r]}`, `${d.col_title || d.words[1]}: ${d.cols[k]}`);
  const v = b.p.values[r * b.p.m + k];
  if (d.show_values) lines.push(`${d.value_title || d.words[2]}: ${Number.isFinite(v) ? v.toFixed(3) : "—"}`);
  if (d.col_notes.length) lines.push(`${d.col_note_title}: ${d.col_notes[k]}`);
  if (b.p.notes) lines.push(d.notes[b.p.notes[r * b.p.m + k]]);
  return lines.join("\n");
}

function showTip(box, e) {
  const tip = box._tip, rect = box._canvas.getBoundingClientRect();
  const ex = e.clientX - rect.left, ey = e.clientY - rect.top, hit = cellAt(box, ex, ey);
  if (!hit) { tip.style.display = "none"; return; }
  place(box, tipText(box._data, hit), ex, ey);
}

function place(box, text, ex, ey) {  // the tooltip, showing ``text``, beside the point (ex, ey) and inside the chart
  const tip = box._tip;
  tip.textContent = text;  // text, never HTML: labels are the student's own words
  tip.style.display = "block";
  tip.style.left = Math.max(0, Math.min(box.clientWidth - tip.offsetWidth, ex + 14)) + "px";
  tip.style.top = Math.max(0, ey - tip.offsetHeight - 10) + "px";
}
