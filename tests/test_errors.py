"""Error texts live only in the catalogs: every raise names a key and its parameters, and the key exists
in every language with exactly those placeholders; ``str(err)`` is the English catalog text."""

from __future__ import annotations

import ast
import pickle
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mha_core.counts import param_counts
from mha_core.errors import LabError
from mha_core.i18n import LANGS, catalog, translate

ROOT = Path(__file__).resolve().parents[1]
CODE = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "mha_core").rglob("*.py")]


@dataclass(frozen=True)
class Site:
    """One ``LabError(...)`` (or subclass) call found in the source."""

    where: str
    key: object  # the first argument: a str literal when the site is right
    n_positional: int
    params: frozenset[str]
    spreads: bool  # passes **mapping, so its parameter names are not visible here


def _error_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """LabError and every class in the code that derives from it (e.g. DatabaseError), to a fixed point."""
    names = {"LabError"}
    while True:
        more = {
            node.name
            for tree in trees.values()
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            and any((getattr(b, "id", None) or getattr(b, "attr", None)) in names for b in node.bases)
        }
        if more <= names:
            return names
        names |= more


def _sites() -> list[Site]:
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in CODE}
    classes = _error_classes(trees)
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) not in classes:
                continue
            first = node.args[0] if node.args else None
            found.append(Site(
                where=f"{path.relative_to(ROOT)}:{node.lineno}",
                key=first.value if isinstance(first, ast.Constant) else ast.dump(first) if first else None,
                n_positional=len(node.args),
                params=frozenset(k.arg for k in node.keywords if k.arg),
                spreads=any(k.arg is None for k in node.keywords),
            ))
    return found


SITES = _sites()


def _fields(text: str) -> set[str]:
    """Placeholder names of a format string (``{x!r}`` and ``{x.y}`` count as x)."""
    names = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    return {name.split(".")[0].split("[")[0] for name in names}


def test_the_scan_finds_the_raise_sites():
    """Guards the test itself: if the ast walk broke, every check below would pass on nothing."""
    assert len(SITES) > 80
    assert any(s.where.startswith("mha_core/classroom/db.py") and s.key == "class_db_busy" for s in SITES)


@pytest.mark.parametrize("site", SITES, ids=lambda s: s.where)
def test_raise_site_names_a_key_and_parameters_only(site):
    """No English sentence beside the key: the one positional argument is a literal key."""
    assert site.n_positional == 1, f"{site.where}: pass only the key positionally, parameters by name"
    assert isinstance(site.key, str) and site.key.isidentifier(), f"{site.where}: key must be a str literal"


@pytest.mark.parametrize("lang", LANGS)
def test_every_raised_key_is_in_the_catalog_with_the_parameters_passed(lang):
    texts = catalog(lang)
    missing = sorted({f"{s.where} errors.{s.key}" for s in SITES if f"errors.{s.key}" not in texts})
    assert not missing, missing
    mismatched = [
        f"{s.where} errors.{s.key}: passes {sorted(s.params)}, text uses {sorted(_fields(texts[f'errors.{s.key}']))}"
        for s in SITES
        if not s.spreads and _fields(texts[f"errors.{s.key}"]) != s.params
    ]
    assert not mismatched, mismatched


def test_a_positional_message_is_rejected():
    with pytest.raises(TypeError):
        LabError("h_divides", "d_model = {d_model} cannot be cut into {h} equal heads.", d_model=6, h=4)


def test_str_is_the_english_catalog_text():
    err = LabError("h_divides", d_model=6, h=4)
    assert str(err) == "d_model = 6 cannot be cut into 4 equal heads."
    assert str(err) == translate("en", "errors.h_divides", d_model=6, h=4)
    assert (err.key, err.params) == ("h_divides", {"d_model": 6, "h": 4})


def test_a_raised_error_reads_as_its_english_text():
    """A real raise site, end to end: the message a log shows is the English catalog sentence."""
    with pytest.raises(LabError, match=r"^d_model = 6 cannot be cut into 4 equal heads\.$") as info:
        param_counts(6, 4)
    assert info.value.key == "h_divides"


def test_subclasses_render_their_key_too():
    from mha_core.classroom.storage import DatabaseError

    err = DatabaseError("class_db_busy")
    assert isinstance(err, LabError) and str(err) == translate("en", "errors.class_db_busy")


def test_an_error_survives_pickling_with_its_parameters():
    err = pickle.loads(pickle.dumps(LabError("class_closed", code="K7QX-2MPA")))
    assert (type(err), err.key, err.params) == (LabError, "class_closed", {"code": "K7QX-2MPA"})
    assert "K7QX-2MPA" in str(err)


def test_errors_imports_without_a_cycle():
    """mha_core.errors imports the catalog loader; the loader must not import errors back."""
    code = "import mha_core.errors as e; print(e.LabError('x_empty'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == translate("en", "errors.x_empty")
