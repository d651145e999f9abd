"""The walls between tefcore's rooms, read from the source (every import, lazy ones included).

Imports run one way: the application layer (``cli``, ``reproduce``) -> ``chapters`` -> ``judges`` ->
``mind`` and ``tasks`` (MIND is one task among others: one layer) -> the core (``fusion``, ``metrics``, ``evaluate``, ``simulate``, ``information``). Judges turn
prompts into probabilities and know nothing of fusion; nothing in tefcore imports the book build tool
or the book toolchain.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tefcore

PACKAGE = Path(tefcore.__file__).resolve().parent
CORE = ("fusion", "metrics", "evaluate", "simulate", "information")
APPLICATION = ("cli", "reproduce")
LAYERS = {"core": 0, "mind": 1, "tasks": 1, "judges": 2, "chapters": 3, "application": 4}
FUSION_SIDE = {f"tefcore.{name}" for name in ("fusion", "evaluate", "simulate", "information")}
BOOK_TOOLCHAIN = ("tefbook", "papermill", "jupyter_book", "sphinx", "playwright", "myst_nb", "nbval")


def room(module: str) -> str:
    """The room of a dotted tefcore module name.

    >>> room("tefcore.judges.e5"), room("tefcore.fusion"), room("tefcore.cli"), room("tefcore")
    ('judges', 'core', 'application', 'core')
    """
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in APPLICATION:
        return "application"
    if len(parts) > 1 and parts[1] in ("mind", "tasks", "judges", "chapters"):
        return parts[1]
    return "core"  # the core modules, and names of the face (``from tefcore import __version__, tef``)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module a source file imports (absolute names; ``from tefcore.m import x`` gives ``tefcore.m.x``,
    which :func:`module_of` resolves to the module ``x`` or to ``tefcore.m``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "tefcore":  # the name may be a submodule: keep it
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_rooms_are_known_and_the_top_level_is_small() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(top) <= 12, top
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"} <= set(CORE) | set(APPLICATION)
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()} == {
        "mind", "tasks", "judges", "chapters"}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way(source: Path) -> None:
    here = module_name(source)
    level = LAYERS[room(here)]
    upward = [f"line {line}: {name}" for line, name in imports(source)
              if name.split(".")[0] == "tefcore" and LAYERS[room(name)] > level]
    assert not upward, f"{here} ({room(here)}) imports from a higher room: {upward}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_book_toolchain_in_the_library(source: Path) -> None:
    bad = [f"line {line}: {name}" for line, name in imports(source) if name.split(".")[0] in BOOK_TOOLCHAIN]
    assert not bad, f"{module_name(source)} imports the book's toolchain: {bad}"


@pytest.mark.parametrize("source", sorted((PACKAGE / "judges").glob("*.py")), ids=lambda p: p.name)
def test_judges_know_nothing_of_fusion(source: Path) -> None:
    bad = [f"line {line}: {name}" for line, name in imports(source) if module_of(name) in FUSION_SIDE]
    assert not bad, f"{module_name(source)} imports fusion-side modules: {bad}"


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    """The import reader finds lazy and ``from tefcore import`` imports (so the tests above can fail)."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from tefcore import chapters\n    import papermill\n", encoding="utf-8")
    assert imports(src) == [(2, "tefcore.chapters"), (3, "papermill")]
    assert LAYERS[room("tefcore.chapters")] > LAYERS[room("tefcore.judges.run")]


def module_of(name: str) -> str | None:
    """The tefcore module (a file or a package's ``__init__``) an imported name lives in, else None.

    >>> module_of("tefcore.judges.run.Setting"), module_of("tefcore.__version__"), module_of("numpy")
    ('tefcore.judges.run', 'tefcore', None)
    """
    parts = name.split(".")
    if parts[0] != "tefcore":
        return None
    while parts:
        path = PACKAGE.parent.joinpath(*parts)
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return None


def import_graph(sources: list[Path]) -> dict[str, set[str]]:
    """Module -> the tefcore modules it imports (lazy imports included)."""
    graph: dict[str, set[str]] = {}
    for source in sources:
        here = module_name(source)
        graph[here] = {m for _, name in imports(source) if (m := module_of(name)) is not None and m != here}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted.

    >>> cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycle_in_the_package() -> None:
    """No two modules of tefcore import each other, directly or through others, not even lazily.

    Chapter support (``tefcore.chapters``) leaves the package for the book (issue 22), where the book's
    own test checks it.
    """
    found = cycles(import_graph([s for s in SOURCES if room(module_name(s)) != "chapters"]))
    assert not found, f"import cycles: {found}"


def test_the_cycle_check_sees_a_cycle(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def f():\n    from tefcore.judges import run\n", encoding="utf-8")  # lazy, and a submodule
    b.write_text("import tefcore.judges.ray_engine\n", encoding="utf-8")
    graph = {"tefcore.judges.ray_engine": {module_of(n) for _, n in imports(a)} - {None},
             "tefcore.judges.run": {module_of(n) for _, n in imports(b)} - {None}}
    assert cycles(graph) == [["tefcore.judges.ray_engine", "tefcore.judges.run"]]
