"""Diagrams as pure functions of the shapes: the pipeline laid out here in Python as an SVG document (no Graphviz
binary on the server, no layout engine in the browser: the overview shows it as an image and offers it as a
download), and the concept map as Graphviz DOT text, which Streamlit renders in the browser.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

from mha_core.charts.palette import head_colour

MAX_DRAWN_HEADS = 8  # beyond this the middle heads fold into "⋯"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node(name: str, caption: str, shape: str) -> str:
    return f"  {name} [label={_quote(caption + chr(10) + shape)}];"


def drawn_heads(n_heads: int) -> list[int | None]:
    """Which heads get a box (None = the ⋯ box standing for the ones in between)."""
    if n_heads <= MAX_DRAWN_HEADS:
        return list(range(n_heads))
    return [0, 1, 2, None, n_heads - 2, n_heads - 1]


def relations_dot(nodes: Mapping[str, str], centre: str, edges: Sequence[tuple[str, str, str]]) -> str:
    """A small concept map: ``nodes`` id -> caption, ``centre`` highlighted, ``edges`` (from, to, caption)."""
    lines = [
        "digraph Map {",
        '  rankdir=LR; bgcolor="transparent"; nodesep=0.2; ranksep=0.5;',
        '  node [shape=box, style="rounded,filled", fontname="Noto Sans CJK SC, sans-serif", fontsize=12,'
        ' fillcolor="#F1F4F8", color="#555555"];',
        '  edge [color="#555555", fontname="Noto Sans CJK SC, sans-serif", fontsize=10, arrowsize=0.7];',
    ]
    for node, caption in nodes.items():
        extra = ', fillcolor="#0072B222", color="#0072B2", penwidth=2' if node == centre else ""
        lines.append(f"  {node} [label={_quote(caption)}{extra}];")
    lines += [f"  {a} -> {b} [label={_quote(caption)}];" for a, b, caption in edges]
    lines.append("}")
    return "\n".join(lines)


# Layout of the SVG file (px): Graphviz's look at its default 12 pt font, with a fixed left-to-right layout.
_FONT, _LINE, _PAD_X, _PAD_Y, _GAP_X, _GAP_Y = 12, 16, 9, 6, 34, 10
_GREY, _FILL = "#555555", "#F1F4F8"


def _text_width(line: str) -> float:
    """Width of a line at 12 px: CJK characters are square, Latin ones about 0.6 em (a safe overestimate)."""
    return sum(_FONT if ord(ch) >= 0x2E80 else 0.6 * _FONT for ch in line)


@dataclass(frozen=True)
class _Box:
    """One box of the SVG diagram: its text lines, colour, and top-left corner once placed."""
    lines: tuple[str, ...]
    colour: str = _GREY
    fill: str = _FILL
    x: float = 0.0
    y: float = 0.0

    @property
    def w(self) -> float:
        return max(map(_text_width, self.lines)) + 2 * _PAD_X

    @property
    def h(self) -> float:
        return len(self.lines) * _LINE + 2 * _PAD_Y


def _box_svg(b: _Box, fill_opacity: float = 1.0) -> str:
    rect = (f'<rect x="{b.x:.1f}" y="{b.y:.1f}" width="{b.w:.1f}" height="{b.h:.1f}" rx="6" fill="{b.fill}" '
            f'fill-opacity="{fill_opacity}" stroke="{b.colour}" stroke-width="1.4"/>')
    texts = [f'<text x="{b.x + b.w / 2:.1f}" y="{b.y + _PAD_Y + (k + 0.78) * _LINE:.1f}" text-anchor="middle">'
             f"{escape(line)}</text>" for k, line in enumerate(b.lines)]
    return rect + "".join(texts)


def _arrow(x1: float, y1: float, x2: float, y2: float, colour: str, dotted: bool = False) -> str:
    """A straight line ending in a filled arrowhead at (x2, y2)."""
    dx, dy = x2 - x1, y2 - y1
    norm = max((dx * dx + dy * dy) ** 0.5, 1e-9)
    ux, uy = dx / norm, dy / norm
    bx, by = x2 - 7 * ux, y2 - 7 * uy
    dash = ' stroke-dasharray="2 3"' if dotted else ""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="{colour}" stroke-width="1.2"'
            f'{dash}/><polygon points="{x2:.1f},{y2:.1f} {bx - 3.5 * uy:.1f},{by + 3.5 * ux:.1f} '
            f'{bx + 3.5 * uy:.1f},{by - 3.5 * ux:.1f}" fill="{colour}"/>')


def pipeline_svg(
    n_heads: int, n: int, d_model: int, d_head: int, head_names: Sequence[str], labels: Mapping[str, str],
    title: str = "",
) -> str:
    """X → h heads (n × d_head each) → Concat → × W^O → output as a standalone SVG document, for the page and for
    its download: X on the left, one box per drawn head stacked in the middle, Concat → × W^O → output on the
    right. ``labels`` holds the translated captions "input", "head", "concat", "wo", "output" ("head" takes {i})."""
    width = n_heads * d_head
    x = _Box((labels["input"], f"X  {n} × {d_model}"))
    tail = [_Box((labels["concat"], f"{n} × {width}")), _Box((labels["wo"], f"× W^O  {width} × {d_model}")),
            _Box((labels["output"], f"{n} × {d_model}"))]
    heads: list[_Box | None] = []
    for i in drawn_heads(n_heads):
        if i is None:
            heads.append(None)
            continue
        lines = [labels["head"].format(i=i) + f"  {n} × {d_head}"] + ([head_names[i]] if i < len(head_names) else [])
        heads.append(_Box(tuple(lines), colour=head_colour(i), fill=head_colour(i)))
    col_w = max(b.w for b in heads if b is not None)
    more_h = _LINE + 2 * _PAD_Y
    total_h = sum(b.h if b is not None else more_h for b in heads) + _GAP_Y * (len(heads) - 1)
    margin = 8.0
    mid = margin + total_h / 2
    x = _Box(x.lines, x=margin, y=mid - x.h / 2)
    hx = x.x + x.w + _GAP_X
    placed: list[_Box | tuple[float, float]] = []
    y = margin
    for b in heads:
        if b is None:
            placed.append((hx + col_w / 2, y + more_h / 2))  # centre of the ⋯
            y += more_h + _GAP_Y
            continue
        placed.append(_Box(b.lines, b.colour, b.fill, x=hx + (col_w - b.w) / 2, y=y))
        y += b.h + _GAP_Y
    cx = hx + col_w + _GAP_X
    chain = []
    for b in tail:
        chain.append(_Box(b.lines, x=cx, y=mid - b.h / 2))
        cx += b.w + _GAP_X
    conc = chain[0]
    parts = [_box_svg(x)]
    for p in placed:
        if isinstance(p, _Box):
            parts.append(_box_svg(p, fill_opacity=0.13))
            parts.append(_arrow(x.x + x.w, mid, p.x, p.y + p.h / 2, p.colour))
            parts.append(_arrow(p.x + p.w, p.y + p.h / 2, conc.x, mid, p.colour))
        else:
            px, py = p
            parts.append(f'<text x="{px:.1f}" y="{py + 0.35 * _FONT:.1f}" text-anchor="middle">⋯</text>')
            parts.append(_arrow(x.x + x.w, mid, px - 12, py, _GREY, dotted=True))
            parts.append(_arrow(px + 12, py, conc.x, mid, _GREY, dotted=True))
    for a, b in itertools.pairwise(chain):
        parts.append(_arrow(a.x + a.w, mid, b.x, mid, _GREY))
    parts += [_box_svg(b) for b in chain]
    w, h = cx - _GAP_X + margin, total_h + 2 * margin
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}"'
            f' font-family="Noto Sans CJK SC, sans-serif" font-size="{_FONT}" fill="#222222" xml:space="preserve">')
    caption = f"<title>{escape(title)}</title>" if title else ""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + head + caption
            + f'<rect width="{w:.0f}" height="{h:.0f}" fill="white"/>' + "".join(parts) + "</svg>\n")
