"""The teaching lab (chapter 10): every exercise's check passes its solution and fails a wrong answer.

The lab is run the way a student runs it, outside the book: every code cell in order, in a fresh
namespace (nothing of the book's build is set), so its solutions compute their answers and print the
checks. The tests then feed each check the solution's answers (right), answers with one value changed
(wrong) and no answers (not yet); and read the solution cells to see that they are the few lines a
student writes: numpy, pandas and tefcore's public functions, never a helper of the book.

The student edition (:func:`tefbook.launch.student_edition`, what Binder, Colab and the page's download
hand out) holds no solution and no teacher note, reads cleanly in plain Jupyter, runs top to bottom as a
notebook with only tefcore of the project importable, and its checks answer a wrong, a short and a
mistyped answer with ✗ and a hint, never with an exception. It holds no answer either: its checks compare
salted hashes with a sealed answer key, and no value the solutions compute appears in its text.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import functools
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import jupytext
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "notebooks" / "10_teaching_lab.py"


@pytest.fixture(scope="module")
def lab() -> dict[str, Any]:
    """The lab's names after running all its code cells (its checks' output swallowed)."""
    namespace: dict[str, Any] = {}
    saved = os.environ.pop("TEF_BOOK_BUILD", None)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in jupytext.read(LAB).cells:
                if cell.cell_type == "code":
                    exec(compile(cell.source, str(LAB), "exec"), namespace)  # noqa: S102 - the lab's own code
    finally:
        if saved is not None:
            os.environ["TEF_BOOK_BUILD"] = saved
    return namespace


def quiet(check: Any, *args: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return check(*args)


def test_exercise_1(lab: dict[str, Any]) -> None:
    check, right = lab["check_exercise_1"], lab["by_hand"]
    assert quiet(check, right["H"], right["w"], right["l"], right["wl"]) is True
    for name in ("H", "w", "l", "wl"):
        wrong = {k: dict(v) for k, v in right.items()}
        wrong[name][0.9] += 0.05
        assert quiet(check, wrong["H"], wrong["w"], wrong["l"], wrong["wl"]) is False, name
    log2 = {k: dict(v) for k, v in right.items()}
    log2["H"] = {p: h / np.log(2) for p, h in right["H"].items()}  # entropy in bits, not nats
    assert quiet(check, log2["H"], right["w"], right["l"], right["wl"]) is False
    empty = dict.fromkeys(right["H"])
    assert quiet(check, empty, empty, empty, empty) is None
    assert quiet(check, right["H"], empty, empty, empty) is None  # right so far, more to come


def test_exercise_2(lab: dict[str, Any]) -> None:
    check, right = lab["check_exercise_2"], lab["properties"]
    assert quiet(check, right) is True
    for key, value in {"min w": 0.05, "max w": 0.9, "max |w(p) - w(1 - p)|": 0.1, "w increases on [1/2, 1]": False,
                       "c": 2 / np.log(10), }.items():
        assert quiet(check, right | {key: value}) is False, key
    assert quiet(check, dict.fromkeys(right)) is None


def test_exercise_3(lab: dict[str, Any]) -> None:
    check, right = lab["check_exercise_3"], lab["first_n"]
    strong, weak = lab["strong"], lab["weak"]
    for rule, n in right.items():  # the solution's answers, checked by another route: the posts n - 1, n
        posts = [np.r_[strong, np.full(k, weak)] for k in (n - 1, n)]
        sides = [lab["fuse_many"](x, np.zeros(x.size, dtype=int), rule=rule).prediction[0] for x in posts]
        assert sides == ["change", "stability"], (rule, n)
    assert quiet(check, right, strong, weak) is True
    for rule in right:
        for off in (-1, 1):
            assert quiet(check, right | {rule: right[rule] + off}, strong, weak) is False, (rule, off)
    assert quiet(check, right | {"majority_vote": 1}, strong, weak) is False  # the tie goes to the first vote
    assert quiet(check, dict.fromkeys(right), strong, weak) is None


def test_exercise_4(lab: dict[str, Any]) -> None:
    check, corpus, differ, right = lab["check_exercise_4"], lab["corpus"], lab["differ"], lab["right"]
    assert quiet(check, corpus, int(differ.sum()), right) is True
    assert quiet(check, corpus, int(differ.sum()) + 1, right) is False
    swapped = {"majority_vote": right["tef"], "tef": right["majority_vote"]}
    assert quiet(check, corpus, int(differ.sum()), swapped) is False
    assert quiet(check, corpus, None, {"majority_vote": None, "tef": None}) is None


def test_exercise_5(lab: dict[str, Any]) -> None:
    check, accuracy, unchanged = lab["check_exercise_5"], lab["accuracy"], lab["unchanged"]
    args = (lab["sweep"], lab["n_posts"], lab["seed"])
    assert quiet(check, accuracy, unchanged, *args) is True
    off = {rule: list(values) for rule, values in accuracy.items()}
    off["tef"][2] += 0.05
    assert quiet(check, off, unchanged, *args) is False
    # the textbook answer forgets the clip: the sum's accuracy moves at small T in this sweep
    assert quiet(check, accuracy, {"majority_vote", "tef_without_entropy"}, *args) is False
    assert quiet(check, dict.fromkeys(accuracy), None, *args) is None


def test_exercise_6(lab: dict[str, Any]) -> None:
    check, right = lab["check_exercise_6"], lab["estimates"]
    args = (lab["n_posts"], lab["seed"])
    assert quiet(check, right, *args) is True
    swapped = right | {"exact soft": right["exact hard"], "exact hard": right["exact soft"]}
    assert quiet(check, swapped, *args) is False
    assert quiet(check, right | {"plug-in soft (64 bins)": right["plug-in soft (4 bins)"]}, *args) is False
    assert quiet(check, dict.fromkeys(right), *args) is None


#: What a solution may call: numpy, pandas, tefcore's public functions, the lab's checks and the
#: builtins. Anything else would be a helper a student does not have.
SOLUTION_NAMES = {"np", "pd", "fuse_many", "entropy_weight", "clipped_log_odds", "information", "sim", "render"}


def test_exercise_7(lab: dict[str, Any]) -> None:
    check, views, right = lab["check_exercise_7"], lab["views"], lab["decided"]
    assert quiet(check, right, views) is True
    assert quiet(check, {}, views) is None  # not yet
    flipped = {"change": "stability", "stability": "change"}
    for post, rules in right.items():
        for rule in rules:
            wrong = {k: dict(v) for k, v in right.items()}
            wrong[post][rule] = flipped[wrong[post][rule]]
            assert quiet(check, wrong, views) is False, (post, rule)
    # the two posts are ones where TEF and MV part, and TEF is right on one and wrong on the other
    gold = lab["gold_side"]
    assert all(d["tef"] != d["majority_vote"] for d in right.values())
    assert sorted(d["tef"] == gold[post] for post, d in right.items()) == [False, True]


def test_exercise_7_reads_the_committed_cache_and_shows_no_decision(lab: dict[str, Any]) -> None:
    """The probabilities written out in the lab are the committed e5-crossfit cache's, to their four
    decimals, and give the same decisions; what the student sees of them is the probabilities and the
    sentences, nothing of a rule."""
    from tefcore.explain import explain_file

    cached = explain_file(ROOT / "data" / "caches" / "e5-crossfit" / "original" / "en.jsonl")
    for (post, dimension), (direct, p) in lab["JUDGED"].items():
        mine = cached[(cached["id"] == post) & (cached["dimension"] == dimension)]
        assert np.allclose(mine["p_change"], p, atol=5e-5, rtol=0) and len(mine) == len(p), post
        shown = lab["views"][post, dimension]
        assert mine["text"].tolist() == shown["text"].tolist(), post
        for rule in ("majority_vote", "soft_vote", "tef"):
            assert mine[rule].iloc[0] == shown[rule].iloc[0], (post, rule)
    assert list(lab["judged"].columns) == ["p_change", "p_stability", "text"]


def test_solutions_are_a_students_lines() -> None:
    solutions = [c for c in jupytext.read(LAB).cells
                 if c.cell_type == "code" and "hide-cell" in c.metadata.get("tags", [])]
    assert len(solutions) == 7, "one hidden solution cell per exercise"
    for cell in solutions:
        lines = [line for line in cell.source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        assert len(lines) <= 12, f"a solution of {len(lines)} lines:\n{cell.source}"
        tree = ast.parse(cell.source)
        defined = {t.id for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AugAssign, ast.For,
                                                                          ast.comprehension))
                   for t in ast.walk(node.target if hasattr(node, "target") else node.targets[0])
                   if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                root = node.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name):
                    name = root.id
                    allowed = (name in SOLUTION_NAMES or name.startswith("check_exercise_") or name in defined
                               or hasattr(builtins, name) or name in {"grid", "corpus", "table", "JUDGED", "views"})
                    assert allowed, f"a solution calls {name!r}:\n{cell.source}"
            assert not (isinstance(node, (ast.Import, ast.ImportFrom))), "a solution imports"


def test_the_lab_runs_without_the_books_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the book's tools every cell of the teacher's edition runs: the book's renderers, figures, glue
    and parameter check are made unimportable, and the lab still computes its answers (its checks come from
    their module, which the student edition writes out: see the tests of the student edition below)."""
    from tefbook.chapters import ch10

    for name in ("tefbook.companion", "tefbook.companion.figures", "tefbook.parameters", "myst_nb"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    for name in ("exchange_figure", "shade_by_probability"):  # the figures; the answer key stays
        monkeypatch.delattr(ch10, name)
    monkeypatch.delenv("TEF_BOOK_BUILD", raising=False)
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for cell in jupytext.read(LAB).cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, str(LAB), "exec"), namespace)  # noqa: S102
    assert namespace["glue"]("x", 1) is None  # the stand-ins
    assert out.getvalue().count("✓") > 40 and "✗" not in out.getvalue()  # every solution checked right
    assert namespace["first_n"]["tef"] > namespace["first_n"]["tef_without_entropy"]


