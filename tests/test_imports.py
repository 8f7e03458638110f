"""The package's import graph, read from the source with ``ast`` (every import, also those inside functions, which
is where a cycle hides, and every parent package's ``__init__`` an import runs): no cycle between mha_core modules,
no function-level import of a project module (but a lazy load of a heavy library, with its reason), Streamlit only
under mha_core/ui/, and nothing in mha_core reaching up into the pages or the tests."""

from __future__ import annotations

import ast
import functools
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


def imports(name: str, source: str | ast.AST, is_package: bool = False) -> Iterator[Import]:
    """Every import in a module's source, anywhere in it (module level, functions, TYPE_CHECKING blocks)."""
    tree = source if isinstance(source, ast.AST) else ast.parse(source, filename=name)
    for node in ast.walk(tree):
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


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree (parsed once per run)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@functools.cache
def imports_of(name: str, path: Path) -> list[Import]:
    """The imports of one module file (read once per run)."""
    return list(imports(name, _tree(path), path.name == "__init__.py"))


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


def parents_run(importer: str, target: str, modules: dict[str, Path]) -> set[str]:
    """The packages whose ``__init__`` Python runs to import ``target`` from ``importer``: every package above the
    target that is not also above the importer (those are already being imported when the importer runs)."""
    own = importer.split(".")
    parts = target.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))
            if ".".join(parts[:i]) in modules and parts[:i] != own[:i]}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (itself excluded), with the parent packages' ``__init__`` modules
    the import runs (``from mha_core.quiz.bank import x`` runs mha_core/quiz/__init__.py first)."""
    graph = {}
    for name, path in modules.items():
        deps = {dep for imp in imports_of(name, path) for dep in resolve(imp, modules)}
        deps |= {p for dep in deps for p in parents_run(name, dep, modules)}
        graph[name] = deps - {name}
    return graph


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


@functools.cache
def package_graph() -> dict[str, set[str]]:
    """The package's import graph, built once per run (the tests only read it)."""
    return import_graph(MODULES)


def test_the_graph_sees_the_package():
    """The walk finds the modules and the edges it must (so an empty graph cannot pass the cycle test)."""
    graph = package_graph()
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


def test_an_import_counts_the_parent_packages_it_runs():
    modules = {m: Path() for m in ("mha_core", "mha_core.quiz", "mha_core.quiz.bank", "mha_core.quiz.progress_store",
                                   "mha_core.lesson", "mha_core.lesson.plan")}
    assert parents_run("mha_core.lesson.plan", "mha_core.quiz.bank", modules) == {"mha_core.quiz"}
    assert parents_run("mha_core.quiz.progress_store", "mha_core.quiz.bank", modules) == set()  # its own package
    # the cycle issue 25 found: the old graph had no edge into mha_core/quiz/__init__.py, so it saw none
    graph = {"mha_core.lesson": {"mha_core.lesson.plan"}, "mha_core.lesson.plan": {"mha_core.quiz.bank"},
             "mha_core.quiz": {"mha_core.quiz.bank", "mha_core.quiz.progress_store"}, "mha_core.quiz.bank": set(),
             "mha_core.quiz.progress_store": {"mha_core.lesson"}}
    assert find_cycle(graph) is None
    graph["mha_core.lesson.plan"] |= parents_run("mha_core.lesson.plan", "mha_core.quiz.bank", modules)
    assert find_cycle(graph) == ["mha_core.lesson", "mha_core.lesson.plan", "mha_core.quiz",
                                 "mha_core.quiz.progress_store", "mha_core.lesson"]


def test_the_package_has_no_import_cycle():
    cycles = all_cycles(package_graph())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_streamlit_only_under_ui_and_nothing_imports_pages_or_tests():
    """One check over every module (naming each offender), not one test per module."""
    bad = []
    for name, path in sorted(MODULES.items()):
        for imp in imports_of(name, path):
            top = imp.module.split(".")[0]
            if top == "streamlit" and not (name == UI or name.startswith(UI + ".")):
                bad.append(f"{name} line {imp.line}: streamlit outside {UI}")
            if top in UPWARD:
                bad.append(f"{name} line {imp.line}: imports {imp.module} (pages and tests sit above the package)")
    assert not bad, "; ".join(bad)


# Third-party libraries heavy enough to load only when used (seconds and hundreds of MiB, or an optional extra): a
# function may import a project module that loads one of them, with a comment on its line saying why.
HEAVY = frozenset({"torch", "transformers", "fpdf"})
LAZY_NOTE = "# lazy:"


