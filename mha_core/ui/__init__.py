"""The only part of mha_core that imports Streamlit: the page frame and shared renderers."""

from mha_core.ui.i18n import bound_t, lang, t

__all__ = ["bound_t", "lang", "t"]
