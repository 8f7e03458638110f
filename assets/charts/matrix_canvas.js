// MHA Lab's canvas charts (mha_core/charts/matrix.py makes their data; mha_core/ui/canvas.py mounts them).
// A matrix chart: the server sends every cell's colour and value; this paints them on one canvas with the chart's
// title, axes, legend and a tooltip per cell (mouse and touch), and redraws only when the data or the width changed.
// Token lines (kind "lines"): a line per (head, query, key); a token hovered or tapped keeps only its lines, heads
// tapped in the legend keep only theirs, and a line under the pointer names its head, tokens and weight.
// Bars (kind "bars"): one horizontal bar per name from 0 to its value; a bar under the pointer names its value.
// Plots (kind "plot"): series of points over an x axis (numeric, log 2 or named values), drawn as lines with their
// dashes and point shapes or as vertical bars; the point nearest the pointer (or the bar under it) says its tooltip.
// Streamlit calls this function again, on the same element, whenever the data changes.
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

// --- token lines (charts.matrix.LinesCanvas): queries left, keys right, a line per (head, query, key) ---
const X_Q = 0.32, X_K = 0.68, FADED = "#8C8C8C", NEAR = 5;

function linesLayout(d, W, g) {
  const rows = Math.max(d.queries.length, d.keys.length), top = titleHeight(g, d, W, 0);
  const L = { xq: X_Q * W, xk: X_K * W, top, rows, y: (i) => top + (i + 1.5) * d.step, swatches: [] };
  L.legendTop = top + d.step * (rows + 1) + 6;
  L.legendH = 0;
  if (d.heads.length > 1) {  // the heads, each a tappable swatch (a short line in its colour) and its name
    g.font = "12px " + d.font;
    let x = 0, y = L.legendTop + (d.head_title ? 18 : 0) + 9;
    d.heads.forEach((name, h) => {
      const w = 28 + Math.min(260, g.measureText(name).width) + 16;
      if (x + w > W && x > 0) { x = 0; y += 20; }
      L.swatches.push({ x, y, w, h });
      x += w;
    });
    L.legendH = y - L.legendTop + 12;
  }
  return L;
}

function shownLines(d, st) {  // the lines kept by the heads tapped in the legend and the token hovered or tapped
  const tok = st.hover || st.pick, out = [];
  for (let j = 0; j < d.line_head.length; j++) {
    if (st.heads.size && !st.heads.has(d.line_head[j])) continue;
    if (tok && !(tok.side === "q" ? d.line_q[j] === tok.i : d.line_k[j] === tok.i)) continue;
    out.push(j);
  }
  return out;
}

function drawLines(box) {
  const { d, c, g, ink, W } = start(box), st = box._lines;
  const L = linesLayout(d, W, g);
  const H = Math.ceil(L.legendTop + L.legendH + 4);
  sized(c, g, d, W, H, ink);
  const shown = shownLines(d, st);
  g.lineWidth = 2;
  for (const j of shown) {
    const h = d.line_head[j];
    g.globalAlpha = d.weights[j]; g.strokeStyle = d.colours[h]; g.setLineDash(d.dashed[h] ? [5, 3] : []);
    g.beginPath(); g.moveTo(L.xq, L.y(d.line_q[j])); g.lineTo(L.xk, L.y(d.line_k[j])); g.stroke();
  }
  g.globalAlpha = 1; g.setLineDash([]);
  const size = d.step >= 16 ? 12 : 10, tok = st.hover || st.pick;
  for (const [side, texts, x, align] of [["q", d.queries, L.xq - 6, "right"], ["k", d.keys, L.xk + 6, "left"]]) {
    g.textAlign = align;
    texts.forEach((text, i) => {
      const on = tok && tok.side === side && tok.i === i;
      g.font = (on ? "700 " : "") + size + "px " + d.font;
      g.fillStyle = on || !tok ? ink : FADED;
      g.fillText(fit(g, text, 110), x, L.y(i));
    });
  }
  g.font = "700 " + size + "px " + d.font; g.fillStyle = ink;
  g.textAlign = "right"; g.fillText(fit(g, d.query_title, 160), L.xq - 6, L.y(-1));
  g.textAlign = "left"; g.fillText(fit(g, d.key_title, 160), L.xk + 6, L.y(-1));
  if (L.swatches.length) {
    g.textAlign = "left";
    if (d.head_title) { g.font = "600 12px " + d.font; g.fillText(fit(g, d.head_title, W), 0, L.legendTop + 7); }
    g.font = "12px " + d.font;
    for (const s of L.swatches) {
      const off = st.heads.size && !st.heads.has(s.h);
      g.globalAlpha = off ? 0.35 : 1;
      g.strokeStyle = d.colours[s.h]; g.lineWidth = 3; g.setLineDash(d.dashed[s.h] ? [5, 3] : []);
      g.beginPath(); g.moveTo(s.x, s.y); g.lineTo(s.x + 22, s.y); g.stroke(); g.setLineDash([]);
      g.fillStyle = ink; g.fillText(fit(g, d.heads[s.h], 260), s.x + 28, s.y);
    }
    g.globalAlpha = 1;
  }
  box._layout = L; box._w = W; box._shown = shown;
  c.dataset.drawn = d.digest;
}

