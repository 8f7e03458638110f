"""Command line: ``python -m mha_core.quiz export --format moodle -o FILE.xml [--lang zh|en] [--seed N]
[--variants V]``.

The language defaults to the app's default (mha_core.i18n.DEFAULT_LANG, Chinese), the seed to 0 and the variants
to mha_core.quiz.moodle.DEFAULT_VARIANTS (each calculation question drawn for the seeds N, N + 1, …; 1 = the seed's
numbers only). Help and
messages are in the --lang language when it is a known one. Wrong arguments print one translated line on stderr
and exit with 2 (never a traceback); a file that cannot be written exits with 1 and is left as it was (the
file is written whole or not at all: mha_core.files.atomic_write).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from mha_core.errors import LabError
from mha_core.files import WriteFailed, atomic_write
from mha_core.i18n import DEFAULT_LANG, LANGS, translate
from mha_core.quiz.moodle import DEFAULT_VARIANTS, FORMATS, MAX_VARIANTS, check_variants, moodle_xml, question_count

PROG = "python -m mha_core.quiz"
USAGE = (f"{PROG} export --format {'|'.join(FORMATS)} -o FILE.xml [--lang {'|'.join(LANGS)}] [--seed N] "
         f"[--variants 1..{MAX_VARIANTS}]")
EXIT_USAGE, EXIT_WRITE = 2, 1


class _Parser(argparse.ArgumentParser):
    """argparse that reports a wrong command line as a LabError (translated by main) instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise LabError("export_usage", usage=USAGE)


def _lang(argv: Sequence[str]) -> str:
    """The language asked for with --lang (for help and messages), or the default when absent or unknown."""
    for i, arg in enumerate(argv):
        value = arg.partition("=")[2] if arg.startswith("--lang=") else argv[i + 1] if (
            arg == "--lang" and i + 1 < len(argv)) else None
        if value in LANGS:
            return value
    return DEFAULT_LANG


def _parser(lang: str) -> _Parser:
    def text(key: str, **params: object) -> str:
        return translate(lang, key, **params)

    parser = _Parser(prog=PROG, description=text("moodle.cli_description"))
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("export", help=text("moodle.cli_export"), description=text("moodle.cli_description"))
    p.add_argument("--format", required=True, metavar="|".join(FORMATS),
                   help=text("moodle.cli_format", formats=", ".join(FORMATS)))
    p.add_argument("-o", "--out", required=True, type=Path, metavar="FILE.xml", help=text("moodle.cli_out"))
    p.add_argument("--lang", default=DEFAULT_LANG, metavar="|".join(LANGS),
                   help=text("moodle.cli_lang", langs=", ".join(LANGS), default=DEFAULT_LANG))
    p.add_argument("--seed", default="0", metavar="N", help=text("moodle.cli_seed", default=0))
    p.add_argument("--variants", default=str(DEFAULT_VARIANTS), metavar="V",
                   help=text("moodle.cli_variants", default=DEFAULT_VARIANTS))
    return parser


def _seed(text: str) -> int:
    """A seed as typed: a whole number, 0 or more."""
    if not (text.strip().isascii() and text.strip().isdigit()):
        raise LabError("export_seed", got=text)
    return int(text)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    lang = _lang(argv)
    try:
        args = _parser(lang).parse_args(argv)
        if args.format not in FORMATS:
            raise LabError("export_format", got=args.format, formats=", ".join(FORMATS))
        seed = _seed(args.seed)
        variants = check_variants(args.variants)
        data = moodle_xml(args.lang, seed, variants)
    except LabError as err:
        print(translate(lang, f"errors.{err.key}", **err.params), file=sys.stderr)
        return EXIT_USAGE
    try:
        atomic_write(args.out, data)  # whole or not at all: a full disk leaves no empty file, an old one intact
    except WriteFailed as err:
        reason = translate(lang, f"errors.{err.key}", **err.params)
        print(translate(lang, "errors.export_write", path=args.out, reason=reason), file=sys.stderr)
        return EXIT_WRITE
    n = question_count(args.lang, seed, variants)
    print(translate(lang, "moodle.cli_written", n=n, language=args.lang, seed=seed, variants=variants, path=args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
