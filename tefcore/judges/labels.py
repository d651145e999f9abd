"""From the answer position's log-probabilities to a :class:`~tefcore.judges.base.Score`.

Every LLM judge (local llama.cpp, vLLM, OpenAI-compatible APIs) ends in this module, so a number means
the same thing whichever machine produced it. The answer token of protocol §5 is one letter, ``C``
(change) or ``S`` (stability), and several tokens decode to it (``"C"``, ``" C"``, ``"C."``, ``"Ｃ"``, ...).
Two readings are offered:

``"summed"`` (default)
    The probability of a letter is the sum over *every* token that normalises to it
    (:func:`normalize_letter`), and

    .. math::

        P(\\text{change}) = \\frac{P(C)}{P(C) + P(S)}, \\qquad \\text{mass} = P(C) + P(S).

    When a top-k list left one letter out (source ``"partial"``), the missing letter is bounded by the
    probability left outside the list, :math:`1 - \\sum_{t \\in \\text{top}} P(t)`: P(change) is the least
    extreme value consistent with what was read. Neither letter: ``"invalid"`` (P = NaN). A task's
    dimension with K sides has K letters; ``p_change`` is the first side's probability, and with K > 2,
    :math:`P(k) = P(L_k) / \\sum_j P(L_j)`, missing letters sharing the probability outside the list equally.

``"reference"``
    The reference release: for each letter only the *first* variant present of :data:`REFERENCE_VARIANTS`;
    when a letter is missing, the generated text decides (it starts with C -> 1.0, with S -> 0.0, source
    ``"generated_text"``), else ``"invalid"`` (NaN here; the release's 0.5 is applied at evaluation time,
    ``tefcore.evaluate.predict_pairs(invalid="reference")``, never stored).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from tefcore.judges.base import Score
from tefcore.tasks.schema import EvaluationPair

__all__ = ["LETTERS", "READINGS", "REFERENCE_VARIANTS", "LogprobJudge", "check_reading", "label_token_ids",
           "merge_logprobs", "normalize_letter", "score_from_logprobs", "score_token_logprobs"]

LETTERS: tuple[str, str] = ("C", "S")
"""The two answer letters, change first."""

READINGS: tuple[str, ...] = ("summed", "reference")
"""Ways to read P(change) from the answer position (see the module notes)."""

REFERENCE_VARIANTS: tuple[str, ...] = ("{}", " {}", "{}.", " {}.", "{}:", " {}:")
"""The reference release's variant order (``str.format`` patterns of the letter)."""

_TRAILING = ".:)"