# --------------------------------------------------------------------------------------------------
# the student edition: what a teacher hands out
# --------------------------------------------------------------------------------------------------
#: Packages of the book that a student's machine lacks: the student edition must run without them.
BOOK_PACKAGES = ("tefbook", "tefpaper", "myst_nb", "altair")
#: Words of the teacher's edition that the student edition must not hold.
SPOILERS = ("Solution", "For the teacher", "what a good answer contains", "What the sweep shows",
            "TEF is not the best rule", "How sure is the lesson", "What this means for fusion",
            "What the simulation built in", "by_hand", "\nfirst_n =", "estimates[", "What the two posts show",
            "\ndecided = {", "render(", "shade_by_probability")


@functools.cache
def _student_notebook() -> Any:
    from tefbook.launch import student_edition
    from tefbook.parameters import read_chapter

    return student_edition(read_chapter(LAB), "", str(LAB))


def student_notebook() -> Any:
    """The student edition as the build writes it (a copy: a test may change it)."""
    return copy.deepcopy(_student_notebook())


def test_the_teachers_edition_tags_every_solution_and_note() -> None:
    """Every solution, teacher note and result after a solution is tagged, so the student edition can
    leave it out; on the page the notes and the results are folded."""
    cells = jupytext.read(LAB).cells
    for cell in cells:
        tags = set(cell.metadata.get("tags", []))
        if "{admonition} Solution" in cell.source or "check_exercise_" in cell.source and "hide-cell" in tags:
            assert "solution" in tags, cell.source[:200]
        if "For the teacher" in cell.source:
            assert "teacher" in tags and ":class: tip dropdown" in cell.source, cell.source[:200]
    solutions = [c for c in cells if "solution" in c.metadata.get("tags", [])]
    assert len(solutions) >= 12
    for cell in solutions:  # prose after a solution is folded on the page
        if cell.cell_type == "markdown" and not cell.source.startswith("### What the simulation"):
            assert cell.source.lstrip().startswith("```{admonition}"), cell.source[:200]


