"""The printable handout: ``handout_pdf(lang, h, d_head, sentence)`` -> PDF bytes (CLI: ``python -m mha_core.handout``).

``content`` gathers what goes in (pure data from the core), ``worked`` is the hand-sized example, ``pdf`` typesets
it with fpdf2 and the CJK font the pip package ``noto-cjk-sans-otc`` ships (embedded; nothing is downloaded).
"""

from __future__ import annotations

from mha_core.handout.content import QUESTION_IDS, build_handout, check_handout


def handout_pdf(lang: str, h: int = 2, d_head: int = 2, sentence: str | None = None) -> bytes:
    """The handout for these settings in ``lang`` (sentence None: the language's default sentence), as PDF bytes.

    Bad arguments raise ``LabError`` (handout_lang, handout_h, handout_d_head, handout_d_model,
    handout_sentence_long, empty_sentence) with a translated message.
    """
    from mha_core.handout.pdf import render  # fpdf2 is imported only when a handout is built

    return render(build_handout(lang, h, d_head, sentence))


__all__ = ["QUESTION_IDS", "check_handout", "handout_pdf"]