function lineHit(box, ex, ey) {  // what is under a point: a token, a legend swatch, a line (nearest within NEAR px)
  const d = box._data, L = box._layout;
  if (!L) return null;
  for (const s of L.swatches) if (ex >= s.x && ex < s.x + s.w && Math.abs(ey - s.y) <= 10) return { head: s.h };
  const i = Math.round((ey - L.top) / d.step - 1.5);
  if (ex < L.xq && i >= 0 && i < d.queries.length) return { tok: { side: "q", i } };
  if (ex > L.xk && i >= 0 && i < d.keys.length) return { tok: { side: "k", i } };
  if (ex < L.xq || ex > L.xk) return null;
  let best = null, bestD = NEAR;
  for (const j of box._shown) {
    const y0 = L.y(d.line_q[j]), y1 = L.y(d.line_k[j]), t = (ex - L.xq) / (L.xk - L.xq);
    const dist = Math.abs(ey - (y0 + t * (y1 - y0))) * Math.cos(Math.atan2(y1 - y0, L.xk - L.xq));
    if (dist <= bestD) { bestD = dist; best = j; }
  }
  return best === null ? null : { line: best };
}

function lineTip(box, e, hit) {
  const d = box._data, tip = box._tip, j = hit && hit.line !== undefined ? hit.line : null;
  if (j === null) { tip.style.display = "none"; return; }
  const rect = box._canvas.getBoundingClientRect();
  place(box, [`${d.head_title || d.words[3]}: ${d.heads[d.line_head[j]]}`,
    `${d.query_title || d.words[0]}: ${d.queries[d.line_q[j]]}`, `${d.key_title || d.words[1]}: ${d.keys[d.line_k[j]]}`,
    `${d.weight_title || d.words[2]}: ${d.weights[j].toFixed(3)}`].join("\n"), e.clientX - rect.left, e.clientY - rect.top);
}

function same(a, b) { return (!a && !b) || (a && b && a.side === b.side && a.i === b.i); }

function linesPointer(box, e, down) {
  const rect = box._canvas.getBoundingClientRect(), hit = lineHit(box, e.clientX - rect.left, e.clientY - rect.top);
  const st = box._lines, hover = e.pointerType === "mouse" && hit && hit.tok ? hit.tok : null;
  let changed = !same(st.hover, hover);
  st.hover = hover;
  if (down) {
    if (hit && hit.head !== undefined) { st.heads.has(hit.head) ? st.heads.delete(hit.head) : st.heads.add(hit.head); changed = true; }
    else if (hit && hit.tok) { st.pick = same(st.pick, hit.tok) ? null : hit.tok; changed = true; }
    else if (!hit) { changed = changed || st.pick !== null; st.pick = null; }
  }
  if (changed) drawLines(box);
  lineTip(box, e, hit);
}

// --- bars (charts.matrix.BarsCanvas): a name on the left of each row, its bar from 0 to its value ---
const BAR_LABEL_MAX = 140;

function barsLayout(d, W, g) {
  g.font = "12px " + d.font;
  const labelW = Math.min(BAR_LABEL_MAX, Math.max(0, ...d.names.map((n) => g.measureText(n).width)));
  const left = labelW + 8, top = titleHeight(g, d, W, 4), right = W - PAD - 8;
  const step = d.height / Math.max(1, d.names.length);
  const [lo, hi] = d.domain;
  const x = (v) => left + ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo || 1)) * (right - left);
  return { left, right, top, step, x, bottom: top + d.height };
}

