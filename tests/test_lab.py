"""The teaching lab (chapter 10): every exercise's check passes its solution and fails a wrong answer.

The lab is run the way a student runs it, outside the book: every code cell in order, in a fresh
namespace (nothing of the book's build is set), so its solutions compute their answers and print the
checks. The tests then feed each check the solution's answers (right), answers with one value changed
(wrong) and no answers (not yet); and read the solution cells to see that they are the few lines a
student writes: numpy, pandas and tefcore's public functions, never a helper of the book.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import os
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
SOLUTION_NAMES = {"np", "pd", "fuse_many", "entropy_weight", "clipped_log_odds", "information", "sim"}


def test_solutions_are_a_students_lines() -> None:
    solutions = [c for c in jupytext.read(LAB).cells
                 if c.cell_type == "code" and "hide-cell" in c.metadata.get("tags", [])]
    assert len(solutions) == 6, "one hidden solution cell per exercise"
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
                               or hasattr(builtins, name) or name in {"grid", "corpus", "table"})
                    assert allowed, f"a solution calls {name!r}:\n{cell.source}"
            assert not (isinstance(node, (ast.Import, ast.ImportFrom))), "a solution imports"


def test_the_lab_runs_without_the_books_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where only tefcore is installed (Colab, Binder from the launch branch), every cell runs: the book's
    renderers, glue and parameter check are made unimportable, and the lab still computes its answers."""
    for name in ("companion", "companion.figures", "chapters", "tefbook", "tefbook.parameters", "myst_nb"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    monkeypatch.delenv("TEF_BOOK_BUILD", raising=False)
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        for cell in jupytext.read(LAB).cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, str(LAB), "exec"), namespace)  # noqa: S102
    assert namespace["glue"]("x", 1) is None  # the stand-ins
    assert out.getvalue().count("✓") > 40 and "✗" not in out.getvalue()  # every solution checked right
    assert namespace["first_n"]["tef"] > namespace["first_n"]["tef_without_entropy"]
