"""The package's import graph, read from the source with ``ast`` (every import, also those inside functions, which
is where a cycle hides): no cycle between mha_core modules, Streamlit only under mha_core/ui/, and nothing in
mha_core reaching up into the pages or the tests."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "mha_core"
UI = f"{PACKAGE}.ui"
# top-level names a module of the package must never import: the page scripts and the test suite
UPWARD = frozenset({"pages", "tests"} | {p.stem for p in (ROOT / "tests").glob("*.py")})


@dataclass(frozen=True)
class Import:
    """One import statement's target as written (absolute, relative ones resolved) and its line."""

    module: str           # "mha_core.ui", "streamlit", "os"
    names: tuple[str, ...]  # the names after ``from … import``; () for ``import module``
    line: int


def module_name(path: Path) -> str:
    """mha_core/ui/quiz.py -> mha_core.ui.quiz; mha_core/ui/__init__.py -> mha_core.ui."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def imports(name: str, source: str, is_package: bool = False) -> Iterator[Import]:
    """Every import in a module's source, anywhere in it (module level, functions, TYPE_CHECKING blocks)."""
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's own package, one level up per extra dot
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield Import(target, tuple(a.name for a in node.names), node.lineno)


def imports_of(name: str, path: Path) -> list[Import]:
    """The imports of one module file."""
    return list(imports(name, path.read_text(encoding="utf-8"), path.name == "__init__.py"))


def resolve(imp: Import, modules: dict[str, Path]) -> set[str]:
    """The package modules an import loads: ``from mha_core.ui import quiz`` is mha_core.ui.quiz when quiz is a
    submodule (else a name from mha_core/ui/__init__.py); ``import mha_core.a.b`` is the longest known prefix."""
    if not (imp.module == PACKAGE or imp.module.startswith(PACKAGE + ".")):
        return set()
    found: set[str] = set()
    for n in imp.names:
        if f"{imp.module}.{n}" in modules:
            found.add(f"{imp.module}.{n}")
        elif imp.module in modules:
            found.add(imp.module)
    if not imp.names:
        parts = imp.module.split(".")
        found.update(".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in modules)
        found = {max(found, key=len)} if found else found
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (itself excluded)."""
    return {name: {dep for imp in imports_of(name, path) for dep in resolve(imp, modules)} - {name}
            for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path a -> b -> … -> a, or None (depth-first search, iterative)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def all_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles until none is left, each found one broken at its last edge (so the message names every one)."""
    left = {k: set(v) for k, v in graph.items()}
    found = []
    while (cycle := find_cycle(left)) is not None:
        found.append(cycle)
        left[cycle[-2]].discard(cycle[-1])
    return found


MODULES = package_modules()


def test_the_graph_sees_the_package():
    """The walk finds the modules and the edges it must (so an empty graph cannot pass the cycle test)."""
    graph = import_graph(MODULES)
    assert {"mha_core.ui.quiz", "mha_core.ui.render", "mha_core.attention"} <= set(graph)
    assert "mha_core.ui.i18n" in graph["mha_core.ui"]          # from mha_core.ui.i18n import …
    assert "mha_core.quiz.bank" in graph["mha_core.ui.quiz"]   # from mha_core.quiz.bank import …


def test_resolve_reads_every_form_of_import():
    modules = {m: Path() for m in ("mha_core", "mha_core.ui", "mha_core.ui.quiz", "mha_core.ui.i18n", "mha_core.x")}
    assert resolve(Import("mha_core.ui", ("quiz", "t"), 1), modules) == {"mha_core.ui.quiz", "mha_core.ui"}
    assert resolve(Import("mha_core.ui.quiz", (), 1), modules) == {"mha_core.ui.quiz"}
    assert resolve(Import("mha_core.ui.quiz.deep", (), 1), modules) == {"mha_core.ui.quiz"}
    assert resolve(Import("streamlit", ("cache_data",), 1), modules) == set()
    source = "from . import quiz\nfrom ..x import y\nfrom .i18n import t\ndef f():\n    import mha_core.ui.quiz\n"
    assert [i.module for i in imports("mha_core.ui.render", source)] == [
        "mha_core.ui", "mha_core.x", "mha_core.ui.i18n", "mha_core.ui.quiz"]
    assert [i.module for i in imports("mha_core.ui", "from . import quiz\n", is_package=True)] == ["mha_core.ui"]


def test_a_cycle_is_found_and_named():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert all_cycles({**graph, "d": {"e"}, "e": {"d"}}) == [["a", "b", "c", "a"], ["d", "e", "d"]]


def test_the_package_has_no_import_cycle():
    cycles = all_cycles(import_graph(MODULES))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_streamlit_only_under_ui_and_nothing_imports_pages_or_tests(name):
    bad = []
    for imp in imports_of(name, MODULES[name]):
        top = imp.module.split(".")[0]
        if top == "streamlit" and not (name == UI or name.startswith(UI + ".")):
            bad.append(f"line {imp.line}: streamlit outside {UI}")
        if top in UPWARD:
            bad.append(f"line {imp.line}: imports {imp.module} (pages and tests sit above the package)")
    assert not bad, f"{name}: " + "; ".join(bad)
