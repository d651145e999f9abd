r"""The paper's published tables (``data/paper/*.csv``) and the arithmetic its text states about them.

The four tables of the paper were transcribed into tidy CSV files (see ``data/paper/README.md``):

========  ==================================  ====================================================
name      file                                columns
========  ==================================  ====================================================
table1    ``table1_prompt_robustness.csv``    model, prompt, method, metric, value
table2    ``table2_efficiency.csv``           model, method, quantity, unit, value
table3    ``table3_main.csv``                 model, lang, dimension, method, metric, value, typeset
table4    ``table4_ablation.csv``             model, lang, dimension, method, metric, value, typeset
========  ==================================  ====================================================

Method names are those of :data:`tefcore.fusion.RULE_NAMES` (``direct``, ``majority_vote``,
``soft_vote``, ``tef``, ``tef_without_entropy``, ``tef_without_log_odds``), plus
``strongest_baseline`` (Table 1) and ``voting`` (Table 2, MV and SV together). Models use the registry
names (``qwen2.5-7b`` ...), languages ``zh``/``en``, dimensions their English names, metrics
``accuracy``/``macro_f1`` in percent. ``typeset`` records how the paper typeset a number (``bold``,
``underline`` or ``none``).

The functions below recompute each aggregate the paper states; :func:`check_claims` lists them with the
stated value, the recomputed one and whether the statement holds. Everything is computed from the CSV
files, nothing is hard-coded but the paper's *stated* numbers.

Examples
--------
>>> from tefcore.chapters.paper import load_table, average_gain
>>> t3 = load_table("table3")
>>> {k: round(v, 3) for k, v in average_gain(t3, level="model_lang").items()}
{'accuracy': 4.465, 'macro_f1': 4.618}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "BASELINES",
    "GAIN_LEVELS",
    "METRICS",
    "MODELS",
    "MODEL_LABELS",
    "ROUNDING_TOLERANCE",
    "TABLE_FILES",
    "Claim",
    "ablation_drops",
    "ablation_versus_soft_vote",
    "average_gain",
    "best_or_tied",
    "check_claims",
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

_COLUMNS: dict[str, tuple[str, ...]] = {
    "table1": ("model", "prompt", "method", "metric", "value"),
    "table2": ("model", "method", "quantity", "unit", "value"),
    "table3": ("model", "lang", "dimension", "method", "metric", "value", "typeset"),
    "table4": ("model", "lang", "dimension", "method", "metric", "value", "typeset"),
}

MODELS: tuple[str, ...] = ("qwen2.5-7b", "llama3-8b", "qwen3-14b", "deepseek-v3.2", "gpt-4o-mini")
"""The paper's five judges, in its table order (registry names)."""

MODEL_LABELS: dict[str, str] = {
    "qwen2.5-7b": "Qwen2.5-7B",
    "llama3-8b": "LLaMA3-8B",
    "qwen3-14b": "Qwen3-14B",
    "deepseek-v3.2": "DeepSeek-V3.2",
    "gpt-4o-mini": "GPT-4o-mini",
}
"""Model names as the paper prints them."""

BASELINES: tuple[str, ...] = ("direct", "majority_vote", "soft_vote")
"""The baselines whose best is the paper's "strongest baseline"."""

METRICS: tuple[str, ...] = ("accuracy", "macro_f1")

GAIN_LEVELS: tuple[str, ...] = ("cell", "model_lang", "model")
"""Where the strongest baseline is chosen (see :func:`strongest_baseline_gain`)."""

ROUNDING_TOLERANCE: float = 0.05
"""A number printed with one decimal is consistent with a recomputed one within this distance."""

_FLOAT_SLACK = 1e-9  # 71.25 printed as 71.3 is a difference of 0.05 up to floating-point error

_KEYS3 = ["model", "lang", "dimension", "metric"]


