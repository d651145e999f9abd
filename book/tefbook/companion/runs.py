"""The caches of several runs, read as one frame: which judges, prompts and languages a chapter shows.

A run is one judge (``model``) under one prompt variant (``prompt``); its caches are
``<cache_dir>/<model>/<prompt>/<lang>.jsonl``, or ``<lang>.reading-<reading>.jsonl`` for an LLM judge
read another way than the default ``summed`` (:func:`tefcore.extraction.cache.cache_path`; a judge that reads
no answer token, such as the e5 judges, has one cache whatever the reading). :func:`load_runs` reads
many of them into one :class:`Runs` (the rows with ``model`` and ``prompt`` columns in front, the
provenance of each file, and a note for each file that is missing); :func:`chapter_runs` does the same
for a chapter, which needs at least one cache (the label of each judge's rows is
:func:`tefbook.companion.provenance.run_labels`). :func:`parse_list` and :func:`repo_path` turn notebook
parameters into names and paths.

:func:`frame_of` and :func:`run_keys` (with :func:`tefcore.evaluate.iter_groups`) are the small pieces that
:mod:`tefbook.companion.results` and :mod:`tefbook.companion.calibration` share to work on the runs of a frame
one (model, prompt) at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.provenance import flat_header
from tefbook.toc import project_root

__all__ = [
    "READINGS",
    "SETTING_FIELDS",
    "Runs",
    "chapter_runs",
    "concat_runs",
    "frame_of",
    "load_runs",
    "parse_list",
    "reads_answers",
    "repo_path",
    "run_keys",
    "setting_notes",
]


READINGS: tuple[str, ...] = ("summed", "reference")
"""How an LLM judge's answer token is read (:mod:`tefcore.judges.labels`); ``summed`` is the default."""

_GROUP_KEYS: tuple[str, ...] = ("model", "prompt")


# --------------------------------------------------------------------------------------------------
# notebook parameters
# --------------------------------------------------------------------------------------------------
def parse_list(value: str | Iterable[str] | None) -> list[str]:
    """Split a notebook parameter like ``"local, e5-zeroshot"`` into names (order kept, no repeats).

    Parameters
    ----------
    value : str, iterable of str or None
        A comma-separated string (papermill parameters are strings) or a list.

    Returns
    -------
    list of str
    """
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        name = str(item).strip()
        if name and name not in out:
            out.append(name)
    return out


def repo_path(path: str | Path) -> Path:
    """Resolve a project-relative path (``cache_dir="data/caches"``) from any working directory.

    The book executes chapters in ``_build/executed/notebooks``; a chapter parameter such as
    ``cache_dir="data/caches"`` means the project's folder (:func:`project_root`). An absolute path
    is returned as it is.
    """
    p = Path(path).expanduser()
    return p if p.is_absolute() else project_root() / p


# --------------------------------------------------------------------------------------------------
# loading caches
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Runs:
    """The caches of several judges, prompts and languages.

    Attributes
    ----------
    frame : DataFrame
        The cache rows (:func:`tefcore.extraction.cache.read_cache`) of every file found, with ``model`` and
        ``prompt`` columns in front.
    provenance : DataFrame
        One row per file read: ``model, prompt, lang, path, n_pairs`` and the provenance fields
        recorded in the cache (flattened, nested keys joined with ``.``).
    missing : list of str
        A sentence for each requested file that does not exist or could not be read.
    """

    frame: pd.DataFrame
    provenance: pd.DataFrame
    missing: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        """Judges with at least one cache, in the requested order."""
        return list(pd.unique(self.frame["model"])) if len(self.frame) else []

    @property
    def prompts(self) -> list[str]:
        """Prompt variants with at least one cache."""
        return list(pd.unique(self.frame["prompt"])) if len(self.frame) else []

    def select(self, **where: str | Sequence[str]) -> Runs:
        """The runs whose columns take the given value(s), e.g. ``runs.select(model="local")``."""
        mask = np.ones(len(self.frame), dtype=bool)
        pmask = np.ones(len(self.provenance), dtype=bool)
        for col, val in where.items():
            vals = [val] if isinstance(val, str) else list(val)
            mask &= self.frame[col].isin(vals).to_numpy()
            pmask &= self.provenance[col].isin(vals).to_numpy()
        return Runs(self.frame[mask].reset_index(drop=True),
                    self.provenance[pmask].reset_index(drop=True), list(self.missing))


_RUN_KEYS: tuple[str, ...] = ("model", "prompt", "lang", "path", "n_pairs")


