"""The walls between tefcore's rooms, read from the source (every import, lazy ones included).

Imports run one way: the application layer (``cli``, ``reproduce``) -> ``chapters`` -> ``judges`` ->
``mind`` -> the core (``fusion``, ``metrics``, ``evaluate``, ``simulate``, ``information``). Judges turn
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
LAYERS = {"core": 0, "mind": 1, "judges": 2, "chapters": 3, "application": 4}
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
    if len(parts) > 1 and parts[1] in ("mind", "judges", "chapters"):
        return parts[1]
    return "core"  # the core modules, and names of the face (``from tefcore import __version__, tef``)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module a source file imports (absolute names; ``from tefcore import x`` gives ``tefcore.x``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "tefcore":
                found += [(node.lineno, f"tefcore.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_rooms_are_known_and_the_top_level_is_small() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(top) <= 12, top
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"} <= set(CORE) | set(APPLICATION)
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()} == {
        "mind", "judges", "chapters"}


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
    bad = [f"line {line}: {name}" for line, name in imports(source) if name in FUSION_SIDE]
    assert not bad, f"{module_name(source)} imports fusion-side modules: {bad}"


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    """The import reader finds lazy and ``from tefcore import`` imports (so the tests above can fail)."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from tefcore import chapters\n    import papermill\n", encoding="utf-8")
    assert imports(src) == [(2, "tefcore.chapters"), (3, "papermill")]
    assert LAYERS[room("tefcore.chapters")] > LAYERS[room("tefcore.judges.run")]
