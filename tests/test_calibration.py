"""Tests of tefbook.companion.calibration on hand-made and seeded synthetic cache frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cache_frames import NAN, hand_cache, synthetic_cache

from tefbook.companion import calibration as calib
from tefbook.companion import results as ex
from tefcore.evaluate import predict_pairs
from tefcore.fusion import fuse_many


@pytest.fixture()
def hand_frame() -> pd.DataFrame:
    return hand_cache()


# ---------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------
def test_retemper():
    p = np.array([0.0, 0.2, 0.5, 0.9, 1.0, NAN])
    assert np.allclose(calib.retemper(p, 1.0)[:5], p[:5]) and np.isnan(calib.retemper(p, 1.0)[5])
    sharp = calib.retemper(p, 0.5)
    assert sharp[1] == pytest.approx(1 / (1 + 16)) and sharp[2] == 0.5 and sharp[3] == pytest.approx(81 / 82)
    assert sharp[0] == 0.0 and sharp[4] == 1.0
    with pytest.raises(ValueError, match="positive"):
        calib.retemper(p, 0.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        calib.retemper([1.5], 2.0)


@pytest.mark.slow
def test_temperature_sweep():
    df = synthetic_cache(12, 30).assign(model="A", prompt="original")
    sweep = calib.temperature_sweep(df, [0.01, 1.0, 4.0], n_boot=200)
    assert len(sweep) == 3 * 2 and list(sweep["t"].unique()) == [0.01, 1.0, 4.0]
    at1 = sweep[sweep["t"] == 1.0].set_index("lang")
    ref = ex.versus_best_baseline(ex.predict_runs(df), metrics_=("accuracy",), n_boot=200).set_index("lang")
    for lang in ("en", "zh"):
        assert at1.loc[lang, "gain"] == pytest.approx(ref.loc[lang, "difference"])
        assert at1.loc[lang, "best_baseline"] == ref.loc[lang, "b"]
    # very sharp posteriors: every weight -> 1, |l| -> M, TEF decides like Majority Vote, except on a
    # tied vote, which TEF (a zero score) gives to change and Majority Vote to the side voted first
    hot = calib._retemper_frame(df, 0.001)
    pred = predict_pairs(hot.drop(columns=["model", "prompt"]), rules=["majority_vote", "tef"])
    mv = pred[pred["rule"] == "majority_vote"]["prediction"].to_numpy()
    tf = pred[pred["rule"] == "tef"]["prediction"].to_numpy()
    change_votes = np.array([np.sum(np.asarray(s) >= 0.5) for s in hot["sentences"]])  # NaN is no vote
    readable = np.array([np.sum(~np.isnan(np.asarray(s, dtype=float))) for s in hot["sentences"]])
    tied = (2 * change_votes == readable) & (readable > 0)
    assert tied.any() and np.mean((mv == tf)[~tied]) > 0.97
    assert np.mean(tf[tied] == "change") > 0.97
    assert (sweep.groupby("lang")["mean_weight"].apply(lambda s: s.is_monotonic_decreasing)).all()
    # Direct and Majority Vote do not move with the temperature
    t4 = predict_pairs(calib._retemper_frame(df, 4.0).drop(columns=["model", "prompt"]),
                       rules=["direct", "majority_vote"])
    t1 = predict_pairs(df.drop(columns=["model", "prompt"]), rules=["direct", "majority_vote"])
    assert (t4["prediction"].to_numpy() == t1["prediction"].to_numpy()).all()


def test_fuse_many_agrees_with_sweep_frame_split():
    df = synthetic_cache(14, 4)
    hot = calib._retemper_frame(df, 2.0)
    assert [len(s) for s in hot["sentences"]] == [len(s) for s in df["sentences"]]
    flat = np.concatenate([calib.retemper(s, 2.0) for s in df["sentences"]])
    assert np.allclose(np.concatenate(hot["sentences"].to_list()), flat)
    assert len(fuse_many(flat, np.repeat(np.arange(len(df)), df["sentences"].map(len)), "tef")) == len(df)


# ---------------------------------------------------------------------------------------------------
# TEF's temperature, the verdicts and the table
# ---------------------------------------------------------------------------------------------------


