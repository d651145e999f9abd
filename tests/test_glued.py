"""The book's glued numbers are the ones recorded in ``tests/fixtures/glued.json``.

Every number the chapters' prose quotes is glued (``myst_nb.glue``) from a computation. This test reads
the glued values of executed chapters, takes the numbers out of each value, and compares them with the
record. A refactor of ``tefcore`` or of the book's code must leave them all unchanged; a change of
numbers that is intended is recorded again, and the fixture's diff shows every number that moved::

    python tests/test_glued.py write _build/ci/executed/notebooks

What cannot repeat from one run to the next (durations, rates, timestamps) is removed with the same
rules nbval uses (``tests/nbval_sanitize.cfg``), and glued values in cells whose outputs nbval ignores
or skips are left out. The comparison of a real build runs after the book is built (``make glued``,
part of ``make test``); it reads ``$TEF_EXECUTED_DIR``. Without that variable only the self-tests run.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "glued.json"
SANITIZE = HERE / "nbval_sanitize.cfg"
RECORD = "application/papermill.record/text/plain"
VOLATILE_TAGS = {"nbval-ignore-output", "nbval-skip"}
NUMBER = re.compile(r"[-−+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")

Glued = dict[str, dict[str, list[float]]]


def sanitize_rules(path: Path = SANITIZE) -> list[tuple[re.Pattern[str], str]]:
    """The ``regex:``/``replace:`` pairs of nbval's sanitiser file, in order."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith(("regex:", "replace:"))]
    pairs = zip(lines[0::2], lines[1::2], strict=True)
    return [(re.compile(r.removeprefix("regex:").strip()), s.removeprefix("replace:").strip()) for r, s in pairs]


def numbers_in(text: str, rules: list[tuple[re.Pattern[str], str]]) -> list[float]:
    """The numbers of one glued value, after the sanitiser's rules (``"10,330"`` and ``"10330.0"`` agree)."""
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return [float(m.replace(",", "").replace("−", "-")) for m in NUMBER.findall(text)]


def glued_numbers(folder: Path) -> Glued:
    """Chapter → glue name → the numbers of its value, for every executed chapter in ``folder``."""
    rules = sanitize_rules()
    out: Glued = {}
    for path in sorted(folder.glob("*.ipynb")):
        chapter: dict[str, list[float]] = {}
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if VOLATILE_TAGS & set(cell.get("metadata", {}).get("tags", [])):
                continue
            for output in cell.get("outputs", []):
                name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                if name is not None and RECORD in output.get("data", {}):
                    chapter[name] = numbers_in(str(output["data"][RECORD]), rules)
        out[path.stem] = chapter
    return out


def differences(recorded: Glued, built: Glued) -> list[str]:
    """One line per glued value whose numbers differ, that is missing, or that is new."""
    lines = []
    for chapter in sorted(set(recorded) | set(built)):
        old, new = recorded.get(chapter, {}), built.get(chapter, {})
        for name in sorted(set(old) | set(new)):
            if name not in new:
                lines.append(f"{chapter}: {name} is no longer glued (recorded {old[name]})")
            elif name not in old:
                lines.append(f"{chapter}: {name} is glued but not recorded ({new[name]})")
            elif old[name] != new[name]:
                lines.append(f"{chapter}: {name} was {old[name]}, is {new[name]}")
    return lines


def _notebook(tmp: Path, values: dict[str, str], tags: list[str] | None = None) -> Path:
    outputs = [{"output_type": "display_data", "data": {RECORD: repr(v)},
                "metadata": {"scrapbook": {"name": k, "mime_prefix": "application/papermill.record/"}}}
               for k, v in values.items()]
    cell = {"cell_type": "code", "metadata": {"tags": tags or []}, "outputs": outputs, "source": ""}
    (tmp / "05_x.ipynb").write_text(json.dumps({"cells": [cell]}), encoding="utf-8")
    return tmp


def test_numbers_are_read_whatever_their_format() -> None:
    rules = sanitize_rules()
    assert numbers_in("'10,330'", rules) == numbers_in("'10330.0'", rules) == [10330.0]
    assert numbers_in("'−1.6 to +0.6 points in 6 cells'", rules) == [-1.6, 0.6, 6.0]
    assert numbers_in("'took 3.4 s at 12 pairs/s'", rules) == []


def test_a_moved_number_a_lost_and_a_new_glue_are_each_reported(tmp_path: Path) -> None:
    recorded = glued_numbers(_notebook(tmp_path, {"gain": "0.6 points", "flips": "12", "share": "56.2"}))
    built = glued_numbers(_notebook(tmp_path, {"gain": "0.6 points", "flips": "13", "extra": "1"}))
    assert differences(recorded, recorded) == []
    assert differences(recorded, built) == ["05_x: extra is glued but not recorded ([1.0])",
                                            "05_x: flips was [12.0], is [13.0]",
                                            "05_x: share is no longer glued (recorded [56.2])"]


def test_values_nbval_ignores_are_left_out(tmp_path: Path) -> None:
    assert glued_numbers(_notebook(tmp_path, {"ms": "41"}, ["hide-input", "nbval-ignore-output"])) == {"05_x": {}}


def test_the_recorded_book_covers_every_chapter() -> None:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    chapters = sorted(p.stem for p in (HERE.parent / "notebooks").glob("[0-9][0-9]_*.py"))
    assert sorted(recorded) == chapters
    assert sum(len(v) for v in recorded.values()) >= 400


@pytest.mark.skipif(not os.environ.get("TEF_EXECUTED_DIR"), reason="compares a built book: make glued")
def test_the_built_book_glues_the_recorded_numbers() -> None:
    folder = Path(os.environ["TEF_EXECUTED_DIR"])
    built = glued_numbers(folder)
    assert built, f"{folder}: no executed chapters (build the book first: make book-ci)"
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    lines = differences(recorded, built)
    assert not lines, "the book's glued numbers changed:\n" + "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "write":
        sys.exit("usage: python tests/test_glued.py write EXECUTED_NOTEBOOKS_DIR")
    glued = glued_numbers(Path(sys.argv[2]))
    FIXTURE.write_text(json.dumps(glued, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{FIXTURE}: {sum(len(v) for v in glued.values())} glued values in {len(glued)} chapters")