def function_imports(name: str, path: Path) -> Iterator[tuple[ast.stmt, str]]:
    """Imports inside a function (or method) of a module, with their source line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    todo: list[tuple[ast.AST, bool]] = [(_tree(path), False)]
    while todo:
        node, in_function = todo.pop()
        if in_function and isinstance(node, ast.Import | ast.ImportFrom):
            yield node, lines[node.lineno - 1]
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        todo.extend((child, inside) for child in ast.iter_child_nodes(node))


def loads_heavy(module: str, modules: dict[str, Path], heavy: frozenset[str] = HEAVY) -> bool:
    """Whether importing ``module`` loads a ``heavy`` library (its module-level imports, and theirs)."""
    return bool(heavy_loads(module, modules, heavy))


def heavy_loads(module: str, modules: dict[str, Path], heavy: frozenset[str]) -> list[str]:
    """The first chain of module-level imports by which importing ``module`` loads a ``heavy`` library, or []."""
    seen, todo = set(), [(module, [module])]
    while todo:
        m, chain = todo.pop()
        if m in seen or m not in modules:
            continue
        seen.add(m)
        for node in _tree(modules[m]).body:  # module level only: an ``if TYPE_CHECKING:`` block is not run
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            hit = [n for n in names if not getattr(node, "level", 0) and n.split(".")[0] in heavy]
            if hit:
                return [*chain, hit[0]]
            imp = next(imports(m, ast.unparse(node), modules[m].name == "__init__.py"))
            deps = resolve(imp, modules)
            todo.extend((d, [*chain, d]) for d in deps | {p for d in deps for p in parents_run(m, d, modules)})
    return []


def late_imports(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """Function-level imports of project modules that are not a noted lazy load of a heavy library."""
    bad = []
    for node, line in sorted(function_imports(name, path), key=lambda found: found[0].lineno):
        imp = next(imports(name, ast.unparse(node), path.name == "__init__.py"))
        targets = resolve(imp, modules)
        if not targets:
            continue
        lazy = LAZY_NOTE in line and all(loads_heavy(t, modules) for t in targets)
        if not lazy:
            bad.append(f"line {node.lineno}: {line.strip()}")
    return bad


def test_function_level_imports_are_found_and_only_a_noted_heavy_load_passes(tmp_path):
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "heavy.py").write_text("import torch\n")
    (pkg / "light.py").write_text("import json\n")
    (pkg / "user.py").write_text(
        "def a():\n    from mha_core import heavy  # lazy: loads torch\n"
        "def b():\n    from mha_core import light  # lazy: not heavy\n"
        "def c():\n    from mha_core import heavy\n"
        "def d():\n    import torch\n")
    modules = {f"{PACKAGE}.{p.stem}" if p.stem != "__init__" else PACKAGE: p for p in pkg.glob("*.py")}
    assert [b.split(":")[0] for b in late_imports(f"{PACKAGE}.user", pkg / "user.py", modules)] == [
        "line 4", "line 6"]


def test_no_function_level_import_of_a_project_module():
    bad = {name: late for name, path in MODULES.items() if (late := late_imports(name, path, MODULES))}
    assert not bad, "function-level imports (move to module level; a heavy lazy load says '# lazy: why'): " + \
        "; ".join(f"{n} {', '.join(b)}" for n, b in sorted(bad.items()))


# What a fresh server's first page must not import: 0.27 s (Altair) and 0.26 s (pandas) of its cold start; a page
# that draws a chart imports them through its builders' modules.
FIRST_PAGE_SPARES = frozenset({"altair", "pandas", "torch", "transformers", "fpdf"})


def test_the_first_page_imports_no_chart_library_nor_torch():
    """app.py and the default page (overview), followed through every module-level import they run."""
    scripts = [ROOT / "app.py", ROOT / "pages" / "overview.py"]
    found = {}
    for script in scripts:
        for imp in imports("__main__", script.read_text(encoding="utf-8")):
            assert imp.module.split(".")[0] not in FIRST_PAGE_SPARES, f"{script.name} imports {imp.module}"
            for target in resolve(imp, MODULES):
                if chain := heavy_loads(target, MODULES, FIRST_PAGE_SPARES):
                    found[f"{script.name}: {imp.module}"] = " -> ".join(chain)
    assert not found, "; ".join(f"{k} loads {v}" for k, v in found.items())


def test_the_class_store_knows_no_lesson_type():
    """mha_core.classroom stores the lesson's plan and state as JSON text; mha_core.lesson encodes them."""
    graph = package_graph()
    bad = sorted(f"{m} -> {d}" for m in graph if m.startswith(f"{PACKAGE}.classroom")
                 for d in graph[m] if d == f"{PACKAGE}.lesson" or d.startswith(f"{PACKAGE}.lesson."))
    assert not bad, "; ".join(bad)


def test_the_app_spares_streamlit_s_once_per_process_repl_check():
    """Streamlit's first element in a process asks ``env_util.is_repl()`` (``inspect.stack()``: 80 ms of a fresh
    server's first page); importing mha_core.ui answers it. A fresh interpreter, as a new server is."""
    import subprocess
    import sys

    code = ("import mha_core.ui\n"
            "from streamlit import delta_generator, env_util\n"
            "asked = []\n"
            "env_util.is_repl = lambda: asked.append(1) or False\n"
            "delta_generator._maybe_print_use_warning()\n"
            "print(len(asked))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0", out.stderr


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_first_visit_imports_no_class_store_nor_builds_the_chinese_dictionary(lang):
    """A fresh server's first page, outside a class, imports neither SQLAlchemy nor the class store's modules (about
    0.25 s of its cold start, issue 26): ``mha_core.classroom`` gives its names on first use; nor, in Chinese, does it
    build jieba's dictionary (0.75 s: the default sentence's cut ships in assets/segments.zh.json). A fresh
    interpreter running app.py's first page, as a new server's first visitor does."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from streamlit.testing.v1 import AppTest\n"
            "from mha_core import inputs\n"
            "at = AppTest.from_file('app.py', default_timeout=60)\n"
            f"at.query_params['lang'] = {lang!r}\n"
            "at.run()\n"
            "assert not at.exception, at.exception\n"
            "assert at.title, 'the first page drew no title'\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sqlalchemy' or m in (\n"
            "    'mha_core.classroom.storage', 'mha_core.classroom.db', 'mha_core.classroom.schema')),\n"
            "      inputs._build_segmenter.cache_info().currsize, at.session_state['lang'])\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"[] 0 {lang}", out.stdout[:300]
