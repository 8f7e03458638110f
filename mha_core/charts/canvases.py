"""Which Altair builder each chart of the app's canvas stands in for (ui.render draws the canvas instead, with the
builder's own arguments; the builder still makes the downloads and the table view)."""

from __future__ import annotations

from collections.abc import Callable

from mha_core.charts import bars, matrix, plot

Canvas = matrix.MatrixCanvas | matrix.LinesCanvas | bars.BarsCanvas | plot.PlotCanvas

# By the builder's name, as ui.render.builder_name gives it.
CANVASES: dict[str, Callable[..., Canvas]] = {
    "mha_core.charts.base.heatmap": matrix.heatmap,
    "mha_core.charts.pipeline.head_grid": matrix.head_grid,
    "mha_core.charts.pipeline.columns_by_head": matrix.columns_by_head,
    "mha_core.charts.cross.masked_map": matrix.masked_map,
    "mha_core.charts.generate.cache_grid": matrix.cache_grid,
    "mha_core.charts.generate.query_attention": matrix.query_attention,
    "mha_core.charts.real.score_map": matrix.score_map,
    "mha_core.charts.real.head_heatmap": matrix.head_heatmap,
    "mha_core.charts.real.similarity_map": matrix.similarity_map,
    "mha_core.charts.real.model_view": matrix.model_view,
    "mha_core.charts.lines.token_lines": matrix.token_lines,
    "mha_core.charts.base.bar": bars.bar,
    "mha_core.charts.generate.next_token_bars": bars.next_token_bars,
    "mha_core.charts.real.pair_row": bars.pair_row,
    "mha_core.charts.base.lines": plot.lines,
    "mha_core.charts.cost.params_vs_heads": plot.params_vs_heads,
    "mha_core.charts.cost.d_head_vs_heads": plot.d_head_vs_heads,
    "mha_core.charts.cost.kv_vs_seq_len": plot.kv_vs_seq_len,
    "mha_core.charts.cost.flops_vs_seq_len": plot.flops_vs_seq_len,
}
