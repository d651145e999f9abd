r"""The paper's published tables (``data/paper/*.csv``) and the arithmetic its text states about them.

The four tables of the paper were transcribed into tidy CSV files, one row per printed number;
``data/paper/README.md`` describes each file and the vocabulary of its columns (method names are those
of :data:`tefcore.fusion.RULE_NAMES`, models the registry names, metrics in percent). The functions
below recompute each aggregate the paper states about its tables, from the CSV files alone; the
claims ledger (:mod:`tefpaper.ledger`) checks the paper's stated numbers with them.

Examples
--------
>>> from tefpaper.tables import load_table, average_gain
>>> t3 = load_table("table3")
>>> {k: round(v, 3) for k, v in average_gain(t3, level="model_lang").items()}
{'accuracy': 4.465, 'macro_f1': 4.618}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tefcore.evaluate import AVERAGE, BASELINES, dimension_average, strongest_baseline

__all__ = [
    "COLUMNS",
    "GAIN_LEVELS",
    "MODELS",
    "MODEL_LABELS",
    "ROUNDING_TOLERANCE",
    "SLACK",
    "TABLE_FILES",
    "ablation_drops",
    "ablation_versus_soft_vote",
    "average_gain",
    "best_or_tied",
    "dimension_averages",
    "efficiency_summary",
    "gain_by_group",
    "load_table",
    "load_tables",
    "main_results_wide",
    "paper_dir",
    "prompt_robustness_summary",
    "shortfalls",
    "strongest_baseline_gain",
    "table1_from_table3",
    "table4_average_check",
    "typesetting_check",
    "voting_versus_direct",
]

TABLE_FILES: dict[str, str] = {
    "table1": "table1_prompt_robustness.csv",
    "table2": "table2_efficiency.csv",
    "table3": "table3_main.csv",
    "table4": "table4_ablation.csv",
}
"""CSV file of each table, in ``data/paper/``."""

COLUMNS: dict[str, tuple[str, ...]] = {
    "table1": ("model", "prompt", "method", "metric", "value"),
    "table2": ("model", "method", "quantity", "unit", "value"),
    "table3": ("model", "lang", "dimension", "method", "metric", "value", "typeset"),
    "table4": ("model", "lang", "dimension", "method", "metric", "value", "typeset"),
}
"""Columns of each table, in file order (``typeset``: ``bold``, ``underline`` or ``none``, as printed)."""

MODELS: tuple[str, ...] = ("qwen2.5-7b", "llama3-8b", "qwen3-14b", "deepseek-v3.2", "gpt-4o-mini")
"""The paper's five judges, in its table order (registry names)."""

MODEL_LABELS: dict[str, str] = dict(zip(MODELS, ("Qwen2.5-7B", "LLaMA3-8B", "Qwen3-14B", "DeepSeek-V3.2", "GPT-4o-mini")))
"""Model names as the paper prints them."""

GAIN_LEVELS: dict[str, list[str]] = {
    "cell": ["model", "lang", "dimension", "metric"],
    "model_lang": ["model", "lang", "metric"],
    "model": ["model", "metric"],
}
"""Where the strongest baseline is chosen (see :func:`strongest_baseline_gain`): level -> its keys."""

ROUNDING_TOLERANCE: float = 0.05
"""A number printed with one decimal is consistent with a recomputed one within this distance."""

SLACK: float = 1e-9
"""Floating-point slack on comparisons of printed numbers (71.25 printed as 71.3 differs by 0.05 up to it)."""

PUBLISHED: Path = Path(__file__).resolve().parents[2] / "data" / "paper"
"""The paper's tables as transcribed in the repository (``data/paper``)."""

_KEYS3 = GAIN_LEVELS["cell"]


def paper_dir(data_dir: str | Path | None = None) -> Path:
    """Directory of the paper's CSV tables.

    Parameters
    ----------
    data_dir : str or Path, optional
        An explicit directory; default :data:`PUBLISHED`, ``data/paper`` of the repository this package is
        installed from (``pip install -e ./book``).
    """
    return PUBLISHED if data_dir is None else Path(data_dir)


def load_table(name: str, data_dir: str | Path | None = None) -> pd.DataFrame:
    """Read one of the paper's tables in tidy form.

    Parameters
    ----------
    name : {"table1", "table2", "table3", "table4"}
    data_dir : str or Path, optional
        See :func:`paper_dir`.

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`COLUMNS`; ``value`` is float.

    Raises
    ------
    ValueError
        Unknown table name, missing file or columns, or non-numeric values.
    """
    if name not in TABLE_FILES:
        raise ValueError(f"unknown table {name!r}; choose one of {', '.join(TABLE_FILES)}")
    path = paper_dir(data_dir) / TABLE_FILES[name]
    if not path.is_file():
        raise ValueError(f"table file not found: {path}")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS[name] if c not in frame.columns]
    if missing:
        raise ValueError(f"{path} lacks column(s) {missing}; expected {list(COLUMNS[name])}")
    try:
        frame["value"] = frame["value"].astype(float)
    except ValueError as exc:
        raise ValueError(f"{path}: non-numeric value: {exc}") from None
    return frame[list(COLUMNS[name])]