# --------------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------------
def paper_dir(data_dir: str | Path | None = None) -> Path:
    """Directory of the paper's CSV tables.

    Parameters
    ----------
    data_dir : str or Path, optional
        An explicit directory; default the paper's tables shipped with the package (``data/paper`` of
        the repository, installed as :mod:`tefcore.chapters.paper_tables`).
    """
    if data_dir is not None:
        return Path(data_dir)
    return Path(str(resources.files("tefcore.chapters.paper_tables")))


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
        The columns listed in the module documentation; ``value`` is float.

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
    missing = [c for c in _COLUMNS[name] if c not in frame.columns]
    if missing:
        raise ValueError(f"{path} lacks column(s) {missing}; expected {list(_COLUMNS[name])}")
    try:
        frame["value"] = frame["value"].astype(float)
    except ValueError as exc:
        raise ValueError(f"{path}: non-numeric value: {exc}") from None
    return frame[list(_COLUMNS[name])]


def load_tables(data_dir: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """All four tables, keyed ``table1`` .. ``table4``."""
    return {name: load_table(name, data_dir) for name in TABLE_FILES}


def _metric_rows(table: pd.DataFrame, metrics: Sequence[str] | None) -> pd.DataFrame:
    if metrics is None:
        return table
    return table[table["metric"].isin(list(metrics))]


def _dimension_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the six dimensions (a printed ``"Average"`` row left out)."""
    return table[table["dimension"] != "Average"]


def _in_model_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` indexed by model, reordered to the paper's :data:`MODELS` order."""
    return frame.reindex([m for m in MODELS if m in frame.index])


def _per_model(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """One row per model (paper order), one column per combination of ``columns``."""
    wide = table.pivot_table(index="model", columns=columns, values="value", aggfunc="first")
    return _in_model_order(wide)


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
    r"""Unweighted mean over the six dimensions (protocol §7: a table's "Average").

    Rows whose ``dimension`` is ``"Average"`` (Table 4's printed averages) are left out.

    Parameters
    ----------
    table : pandas.DataFrame
        Table 3 or Table 4 (tidy).

    Returns
    -------
    pandas.DataFrame
        Index ``(model, lang, metric)``, one column per method.
    """
    rows = _dimension_rows(table)
    counts = rows.groupby(["model", "lang", "metric", "method"])["dimension"].nunique()
    if (counts != 6).any():
        bad = counts[counts != 6].index[0]
        raise ValueError(
            f"expected 6 dimensions per (model, lang, metric, method), {bad} has "
            f"{int(counts[bad])}"
        )
    means = rows.groupby(["model", "lang", "metric", "method"])["value"].mean().unstack("method")
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
    r"""TEF minus the strongest baseline, the baseline chosen at a given level.

    ``level`` says over what the values are averaged before the best baseline is picked:

    * ``"cell"``: no averaging; per (model, language, dimension, metric),
      :math:`g = \text{TEF} - \max_b b`;
    * ``"model_lang"``: per (model, language, metric), the six dimensions are averaged first (the
      "Average" of protocol §7), then :math:`g = \overline{\text{TEF}} - \max_b \overline{b}`;
    * ``"model"``: per (model, metric), both languages and all dimensions are averaged first (as
      Table 1 does for accuracy).

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
        ``baseline``, ``tef`` and ``gain``, indexed by the level's keys plus ``metric``.
    """
    if level not in GAIN_LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(GAIN_LEVELS)}")
    keys = {
        "cell": _KEYS3,
        "model_lang": ["model", "lang", "metric"],
        "model": ["model", "metric"],
    }[level]
    wide = table3.groupby(keys + ["method"])["value"].mean().unstack("method")
    missing = [m for m in [*baselines, "tef"] if m not in wide.columns]
    if missing:
        raise ValueError(f"table lacks method(s) {missing}")
    base = wide[list(baselines)]
    out = pd.DataFrame(
        {
            "strongest_baseline": base.idxmax(axis=1),
            "baseline": base.max(axis=1),
            "tef": wide["tef"],
        }
    )
    out["gain"] = out["tef"] - out["baseline"]
    return out


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
    return int((gains["gain"] >= -_FLOAT_SLACK).sum()), int(gains.shape[0])


def shortfalls(table3: pd.DataFrame, *, baselines: Sequence[str] = BASELINES) -> pd.DataFrame:
    """The cells where TEF trails the strongest baseline, largest shortfall first.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`strongest_baseline_gain` (level ``"cell"``) with a negative gain, plus
        ``shortfall`` = -gain.
    """
    gains = strongest_baseline_gain(table3, level="cell", baselines=baselines)
    out = gains[gains["gain"] < -_FLOAT_SLACK].copy()
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


def voting_versus_direct(table3: pd.DataFrame) -> pd.DataFrame:
    """How often each voting rule beats, ties or trails Direct over the 120 cells.

    Returns
    -------
    pandas.DataFrame
        Index ``majority_vote``, ``soft_vote``; columns ``better``, ``tied``, ``worse``,
        ``mean_difference``.
    """
    wide = main_results_wide(table3)
    rows = {}
    for rule in ("majority_vote", "soft_vote"):
        d = wide[rule] - wide["direct"]
        rows[rule] = {
            "better": int((d > _FLOAT_SLACK).sum()),
            "tied": int((d.abs() <= _FLOAT_SLACK).sum()),
            "worse": int((d < -_FLOAT_SLACK).sum()),
            "mean_difference": float(d.mean()),
        }
    out = pd.DataFrame.from_dict(rows, orient="index")
    return out.astype(
        {"better": "int64", "tied": "int64", "worse": "int64", "mean_difference": "float64"}
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
    rows = []
    for key, g in table3.groupby(_KEYS3, sort=False):
        values = g["value"].to_numpy()
        top = values.max()
        n_top = int(np.sum(values == top))
        rest = values[values < top]
        second = rest.max() if rest.size and (ranking == "dense" or n_top == 1) else None
        for method, value, mark in zip(g["method"], values, g["typeset"], strict=False):
            expected = "bold" if value == top else ("underline" if value == second else "none")
            if expected != mark:
                rows.append(
                    dict(zip(_KEYS3, key, strict=False))
                    | {"method": method, "value": value, "typeset": mark, "expected": expected}
                )
    return pd.DataFrame(rows, columns=[*_KEYS3, "method", "value", "typeset", "expected"])


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
    gains = gains.xs("accuracy", level="metric")
    out = pd.DataFrame(
        {
            "strongest_baseline": gains["baseline"],
            "strongest_method": gains["strongest_baseline"],
            "tef": gains["tef"],
        }
    )
    return _in_model_order(out)


def _table1_wide(table1: pd.DataFrame) -> pd.DataFrame:
    return _per_model(table1, ["method", "prompt"])


def prompt_robustness_summary(table1: pd.DataFrame) -> pd.DataFrame:
    """Per model: TEF's margin under each prompt and each side's loss from the original prompt.

    Returns
    -------
    pandas.DataFrame
        Columns ``margin_<prompt>`` (TEF - strongest baseline) and ``drop_<side>_<prompt>``
        (original - perturbed, for ``tef`` and ``strongest_baseline``; verbose and minimal).
    """
    wide = _table1_wide(table1)
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
    printed = table4[table4["dimension"] == "Average"].set_index(
        ["model", "lang", "method", "metric"]
    )["value"]
    dimension_averages(table4)  # validates six dimensions per row group
    recomputed = _dimension_rows(table4).groupby(["model", "lang", "method", "metric"])["value"].mean()
    out = pd.DataFrame({"printed": printed, "recomputed": recomputed.reindex(printed.index)})
    out["difference"] = out["printed"] - out["recomputed"]
    out["consistent"] = out["difference"].abs() <= ROUNDING_TOLERANCE + _FLOAT_SLACK
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
    wide = main_results_wide(_dimension_rows(table4))
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
    ablated = dimension_averages(table4)
    sv = dimension_averages(table3)["soft_vote"]
    out = ablated.copy()
    out["soft_vote"] = sv.reindex(out.index)
    for v in ("tef", "tef_without_entropy", "tef_without_log_odds"):
        out[f"margin_{v}"] = out[v] - out["soft_vote"]
    for v in ("tef_without_entropy", "tef_without_log_odds"):
        out[f"retained_{v}"] = out[f"margin_{v}"] / out["margin_tef"]
    return out


# --------------------------------------------------------------------------------------------------
# the claims
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claim:
    """One statement of the paper about its tables, checked against the CSV files.

    Attributes
    ----------
    key : str
        Stable identifier.
    where : str
        Where the paper says it.
    statement : str
        The statement, in our words.
    stated : str
        The paper's number(s).
    recomputed : str
        What the tables give.
    holds : bool
        Whether the statement holds (printed numbers within rounding where it is arithmetic).
    note : str
        How it was computed and, where it fails, by how much.
    """

    key: str
    where: str
    statement: str
    stated: str
    recomputed: str
    holds: bool
    note: str = ""


def _fmt(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}"


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= ROUNDING_TOLERANCE + _FLOAT_SLACK


def check_claims(
    tables: Mapping[str, pd.DataFrame] | None = None, data_dir: str | Path | None = None
) -> pd.DataFrame:
    """Check every aggregate the paper states about its tables.

    Parameters
    ----------
    tables : mapping, optional
        Tables as returned by :func:`load_tables`; read from ``data_dir`` when omitted.
    data_dir : str or Path, optional

    Returns
    -------
    pandas.DataFrame
        One row per :class:`Claim` (columns as its attributes), in the order of the paper.
    """
    t = dict(tables) if tables is not None else load_tables(data_dir)
    t1, t2, t3, t4 = t["table1"], t["table2"], t["table3"], t["table4"]
    claims: list[Claim] = []

    # --- average gain over the strongest baseline --------------------------------------------
    by_level = {lvl: average_gain(t3, level=lvl) for lvl in GAIN_LEVELS}
    t1_gain = float(prompt_robustness_summary(t1)["margin_original"].mean())
    alternatives = "; ".join(
        f"{lvl}: {_fmt(g['accuracy'], 3)} / {_fmt(g['macro_f1'], 3)}" for lvl, g in by_level.items()
    )
    for metric, stated in (("accuracy", 4.5), ("macro_f1", 4.6)):
        got = by_level["model_lang"][metric]
        others = [lvl for lvl in GAIN_LEVELS if _close(by_level[lvl][metric], stated)]
        claims.append(
            Claim(
                key=f"average_gain_{metric}",
                where="Abstract, Sec. 1, Sec. 5 (Main Results)",
                statement=f"TEF beats the strongest of Direct/MV/SV by {stated} {metric} points on average "
                "over five models and two languages",
                stated=f"{stated}",
                recomputed=_fmt(got, 3),
                holds=_close(got, stated),
                note=(
                    "strongest baseline picked per (model, language) after averaging the six dimensions, "
                    "then averaged over the 10 model-language pairs. Other definitions "
                    f"(accuracy / macro-F1): {alternatives}; definitions that give {stated}: "
                    f"{', '.join(others) or 'none'}"
                    + (
                        f". Table 1's Original column gives {_fmt(t1_gain, 2)} accuracy points"
                        if metric == "accuracy"
                        else ""
                    )
                ),
            )
        )

    # --- TEF best for every model and language -------------------------------------------------
    ml = strongest_baseline_gain(t3, level="model_lang")
    n_pos = int((ml["gain"] > 0).sum())
    claims.append(
        Claim(
            key="tef_best_every_model_language",
            where="Sec. 5 (Main Results)",
            statement="TEF has the highest average accuracy and macro-F1 for every model in both languages",
            stated=f"{ml.shape[0]} of {ml.shape[0]}",
            recomputed=f"{n_pos} of {ml.shape[0]}",
            holds=n_pos == ml.shape[0],
            note=f"smallest margin {_fmt(ml['gain'].min(), 3)} points "
            f"({', '.join(map(str, ml['gain'].idxmin()))})",
        )
    )

    # --- 116 of 120 ----------------------------------------------------------------------------
    won, total = best_or_tied(t3)
    lost = shortfalls(t3)
    claims.append(
        Claim(
            key="best_or_tied",
            where="Sec. 5 (Main Results)",
            statement="At the dimension level TEF is best or tied for best in 116 of 120 comparisons",
            stated="116 of 120",
            recomputed=f"{won} of {total}",
            holds=(won, total) == (116, 120),
            note="TEF trails in: "
            + "; ".join(
                f"{m} {lang} {d} {met} by {_fmt(s, 1)}"
                for (m, lang, d, met), s in lost["shortfall"].items()
            ),
        )
    )
    worst = float(lost["shortfall"].max()) if len(lost) else 0.0
    claims.append(
        Claim(
            key="largest_shortfall",
            where="Sec. 5 (Main Results)",
            statement="TEF never trails the strongest baseline by more than 2.6 points",
            stated="2.6",
            recomputed=_fmt(worst, 1),
            holds=worst <= 2.6 + _FLOAT_SLACK,
            note="largest shortfall: " + ", ".join(map(str, lost["shortfall"].idxmax()))
            if len(lost)
            else "",
        )
    )

    # --- voting vs Direct ----------------------------------------------------------------------
    vd = voting_versus_direct(t3)
    claims.append(
        Claim(
            key="voting_not_consistently_better",
            where="Sec. 5 (Main Results)",
            statement="Equal-weight voting (MV or SV) does not consistently improve on Direct",
            stated="not consistent",
            recomputed=f"MV better in {vd.loc['majority_vote', 'better']}/120, "
            f"SV better in {vd.loc['soft_vote', 'better']}/120",
            holds=bool((vd["better"] < 120).all() and (vd["worse"] > 0).all()),
            note=f"mean difference to Direct: MV {_fmt(vd.loc['majority_vote', 'mean_difference'])}, "
            f"SV {_fmt(vd.loc['soft_vote', 'mean_difference'])} points",
        )
    )

    # --- where the gains concentrate -----------------------------------------------------------
    by_model = gain_by_group(t3, ["model"])
    by_lang_dim = gain_by_group(t3, ["lang", "dimension"])
    zh_top = list(by_lang_dim.xs("zh", level="lang").index[:2])
    en_top = list(by_lang_dim.xs("en", level="lang").index[:1])
    top_models = list(by_model.index[:2])
    holds = (
        set(top_models) == {"qwen2.5-7b", "llama3-8b"}
        and set(zh_top) == {"Culture", "Politics"}
        and en_top == ["Environment"]
    )
    claims.append(
        Claim(
            key="gains_concentrate",
            where="Sec. 5 (Main Results)",
            statement="The gains concentrate on the smaller open-source models, on culture and politics in "
            "Chinese and on environment in English",
            stated="Qwen2.5-7B, LLaMA3-8B; zh Culture, Politics; en Environment",
            recomputed=f"largest mean accuracy gains: models {top_models}; zh {zh_top}; en {en_top}",
            holds=holds,
            note="mean cell-level accuracy gain by model: "
            + ", ".join(f"{m} {_fmt(v)}" for m, v in by_model.items()),
        )
    )

    # --- Table 4 ----------------------------------------------------------------------------
    avg = table4_average_check(t4)
    claims.append(
        Claim(
            key="table4_averages",
            where="Table 4 (Average columns)",
            statement="Table 4's Average columns are the means of its six dimension columns",
            stated=f"{avg.shape[0]} printed averages",
            recomputed=f"{int(avg['consistent'].sum())} within rounding; largest |difference| "
            f"{_fmt(avg['difference'].abs().max(), 3)}",
            holds=bool(avg["consistent"].all()),
        )
    )
    ours4 = t4[(t4["method"] == "tef") & (t4["dimension"] != "Average")].merge(
        t3[t3["method"] == "tef"],
        on=["model", "lang", "dimension", "method", "metric"],
        suffixes=("_4", "_3"),
    )
    diff43 = float((ours4["value_4"] - ours4["value_3"]).abs().max())
    claims.append(
        Claim(
            key="table4_tef_equals_table3",
            where="Tables 3 and 4",
            statement="Table 4's full-TEF rows repeat Table 3's TEF numbers",
            stated=f"{ours4.shape[0]} numbers",
            recomputed=f"largest |difference| {_fmt(diff43, 2)}",
            holds=diff43 <= _FLOAT_SLACK,
        )
    )
    drops = ablation_drops(t4).xs("accuracy", level="metric")
    at = ("deepseek-v3.2", "en", "Environment")
    d_ent, d_lo = (
        float(drops.loc[at, "drop_without_entropy"]),
        float(drops.loc[at, "drop_without_log_odds"]),
    )
    largest = drops[["drop_without_entropy", "drop_without_log_odds"]].idxmax()
    claims.append(
        Claim(
            key="ablation_largest_drop",
            where="Sec. 5 (Ablation Study)",
            statement="The largest accuracy drop is on DeepSeek-V3.2 English Environment: 22.9 "
            "points without entropy weighting, 23.8 without the log-odds transform",
            stated="22.9, 23.8",
            recomputed=f"{_fmt(d_ent, 1)}, {_fmt(d_lo, 1)}",
            holds=_close(d_ent, 22.9) and _close(d_lo, 23.8) and all(ix == at for ix in largest),
            note="largest drops at "
            + "; ".join(f"{k}: {', '.join(v)}" for k, v in largest.items()),
        )
    )
    vs = ablation_versus_soft_vote(t3, t4)
    ds = vs.loc["deepseek-v3.2"]
    margin_cols = ["margin_tef_without_entropy", "margin_tef_without_log_odds"]
    n_below = {
        m: int((ds.xs(m, level="metric")[margin_cols] < 0).to_numpy().sum()) for m in METRICS
    }
    below = bool((ds[margin_cols] < 0).to_numpy().all())
    claims.append(
        Claim(
            key="ablation_deepseek_below_soft_vote",
            where="Sec. 5 (Ablation Study)",
            statement="On DeepSeek-V3.2 both ablations fall below Soft Vote on average in both "
            "languages",
            stated="4 of 4 (2 ablations x 2 languages)",
            recomputed=f"{n_below['accuracy']} of 4 (accuracy); {n_below['macro_f1']} of 4 (macro-F1)",
            holds=below,
            note="margins over Soft Vote (accuracy, zh/en): "
            + ", ".join(
                f"{c.removeprefix('margin_')} "
                + "/".join(_fmt(ds.loc[(lang, "accuracy"), c]) for lang in ("zh", "en"))
                for c in ("margin_tef_without_entropy", "margin_tef_without_log_odds")
            ),
        )
    )
    qw = vs.loc["qwen2.5-7b"]
    kept = qw[["retained_tef_without_entropy", "retained_tef_without_log_odds"]]
    claims.append(
        Claim(
            key="ablation_qwen_retains_gain",
            where="Sec. 5 (Ablation Study)",
            statement="On Qwen2.5-7B both ablations keep most of TEF's average gain over Soft Vote",
            stated="most (> 50 %)",
            recomputed=f"{_fmt(100 * kept.min().min(), 0)}-{_fmt(100 * kept.max().max(), 0)} %",
            holds=bool((kept > 0.5).all().all()),
            note="share of TEF's margin over Soft Vote kept, per language, metric and ablation",
        )
    )

    # --- Table 1 --------------------------------------------------------------------------------
    rec = table1_from_table3(t3)
    wide1 = _table1_wide(t1)
    d_sb = (wide1[("strongest_baseline", "original")] - rec["strongest_baseline"]).abs()
    d_tef = (wide1[("tef", "original")] - rec["tef"]).abs()
    worst1 = float(max(d_sb.max(), d_tef.max()))
    claims.append(
        Claim(
            key="table1_original_matches_table3",
            where="Tables 1 and 3",
            statement="Table 1's Original column is Table 3's accuracy averaged over dimensions "
            "and languages (strongest baseline chosen after averaging)",
            stated="10 numbers",
            recomputed=f"largest |difference| {_fmt(worst1, 3)}",
            holds=worst1 <= ROUNDING_TOLERANCE + _FLOAT_SLACK,
            note="strongest baselines recomputed: "
            + ", ".join(f"{m} {rec.loc[m, 'strongest_method']}" for m in rec.index),
        )
    )
    pr = prompt_robustness_summary(t1)
    margins = pr[[f"margin_{p}" for p in ("original", "verbose", "minimal")]]
    claims.append(
        Claim(
            key="prompt_tef_best",
            where="Sec. 5 (Analysis, Robustness)",
            statement="TEF stays best under every prompt",
            stated=f"{margins.size} of {margins.size}",
            recomputed=f"{int((margins > 0).to_numpy().sum())} of {margins.size}",
            holds=bool((margins > 0).to_numpy().all()),
            note=f"smallest margin {_fmt(margins.to_numpy().min(), 1)} points",
        )
    )
    less = [
        (pr[f"drop_tef_{p}"] <= pr[f"drop_strongest_baseline_{p}"] + _FLOAT_SLACK)
        for p in ("verbose", "minimal")
    ]
    n_less = int(sum(s.sum() for s in less))
    claims.append(
        Claim(
            key="prompt_tef_degrades_least",
            where="Sec. 5 (Analysis, Robustness)",
            statement="TEF loses the least accuracy under either perturbed prompt",
            stated="10 of 10 (5 models x 2 prompts)",
            recomputed=f"{n_less} of 10",
            holds=n_less == 10,
            note="compared with the strongest baseline, the only other column Table 1 prints; drops of TEF: "
            + ", ".join(
                _fmt(v, 1) for v in pr[["drop_tef_verbose", "drop_tef_minimal"]].to_numpy().ravel()
            ),
        )
    )

    # --- Table 2 -------------------------------------------------------------------------------
    eff = efficiency_summary(t2)
    claims.append(
        Claim(
            key="efficiency_same_tokens",
            where="Sec. 5 (Analysis, Efficiency)",
            statement="TEF uses the same queries, hence the same tokens, as the voting rules",
            stated="identical",
            recomputed=", ".join(f"{m}: {bool(v)}" for m, v in eff["tokens_equal"].items()),
            holds=bool(eff["tokens_equal"].all()),
        )
    )
    dt = eff["ttft_tef_minus_voting"]
    claims.append(
        Claim(
            key="efficiency_ttft",
            where="Sec. 5 (Analysis, Efficiency)",
            statement="TEF's time to first token differs from voting's by only about two milliseconds",
            stated="about 2 ms",
            recomputed=", ".join(f"{m}: {_fmt(v, 1)} ms" for m, v in dt.items()),
            holds=bool((dt.abs() <= 2.5).all()),
            note="'about two' read as at most 2.5 ms",
        )
    )
    cr = eff[["cost_ratio_voting", "cost_ratio_tef"]]
    claims.append(
        Claim(
            key="efficiency_cost_ratio",
            where="Sec. 5 (Analysis, Efficiency)",
            statement="Sentence-level methods cost roughly three times as much as Direct",
            stated="about 3x",
            recomputed=f"{_fmt(cr.to_numpy().min(), 2)}-{_fmt(cr.to_numpy().max(), 2)}x",
            holds=bool(((cr >= 2.5) & (cr <= 3.5)).to_numpy().all()),
            note="'roughly three' read as 2.5-3.5x; their token counts are "
            f"{_fmt(eff['token_ratio'].min(), 1)}-{_fmt(eff['token_ratio'].max(), 1)}x Direct's",
        )
    )

    # --- typesetting of Table 3 ------------------------------------------------------------------
    dense = typesetting_check(t3, ranking="dense")
    comp = typesetting_check(t3, ranking="competition")
    bold_wrong = int(((dense["typeset"] == "bold") | (dense["expected"] == "bold")).sum())
    cells_dense = set(map(tuple, dense[_KEYS3].to_numpy()))
    cells_comp = set(map(tuple, comp[_KEYS3].to_numpy()))
    neither = sorted(cells_dense & cells_comp)
    claims.append(
        Claim(
            key="table3_marks",
            where="Table 3 (caption)",
            statement="In every cell the best method is bold and the second best underlined",
            stated="120 cells",
            recomputed=f"bold marks right in all 120 cells ({bold_wrong} wrong); underlines fit neither "
            f"ranking convention in {len(neither)} cells",
            holds=bold_wrong == 0 and not neither,
            note=f"underlines differ in {len(cells_dense)} cells from dense ranking and in {len(cells_comp)} "
            "from competition ranking (ties for best leave no second); cells that fit neither: "
            + "; ".join(" ".join(c) for c in neither),
        )
    )
    return pd.DataFrame([asdict(c) for c in claims])


if __name__ == "__main__":  # pragma: no cover - a quick look from the shell
    with pd.option_context("display.max_colwidth", 80, "display.width", 200):
        print(check_claims()[["key", "stated", "recomputed", "holds"]].to_string(index=False))
