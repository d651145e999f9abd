"""The one protocol every judge implements.

A judge (an LLM read through its answer-token log-probabilities, or an embedding detector) turns
:class:`ScoreRequest` objects into :class:`Score` objects, one per request, in order. Backends know
nothing of fusion: they stop at probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tefcore.tasks.schema import Choices, EvaluationPair

__all__ = ["INVALID", "SOURCES", "Backend", "Score", "ScoreRequest"]

SOURCES: tuple[str, ...] = ("logprobs", "partial", "generated_text", "invalid", "embedding")
"""How a probability was obtained.

``logprobs``: both answer letters were read from the log-probabilities; ``partial``: only one letter
was; ``generated_text``: no letter in the log-probabilities, the generated text was a letter
(reference-release reading only); ``invalid``: no usable answer (P(change) is NaN, never 0.5);
``embedding``: an embedding judge, not an LLM.
"""

_KINDS: tuple[str, ...] = ("direct", "sentence")
"""What a request scores: a whole post (Direct) or one sentence."""


@dataclass(frozen=True)
class ScoreRequest:
    """One query to a judge.

    Attributes
    ----------
    prompt : str
        The full prompt of protocol §4 (LLM judges use it; embedding judges ignore it).
    text : str
        The whole post (``kind="direct"``) or one sentence (``kind="sentence"``).
    lang, dimension, post_id : str
        Where the text comes from; the cross-fitted judge needs ``post_id`` to pick its fold.
    kind : str
        ``"direct"`` or ``"sentence"``.
    choices : Choices
        The sides of the dimension (keyword only; MIND's: :func:`tefcore.mind.prompts.choices`): LLM judges
        read their ``letters``, the e5 zero-shot judge compares the text with their ``descriptions``.
    """

    prompt: str
    text: str
    lang: str
    dimension: str
    post_id: str
    kind: str = "sentence"
    choices: Choices = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"ScoreRequest.kind must be one of {_KINDS}, got {self.kind!r}")

    @property
    def letters(self) -> tuple[str, ...]:
        """The answer letters, one per side: ``("C", "S")`` for MIND."""
        return self.choices.letters


@dataclass(frozen=True)
class Score:
    """A judge's answer to one request.

    Attributes
    ----------
    p_change : float
        The first side's probability (MIND: :math:`P(C) / (P(C) + P(S))`), renormalised over the answers;
        NaN when ``source`` is ``"invalid"``.
    mass : float
        The letters' summed probability before renormalisation (MIND: :math:`P(C) + P(S)`): how much of
        the next-token distribution went to a valid answer (a format-compliance signal); NaN for embedding
        judges.
    source : str
        One of :data:`SOURCES`.
    detail : str
        Why an answer is ``invalid`` when the judge knows (e.g. a prompt longer than the model's
        context); empty otherwise.
    probs : tuple of float
        A task's dimension with K > 2 sides: the distribution over the sides, side order (``p_change``
        is its first entry). Empty for two sides, where it is :math:`(p, 1 - p)`; NaN entries for an
        invalid answer.
    logprobs : tuple of float
        The log-probability of each side's letter, side order, all its token variants summed (MIND: C,
        then S); ``-inf`` for a letter not seen. LLM judges give one per side; empty for embedding
        judges and for :data:`INVALID`.

    Examples
    --------
    >>> s = Score(0.75, 0.8, "logprobs", logprobs=(math.log(0.6), math.log(0.2)))
    >>> round(s.p_change, 2), [round(math.exp(x), 1) for x in s.logprobs]
    (0.75, [0.6, 0.2])
    """

    p_change: float
    mass: float
    source: str
    detail: str = ""
    probs: tuple[float, ...] = ()
    logprobs: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"Score.source must be one of {SOURCES}, got {self.source!r}")
        if self.source == "invalid":
            if not math.isnan(self.p_change):
                raise ValueError("an invalid Score must carry p_change = NaN, not a number")
        elif not (0.0 <= self.p_change <= 1.0):
            raise ValueError(f"p_change must lie in [0, 1], got {self.p_change!r}")
        if self.probs and self.source != "invalid" and (abs(math.fsum(self.probs) - 1.0) > 1e-6 or
                                                        self.probs[0] != self.p_change):
            raise ValueError(f"probs must be a distribution whose first entry is p_change, got {self.probs!r}")

    @property
    def valid(self) -> bool:
        """True when the score can enter a fusion rule."""
        return self.source != "invalid"


INVALID = Score(math.nan, 0.0, "invalid")
"""The score of an unreadable answer."""


@runtime_checkable
class Backend(Protocol):
    """What every judge offers."""

    name: str

    def provenance(self) -> dict[str, Any]:
        """Everything that identifies the numbers this judge produces (model, weights hash, ...)."""
        ...

    def prepare(self, pairs: Sequence[EvaluationPair], *, progress: bool = False,
                recorded: Mapping[str, Any] | None = None) -> None:
        """Fit whatever the judge needs before scoring (no-op for LLM judges).

        ``progress`` asks for a progress bar over long work. ``recorded`` is the provenance of the
        cache a run resumes: a judge whose fit is recorded there, and was made on the same pairs, may
        take it instead of fitting again (the provenance of the two is then the same).
        """
        ...

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """Score every request, preserving order."""
        ...
