"""The printable handout: ``handout_pdf(lang, h, d_head, sentence, glossary)`` -> PDF bytes (``-m mha_core.handout``).

``content`` gathers what goes in (pure data from the core), ``worked`` is the hand-sized example, ``pdf`` typesets
it with fpdf2 and the fonts two pip packages ship (``noto-cjk-sans-otc``, ``font-source-sans-pro``; embedded,
nothing is downloaded). By default it is a class handout of at most four pages; ``glossary=True`` adds the glossary.
"""

from __future__ import annotations

from mha_core.handout.content import QUESTION_IDS, build_handout, check_handout


def handout_pdf(lang: str, h: int = 2, d_head: int = 2, sentence: str | None = None, glossary: bool = False) -> bytes:
    """The handout for these settings in ``lang`` (sentence None: the language's default sentence), as PDF bytes;
    with the glossary's pages when ``glossary`` is true.

    Bad arguments raise ``LabError`` (handout_lang, handout_h, handout_d_head, handout_d_model,
    handout_sentence_long, empty_sentence) with a translated message.
    """
    from mha_core.handout.pdf import render  # lazy: fpdf2 loads only when a handout is built

    return render(build_handout(lang, h, d_head, sentence, glossary))


__all__ = ["QUESTION_IDS", "check_handout", "handout_pdf"]