def check_reading(reading: str) -> str:
    """``reading`` when it is one of :data:`READINGS`, else a one-line ``ValueError``."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    return reading


def normalize_letter(token: str, letters: tuple[str, ...] = LETTERS) -> str | None:
    """Return the letter of ``letters`` (default ``C`` and ``S``) that a decoded token is, else ``None``.

    The text is NFKC-normalised (full-width ``Ｃ`` becomes ``C``, ``：`` becomes ``:``), stripped of
    surrounding white space and of trailing ``.``, ``:`` and ``)``; the comparison is case-sensitive.

    Parameters
    ----------
    token : str
        The decoded text of one token.

    Returns
    -------
    str or None

    Examples
    --------
    >>> normalize_letter(" C."), normalize_letter("Ｓ"), normalize_letter("c")
    ('C', 'S', None)
    """
    text = unicodedata.normalize("NFKC", token).strip().rstrip(_TRAILING).strip()
    return text if text in letters else None


def _clean(logprob: float) -> float | None:
    """A usable log-probability (rounding above 0 clipped to 0), or None for NaN/+inf."""
    value = float(logprob)
    if math.isnan(value) or value == math.inf:
        return None
    return min(value, 0.0)


def merge_logprobs(entries: Iterable[tuple[str, float]], how: str = "sum") -> dict[str, float]:
    """Map decoded token text to log-probability when several token ids share one text.

    Parameters
    ----------
    entries : iterable of (str, float)
        ``(decoded text, log-probability)`` per token id, best first when ``how="first"`` matters.
    how : {"sum", "first"}
        ``"sum"``: duplicates are added in probability space (log-sum-exp); ``"first"``: the first
        one is kept (what the reference release's ``dict.setdefault`` did).

    Returns
    -------
    dict of str to float

    Examples
    --------
    >>> merged = merge_logprobs([("C", math.log(0.3)), ("C", math.log(0.1)), ("S", math.log(0.2))])
    >>> {k: round(math.exp(v), 3) for k, v in merged.items()}
    {'C': 0.4, 'S': 0.2}
    """
    if how not in ("sum", "first"):
        raise ValueError(f"how must be 'sum' or 'first', got {how!r}")
    merged: dict[str, float] = {}
    for text, value in ((text, v) for text, lp in entries if (v := _clean(lp)) is not None):
        if text not in merged:
            merged[text] = value
        elif how == "sum":
            merged[text] = float(logsumexp([merged[text], value]))
    return merged


def _renormalised(first: float, second: float) -> float:
    """The first of two answers' renormalised probability (MIND: :math:`P(C) / (P(C) + P(S))`) from their
    finite log-probabilities: a logistic of their gap."""
    gap = second - first
    if gap > 0:
        z = math.exp(-gap)
        return z / (1.0 + z)
    return 1.0 / (1.0 + math.exp(gap))


def _scored(logprobs: list[float], read: list[float], source: str) -> Score:
    """The score of the letters' log-probabilities: ``read`` (them with unseen letters bounded, or the generated
    letter's hit) renormalised over the answers; two sides give P(first side), a logistic of their gap."""
    mass = math.fsum(math.exp(lp) for lp in logprobs)
    if len(logprobs) == 2:
        p = math.nan if source == "invalid" else _renormalised(*read)
        return Score(p, mass, source, logprobs=tuple(logprobs))
    probs = ((math.nan,) * len(read) if source == "invalid"
             else tuple(float(x) for x in np.exp(np.asarray(read) - logsumexp(read))))
    return Score(probs[0], mass, source, probs=probs, logprobs=tuple(logprobs))


def _summed(top: Mapping[str, float], letters: tuple[str, ...]) -> Score:
    """The ``"summed"`` reading (see the module notes): unseen letters share the mass outside the list."""
    logprobs = [float(logsumexp([lp for text, lp in top.items() if normalize_letter(text, letters) == letter]))
                for letter in letters]
    unseen = sum(lp == -math.inf for lp in logprobs)
    if unseen == len(letters):
        return _scored(logprobs, logprobs, "invalid")
    outside = 1.0 - math.fsum(math.exp(lp) for lp in top.values())  # holds every unseen variant
    share = math.log(outside) - math.log(unseen) if unseen and outside > 0.0 else -math.inf
    read = [share if lp == -math.inf else lp for lp in logprobs]
    return _scored(logprobs, read, "partial" if unseen else "logprobs")


def _reference(top: Mapping[str, float], generated: str | None, letters: tuple[str, ...]) -> Score:
    """The ``"reference"`` reading (see the module notes)."""
    logprobs = [next((float(top[k]) for k in (v.format(letter) for v in REFERENCE_VARIANTS) if k in top), -math.inf)
                for letter in letters]
    if all(lp > -math.inf for lp in logprobs):
        return _scored(logprobs, logprobs, "logprobs")
    text = (generated or "").strip().upper()
    hit = [0.0 if text.startswith(letter) else -math.inf for letter in letters]
    return _scored(logprobs, hit, "generated_text") if max(hit) == 0.0 else _scored(logprobs, logprobs, "invalid")


def score_from_logprobs(top: Mapping[str, float], generated: str | None = None, *,
                        reading: str = "summed", letters: tuple[str, ...] = LETTERS) -> Score:
    """Read P(change) (a task's first side; K > 2: every side) from the first answer position's log-probabilities.

    Parameters
    ----------
    top : mapping of str to float
        Decoded token text -> log-probability (a top-k list, or the exact log-probabilities of
        every label token). NaN entries are ignored; values above 0 (rounding) count as 0.
    generated : str, optional
        The generated text (used by the reference reading only).
    reading : {"summed", "reference"}
        See the module notes.
    letters : tuple of str
        The answer letters, one per side (default ``C`` and ``S``).

    Returns
    -------
    Score
        ``source`` says how the number was obtained; P(change) is NaN for ``"invalid"``.

    Examples
    --------
    >>> s = score_from_logprobs({"C": math.log(0.5), " C": math.log(0.1), "S": math.log(0.2)})
    >>> round(s.p_change, 4), round(s.mass, 4), s.source
    (0.75, 0.8, 'logprobs')
    >>> three = score_from_logprobs({"A": math.log(0.4), "B": math.log(0.2)}, letters=("A", "B", "C"))
    >>> [round(p, 3) for p in three.probs], three.source     # C shares the 0.4 left outside the list
    ([0.4, 0.2, 0.4], 'partial')
    """
    check_reading(reading)
    cleaned = {text: v for text, lp in top.items() if (v := _clean(lp)) is not None}
    return _summed(cleaned, letters) if reading == "summed" else _reference(cleaned, generated, letters)


def score_token_logprobs(entries: Iterable[tuple[str, float]], generated: str | None = None, *,
                         reading: str = "summed", letters: tuple[str, ...] = LETTERS) -> Score:
    """Score per-token-id entries: merge texts shared by several ids, then :func:`score_from_logprobs`.

    Every LLM judge calls it after its model call.

    Parameters
    ----------
    entries : iterable of (str, float)
        ``(decoded text, log-probability)`` per token id, most probable first.
    generated, reading, letters
        As for :func:`score_from_logprobs`; ids that share a text are added (``"summed"``) or the first
        is kept (``"reference"``, as the release did).

    Returns
    -------
    Score

    Examples
    --------
    >>> entries = [("C", math.log(0.3)), (" C", math.log(0.1)), ("S", math.log(0.4))]
    >>> round(score_token_logprobs(entries).p_change, 3), round(score_token_logprobs(entries, reading="reference").p_change, 3)
    (0.5, 0.429)
    """
    top = merge_logprobs(entries, how="sum" if reading == "summed" else "first")
    return score_from_logprobs(top, generated, reading=reading, letters=letters)


def label_token_ids(decode: Callable[[int], str], n_vocab: int,
                    letters: tuple[str, ...] = LETTERS) -> dict[str, tuple[int, ...]]:
    """Find every token id whose decoded text normalises to one of ``letters`` (default ``C``, ``S``).

    Parameters
    ----------
    decode : callable
        Token id -> decoded text of that single token.
    n_vocab : int
        Vocabulary size; ids ``0 .. n_vocab - 1`` are decoded once each.

    Returns
    -------
    dict
        ``{"C": ids, "S": ids}`` (ascending ids).

    Raises
    ------
    ValueError
        When the vocabulary has no token for one of the letters.

    Examples
    --------
    >>> vocab = ["a", "C", " S", "C:", "b"]
    >>> label_token_ids(vocab.__getitem__, len(vocab))
    {'C': (1, 3), 'S': (2,)}
    """
    found: dict[str, list[int]] = {letter: [] for letter in letters}
    for token_id in range(n_vocab):
        letter = normalize_letter(decode(token_id), letters)
        if letter is not None:
            found[letter].append(token_id)
    missing = [letter for letter, ids in found.items() if not ids]
    if missing:
        raise ValueError(f"the vocabulary has no token for the answer letter(s) {missing}")
    return {letter: tuple(ids) for letter, ids in found.items()}


class LogprobJudge:
    """What the LLM judges share around their model call: the reading, nothing to fit, the letters' ids.

    A subclass sets ``reading`` (:func:`check_reading`) and, when it decodes a vocabulary itself, ``_pieces``
    (the text of every token id, the table :meth:`letter_ids` scans).
    """

    reading: str
    _pieces: list[str]

    def prepare(self, pairs: Sequence[EvaluationPair], *, progress: bool = False,
                recorded: Mapping[str, Any] | None = None) -> None:
        """Nothing to fit for an LLM judge."""

    def letter_ids(self, letters: tuple[str, ...] = LETTERS) -> list[int]:
        """Every token id that decodes to one of ``letters`` (ascending; :func:`label_token_ids`, once per set)."""
        found = self.__dict__.setdefault("_letter_ids", {})
        if letters not in found:
            ids = label_token_ids(self._pieces.__getitem__, len(self._pieces), letters)
            found[letters] = sorted(i for group in ids.values() for i in group)
        return found[letters]
