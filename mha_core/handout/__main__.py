"""CLI: ``python -m mha_core.handout --lang zh|en [--h 2 --d-head 2 --sentence "..." --glossary] -o FILE.pdf``.

Bad arguments or an unwritable output print one translated line on stderr and exit with code 2 (no traceback);
the PDF is written whole or not at all (mha_core.files.atomic_write).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mha_core.errors import LabError
from mha_core.files import WriteFailed, atomic_write, check_target
from mha_core.handout import handout_pdf
from mha_core.i18n import DEFAULT_LANG, LANGS, translate

EXIT_BAD_ARGS = 2


class _Usage(Exception):
    """argparse found a problem; carries its (English) description."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises instead of printing usage and exiting, so the message can be translated."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Usage(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m mha_core.handout", description="Write the printable handout (PDF).")
    p.add_argument("--lang", default=DEFAULT_LANG, help=f"language of the handout: {', '.join(LANGS)}")
    p.add_argument("--h", default="2", help="number of heads")
    p.add_argument("--d-head", dest="d_head", default="2", help="width per head")
    p.add_argument("--sentence", default=None, help="the sentence (default: the language's default sentence)")
    p.add_argument("--glossary", action="store_true", help="add the glossary (3-4 more pages; off for a class handout)")
    p.add_argument("-o", "--output", required=True, help="the PDF file to write")
    return p


def _lang_of(argv: Sequence[str]) -> str:
    """The --lang the user asked for, if it is a catalog language (for messages before parsing succeeds)."""
    for i, arg in enumerate(argv):
        value = arg.split("=", 1)[1] if arg.startswith("--lang=") else argv[i + 1] if arg == "--lang" and \
            i + 1 < len(argv) else None
        if value in LANGS:
            return value
    return DEFAULT_LANG


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    lang = _lang_of(argv)
    try:
        args = _parser().parse_args(argv)
        out = Path(args.output)
        try:
            check_target(out)   # before the few seconds of typesetting
            data = handout_pdf(args.lang, args.h, args.d_head, args.sentence, args.glossary)
            atomic_write(out, data)   # whole or not at all: a full disk leaves no truncated PDF, an old one intact
        except WriteFailed as err:
            reason = translate(lang, f"errors.{err.key}", **err.params)
            raise LabError("handout_write", path=str(out), reason=reason) from err
    except _Usage as err:
        print(translate(lang, "errors.handout_usage", langs="|".join(LANGS), problem=str(err)), file=sys.stderr)
        return EXIT_BAD_ARGS
    except LabError as err:
        print(translate(lang, f"errors.{err.key}", **err.params), file=sys.stderr)
        return EXIT_BAD_ARGS
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
