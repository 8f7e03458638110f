// Part 5: the component's element, its pointer events, and the entry Streamlit calls again, on the same element,
// whenever the data changes; it redraws only when the data or the width changed.
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
