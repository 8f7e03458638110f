"""The project is an installed package: tests and benchmarks import it by name, never by editing sys.path, and tests
share helpers through helper modules (apphelpers, quizhelpers) and fixtures, never by importing each other."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").glob("*.py"),
                  *(ROOT / "harness").glob("*.py")])


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _touches_sys_path(tree: ast.Module) -> list[int]:
    """Lines that name sys.path (any use: insert, append, assignment) or import it from sys."""
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "path"
             and isinstance(n.value, ast.Name) and n.value.id == "sys"]
    lines += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "sys"
              and any(a.name == "path" for a in n.names)]
    return lines


def _test_module_imports(tree: ast.Module) -> list[str]:
    """Imports of another test module or of a conftest (helpers belong in helper modules or fixtures)."""
    names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    return [m for m in names if m.split(".")[-1].startswith("test_") or m.split(".")[-1] == "conftest"]


def test_the_checks_catch_what_they_look_for():
    bad = ast.parse("import sys\nfrom sys import path\nsys.path.insert(0, 'x')\nfrom test_quiz import STATED\n"
                    "import conftest\nfrom tests.e2e.conftest import wait_ready\n")
    assert _touches_sys_path(bad) == [3, 2]
    assert _test_module_imports(bad) == ["test_quiz", "tests.e2e.conftest", "conftest"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sys_path_edits_and_no_test_module_imports(path):
    tree = _tree(path)
    assert not _touches_sys_path(tree), f"{path.name} uses sys.path: import the installed package instead"
    if path != Path(__file__).resolve():  # this file names it to look for it
        assert "PYTHONPATH" not in path.read_text(encoding="utf-8"), f"{path.name} sets PYTHONPATH"
    assert not _test_module_imports(tree), f"{path.name} imports a test module: move the helper to a helper module"


def test_pyproject_packages_the_core_and_the_benchmarks():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["name"] == "mha-lab" and meta["project"]["requires-python"] == ">=3.11"
    assert meta["build-system"]["build-backend"] == "setuptools.build_meta"
    assert set(meta["tool"]["setuptools"]["packages"]["find"]["include"]) >= {"mha_core*", "benchmarks*", "harness*"}
    assert (ROOT / "benchmarks" / "__init__.py").exists() and (ROOT / "harness" / "__init__.py").exists()


def test_the_installed_package_imports_from_any_directory(tmp_path):
    """After the README's test command (pip install --no-deps -e .): the core, its assets, the benchmarks' helpers and
    the harness load in a folder that is not the checkout, from this checkout."""
    code = ("import mha_core, benchmarks.timing, harness.server; from mha_core.i18n import catalog; "
            "print(mha_core.__file__); print(harness.server.ROOT); print(len(catalog('en')) > 0)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"not installed? run: pip install --no-deps -e .\n{out.stderr}"
    core, harness_root, catalog_loaded = out.stdout.split()
    assert Path(core) == ROOT / "mha_core" / "__init__.py", f"mha_core is imported from another checkout: {core}"
    assert Path(harness_root) == ROOT and catalog_loaded == "True"


@pytest.mark.parametrize("path", sorted((ROOT / "tests").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_tests_do_not_import_the_benchmarks(path):
    """What tests and benchmarks share (starting a server, a websocket student) lives in harness/, not benchmarks/."""
    tree = _tree(path)
    names = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
    names += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in names if m.split(".")[0] == "benchmarks"], f"{path.name} imports the benchmarks package"