function drawBars(box) {
  const { d, c, g, ink, W } = start(box);
  const L = barsLayout(d, W, g);
  const H = Math.ceil(L.bottom + 20 + (d.value_title ? 18 : 0) + 2);
  sized(c, g, d, W, H, ink);
  g.font = "11px " + d.font; g.textAlign = "center"; g.lineWidth = 1;
  for (const t of d.ticks) {  // a gridline and a label at each tick, the zero line darker
    const x = Math.round(L.x(t)) + 0.5;
    g.strokeStyle = t === 0 ? "rgba(128,128,128,0.7)" : "rgba(128,128,128,0.25)";
    g.beginPath(); g.moveTo(x, L.top); g.lineTo(x, L.bottom); g.stroke();
    g.fillStyle = ink; g.fillText(num(t), x, L.bottom + 9);
  }
  const thick = Math.max(2, L.step * 0.8);
  d.names.forEach((name, i) => {
    const y = L.top + i * L.step, v = d.values[i];
    if (v !== null) {
      const x0 = L.x(Math.min(0, v)), x1 = L.x(Math.max(0, v));
      g.fillStyle = d.colours[i % d.colours.length];
      g.fillRect(x0, y + (L.step - thick) / 2, Math.max(1, x1 - x0), thick);
    }
    g.fillStyle = ink; g.font = "12px " + d.font; g.textAlign = "right";
    g.fillText(fit(g, name, BAR_LABEL_MAX), L.left - 8, y + L.step / 2);
  });
  if (d.value_title) {
    g.font = "600 12px " + d.font; g.textAlign = "center"; g.fillStyle = ink;
    g.fillText(fit(g, d.value_title, L.right - L.left), (L.left + L.right) / 2, L.bottom + 28);
  }
  box._layout = L; box._w = W;
  c.dataset.drawn = d.digest;
}

function barTip(box, e) {
  const d = box._data, L = box._layout, tip = box._tip, rect = box._canvas.getBoundingClientRect();
  const ex = e.clientX - rect.left, ey = e.clientY - rect.top;
  const i = L ? Math.floor((ey - L.top) / L.step) : -1;
  if (!L || ey < L.top || i < 0 || i >= d.names.length) { tip.style.display = "none"; return; }
  const v = d.values[i];
  place(box, `${d.names[i]}\n${d.value_title || d.words[2]}: ${v === null ? "—" : v.toFixed(3)}`, ex, ey);
}

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

function build(root) {
  const box = document.createElement("div");
  box.className = "mha-matrix";
  box.style.cssText = "position:relative;width:100%;";
  const c = document.createElement("canvas");
  c.setAttribute("role", "img");
  c.style.cssText = "display:block;width:100%;touch-action:pan-x pan-y;";
  const tip = document.createElement("div");
  tip.setAttribute("aria-hidden", "true");
  tip.style.cssText = "position:absolute;display:none;pointer-events:none;white-space:pre;z-index:5;"
    + "padding:4px 8px;border-radius:4px;font-size:13px;line-height:1.35;"
    + "background:var(--st-secondary-background-color,#f0f2f6);color:var(--st-text-color,#31333f);"
    + "border:1px solid rgba(128,128,128,0.4);box-shadow:0 1px 4px rgba(0,0,0,0.15);";
  box.append(c, tip);
  root.appendChild(box);
  Object.assign(box, { _canvas: c, _tip: tip });
  const kind = () => box._data && box._data.kind;
  const tipAt = (e) => (kind() === "bars" ? barTip(box, e) : kind() === "plot" ? plotTip(box, e) : showTip(box, e));
  c.addEventListener("pointermove", (e) => (kind() === "lines" ? linesPointer(box, e, false) : tipAt(e)));
  c.addEventListener("pointerdown", (e) => (kind() === "lines" ? linesPointer(box, e, true) : tipAt(e)));  // a tap
  c.addEventListener("pointerleave", (e) => {
    if (e.pointerType !== "mouse") return;
    tip.style.display = "none";
    if (kind() === "lines" && box._lines.hover) { box._lines.hover = null; drawLines(box); }
  });
  new ResizeObserver(() => { if (box._data && box.clientWidth !== box._w) paint(box); }).observe(box);
  return box;
}

function paint(box) {
  const k = box._data.kind;
  return k === "lines" ? drawLines(box) : k === "bars" ? drawBars(box) : k === "plot" ? drawPlot(box) : draw(box);
}

export default function ({ data, parentElement }) {
  const box = parentElement.querySelector(".mha-matrix") || build(parentElement);
  box._canvas.setAttribute("aria-label", data.label);
  const unchanged = box._digest === data.digest && box._w === Math.max(160, box.clientWidth || 600);
  box._data = data;  // the same cells, maybe other words (a tooltip's names follow the page's language)
  if (unchanged) return;
  if (data.kind === "lines" && box._digest !== data.digest) box._lines = { hover: null, pick: null, heads: new Set() };
  if (data.kind !== undefined) box._digest = data.digest;  // a matrix's digest is set when its panels are decoded
  box._tip.style.display = "none";
  paint(box);
}