def test_the_student_edition_has_no_solution_and_no_teacher_note() -> None:
    from tefbook.launch import BOOK_ONLY_TAGS

    notebook = student_notebook()
    text = "\n".join(c.source for c in notebook.cells)
    for word in SPOILERS:
        assert word not in text, word
    for cell in notebook.cells:
        assert not BOOK_ONLY_TAGS & set(cell.metadata.get("tags", [])), cell.source[:200]
        assert "remove-cell" not in cell.metadata.get("tags", [])
    # plain Jupyter and Colab read it cleanly: no MyST role or directive, the parameters written out
    for marker in ("{glue", "{eq}", "{download}", "```{", ":class:"):
        assert marker not in text, marker
    assert "simulates 2,000 posts (`n_posts`) of 1\ndecisive and 6 uncertain sentences" in text
    assert "This is the student edition of the lab" in text
    answer_cells = [c.source for c in notebook.cells if c.cell_type == "code" and "check_exercise_" in c.source
                    and "def " not in c.source]
    assert len(answer_cells) == 7 and all("None" in c for c in answer_cells)  # the answer cells, unanswered


CHECKS = ROOT / "book" / "tefbook" / "chapters" / "ch10_checks.py"


def test_the_student_edition_writes_the_checks_out() -> None:
    """The page imports the checks from their module; the student edition's checks cell is that module's
    source, which defines every check and imports only the standard library, numpy, pandas and tefcore."""
    page = [c for c in jupytext.read(LAB).cells if "checks" in c.metadata.get("tags", [])]
    assert len(page) == 1 and "from tefbook.chapters.ch10_checks import" in page[0].source
    cells = [c for c in student_notebook().cells if "checks" in c.metadata.get("tags", [])]
    source = CHECKS.read_text(encoding="utf-8")
    assert len(cells) == 1 and cells[0].source == source.strip() + "\n"
    defined = {n.name for n in ast.parse(cells[0].source).body if isinstance(n, ast.FunctionDef)}
    assert {f"check_exercise_{k}" for k in range(1, 8)} <= defined
    imported = {n.module if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    roots = {m.split(".")[0] for m in imported}
    assert roots and roots <= {"numpy"} | set(sys.stdlib_module_names), roots  # nothing that computes an answer


def test_the_student_edition_holds_the_answer_key_sealed() -> None:
    """The page computes the answer key from the book's code as the lab runs (a cell the page removes); the
    student edition holds it as one literal after the checks: salted hashes per answer, nothing else."""
    page = [c for c in jupytext.read(LAB).cells if "answer-key" in c.metadata.get("tags", [])]
    assert len(page) == 1 and "remove-cell" in page[0].metadata["tags"]
    assert "from tefbook.chapters.ch10 import answer_key" in page[0].source
    cells = student_notebook().cells
    at = [i for i, c in enumerate(cells) if "answer-key" in c.metadata.get("tags", [])]
    assert len(at) == 1 and "checks" in cells[at[0] - 1].metadata.get("tags", [])
    (statement,) = ast.parse(cells[at[0]].source).body
    call = statement.value
    assert ast.unparse(call.func) == "ANSWER_KEY.update" and len(call.args) == 1
    key = ast.literal_eval(call.args[0])
    assert sorted(key) == [f"exercise {k}" for k in range(1, 8)]
    hashes = [h for exercise in key.values() for name, found in exercise["answers"].items() for h in found]
    assert len(hashes) > 60 and all(re.fullmatch(r"[0-9a-f]{20}", h) for h in hashes)
    assert all(set(exercise) == {"for", "salt", "answers"} for exercise in key.values())


def test_the_student_edition_refuses_markup_and_unquotable_numbers() -> None:
    import nbformat

    from tefbook.errors import BookError
    from tefbook.launch import student_edition

    params = nbformat.v4.new_code_cell("n = 3\nrepository = ''", metadata={"tags": ["parameters"]})
    for text, message in (("See {eq}`deriv-weight`.", "MyST markup"), ("```{admonition} Note\nx\n```", "MyST markup"),
                          ("The rate is {glue:text}`e3_rate:.1f`.", "e3_rate`, which is no parameter")):
        notebook = nbformat.v4.new_notebook(cells=[params, nbformat.v4.new_markdown_cell(text)])
        with pytest.raises(BookError, match=message):
            student_edition(notebook)


@pytest.fixture()
def without_the_book(monkeypatch: pytest.MonkeyPatch) -> None:
    """The book's packages made unimportable, as on a student's machine with only tefcore."""
    for name in BOOK_PACKAGES:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delenv("TEF_BOOK_BUILD", raising=False)


@pytest.fixture()
def student(without_the_book: None) -> dict[str, Any]:
    """The student edition's names after running its code cells (only tefcore importable of the project)."""
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in student_notebook().cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, "student", "exec"), namespace)  # noqa: S102 - the lab's own code
    return namespace