def load_tables(data_dir: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """All four tables, keyed ``table1`` .. ``table4``."""
    return {name: load_table(name, data_dir) for name in TABLE_FILES}


def _in_model_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` indexed by model, reordered to the paper's :data:`MODELS` order."""
    return frame.reindex([m for m in MODELS if m in frame.index])


def _per_model(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """One row per model (paper order), one column per combination of ``columns``."""
    return _in_model_order(table.pivot_table(index="model", columns=columns, values="value", aggfunc="first"))


def main_results_wide(table3: pd.DataFrame) -> pd.DataFrame:
    """Table 3 with one column per method.

    Returns
    -------
    pandas.DataFrame
        Index ``(model, lang, dimension, metric)``, columns the methods.
    """
    wide = table3.pivot_table(index=_KEYS3, columns="method", values="value", aggfunc="first")
    wide.columns.name = None
    return wide


def dimension_averages(table: pd.DataFrame) -> pd.DataFrame:
    r"""Unweighted mean over the six dimensions (protocol §7: a table's "Average",
    :func:`tefcore.evaluate.dimension_average`, printed Averages left out), checking that each row group
    has all six.

    Parameters
    ----------
    table : pandas.DataFrame
        Table 3 or Table 4 (tidy).

    Returns
    -------
    pandas.DataFrame
        Index ``(model, lang, metric)``, one column per method.
    """
    rows = table[table["dimension"] != AVERAGE]
    counts = rows.groupby(["model", "lang", "metric", "method"])["dimension"].nunique()
    if (counts != 6).any():
        bad = counts[counts != 6].index[0]
        raise ValueError(
            f"expected 6 dimensions per (model, lang, metric, method), {bad} has "
            f"{int(counts[bad])}"
        )
    means = dimension_average(rows, ["model", "lang", "metric", "method"], ["value"])
    means = means.set_index(["model", "lang", "metric", "method"])["value"].unstack("method").sort_index()
    means.columns.name = None
    return means


# --------------------------------------------------------------------------------------------------
# Table 3: TEF against the strongest baseline
# --------------------------------------------------------------------------------------------------
def strongest_baseline_gain(
    table3: pd.DataFrame,
    *,
    level: str = "model_lang",
    baselines: Sequence[str] = BASELINES,
) -> pd.DataFrame:
    r"""TEF minus the strongest baseline, :math:`g = \overline{\text{TEF}} - \max_b \overline{b}`, the
    baseline chosen at a given level (:func:`tefcore.evaluate.strongest_baseline` on the paper's tidy
    table, which explains the levels): per ``"cell"`` (model, language, dimension, metric), per
    ``"model_lang"`` on the Average of the six dimensions (protocol §7), or per ``"model"`` across
    languages and dimensions (as Table 1 does for accuracy).

    Parameters
    ----------
    table3 : pandas.DataFrame
        Table 3 (tidy).
    level : {"cell", "model_lang", "model"}
    baselines : sequence of str
        Methods that compete for the strongest baseline.

    Returns
    -------
    pandas.DataFrame
        Columns ``strongest_baseline`` (method name; the first in ``baselines`` order on ties),
        ``baseline``, ``tef`` and ``gain``, indexed by the level's keys (:data:`GAIN_LEVELS`).
    """
    if level not in GAIN_LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(GAIN_LEVELS)}")
    return strongest_baseline(table3, GAIN_LEVELS[level], value="value", rule="method", baselines=baselines)


def average_gain(
    table3: pd.DataFrame, *, level: str = "model_lang", baselines: Sequence[str] = BASELINES
) -> dict[str, float]:
    r"""Mean of :func:`strongest_baseline_gain` per metric.

    The paper states 4.5 accuracy and 4.6 macro-F1 points "on average across five LLMs and two
    languages". Only ``level="model_lang"`` gives both (4.465 and 4.618); ``"cell"`` gives 3.91 and
    4.23, ``"model"`` 4.465 and 4.692.

    Returns
    -------
    dict
        ``{"accuracy": ..., "macro_f1": ...}`` in points.
    """
    gains = strongest_baseline_gain(table3, level=level, baselines=baselines)
    means = gains.groupby(level="metric")["gain"].mean()
    return {m: float(means[m]) for m in means.index}


def best_or_tied(table3: pd.DataFrame, *, baselines: Sequence[str] = BASELINES) -> tuple[int, int]:
    """Count the (model, language, dimension, metric) cells where TEF is best or tied for best.

    Returns
    -------
    (int, int)
        Cells with TEF >= every baseline, and the number of cells (120 for the paper).
    """
    gains = strongest_baseline_gain(table3, level="cell", baselines=baselines)
    return int((gains["gain"] >= -SLACK).sum()), int(gains.shape[0])


def shortfalls(table3: pd.DataFrame, *, baselines: Sequence[str] = BASELINES) -> pd.DataFrame:
    """The cells where TEF trails the strongest baseline, largest shortfall first.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`strongest_baseline_gain` (level ``"cell"``) with a negative gain, plus
        ``shortfall`` = -gain.
    """
    gains = strongest_baseline_gain(table3, level="cell", baselines=baselines)
    out = gains[gains["gain"] < -SLACK].copy()
    out["shortfall"] = -out["gain"]
    return out.sort_values("shortfall", ascending=False)


def gain_by_group(
    table3: pd.DataFrame, by: Sequence[str], *, metric: str = "accuracy"
) -> pd.Series:
    """Mean cell-level gain of TEF over the strongest baseline, grouped.

    Parameters
    ----------
    by : sequence of str
        Grouping keys among ``model``, ``lang``, ``dimension``.
    metric : str

    Returns
    -------
    pandas.Series
        Sorted from the largest mean gain down.
    """
    gains = strongest_baseline_gain(table3, level="cell").reset_index()
    gains = gains[gains["metric"] == metric]
    return gains.groupby(list(by))["gain"].mean().sort_values(ascending=False)


def voting_versus_direct(
    table3: pd.DataFrame, rules: Sequence[str] = ("majority_vote", "soft_vote")
) -> pd.DataFrame:
    """How often each voting rule (or any other of ``rules``) beats, ties or trails Direct over the 120
    cells.

    Returns
    -------
    pandas.DataFrame
        Index ``rules``; columns ``better``, ``tied``, ``worse``, ``mean_difference``.
    """
    wide = main_results_wide(table3)
    d = wide[list(rules)].sub(wide["direct"], axis=0)
    return pd.DataFrame(
        {
            "better": (d > SLACK).sum(),
            "tied": (d.abs() <= SLACK).sum(),
            "worse": (d < -SLACK).sum(),
            "mean_difference": d.apply(lambda column: column.mean()),  # a Series sum, as the ledger prints it
        }
    )


def typesetting_check(table3: pd.DataFrame, *, ranking: str = "dense") -> pd.DataFrame:
    """Compare Table 3's bold/underline marks with the ranking of its own numbers.

    The caption says the best method of each cell is bold and the second best underlined.

    Parameters
    ----------
    ranking : {"dense", "competition"}
        ``dense``: second best = every method with the second-highest distinct value;
        ``competition``: methods tied for best take ranks 1..k, so after a tie for best there is no
        second best.

    Returns
    -------
    pandas.DataFrame
        One row per number whose mark differs: the cell keys, ``method``, ``value``, ``typeset`` and
        ``expected``.
    """
    if ranking not in ("dense", "competition"):
        raise ValueError(f"ranking must be 'dense' or 'competition', got {ranking!r}")
    cell = table3.groupby(_KEYS3, sort=False).ngroup()  # cells numbered in order of appearance
    value = table3["value"]
    top = value.groupby(cell).transform("max")
    second = value.where(value < top).groupby(cell).transform("max")
    if ranking == "competition":  # a tie for best leaves no second best
        second = second.where((value == top).groupby(cell).transform("sum") == 1)
    out = table3.assign(expected=np.select([value == top, value == second], ["bold", "underline"], "none"), cell=cell)
    out = out[out["typeset"] != out["expected"]].sort_values("cell", kind="stable")
    return out[[*_KEYS3, "method", "value", "typeset", "expected"]].reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# Table 1 and its relation to Table 3
# --------------------------------------------------------------------------------------------------
def table1_from_table3(table3: pd.DataFrame) -> pd.DataFrame:
    """Table 1's "Original" column recomputed from Table 3 (protocol §7).

    Per model: the mean over both languages of each method's Average accuracy; the strongest baseline
    is the best of Direct, MV and SV of these means.

    Returns
    -------
    pandas.DataFrame
        Index ``model`` (paper order), columns ``strongest_baseline`` (value), ``strongest_method``,
        ``tef``.
    """
    gains = strongest_baseline_gain(table3[table3["metric"] == "accuracy"], level="model")
    out = gains.xs("accuracy", level="metric").rename(
        columns={"baseline": "strongest_baseline", "strongest_baseline": "strongest_method"}
    )
    return _in_model_order(out[["strongest_baseline", "strongest_method", "tef"]])


def prompt_robustness_summary(table1: pd.DataFrame) -> pd.DataFrame:
    """Per model: TEF's margin under each prompt and each side's loss from the original prompt.

    Returns
    -------
    pandas.DataFrame
        Columns ``margin_<prompt>`` (TEF - strongest baseline) and ``drop_<side>_<prompt>``
        (original - perturbed, for ``tef`` and ``strongest_baseline``; verbose and minimal).
    """
    wide = _per_model(table1, ["method", "prompt"])
    out = pd.DataFrame(index=wide.index)
    for prompt in ("original", "verbose", "minimal"):
        out[f"margin_{prompt}"] = wide[("tef", prompt)] - wide[("strongest_baseline", prompt)]
    for side in ("tef", "strongest_baseline"):
        for prompt in ("verbose", "minimal"):
            out[f"drop_{side}_{prompt}"] = wide[(side, "original")] - wide[(side, prompt)]
    return out


# --------------------------------------------------------------------------------------------------
# Table 2
# --------------------------------------------------------------------------------------------------
def efficiency_summary(table2: pd.DataFrame) -> pd.DataFrame:
    """Per model: tokens and cost of the sentence-level methods relative to Direct, TEF's extra TTFT.

    Returns
    -------
    pandas.DataFrame
        Columns ``tokens_equal`` (TEF and voting issue the same tokens), ``token_ratio``
        (voting / Direct), ``cost_ratio_voting`` and ``cost_ratio_tef`` (over Direct),
        ``ttft_tef_minus_voting`` (ms).
    """
    wide = _per_model(table2, ["quantity", "method"])
    return pd.DataFrame(
        {
            "tokens_equal": wide[("tokens", "tef")] == wide[("tokens", "voting")],
            "token_ratio": wide[("tokens", "voting")] / wide[("tokens", "direct")],
            "cost_ratio_voting": wide[("cost", "voting")] / wide[("cost", "direct")],
            "cost_ratio_tef": wide[("cost", "tef")] / wide[("cost", "direct")],
            "ttft_tef_minus_voting": wide[("ttft", "tef")] - wide[("ttft", "voting")],
        }
    )


# --------------------------------------------------------------------------------------------------
# Table 4
# --------------------------------------------------------------------------------------------------
def table4_average_check(table4: pd.DataFrame) -> pd.DataFrame:
    """Table 4's printed Average columns against the mean of its six dimension columns.

    Returns
    -------
    pandas.DataFrame
        Index ``(model, lang, method, metric)``; columns ``printed``, ``recomputed``, ``difference``
        (printed - recomputed) and ``consistent`` (within :data:`ROUNDING_TOLERANCE`).
    """
    printed = table4[table4["dimension"] == AVERAGE].set_index(["model", "lang", "method", "metric"])["value"]
    recomputed = dimension_averages(table4).stack().reorder_levels([0, 1, 3, 2])
    out = pd.DataFrame({"printed": printed, "recomputed": recomputed.reindex(printed.index)})
    out["difference"] = out["printed"] - out["recomputed"]
    out["consistent"] = out["difference"].abs() <= ROUNDING_TOLERANCE + SLACK
    return out


def ablation_drops(table4: pd.DataFrame) -> pd.DataFrame:
    """Loss of each ablation against full TEF, per model, language, dimension and metric.

    Returns
    -------
    pandas.DataFrame
        Index ``(model, lang, dimension, metric)`` (dimensions only), columns ``tef``,
        ``tef_without_entropy``, ``tef_without_log_odds``, ``drop_without_entropy`` and
        ``drop_without_log_odds`` (TEF - ablation).
    """
    wide = main_results_wide(table4[table4["dimension"] != AVERAGE])
    wide["drop_without_entropy"] = wide["tef"] - wide["tef_without_entropy"]
    wide["drop_without_log_odds"] = wide["tef"] - wide["tef_without_log_odds"]
    return wide


def ablation_versus_soft_vote(table3: pd.DataFrame, table4: pd.DataFrame) -> pd.DataFrame:
    r"""The ablations' dimension averages against Soft Vote's (from Table 3).

    Returns
    -------
    pandas.DataFrame
        Index ``(model, lang, metric)`` for the ablated models; columns ``soft_vote``, ``tef``, the two
        ablations, their margins over Soft Vote (``margin_*``) and the share of TEF's margin each keeps
        (``retained_*`` = ablation margin / TEF margin).
    """
    out = dimension_averages(table4)
    out["soft_vote"] = dimension_averages(table3)["soft_vote"].reindex(out.index)
    for v in ("tef", "tef_without_entropy", "tef_without_log_odds"):
        out[f"margin_{v}"] = out[v] - out["soft_vote"]
    for v in ("tef_without_entropy", "tef_without_log_odds"):
        out[f"retained_{v}"] = out[f"margin_{v}"] / out["margin_tef"]
    return out