def _joined(flat: dict[str, Any]) -> dict[str, Any]:
    """A flat header with its lists as comma-separated text (one cell of the provenance table)."""
    return {k: ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v for k, v in flat.items()}


def _recorded(flat: dict[str, Any]) -> dict[str, Any]:
    """Rename provenance fields that would shadow the run's own keys (``model`` -> ``model_id``)."""
    out = {}
    for k, v in flat.items():
        if k in _RUN_KEYS:
            k = "model_id" if k == "model" and "model_id" not in flat else f"recorded_{k}"
        out[k] = v
    return out


def _shown(path: Path) -> str:
    """A path as the notes print it: relative to the project folder when inside it (the book shows no
    machine's absolute paths)."""
    try:
        return path.resolve().relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return str(path)


def load_runs(
    models: str | Sequence[str],
    prompts: str | Sequence[str] = "original",
    langs: str | Sequence[str] = ("en", "zh"),
    cache_dir: str | Path = "data/caches",
    *,
    reading: str = "summed",
    reader: Callable[[Path], tuple[pd.DataFrame, dict[str, Any]]] | None = None,
) -> Runs:
    """Read the caches ``<cache_dir>/<model>/<prompt>/<lang>.jsonl`` of several runs.

    Parameters
    ----------
    models, prompts, langs : str or sequence of str
        Names, or comma-separated strings of names (notebook parameters).
    cache_dir : str or Path
        Root of the caches; a relative path is resolved with :func:`repo_path`.
    reading : {"summed", "reference"}
        How the LLM judges' answer tokens were read: their file names come from
        :func:`tefcore.extraction.cache.cache_path`; judges that read no answer token (:func:`reads_answers`)
        have one cache whatever the reading.
    reader : callable, optional
        ``reader(path) -> (frame, provenance)``; default :func:`tefcore.extraction.cache.read_cache`.

    Returns
    -------
    Runs
        The concatenated frame (columns ``model, prompt`` then the cache's), the provenance table
        and the notes on missing files. Missing files are skipped, never an error: the chapters say
        what they could not show.

    Raises
    ------
    ValueError
        When no model, prompt or language is requested, or the reading is unknown.
    """
    from tefcore.extraction.cache import cache_path

    model_list, prompt_list, lang_list = parse_list(models), parse_list(prompts), parse_list(langs)
    if not (model_list and prompt_list and lang_list):
        raise ValueError(f"load_runs needs at least one model, prompt and language; got models={models!r}, "
                         f"prompts={prompts!r}, langs={langs!r}")
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; choose one of {', '.join(READINGS)}")
    if reader is None:
        from tefcore.extraction.cache import read_cache as reader
    root = repo_path(cache_dir)
    frames, prov, missing = [], [], []
    for model in model_list:
        read_as = reading if reads_answers(model) else "summed"
        for prompt in prompt_list:
            for lang in lang_list:
                path = cache_path(root, model, prompt, lang, reading=read_as)
                if not path.is_file():
                    missing.append(f"{model}/{prompt}/{lang}: no cache at {_shown(path)}")
                    continue
                try:
                    df, meta = reader(path)
                except (OSError, ValueError) as exc:
                    missing.append(f"{model}/{prompt}/{lang}: unreadable cache {_shown(path)} ({exc})")
                    continue
                if len(df) == 0:
                    missing.append(f"{model}/{prompt}/{lang}: cache {_shown(path)} holds no pairs")
                    continue
                df = df.copy()
                df.insert(0, "prompt", prompt)
                df.insert(0, "model", model)
                frames.append(df)
                prov.append({**_recorded(_joined(flat_header(meta or {}))), "model": model, "prompt": prompt,
                             "lang": lang, "path": str(path), "n_pairs": len(df)})
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["model", "prompt", "post_id", "lang", "dimension", "side", "direct", "sentences"])
    provenance = pd.DataFrame(prov) if prov else pd.DataFrame(
        columns=["model", "prompt", "lang", "path", "n_pairs"])
    for lang, g in provenance.groupby("lang", sort=False):
        if g["n_pairs"].nunique() > 1:  # e.g. an extraction still running, or run with a limit
            sizes = ", ".join(f"{m}/{p}: {n}" for m, p, n in zip(g["model"], g["prompt"], g["n_pairs"]))
            missing.append(f"{lang}: the caches hold different numbers of pairs ({sizes}); "
                           "judges are compared on different pairs")
    missing += setting_notes(provenance)
    return Runs(frame, provenance, missing)


