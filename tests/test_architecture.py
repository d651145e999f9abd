"""The walls of the code, read from the source (every import, lazy ones included).

The library (``tefcore``, the wheel a user installs) has layers whose imports run one way, down:
the application (``cli``, ``explain``) -> ``extraction`` (the resumable loop, its engines, the cache)
-> ``judges`` -> ``mind`` (MIND, one task among others) -> ``tasks`` (what every corpus shares: sides,
slots, pairs, segmentation, the ``Task``) -> the core (``errors``, ``fusion``, ``metrics``, ``evaluate``,
``simulate``, ``information``, ``hashing``, ``retry``, ``redact``). Judges turn prompts into
probabilities, know nothing of fusion and never import the loop. The library never imports the book: neither its tools (``tefbook``), nor its chapter support
(``tefbook.companion``, ``tefbook.chapters``), nor the book toolchain.

The book's code (``book/``: ``tefbook`` with its chapter support ``tefbook.companion`` and ``tefbook.chapters``,
and ``tefpaper``) builds on the library: ``tefpaper`` (the paper's tables and the claims ledger, which
``tef claims`` runs) and the build tool (``tefbook`` outside its two chapter-support packages) know nothing of
chapter support, ``tefbook.companion`` (what several chapters share) knows no chapter, and no chapter's module
imports another chapter's.

Neither side has an import cycle, no module grows past its size limit, and the library as a whole stays
within its own (11,000 lines of Python).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

import tefcore

PACKAGE = Path(tefcore.__file__).resolve().parent
BOOK = PACKAGE.parent / "book"
CORE = ("errors", "fusion", "metrics", "evaluate", "inference", "simulate", "information", "hashing", "retry", "redact")
APPLICATION = ("cli", "explain", "report")
ROOMS = ("tasks", "mind", "judges", "extraction")
LAYERS = {"core": 0, "tasks": 1, "mind": 2, "judges": 3, "extraction": 4, "application": 5}
"""The layer order: a module imports only from its own layer or the ones below."""
FUSION_SIDE = {f"tefcore.{name}" for name in ("fusion", "evaluate", "inference", "simulate", "information")}
BOOK_CODE = ("tefbook", "tefpaper")
CHAPTER_SUPPORT = ("tefbook.companion", "tefbook.chapters")
"""The book's chapter support, inside ``tefbook`` but walled off from its build tool."""
BOOK_TOOLCHAIN = ("papermill", "jupyter_book", "sphinx", "playwright", "myst_nb", "nbval", "jupytext", "IPython",
                  "plotly", "altair")
LIMITS = {"tefcore": 700, "companion": 600}
"""Most lines a module may have."""
PACKAGE_LIMIT = 13_700
"""Most lines the wheel's code may have in all (``find tefcore -name '*.py' | xargs wc -l``): 11,000 when it was
set, then 500 more for the deterministic e5 engine build and the numeric environment every cache header records
(``judges/e5_engine``, ``judges/machine``) and the one lookup error (``errors``) with the rules' checks; then
2,200 more for the evidence view (``explain``, about 600), the intervals and blind-rule warnings
(``inference``, ``report``), the learning judge's multinomial probes (``judges/probes``) and the checks that
refuse bad texts, caches and keys in one line. A budget, not a target: it only goes down from here."""
FORBIDDEN = ("task is None", "choices is None", "TYPE_CHECKING")
"""No ``None`` stands for MIND (every judge, the loop, the cache and the CLI receive a task), and no import
is hidden from the import graph."""


def room(module: str) -> str:
    """The room of a dotted tefcore module name.

    >>> room("tefcore.judges.e5"), room("tefcore.fusion"), room("tefcore.cli"), room("tefcore.mind.load")
    ('judges', 'core', 'application', 'mind')
    """
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in APPLICATION:
        return "application"
    if len(parts) > 1 and parts[1] in ROOMS:
        return parts[1]
    return "core"  # the core modules, and names of the face (``from tefcore import __version__, tef``)


def module_name(path: Path, root: Path) -> str:
    """Dotted name of a source file under a folder that holds packages."""
    rel = path.relative_to(root).with_suffix("")
    return ".".join(p for p in rel.parts if p != "__init__")


