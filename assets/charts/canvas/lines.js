// Part 2: token lines (kind "lines"): a line per (head, query, key); a token hovered or tapped keeps only its
// lines, heads tapped in the legend keep only theirs, and a line under the pointer names its head, tokens, weight.
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