SETTING_FIELDS: tuple[str, ...] = ("system_prompt", "chat_template_sha256", "reading", "standardize", "C",
                                   "weights_sha256", "llama_cpp_cpu")
"""Provenance fields that should agree between the languages of one judge's run and between the prompts of
one judge and language (:func:`load_runs` notes it when they do not, e.g. one language extracted under
another chat rendering, or one prompt by another llama.cpp build)."""


def _recorded_value(value: Any) -> str:
    """A provenance value as a note shows it (a field a cache does not record: ``not recorded``)."""
    return "not recorded" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def setting_notes(provenance: pd.DataFrame) -> list[str]:
    """A note for each judge whose caches record different values of a :data:`SETTING_FIELDS` field.

    Compared are the languages of one (judge, prompt) and the prompts of one (judge, language): a
    difference there mixes a change of setting into a comparison of languages or of prompts.
    """
    notes = []
    groupings = ((("model", "prompt"), "lang", "languages'"), (("model", "lang"), "prompt", "prompts'"))
    for by, across, what in groupings:
        for (model, key), g in provenance.groupby(list(by), sort=False):
            for col in (c for c in SETTING_FIELDS if c in g.columns):
                values = [_recorded_value(v) for v in g[col]]
                if g[col].notna().any() and len(set(values)) > 1:
                    found = "; ".join(f"{k}: {value}" for k, value in zip(g[across], values))
                    notes.append(f"{model}/{key}: the {what} caches record different `{col}` ({found})")
    return notes


def chapter_runs(
    models: str | Sequence[str],
    prompts: str | Sequence[str] = "original",
    langs: str | Sequence[str] = ("en", "zh"),
    cache_dir: str | Path = "data/caches",
    reading: str = "summed",
) -> Runs:
    """:func:`load_runs` for a chapter of the book: at least one cache must exist.

    Raises
    ------
    FileNotFoundError
        When none of the requested caches exists, with the folder looked in and the command that
        writes one.
    """
    runs = load_runs(models, prompts, langs, cache_dir, reading=reading)
    if runs.frame.empty:
        raise FileNotFoundError(f"no cache found under {repo_path(cache_dir)} for models={models!r}, "
                                f"prompts={prompts!r}, langs={langs!r}, reading={reading!r}; write one with "
                                "`tef extract` (chapter 4)")
    return runs


def concat_runs(*parts: Runs | None) -> Runs:
    """Several :class:`Runs` as one (``None`` parts are skipped), e.g. the LLM judges under every prompt
    variant and the prompt-free judges under one.

    Examples
    --------
    >>> empty = Runs(pd.DataFrame(columns=["model", "prompt"]), pd.DataFrame(columns=["model", "prompt", "lang"]))
    >>> concat_runs(empty, None).frame.empty
    True
    """
    kept = [p for p in parts if p is not None]
    if not kept:
        raise ValueError("concat_runs needs at least one Runs")
    frames = [p.frame for p in kept if len(p.frame)] or [kept[0].frame]
    provs = [p.provenance for p in kept if len(p.provenance)] or [kept[0].provenance]
    return Runs(pd.concat(frames, ignore_index=True), pd.concat(provs, ignore_index=True),
                [note for p in kept for note in p.missing])


def reads_answers(model: str) -> bool:
    """Whether a judge reads an answer token (an LLM backend of the registry), so that its caches depend on
    the reading. A name the registry does not know counts as an LLM (a ``.gguf`` file, a test's name).

    Examples
    --------
    >>> reads_answers("local"), reads_answers("e5-crossfit"), reads_answers("my-model.gguf")
    (True, False, True)
    """
    from tefcore.judges.registry import ModelSpec, load_registry

    entry = load_registry().get(model)
    return entry is None or ModelSpec(model, entry["backend"]).reads_logprobs


# --------------------------------------------------------------------------------------------------
# working on the runs of a frame one at a time
# --------------------------------------------------------------------------------------------------
def frame_of(runs: Runs | pd.DataFrame) -> pd.DataFrame:
    """The cache rows of ``runs`` (a frame is returned as it is)."""
    return runs.frame if isinstance(runs, Runs) else runs


def run_keys(frame: pd.DataFrame, keys: Sequence[str] = _GROUP_KEYS) -> list[str]:
    """The columns of ``keys`` (default ``model, prompt``) that ``frame`` has, in that order."""
    return [k for k in keys if k in frame.columns]