def book_part(module: str) -> str:
    """The part of the book's code a dotted module name belongs to: a chapter-support package, else its
    top-level package.

    >>> book_part("tefbook.chapters.ch04"), book_part("tefbook.companion"), book_part("tefbook.build")
    ('tefbook.chapters', 'tefbook.companion', 'tefbook')
    """
    return next((part for part in CHAPTER_SUPPORT if module == part or module.startswith(f"{part}.")),
                module.split(".")[0])


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module a source file imports (absolute names; ``from tefcore import x`` gives ``tefcore.x``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in ("tefcore", *BOOK_CODE):
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def toplevel_imports(path: Path) -> set[str]:
    """The modules a file imports when it is itself imported: the module's statements, those of its classes
    and of its ``if``/``try``/``with`` blocks, but not a function's nor an ``if TYPE_CHECKING:`` block's."""
    lines: set[int] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                lines.add(node.lineno)
            elif isinstance(node, ast.If):
                checking = "TYPE_CHECKING" in ast.unparse(node.test)
                visit(node.orelse if checking else [*node.body, *node.orelse])
            elif isinstance(node, ast.Try):
                visit([*node.body, *[s for h in node.handlers for s in h.body], *node.orelse, *node.finalbody])
            elif isinstance(node, (ast.With, ast.ClassDef)):
                visit(node.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {name for line, name in imports(path) if line in lines}


def import_graph(sources: Mapping[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports, lazily or not (a name resolves to its longest known
    prefix).

    An import that runs when the module is imported, of ``a.b.c``, first runs the package ``a.b``'s
    ``__init__``: that package is an edge too, unless it is a package of the importer itself (whose
    ``__init__`` is already running).
    """
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, path in sources.items():
        eager = toplevel_imports(path)
        for _, imported in imports(path):
            target = imported
            while target and target not in sources:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
            while imported in eager and (target := target.rpartition(".")[0]):
                if not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative).

    >>> cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]})
    [['a', 'b', 'c']]
    >>> cycles({"a": ["b"], "b": []})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(graph[nxt])))
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


LIBRARY = {module_name(p, PACKAGE.parent): p for p in sorted(PACKAGE.rglob("*.py"))}
BOOK_SUPPORT = {module_name(p, BOOK): p for package in BOOK_CODE for p in sorted((BOOK / package).rglob("*.py"))}
SOURCES = sorted(LIBRARY.values())


def test_rooms_are_known_and_the_top_level_is_small() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert len(top) <= 13, top  # 13 since the evaluation tables and the inference left cli and evaluate
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"} <= set(CORE) | set(APPLICATION)
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()} == set(ROOMS)


def upward(here: str, source: Path) -> list[str]:
    """The imports of module ``here`` (its file ``source``) from a layer above its own, lazy ones included."""
    level = LAYERS[room(here)]
    return [f"line {line}: {name}" for line, name in imports(source)
            if name.split(".")[0] == "tefcore" and LAYERS[room(name)] > level]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way(source: Path) -> None:
    here = module_name(source, PACKAGE.parent)
    assert not upward(here, source), f"{here} ({room(here)}) imports from a higher layer: {upward(here, source)}"


def test_a_planted_upward_import_is_found(tmp_path: Path) -> None:
    """A module graph with one import running up (tasks -> mind, judges -> extraction, lazily) is refused,
    and the same graph without it passes: the layer test can fail."""
    root = tmp_path / "tefcore"
    files = {"tasks/schema.py": "from tefcore.errors import UnknownName\n",
             "mind/prompts.py": "from tefcore.tasks.schema import Choices\n",
             "judges/e5.py": "import numpy\nfrom tefcore.mind import prompts\n"}
    planted = {"tasks/schema.py": "from tefcore.mind.prompts import choices\n",
               "judges/e5.py": "def f():\n    from tefcore.extraction.run import run_extraction\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    sources = {module_name(p, tmp_path): p for p in sorted(root.rglob("*.py"))}
    assert not any(upward(name, path) for name, path in sources.items())
    for rel, text in planted.items():
        (root / rel).write_text(files[rel] + text, encoding="utf-8")
    found = {name: upward(name, path) for name, path in sources.items() if upward(name, path)}
    assert found == {"tefcore.tasks.schema": ["line 2: tefcore.mind.prompts"],
                     "tefcore.judges.e5": ["line 4: tefcore.extraction.run"]}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_mind_is_a_task_and_no_import_hides(source: Path) -> None:
    text = source.read_text(encoding="utf-8")
    found = [f"line {n}: {word}" for n, line in enumerate(text.splitlines(), 1) for word in FORBIDDEN if word in line]
    assert not found, f"{module_name(source, PACKAGE.parent)}: {found}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_library_never_imports_the_book(source: Path) -> None:
    bad = [f"line {line}: {name}" for line, name in imports(source)
           if name.split(".")[0] in (*BOOK_CODE, *BOOK_TOOLCHAIN)]
    assert not bad, f"{module_name(source, PACKAGE.parent)} imports the book's code or toolchain: {bad}"


@pytest.mark.parametrize("source", sorted((PACKAGE / "judges").glob("*.py")), ids=lambda p: p.name)
def test_judges_know_nothing_of_fusion(source: Path) -> None:
    bad = [f"line {line}: {name}" for line, name in imports(source) if name in FUSION_SIDE]
    assert not bad, f"{module_name(source, PACKAGE.parent)} imports fusion-side modules: {bad}"


@pytest.mark.parametrize("side", ["tefcore", "book"])
def test_no_import_cycle(side: str) -> None:
    found = cycles(import_graph(LIBRARY if side == "tefcore" else BOOK_SUPPORT))
    assert not found, f"import cycles in {side}: {found}"


@pytest.mark.parametrize("name", sorted(BOOK_SUPPORT), ids=str)
def test_the_book_tool_knows_no_chapter_and_companion_no_chapter_module(name: str) -> None:
    targets = {book_part(target) for _, target in imports(BOOK_SUPPORT[name])}
    part = book_part(name)
    if part in ("tefbook", "tefpaper"):
        assert not targets & set(CHAPTER_SUPPORT), f"{name} imports chapter support"
    if part == "tefpaper":
        assert "tefbook" not in targets, f"{name} imports the book's build tool"
    if part == "tefbook.companion":
        assert "tefbook.chapters" not in targets, f"{name} imports a chapter's module"
    if part == "tefbook.chapters":
        others = {t for _, t in imports(BOOK_SUPPORT[name]) if t.startswith("tefbook.chapters.ch")
                  and t.split(".")[2] != name.rpartition(".")[2]}
        assert not others, f"{name} imports another chapter's module: {sorted(others)}"


@pytest.mark.parametrize("path", [*SOURCES, *(BOOK_SUPPORT[n] for n in sorted(BOOK_SUPPORT)
                                               if book_part(n) in ("tefbook.companion", "tefpaper"))],
                         ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_modules_stay_small(path: Path) -> None:
    limit = LIMITS["companion" if "companion" in path.parts else "tefcore"]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= limit, f"{path.name} has {lines} lines (at most {limit})"


def test_the_library_stays_small() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in SOURCES}
    total = sum(sizes.values())
    largest = ", ".join(f"{name} {n}" for name, n in sorted(sizes.items(), key=lambda kv: -kv[1])[:3])
    assert total <= PACKAGE_LIMIT, f"tefcore has {total} lines of Python (at most {PACKAGE_LIMIT}; largest: {largest})"


# --- a judge module reads as its judge ----------------------------------------------------------------
JUDGE_SHARE = 0.5
"""Least share of a judge module's code that is the judge: its class, and the module's functions that its
``score`` or ``prepare`` reaches (prompt in, probabilities out). The rest (an engine's start, GPU placement,
a build check, a key's handling) is machinery and lives in a module of its own."""


def code_lines(tree: ast.Module, text: str) -> set[int]:
    """The lines that hold code: neither blank, nor a comment, nor a docstring."""
    import io
    import tokenize

    docs: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docs |= set(range(first.lineno, first.end_lineno + 1))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docs |= set(range(node.lineno, node.end_lineno + 1))  # an attribute's docstring
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    code = {line for tok in tokenize.generate_tokens(io.StringIO(text).readline) if tok.type not in skip
            for line in range(tok.start[0], tok.end[0] + 1)}
    return code - docs


def span(node: ast.AST) -> set[int]:
    """The lines of a definition, its decorators included."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]
    return set(range(start, node.end_lineno + 1))  # type: ignore[attr-defined]


def judge_share(path: Path) -> tuple[float, list[str]]:
    """The share of ``path``'s code lines that are its judge classes (those with a ``score`` method) and the
    module-level definitions that their ``score`` or ``prepare`` reaches; and the names of those classes."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    defs: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = node
            for item in getattr(node, "body", []) if isinstance(node, ast.ClassDef) else []:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    defs[f"{node.name}.{item.name}"] = item
    judges = [n for n in tree.body if isinstance(n, ast.ClassDef) and f"{n.name}.score" in defs]
    todo = [f"{j.name}.{root}" for j in judges for root in ("score", "prepare") if f"{j.name}.{root}" in defs]
    reached: set[str] = set()
    while todo:
        key = todo.pop()
        if key in reached:
            continue
        reached.add(key)
        owner = key.split(".")[0] if "." in key else None
        for node in ast.walk(defs[key]):
            if isinstance(node, ast.Name) and node.id in defs:
                todo += [node.id, *(k for k in defs if k.startswith(f"{node.id}."))]
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                todo += [f"{owner}.{node.attr}"] if f"{owner}.{node.attr}" in defs else []
    judge = set().union(*(span(j) for j in judges), *(span(defs[k]) for k in reached if "." not in k))
    code = code_lines(tree, text)
    return len(judge & code) / len(code), [j.name for j in judges]


JUDGE_MODULES = sorted(p for p in (PACKAGE / "judges").glob("*.py") if judge_share(p)[1])


def test_the_judge_modules_are_found() -> None:
    assert {p.stem for p in JUDGE_MODULES} >= {"e5", "e5_crossfit", "openai", "local", "vllm"}


@pytest.mark.parametrize("path", JUDGE_MODULES, ids=lambda p: p.stem)
def test_a_judge_module_is_mostly_its_judge(path: Path) -> None:
    share, judges = judge_share(path)
    assert share > JUDGE_SHARE, f"{path.name}: {judges} and what their scoring reaches are {share:.0%} of its code"


def test_the_judge_share_sees_machinery(tmp_path: Path) -> None:
    """A judge beside a GPU helper its scoring never calls: the helper counts against it; once ``score``
    calls it, it is the judge's."""
    helper = "def gpus(env):\n" + "".join(f"    x{i} = env.get({i})\n" for i in range(12)) + "    return 0\n"
    judge = 'class Judge:\n    """Doc."""\n\n    def score(self, requests):\n        return self.read(requests)\n\n' \
            "    def read(self, requests):\n        return [r for r in requests]\n"
    path = tmp_path / "judge.py"
    path.write_text(helper + "\n\n" + judge, encoding="utf-8")
    share, judges = judge_share(path)
    assert judges == ["Judge"] and share < JUDGE_SHARE
    path.write_text(helper + "\n\n" + judge.replace("[r for r in requests]", "gpus({})"), encoding="utf-8")
    assert judge_share(path)[0] == 1.0


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    """The import reader finds lazy and ``from tefcore import`` imports, the cycle finder finds a cycle of
    real files, so that the tests above can fail."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from tefcore import chapters\n    import papermill\n", encoding="utf-8")
    assert imports(src) == [(2, "tefcore.chapters"), (3, "papermill")]
    assert LAYERS[room("tefcore.cli")] > LAYERS[room("tefcore.extraction.run")]
    (tmp_path / "a.py").write_text("import b\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("def f():\n    from a import g\n", encoding="utf-8")
    graph = import_graph({"a": tmp_path / "a.py", "b": tmp_path / "b.py"})
    assert cycles(graph) == [["a", "b"]]
    # through a package's __init__: p.m imports q.s, which runs q/__init__, which imports p.m
    files = {name: tmp_path / f"{name}.py" for name in ("p", "p.m", "q", "q.s")}
    for name, text in {"p": "", "p.m": "from q.s import x\n", "q": "from p.m import y\n", "q.s": ""}.items():
        files[name].write_text(text, encoding="utf-8")
    assert cycles(import_graph(files)) == [["p.m", "q"]]


# --- one name, one home: a public name is one that something outside its module uses -------------------------
USERS = ("book/**/*.py", "notebooks/*.py", "tests/**/*.py", "benchmarks/**/*.py", "scripts/*.py")
"""Python that uses the library from outside: the book's code and chapters, the tests, the benchmarks, the scripts."""
DOCS = ("README.md", "book/*.md", "pyproject.toml")
"""Where a name is documented for a user: code in the README and the book's pages, and the ``tef`` entry point."""
NOT_A_CALLER = ("tests/",)
"""A name only tests reach is dead code (a test keeps nothing alive by itself)."""
PUBLIC_BY_DESIGN = {
    "tefcore.judges.openai.InvalidAPIKey": "the error a malformed API key raises to the user; a MissingAPIKey a "
                                           "caller catches, named in the traceback",
}
"""Public names no other file uses, public on purpose (each with its reason). A class a public function returns
(``bootstrap_ci`` returns an ``Interval``) is public by that rule, not by this list."""
PENDING_PRIVATE: dict[str, tuple[str, ...]] = {}
"""Used only inside their module, to become private: temporary, while these modules change for other reasons.
The list may only shrink."""
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DOTTED = re.compile(r"[A-Za-z_][\w.:]*")
_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)


def public_names(tree: ast.Module) -> dict[str, str]:
    r"""The public top-level names a module defines (functions, classes, constants and type aliases), by kind.

    >>> public_names(ast.parse("def f(): pass\nclass C: pass\nX = Y = 1\n_p = 2\nif True:\n    Z = 3"))
    {'f': 'function', 'C': 'class', 'X': 'constant', 'Y': 'constant'}
    """
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = "class" if isinstance(node, ast.ClassDef) else "function"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                found.update({n.id: "constant" for n in ast.walk(target) if isinstance(n, ast.Name)})
    return {name: kind for name, kind in found.items() if not name.startswith("_")}


def _prose(tree: ast.Module) -> set[int]:
    """The ids of a module's string statements (docstrings, attribute notes) and of its ``__all__`` list."""
    found = set()
    for node in ast.walk(tree):
        for statement in getattr(node, "body", []) if isinstance(getattr(node, "body", None), list) else []:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
            elif isinstance(statement, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in statement.targets):
                found.update(id(n) for n in ast.walk(statement.value))
    return found


def _string_names(tree: ast.Module) -> set[str]:
    """Identifiers in a module's code strings that look like a name or a dotted path (``"cmd"``,
    ``"tefcore.cli:main"``), as ``getattr``, ``monkeypatch.setattr`` and registries use them; not its prose."""
    prose = _prose(tree)
    return {word for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in prose and _DOTTED.fullmatch(node.value) for word in _IDENTIFIER.findall(node.value)}


def used_within(tree: ast.Module) -> set[str]:
    r"""The names a module reads in its own code (not in its docstrings, doctests or ``__all__``).

    >>> sorted(used_within(ast.parse('__all__ = ["g"]\ndef f(): return g()\ndef g(): "f"\nh = getattr(m, "k")')))
    ['g', 'getattr', 'k', 'm']
    """
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads | _string_names(tree)


def reached_from(tree: ast.Module) -> set[str]:
    r"""The library's names a file reaches: imported from ``tefcore``, read as an attribute of a ``tefcore``
    module it imported, or named in a code string.

    >>> sorted(reached_from(ast.parse("from tefcore import fusion\nfrom tefcore.cli import main\n"
    ...                               "fusion.tef(x.score)\nsetattr(cli, 'hand_over', 1)")))
    ['fusion', 'hand_over', 'main', 'tef']
    """
    aliases, found = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] == "tefcore")
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "tefcore"):
            aliases.update(a.asname or a.name for a in node.names)
            found.update(a.name for a in node.names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                found.add(node.attr)
    return found | _string_names(tree)


def documented(text: str) -> set[str]:
    r"""The identifiers in a Markdown page's code (inline and fenced), or in a TOML file's entry points.

    >>> sorted(documented("Call `tef(p)` or\n```\nfrom tefcore import fuse_many\n```\nnot tef_without"))
    ['from', 'fuse_many', 'import', 'p', 'tef', 'tefcore']
    >>> sorted(documented('tef = "tefcore.cli:main"'))
    ['cli', 'main', 'tefcore']
    """
    spans = _CODE.findall(text) + re.findall(r'"([\w.]+:\w+)"', text)
    return {word for span in spans for word in _IDENTIFIER.findall(span)}


def exported(library: Mapping[str, Path]) -> set[str]:
    """The names a package's ``__init__`` lists in its ``__all__`` (what ``from tefcore.x import *`` gives)."""
    names: set[str] = set()
    for path in library.values():
        if path.name == "__init__.py":
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                    names.update(ast.literal_eval(node.value))
    return names


def returned(tree: ast.Module) -> dict[str, set[str]]:
    r"""Public function -> the classes of its module that its return annotation names.

    >>> returned(ast.parse("class Interval: pass\ndef f() -> list[Interval]: pass\ndef _g() -> Interval: pass"))
    {'f': {'Interval'}}
    """
    classes = {name for name, kind in public_names(tree).items() if kind == "class"}
    return {node.name: {n.id for n in ast.walk(node.returns) if isinstance(n, ast.Name) and n.id in classes}
            for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.returns is not None and not node.name.startswith("_")}


def name_audit(library: Mapping[str, Path], users: Mapping[str, Path], docs: Iterable[Path]) -> dict[str, list[str]]:
    """Public names of the library that should be private or go, as ``module.name``.

    ``own_module_only``: used in its own module and nowhere else (not by another module, the book, the tests,
    the benchmarks, the scripts, nor in the docs, nor exported by a package). ``unused``: used by no code at all
    but tests (dead code). A class a public function returns is used wherever the function is.
    """
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in library.items()}
    where: dict[str, set[str]] = {}
    for name, tree in trees.items():
        for word in reached_from(tree):
            where.setdefault(word, set()).add(name)
    for name, path in users.items():
        for word in reached_from(ast.parse(path.read_text(encoding="utf-8"))):
            where.setdefault(word, set()).add(name)
    for path in docs:
        for word in documented(path.read_text(encoding="utf-8")):
            where.setdefault(word, set()).add(path.name)
    public = exported(library)
    found: dict[str, list[str]] = {"own_module_only": [], "unused": []}
    for module, tree in trees.items():
        for function, names in returned(tree).items():
            if where.get(function, set()) - {module} or function in public:
                for name in names:
                    where.setdefault(name, set()).update(where.get(function, {module}) - {module} or {"__all__"})
    for module, tree in trees.items():
        own = used_within(tree)
        for name in sorted(set(public_names(tree)) - public):
            others = where.get(name, set()) - {module}
            callers = {o for o in others if not o.startswith(NOT_A_CALLER)}
            if not others and name in own:
                found["own_module_only"].append(f"{module}.{name}")
            elif not callers and name not in own:
                found["unused"].append(f"{module}.{name}")
    return found


def _users(root: Path) -> dict[str, Path]:
    """The files of :data:`USERS` under ``root``, but test fixtures and this file (whose lists name names)."""
    return {str(p.relative_to(root)): p for pattern in USERS for p in sorted(root.glob(pattern))
            if "fixtures" not in p.relative_to(root).parts and "_build" not in p.parts
            and p.resolve() != Path(__file__).resolve()}


@pytest.fixture(scope="module")
def audit() -> dict[str, list[str]]:
    root = PACKAGE.parent
    docs = [p for pattern in DOCS for p in sorted(root.glob(pattern))]
    return name_audit(LIBRARY, _users(root), docs)


def test_a_public_name_is_used_outside_its_module(audit: dict[str, list[str]]) -> None:
    pending = {f"{module}.{name}" for module, names in PENDING_PRIVATE.items() for name in names}
    found = sorted(set(audit["own_module_only"]) - set(PUBLIC_BY_DESIGN) - pending)
    assert not found, f"{len(found)} public names are used only in their own module (make them _private): {found}"
    stale = sorted((set(PUBLIC_BY_DESIGN) | pending) - set(audit["own_module_only"]))
    assert not stale, f"listed as used only in their own module, but they are not (or are gone): {stale}"


def test_no_dead_public_name(audit: dict[str, list[str]]) -> None:
    assert not audit["unused"], f"public names no code uses but tests (delete them): {audit['unused']}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_all_lists_public_names_the_module_has(source: Path) -> None:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    listed = [ast.literal_eval(n.value) for n in tree.body
              if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)]
    bound = set(public_names(tree)) | {a.asname or a.name for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                                       for a in n.names} | {"__version__"}
    bad = [name for names in listed for name in names if name not in bound or name.startswith("_") and name != "__version__"]
    assert not bad, f"{module_name(source, PACKAGE.parent)}.__all__ lists names it does not have or keeps private: {bad}"


def test_the_name_audit_sees_a_violation(tmp_path: Path) -> None:
    """A planted library: a name read only at home, one no code reads but a test, one a test imports, one the
    README shows, one another module reaches by string, one a package exports. The audit finds the first two."""
    files = {"tefcore/__init__.py": '__all__ = ["exported"]\nfrom tefcore.a import exported\n',
             "tefcore/a.py": "class R: pass\ndef home(): return 1\ndef run() -> R: return home() + tested() + shown()\n"
                             "def tested(): return 2\ndef shown(): return 3\ndef exported(): pass\n"
                             "def dead(): pass\ndef by_name(): pass\n",
             "tefcore/b.py": "import importlib\n_f = getattr(importlib.import_module('tefcore.a'), 'by_name')\n",
             "tests/test_a.py": "from tefcore.a import tested, dead\n",
             "README.md": "Run `shown()` and `run()`.\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    library = {module_name(p, tmp_path): p for p in sorted((tmp_path / "tefcore").rglob("*.py"))}
    found = name_audit(library, _users(tmp_path), [tmp_path / "README.md"])
    assert found == {"own_module_only": ["tefcore.a.home"], "unused": ["tefcore.a.dead"]}
