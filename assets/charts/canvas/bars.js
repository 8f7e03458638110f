// Part 3: bars (kind "bars"): one horizontal bar per name from 0 to its value; a bar under the pointer names it.
// --- bars (charts.bars.BarsCanvas): a name on the left of each row, its bar from 0 to its value ---
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
