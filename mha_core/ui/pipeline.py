"""The pipeline pages' own session keys, and which of them survive page switches.

The settings they share (h, d_head, the sentence, the causal mask, the head in focus, …) are declared once in
``mha_core.settings``; these keys belong to one page each.
"""

from __future__ import annotations

PREREQ_KIND_KEY = "prereq_kind"      # the refresher's head (a kind of illustrative head)
PREREQ_QUERY_KEY = "prereq_query"    # the refresher's query token
PREREQ_SHARP_KEY = "prereq_sharp"    # the refresher's sharpness (1 / temperature)
SPLIT_WHICH_KEY = "split_which"      # Q, K or V on the split page
MYTHS_REPLAY_KEY = "myths_replay"    # the button that replays training on the myths page
MYTHS_REPLAYED_KEY = "myths_replayed"  # set by that button: the replay stays on screen
MYTHS_TAB_KEY = "myths_tab"          # the myths page's open tab (only it is drawn)
GLOSSARY_SEARCH_KEY = "glossary_search"

# Widget values kept across pages (state.keep). The refresher's head starts as demos.REFRESHER_KIND, which
# the page writes on its first draw (state.valid_choice), so its default here is None (kept, never written).
KEPT: dict[str, object] = {PREREQ_KIND_KEY: None, PREREQ_SHARP_KEY: 1.0, MYTHS_TAB_KEY: None}


def concat_on_key(n_heads: int) -> str:
    """The concat page's heads-on pills: one key per h, so a new h starts with every head on."""
    return f"concat_on_{n_heads}"
