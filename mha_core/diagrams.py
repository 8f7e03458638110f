"""The pipeline diagram as Graphviz DOT text: a pure function of the shapes, redrawn for every h.

Streamlit renders DOT in the browser (bundled, no network) as an SVG that scales to a phone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mha_core.charts.base import head_colour

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


def pipeline_dot(
    n_heads: int, n: int, d_model: int, d_head: int, head_names: Sequence[str], labels: Mapping[str, str],
) -> str:
    """X → h heads (n × d_head each) → Concat → × W^O → output; ``labels`` holds the translated
    captions "input", "head", "concat", "wo", "output" ("head" takes {i})."""
    width = n_heads * d_head
    lines = [
        "digraph MHA {",
        '  rankdir=LR; bgcolor="transparent"; nodesep=0.15; ranksep=0.35;',
        '  node [shape=box, style="rounded,filled", fontname="Noto Sans CJK SC, sans-serif", fontsize=12,'
        ' fillcolor="#F1F4F8", color="#555555"];',
        '  edge [color="#555555", arrowsize=0.7];',
        _node("X", labels["input"], f"X  {n} × {d_model}"),
        _node("C", labels["concat"], f"{n} × {width}"),
        _node("O", labels["wo"], f"× W^O  {width} × {d_model}"),
        _node("Y", labels["output"], f"{n} × {d_model}"),
    ]
    for i in drawn_heads(n_heads):
        if i is None:
            lines.append('  hmore [label="⋯", shape=plaintext, style=""];')
            lines.append('  X -> hmore [style=dotted]; hmore -> C [style=dotted];')
            continue
        colour = head_colour(i)
        text = labels["head"].format(i=i) + f"  {n} × {d_head}"
        if i < len(head_names):
            text += "\n" + head_names[i]
        lines.append(f'  h{i} [label={_quote(text)}, color="{colour}", fillcolor="{colour}22", penwidth=1.6];')
        lines.append(f'  X -> h{i} [color="{colour}"]; h{i} -> C [color="{colour}"];')
    lines += ["  C -> O -> Y;", "}"]
    return "\n".join(lines)


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
