"""The README's Python examples run and print what they say (doctest, from the repository root)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_has_examples_and_stays_short() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    blocks = python_blocks(text)
    assert len(blocks) >= 2 and all(">>> " in block for block in blocks)  # every example shows its output


@pytest.mark.parametrize("number", range(len(python_blocks(README.read_text(encoding="utf-8")))))
def test_each_python_example_prints_what_it_promises(number: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples use paths relative to the repository
    block = python_blocks(README.read_text(encoding="utf-8"))[number]
    test = doctest.DocTestParser().get_doctest(block, {}, f"README example {number + 1}", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 0, f"README example {number + 1} printed something else"
