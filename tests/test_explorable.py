"""The explorable figures of chapters 1 and 10 decide as :mod:`tefcore.fusion` does.

The figures compute in the reader's browser: their rules are Vega expressions written in the chapters'
cells tagged ``explorable``. These tests run those cells (nothing else of the chapter), set the sliders
to a state, let Vega evaluate the figure through vl-convert (the same Vega runtime as the browser) and
compare every decision, score and per-sentence number the figure draws with ``fuse_many`` on the same
post. The states include the hard cases: ties of Majority Vote, evidence that cancels exactly, means on
the rounding edge of 1/2, and probabilities 0 and 1.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import jupytext
import numpy as np
import pytest

from tefcore.fusion import clipped_log_odds, entropy_weight, fuse_many

ROOT = Path(__file__).resolve().parents[1]
RULES = ("majority_vote", "soft_vote", "tef_without_entropy", "tef")
SIDES = ("change", "stability")

vl_convert = pytest.importorskip("vl_convert")


def explorable_namespace(chapter: str) -> dict[str, Any]:
    """The names defined by a chapter's cells tagged ``explorable``, executed in order."""
    notebook = jupytext.read(ROOT / "notebooks" / f"{chapter}.py")
    cells = [c for c in notebook.cells if "explorable" in c.metadata.get("tags", [])]
    assert cells, f"{chapter} has no cell tagged 'explorable'"
    namespace: dict[str, Any] = {}
    for cell in cells:
        exec(compile(cell.source, f"{chapter}:explorable", "exec"), namespace)  # noqa: S102 - the chapter's own code
    return namespace


def drawn_texts(chart: Any) -> list[str]:
    """Every text the figure draws, in drawing order, as Vega renders it (vl-convert)."""
    svg = vl_convert.vegalite_to_svg(chart.to_dict())
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def number(text: str) -> float:
    """A number as d3-format writes it (U+2212 minus, thousands commas)."""
    return float(text.replace("\u2212", "-").replace(",", ""))


@pytest.fixture(scope="module")
def chapter1() -> dict[str, Any]:
    return explorable_namespace("01_derivation")


@pytest.fixture(scope="module")
def lab() -> dict[str, Any]:
    return explorable_namespace("10_teaching_lab")


SENTENCE_STATES = [
    pytest.param([0.90, 0.40, 0.38, 0.42, 0.36], 5, id="chapter-default"),
    pytest.param([0.30, 0.60, 0.70, 0.20, 0.50], 4, id="MV-tie-first-vote-stability"),
    pytest.param([0.70, 0.20, 0.30, 0.60, 0.50], 4, id="MV-tie-first-vote-change"),
    pytest.param([0.40, 0.94, 0.10, 0.10, 0.10], 2, id="MV-tie-two-sentences"),
    pytest.param([0.60, 0.40, 0.10, 0.10, 0.10], 2, id="evidence-cancels-exactly"),
    pytest.param([0.15, 0.41, 0.94, 0.50, 0.50], 3, id="mean-on-the-rounding-edge"),
    pytest.param([0.16, 0.35, 0.99, 0.50, 0.50], 3, id="mean-on-the-rounding-edge-2"),
    pytest.param([0.0, 1.0, 0.5, 0.0, 1.0], 5, id="certain-sentences"),
    pytest.param([0.5, 0.5, 0.5, 0.5, 0.5], 5, id="no-evidence"),
    pytest.param([0.62, 0.55, 0.55, 0.55, 0.01], 5, id="one-decisive-against"),
    pytest.param([0.21, 0.97, 0.52, 0.12, 0.62], 1, id="one-sentence"),
]


@pytest.mark.parametrize(("p", "n"), SENTENCE_STATES)
def test_sentence_figure_decides_as_tefcore(chapter1: dict[str, Any], p: list[float], n: int) -> None:
    """Chapter 1's five-sentence figure: decisions, scores and per-sentence numbers."""
    texts = drawn_texts(chapter1["sentence_figure"](p, n))
    post = np.asarray(p[:n])
    start = texts.index("TEF") + 1  # the decisions follow the last rule's name, in the rules' order
    decisions, scores = texts[start:start + 4], texts[start + 4:start + 8]
    batches = {rule: fuse_many(post, np.zeros(n, dtype=int), rule=rule) for rule in RULES}
    assert decisions == [str(batches[rule].prediction[0]) for rule in RULES], (p, n)

    votes = int(round(batches["majority_vote"].scores[0, 0] * n))
    assert scores[0].startswith(f"votes for change: {votes} of {n}")
    assert ("a tie" in scores[0]) == (2 * votes == n)
    for text, rule in zip(scores[1:], RULES[1:]):
        assert number(text.split("= ")[1]) == pytest.approx(batches[rule].scores[0, 0], abs=5e-4), (text, rule)

    shown = set(texts)
    for value in np.concatenate([entropy_weight(post), clipped_log_odds(post), entropy_weight(post) * clipped_log_odds(post)]):
        label = f"{value:.3f}".replace("-", "\u2212")
        assert label in shown or label == "\u22120.000", f"{label} not drawn"


EXCHANGE_STATES = [(0.95, 0.45), (0.9, 0.4), (0.8, 0.3), (0.6, 0.4), (0.75, 0.25), (0.55, 0.45), (0.5, 0.45),
                   (1.0, 0.0), (0.95, 0.5), (0.7, 0.35), (0.65, 0.45), (0.99, 0.49)]


def decided(strong: float, weak: float, n: int, rule: str) -> str:
    """``fuse_many``'s decision on the post of one ``strong`` sentence followed by ``n`` ``weak`` ones."""
    return str(fuse_many(np.r_[strong, np.full(n, weak)], np.zeros(n + 1, dtype=int), rule=rule).prediction[0])


@pytest.mark.parametrize(("strong", "weak"), EXCHANGE_STATES)
def test_exchange_figure_turns_where_tefcore_does(lab: dict[str, Any], strong: float, weak: float) -> None:
    """The lab's exchange-rate figure: the first n that turns the post, per rule, its strip and the rate.

    Every rule's sum moves one way as n grows, so "first n" is checked by the posts with n - 1 and n
    hedging sentences; "never" by a post of 100,000.
    """
    texts = drawn_texts(lab["exchange_figure"](strong, weak, n_max=30))
    lines = [t for t in texts if t.startswith(("one decisive sentence", "the hedging sentences never"))]
    assert len(lines) == len(RULES)
    for rule, line in zip(RULES, lines):
        if "turns" in line:
            first = int(number(re.search(r"turns at n = ([\d,]+)", line).group(1)))
            assert (decided(strong, weak, first - 1, rule), decided(strong, weak, first, rule)) == SIDES, (rule, line)
        else:
            assert decided(strong, weak, 100_000, rule) == "change", (rule, line)
    if weak < 0.5:  # TEF's exchange rate is the ratio of the two sentences' contributions
        rate = number(re.search(r"worth ([\d,.]+)", lines[3]).group(1))
        tef = fuse_many([strong, weak], [0, 1], rule="tef").scores[:, 0]
        assert rate == pytest.approx(tef[0] / -tef[1], abs=0.05 + 1e-3 * rate)
