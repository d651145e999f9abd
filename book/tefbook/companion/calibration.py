r"""Sharpened or flattened sentence probabilities, and how the rules respond (chapters on theory and results).

:func:`retemper` sharpens or flattens probabilities, :math:`p' = \sigma(\operatorname{logit}(p)/t)`,
and :func:`temperature_sweep` re-runs the rules on the retempered caches of each run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.special import expit, logit

from tefbook.companion.results import predict_runs, versus_best_baseline
from tefbook.companion.runs import Runs, frame_of, run_keys
from tefcore.evaluate import BASELINES, check_metric, flatten_sentences, iter_groups
from tefcore.fusion import entropy_weight


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
    with np.errstate(divide="ignore"):
        return expit(logit(arr) / t)


def _retemper_frame(df: pd.DataFrame, t: float) -> pd.DataFrame:
    """A copy of a cache frame with every probability re-tempered (one flat array, no loop over posts)."""
    flat, doc = flatten_sentences(df["sentences"])
    lengths = np.bincount(doc, minlength=len(df))
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
    frame = frame_of(df)
    check_metric(metric)
    factors = [float(t) for t in factors]
    if not factors:
        raise ValueError("temperature_sweep needs at least one factor")
    if "model" not in frame.columns:
        frame = frame.assign(model="")
    keys = [*run_keys(frame), "lang"]
    rows = []
    for t in factors:
        hot = _retemper_frame(frame, t)
        pred = predict_runs(hot, rules=[*baselines, "tef"], invalid=invalid)
        res = versus_best_baseline(pred, metrics_=(metric,), baselines=baselines, n_boot=n_boot,
                                   random_state=random_state)
        flat_rows = []
        for key, g in iter_groups(hot, keys):
            flat = flatten_sentences(g["sentences"])[0]
            w = entropy_weight(flat[~np.isnan(flat)])
            flat_rows.append({**key, "mean_weight": float(w.mean()) if w.size else math.nan,
                              "decisive_share": 100 * float(np.mean(w >= 0.5)) if w.size else math.nan})
        res = res.rename(columns={"b": "best_baseline", "difference": "gain"}).assign(t=t)
        rows.append(res.merge(pd.DataFrame(flat_rows), on=keys))
    out = pd.concat(rows, ignore_index=True)
    cols = [*run_keys(out), "lang", "t", "best_baseline", "baseline", "tef", "gain", "low", "high",
            "p_bootstrap", "mean_weight", "decisive_share"]
    rank = out.groupby(keys, sort=False).ngroup().to_numpy()
    order = np.lexsort((out["t"].to_numpy(), rank))  # groups in order of appearance, t ascending
    return out[cols].iloc[order].reset_index(drop=True)