def test_the_student_notebook_runs_top_to_bottom_with_only_tefcore(tmp_path: Path) -> None:
    """Executed as a notebook (nbclient, a fresh kernel in a temporary folder) with the book's packages
    hidden from the kernel: every cell runs, and every check waits for answers without a ✗."""
    import nbformat
    from nbclient import NotebookClient

    notebook = student_notebook()
    hide = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in BOOK_PACKAGES)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(hide))
    env = {k: v for k, v in os.environ.items() if k != "TEF_BOOK_BUILD"}
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        NotebookClient(notebook, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    nbformat.write(notebook, tmp_path / "student.ipynb")
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert printed.count("answers still missing") == 7 and "✗" not in printed and "✓" not in printed


def _said(check: Any, *args: Any) -> tuple[Any, str]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        result = check(*args)
    return result, out.getvalue()


def _crossed(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("✗")]


def _assert_hinted(result: Any, text: str, *hints: str) -> None:
    """False, at least one ✗, each ✗ with a hint after the answer, and the hints named among them."""
    assert result is False, text
    lines = _crossed(text)
    assert lines, text
    for line in lines:
        assert line.count(": ") >= 2 or "could not read" in line, line  # "✗ key: answer: hint"
    for hint in hints:
        assert hint in text, (hint, text)


def test_every_check_answers_a_wrong_a_short_and_a_mistyped_answer_with_a_hint(
        lab: dict[str, Any], student: dict[str, Any]) -> None:
    """Wrong, short (a list or a container one element short) and mistyped answers: ✗ with what was
    expected, never an exception and never the answer itself."""
    right = lab["by_hand"]
    ex1 = student["check_exercise_1"]
    wrong = {p: h + 0.05 for p, h in right["H"].items()}
    result, text = _said(ex1, wrong, right["w"], right["l"], right["wl"])
    _assert_hinted(result, text, "too high", "the entropy in nats")
    assert f"{right['H'][0.9]:.4g}" not in text  # the hint, not the answer
    _assert_hinted(*_said(ex1, [0.69, 0.67, 0.33], right["w"], right["l"], right["wl"]), "expected a dict")
    result, text = _said(ex1, {"0.9": right["H"][0.9]}, right["w"], right["l"], right["wl"])
    _assert_hinted(result, text, "my_H['0.9']", "not a key asked for", "without quotes")  # never silently ignored
    _assert_hinted(*_said(ex1, right["H"] | {0.9: "0.33"}, right["w"], right["l"], right["wl"]),
                   "expected a number, not str")

    ex2, props = student["check_exercise_2"], lab["properties"]
    _assert_hinted(*_said(ex2, props | {"c": 2.0}), "not the value, compared to 2 decimals", "second derivative")
    _assert_hinted(*_said(ex2, props | {"c": -2.9}), "too low", "c is positive")
    _assert_hinted(*_said(ex2, list(props.values())[:4]), "expected a dict")
    _assert_hinted(*_said(ex2, props | {"w increases on [1/2, 1]": "yes"}), "expected True or False")
    _assert_hinted(*_said(ex2, props | {"C": 2.885}), "not a key asked for")

    ex3, first, sw = student["check_exercise_3"], lab["first_n"], (lab["strong"], lab["weak"])
    _assert_hinted(*_said(ex3, first | {"tef": first["tef"] + 1}, *sw), "not the value", "mind the ties")
    _assert_hinted(*_said(ex3, first | {"tef": 2.5}, *sw), "expected a whole number")
    _assert_hinted(*_said(ex3, first | {"tef": 0}, *sw), "too low", "at least 1")
    _assert_hinted(*_said(ex3, list(first.values())[:3], *sw), "expected a dict")
    _assert_hinted(*_said(ex3, first | {"tef": str(first["tef"])}, *sw), "expected a number, not str")
    _assert_hinted(*_said(ex3, {"MV": 2}, *sw), "not a key asked for")

    ex4, corpus, n, shares = student["check_exercise_4"], lab["corpus"], int(lab["differ"].sum()), lab["right"]
    _assert_hinted(*_said(ex4, corpus, n, {k: 100 * v for k, v in shares.items()}), "a share between 0 and 1")
    _assert_hinted(*_said(ex4, corpus, n, [shares["tef"]]), "expected a dict")
    _assert_hinted(*_said(ex4, corpus, str(n), shares), "expected a number, not str")

    ex5, acc, still = student["check_exercise_5"], lab["accuracy"], lab["unchanged"]
    args = (lab["sweep"], lab["n_posts"], lab["seed"])
    off = {r: list(v) for r, v in acc.items()} | {"soft_vote": [v + 1 for v in acc["soft_vote"]]}
    _assert_hinted(*_said(ex5, off, still, *args), "not the value, compared to 2 decimals", "an accuracy in percent")
    fractions = {r: [v / 100 for v in values] for r, values in acc.items()}  # shares, not percent: in range
    _assert_hinted(*_said(ex5, fractions, still, *args), "an accuracy in percent")
    _assert_hinted(*_said(ex5, {r: [v + 100 for v in values] for r, values in acc.items()}, still, *args),
                   "too high", "between 0 and 100")
    short = {r: list(v) for r, v in acc.items()} | {"soft_vote": list(acc["soft_vote"])[:-1]}
    result, text = _said(ex5, short, still, *args)
    _assert_hinted(result, text, "a list of 4: expected a list of 5 accuracies")
    assert len(_crossed(text)) == 1, text  # the later rules are still checked against their own keys
    assert all(f"✓ {r} at T = {t:g}" in text for r in ("log-odds sum", "TEF") for t in args[0]), text
    result, text = _said(ex5, acc | {"tef": 94.05}, still, *args)  # a number where a list is expected
    _assert_hinted(result, text, "my_accuracy['tef']: 94.05: expected a list of 5 accuracies")
    _assert_hinted(*_said(ex5, acc, list(still), *args), "expected a set of rule names")
    _assert_hinted(*_said(ex5, acc, still | {"tef"}, *args), "a rule in it does move")
    _assert_hinted(*_said(ex5, acc | {"TEF": acc["tef"]}, still, *args), "my_accuracy['TEF']", "not a key")
    _assert_hinted(*_said(ex5, 5, still, *args), "expected a dict")

    ex6, est = student["check_exercise_6"], lab["estimates"]
    _assert_hinted(*_said(ex6, est | {"exact soft": est["exact soft"] / np.log(2)}, *args[1:]), "not the value",
                   "compared to 3 decimals", "nats")
    _assert_hinted(*_said(ex6, est | {"exact soft": 1.0}, *args[1:]), "too high", "between 0 and log 2")
    _assert_hinted(*_said(ex6, list(est.values())[:5], *args[1:]), "expected a dict")
    _assert_hinted(*_said(ex6, {"exact Soft": est["exact soft"]}, *args[1:]), "not a key asked for")

    ex7, views, decided = student["check_exercise_7"], lab["views"], lab["decided"]
    post = next(iter(decided))
    flipped = {"change": "stability", "stability": "change"}
    wrong = decided | {post: decided[post] | {"tef": flipped[decided[post]["tef"]]}}
    result, text = _said(ex7, wrong, views)
    _assert_hinted(result, text, "add up w(p)·ℓ(p)")
    assert len(_crossed(text)) == 1 and "stability'" not in _crossed(text)[0].split(": ", 2)[2], text
    short = decided | {post: {"majority_vote": decided[post]["majority_vote"]}}  # one rule only
    result, text = _said(ex7, short, views)
    assert result is None and "2 of 6 answers still missing" in text and "✗" not in text, text
    _assert_hinted(*_said(ex7, [decided[post]], views), "expected a dict")
    _assert_hinted(*_said(ex7, decided | {post: "change"}, views), "expected a dict of answers with the keys")
    _assert_hinted(*_said(ex7, decided | {post: decided[post] | {"tef": "Stabilty"}}, views), "unknown side 'Stabilty'",
                   "'change', 'stability'")
    _assert_hinted(*_said(ex7, decided | {post: decided[post] | {"tef": 1}}, views), "expected a side's name")
    _assert_hinted(*_said(ex7, decided | {post: decided[post] | {"TEF": "change"}}, views), "not a key asked for")
    _assert_hinted(*_said(ex7, decided | {"en-single-5": decided[post]}, views), "not a key asked for")


def test_a_check_that_cannot_read_an_answer_says_so_and_goes_on(student: dict[str, Any]) -> None:
    """Whatever a student passes, a check prints ✗ and returns False; it never raises."""
    check = student["check_exercise_3"]
    result, text = _said(check, {"tef": 3}, "0.9", None)  # arguments the check itself cannot use
    assert result is False and "✗ the check could not read these answers" in text


def test_a_check_handed_other_inputs_says_so(lab: dict[str, Any], student: dict[str, Any]) -> None:
    """The key holds the answers for the inputs the lab hands out: other probabilities in exercise 3, another
    seed or sweep, other posts are a ✗ that says what the key is for, never a misjudged answer."""
    first, sweep = lab["first_n"], lab["sweep"]
    result, text = _said(student["check_exercise_3"], first, 0.8, lab["weak"])
    _assert_hinted(result, text, "other inputs", "strong = 0.9, weak = 0.4", "set them back")
    assert len(_crossed(text)) == 1 and "✓" not in text
    _assert_hinted(*_said(student["check_exercise_5"], lab["accuracy"], lab["unchanged"], sweep, lab["n_posts"],
                          lab["seed"] + 1), "other inputs", "seed = 7")
    _assert_hinted(*_said(student["check_exercise_6"], lab["estimates"], 500, lab["seed"]), "n_posts = 2000")
    other = student["sim"].simulate_documents(lab["n_posts"], n_decisive=1, n_uncertain=6, rng=lab["seed"])
    _assert_hinted(*_said(student["check_exercise_4"], other, None, {}), "the posts simulated with seed = 7")


def test_numbers_are_compared_at_the_stated_decimals(lab: dict[str, Any]) -> None:
    """A number is right when, rounded to the exercise's decimals, it lies less than one unit of the last
    decimal from the exact value: the rounded answer and its neighbour across a rounding boundary pass,
    two units off does not."""
    ex1, ex6, right, est = lab["check_exercise_1"], lab["check_exercise_6"], lab["by_hand"], lab["estimates"]
    args = (lab["n_posts"], lab["seed"])
    rounded = {name: {p: round(v, 2) for p, v in values.items()} for name, values in right.items()}
    assert quiet(ex1, rounded["H"], rounded["w"], rounded["l"], rounded["wl"]) is True
    assert quiet(ex6, {k: round(v, 3) for k, v in est.items()}, *args) is True
    assert quiet(ex6, {k: float(f"{v:.6f}") for k, v in est.items()}, *args) is True
    for name, value in est.items():
        assert quiet(ex6, est | {name: value + 0.002}, *args) is False, name
        assert quiet(ex6, est | {name: value - 0.002}, *args) is False, name
    from tefbook.chapters.ch10 import accepted
    from tefbook.chapters.ch10_checks import Expect

    assert accepted(Expect("number", "", 2), 0.4451) == ["0.44", "0.45"]  # on either side of the boundary
    assert accepted(Expect("number", "", 2), 0.4449) == ["0.44", "0.45"]
    assert accepted(Expect("number", "", 2), 0.44) == ["0.44"]


def _answers(lab: dict[str, Any]) -> dict[str, Any]:
    """Every value the book's solutions compute, by exercise and name."""
    values: dict[str, Any] = {f"1 {q}({p})": v for q, column in lab["by_hand"].items() for p, v in column.items()}
    values |= {f"2 {k}": v for k, v in lab["properties"].items()} | {f"3 {k}": v for k, v in lab["first_n"].items()}
    values |= {"4 disagreements": int(lab["differ"].sum())} | {f"4 {k}": v for k, v in lab["right"].items()}
    values |= {f"5 {r} at T = {t:g}": v for r, column in lab["accuracy"].items() for t, v in zip(lab["sweep"], column)}
    values |= {"5 unchanged": lab["unchanged"]} | {f"6 {k}": v for k, v in lab["estimates"].items()}
    values |= {f"7 {post}": dict(rules) for post, rules in lab["decided"].items()}
    values |= {"3 first_n": lab["first_n"], "7 decided": lab["decided"]}
    return values


#: Answers that any text of the lab holds for other reasons: the bounds 0 and 1 of the weight, stated in
#: exercise 2; True; whole numbers below 10 (exercise numbers, sentence counts); the top of the percent
#: scale, 100, which TEF's answer of exercise 3 happens to equal. Their containers are still looked for.
EVERYWHERE = {0, 1, True, 100} | set(range(10))


def _forms(value: Any) -> set[str]:
    """The plain ways a value can be written in a notebook: decimals, %g, repr, percent for a share, and for a
    container its repr and JSON, without spaces."""
    if isinstance(value, (set, frozenset, dict, list, tuple)):
        plain = sorted(value) if isinstance(value, (set, frozenset)) else value
        forms = {repr(value), repr(plain), json.dumps(plain), json.dumps(plain).replace('"', "'")}
        return {re.sub(r"\s+", "", f) for f in forms}
    if isinstance(value, (str, bool, np.bool_)) or value in EVERYWHERE:
        return set()
    x = float(value)
    forms = {repr(x), f"{x:g}", f"{x:.4g}"} | {f"{x:.{k}f}" for k in range(1, 7)}
    if 0 < x < 1:
        forms |= {f"{100 * x:.{k}f}" for k in range(1, 4)}  # a share as a percentage
    if x.is_integer():
        forms.add(str(int(x)))
    return {f for f in forms if len(re.sub(r"^[-0.]+", "", f).replace(".", "").rstrip("0")) >= 2}  # two digits


def _leaks(text: str, values: dict[str, Any]) -> list[str]:
    """The answers ``text`` holds, as a number standing on its own or a container written out."""
    squeezed = re.sub(r"\s+", "", text)
    found = []
    for name, value in values.items():
        for form in _forms(value):
            if isinstance(value, (set, frozenset, dict, list, tuple)):
                hit = form in squeezed
            else:
                hit = re.search(rf"(?<![\w.]){re.escape(form)}(?!\w)", text) is not None
            if hit:
                found.append(f"{name} = {value!r} written {form!r}")
    return found


def test_the_student_edition_holds_no_answer(lab: dict[str, Any]) -> None:
    """No value the book's solutions compute appears in the student edition, in any plain writing (0.45,
    0.450, '0.45', 45.0 for a share, a list or dict written out), and nothing in it computes one: its checks
    import only the standard library and numpy. A planted answer is found, so the search can fail."""
    values = _answers(lab)
    text = "\n".join(c.source for c in student_notebook().cells)
    assert _leaks(text, values) == []
    shares = lab["right"]
    for planted in (f"{lab['by_hand']['H'][0.9]:.2f}", f"'{shares['tef']:.3f}'", f"{100 * shares['tef']:.1f} %",
                    repr(lab["accuracy"]["tef"]), repr(lab["decided"]), repr(lab["unchanged"]),
                    f"{int(lab['differ'].sum())} posts", f"{lab['estimates']['exact soft']:.4f}"):
        assert _leaks(text + "\n" + planted, values), planted
    checks = [c for c in student_notebook().cells if "checks" in c.metadata.get("tags", [])][0].source
    assert "tefcore" not in re.sub(r'""".*?"""', "", checks, flags=re.DOTALL)  # not even imported


def test_the_student_editions_checks_judge_without_tefcore(lab: dict[str, Any],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks and the key of the student edition alone, with tefcore unimportable, judge the solutions'
    answers right and a changed one wrong: they compare, they compute nothing."""
    monkeypatch.setitem(sys.modules, "tefcore", None)
    namespace: dict[str, Any] = {}
    for cell in student_notebook().cells:
        if {"checks", "answer-key"} & set(cell.metadata.get("tags", [])):
            exec(compile(cell.source, "student", "exec"), namespace)  # noqa: S102
    right = lab["by_hand"]
    assert quiet(namespace["check_exercise_1"], right["H"], right["w"], right["l"], right["wl"]) is True
    assert quiet(namespace["check_exercise_3"], lab["first_n"], lab["strong"], lab["weak"]) is True
    assert quiet(namespace["check_exercise_5"], lab["accuracy"], lab["unchanged"], lab["sweep"], lab["n_posts"],
                 lab["seed"]) is True
    assert quiet(namespace["check_exercise_7"], lab["decided"], lab["views"]) is True
    assert quiet(namespace["check_exercise_3"], lab["first_n"] | {"tef": 99}, lab["strong"], lab["weak"]) is False
