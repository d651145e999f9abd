"""The cross-fitted e5 judge on a researcher's corpus (tefcore.judges.e5_crossfit): partly labelled texts, K > 2
sides (a multinomial probe) and dimensions with too few labels, on a stand-in embedder, then the whole path
`tef extract --model e5-crossfit` -> `tef evaluate --intervals` on a three-side task with gold on half."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

import tefcore.judges.e5_crossfit as e5
from tefcore.cli import main
from tefcore.extraction.cache import read_cache
from tefcore.judges.base import ScoreRequest
from tefcore.judges.e5_crossfit import ALL_LABELLED, E5CrossFitBackend
from tefcore.judges.e5_engine import EngineBuild
import tefcore.judges.probes as probes
from tefcore.judges.probes import ProbeChoice, ProbeFit, ProbeSettings, fit_multinomial_probe, linear_form, make_probe
from tefcore.mind.load import EvaluationPair
from tefcore.tasks import Choices

SIDES = ("car", "transit", "cycling")
WORDS = {"car": "parking", "transit": "tram", "cycling": "bike"}


class SideEmbedder:
    """A fixed random vector per text (seeded by its hash), shifted along one axis per side word it holds."""

    dim = 6
    build = EngineBuild("custom", "none", "0" * 64, "none", "none", None)

    def embed(self, texts: Sequence[str], side: str = "query", progress: bool = False) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            v = np.random.default_rng(seed).normal(size=self.dim)
            for axis, word in enumerate(WORDS.values()):
                v[axis] += 2.5 * text.count(word)
            rows.append(v)
        return np.array(rows, dtype=np.float32).reshape(len(rows), self.dim)


def _choices(dimension: str, sides: Sequence[str] = SIDES) -> Choices:
    return Choices(dimension, tuple(sides), tuple(f"about {s}" for s in sides))


def _pairs(n: int = 30, dimension: str = "Transport", labelled_every: int = 2,
           sides: Sequence[str] = SIDES) -> list[EvaluationPair]:
    """``n`` texts cycling through ``sides``; every ``labelled_every``-th has its gold side."""
    choices = _choices(dimension, sides)
    return [EvaluationPair(f"t{i:03d}", "en", dimension, sides[i % len(sides)] if i % labelled_every == 0 else None,
                           f"Text {i} on {dimension}: more {WORDS.get(sides[i % len(sides)], 'x')} please.", choices)
            for i in range(n)]


def _judge(**options: object) -> E5CrossFitBackend:
    return E5CrossFitBackend(**{"n_folds": 3, "seeds": (0, 1), "C_grid": (0.1, 1.0), "embedder": SideEmbedder(),
                                **options})  # type: ignore[arg-type]


def _direct(pairs: Sequence[EvaluationPair]) -> list[ScoreRequest]:
    return [ScoreRequest("", p.text, p.lang, p.dimension, p.post_id, "direct", choices=p.choices) for p in pairs]


def test_a_partly_labelled_three_side_task_is_scored_everywhere_without_a_text_reaching_its_own_probe() -> None:
    pairs = _pairs()
    judge = _judge()
    judge.prepare(pairs)
    scores = judge.score(_direct(pairs))
    assert all(s.valid and len(s.probs) == 3 and abs(sum(s.probs) - 1) < 1e-12 for s in scores)
    labelled = sorted(p.post_id for p in pairs if p.side is not None)
    for pair in pairs:
        assigned = judge.assignments("en", "Transport", pair.post_id)
        for seed, fold in assigned:
            trained_on = judge.training_posts[("en", "Transport", seed, fold)]
            assert pair.post_id not in trained_on and trained_on <= set(labelled)
            assert (fold == ALL_LABELLED) == (pair.side is None)
            if pair.side is None:  # the probe fitted on every labelled text
                assert trained_on == set(labelled)
    guess = [SIDES[int(np.argmax(s.probs))] for s in scores]
    truth = [SIDES[i % 3] for i in range(len(pairs))]
    unlabelled = [g == t for g, t, p in zip(guess, truth, pairs) if p.side is None]
    assert np.mean(unlabelled) > 0.8  # the side words are learnt from the labelled half
    sub = judge.provenance()["subsets"]["en/Transport"]
    assert (sub["n_posts"], sub["n_labelled"], sub["side_counts"]) == (30, 15, {"car": 5, "transit": 5, "cycling": 5})
    assert sub["labelled_sha256"] == hashlib.sha256("\n".join(labelled).encode()).hexdigest()
    assert len(sub["all_labelled_fit"]["C_chosen"]) == 2 and sub["fallback_reasons"] == []
    assert "multinomial over ['car', 'transit', 'cycling']" in judge.provenance()["labels"]
    assert "row span" in judge.provenance()["multinomial_fit"]


@pytest.mark.parametrize(("n", "d"), [(45, 4), (12, 40)])  # more texts than dimensions, and far fewer (row span)
def test_the_multinomial_probe_reaches_the_one_optimum(n: int, d: int) -> None:
    rng = np.random.default_rng(3)
    y = np.arange(n) % 3
    x = rng.normal(size=(n, d)) + 1.2 * np.eye(d)[y]
    C = 0.7
    fit = fit_multinomial_probe(x, y, 3, 0, ProbeSettings(C=C, standardize=False))

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:  # scikit-learn's: C * log loss + |W|^2 / 2
        W, b = theta[:3 * d].reshape(3, d), theta[3 * d:]
        logp = log_softmax(x @ W.T + b, axis=1)
        residual = softmax(x @ W.T + b, axis=1) - np.eye(3)[y]
        grad = np.concatenate([(C * residual.T @ x + W).ravel(), C * residual.sum(axis=0)])
        return float(-C * logp[np.arange(len(y)), y].sum() + 0.5 * (W ** 2).sum()), grad

    ref = minimize(objective, np.zeros(3 * d + 3), jac=True, method="BFGS", options={"gtol": 1e-12, "maxiter": 10_000})
    W, b = ref.x[:3 * d].reshape(3, d), ref.x[3 * d:]
    held_out = rng.normal(size=(20, d))  # off the training span too: the weights outside it must be zero
    np.testing.assert_allclose(fit.probabilities(held_out), softmax(held_out @ W.T + b, axis=1), atol=1e-8)
    np.testing.assert_allclose(fit.probabilities(x), softmax(x @ W.T + b, axis=1), atol=1e-9)
    assert fit.choice.C == C and fit.coef.shape == (3, d)


def test_the_multinomial_probe_on_the_row_span_is_the_probe_on_all_dimensions() -> None:
    rng = np.random.default_rng(5)
    y = np.arange(15) % 3  # a task's few labelled texts, e5-like: anisotropic, far fewer than the dimensions
    x = 1.0 + 0.02 * rng.normal(size=(15, 64)) + 0.01 * rng.normal(size=(3, 64))[y]
    held_out = 1.0 + 0.02 * rng.normal(size=(10, 64))
    for C in (1e-3, 0.1, 10.0):
        span = ProbeFit(*linear_form(make_probe(C=C, row_span=True).fit(x, y)), ProbeChoice())
        full = ProbeFit(*linear_form(make_probe(C=C).fit(x, y)), ProbeChoice())
        np.testing.assert_allclose(span.probabilities(held_out), full.probabilities(held_out), atol=1e-8)
    settings = ProbeSettings(C_grid=(1e-3, 0.1, 10.0))
    searched, reference = fit_multinomial_probe(x, y, 3, 0, settings), probes._searched(x, y, 5, 0, settings)
    assert searched.choice == reference.choice  # the same inner scores (to 6 digits) and the same C


def test_a_dimension_with_too_few_labels_per_side_is_skipped_alone(caplog: pytest.LogCaptureFixture) -> None:
    good = _pairs()
    thin = [EvaluationPair(f"h{i}", "en", "Housing", side, f"Housing text {i}.", _choices("Housing", ("up", "down")))
            for i, side in enumerate(["up", "up", "down", None, None])]  # one 'down': too few
    judge = _judge()
    with caplog.at_level(logging.WARNING, logger="tefcore.judges.e5_crossfit"):
        judge.prepare(good + thin)
    (line,) = [r.getMessage() for r in caplog.records if "skips" in r.getMessage()]
    assert "\n" not in line and line.startswith("e5-crossfit skips en/Housing: labelled texts per side 'down' 1")
    scores = judge.score(_direct(good + thin))
    assert all(s.valid for s in scores[:len(good)])
    assert not any(s.valid for s in scores[len(good):])
    assert scores[-1].detail == "e5-crossfit skips en/Housing (too few labelled texts per side)"
    sub = judge.provenance()["subsets"]["en/Housing"]
    assert sub["skipped"] == line and sub["side_counts"] == {"up": 2, "down": 1} and sub["n_labelled"] == 3


def test_two_sides_partly_labelled_use_the_binary_probe_and_record_the_labelled_texts() -> None:
    pairs = _pairs(n=24, labelled_every=3, sides=("car", "transit"))
    judge = _judge()
    judge.prepare(pairs)
    scores = judge.score(_direct(pairs))
    assert all(s.valid and not s.probs for s in scores)  # P(first side) alone, as MIND's
    unlabelled = [p for p in pairs if p.side is None]
    assert all(judge.assignments("en", "Transport", p.post_id) == [(0, ALL_LABELLED), (1, ALL_LABELLED)]
               for p in unlabelled)
    assert judge.provenance()["subsets"]["en/Transport"]["n_labelled"] == 8
    assert "multinomial_fit" not in judge.provenance()  # two sides: MIND's provenance, unchanged


# --- the whole path: tef extract --model e5-crossfit, then tef evaluate --intervals -------------------
TASK = """name: commute
data: posts.csv
language: en
dimensions:
  Transport:
    sides:
      car: Roads, parking and lower costs for drivers.
      transit: More and cheaper buses, trams and trains.
      cycling: Safe bike lanes and streets for walking.
  Housing:
    sides:
      up: Build more homes.
      down: Protect the old streets.
"""


def _task(folder: Path, n: int = 36) -> Path:
    """A three-side dimension with gold on half of its texts, and a two-side one with a single 'down' label."""
    folder.mkdir(parents=True)
    rows = ["id,text,Transport,Housing"]
    for i in range(n):
        side = SIDES[i % 3]
        housing = {0: "up", 1: "up", 2: "down"}.get(i, "")
        rows.append(f't{i:03d},"Text {i}: more {WORDS[side]} please. Thanks.",{side if i % 2 == 0 else ""},{housing}')
    (folder / "posts.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "task.yaml").write_text(TASK, encoding="utf-8")
    return folder / "task.yaml"


def test_tef_extract_scores_every_text_and_tef_evaluate_reports_the_labelled_ones_with_intervals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(e5, "shared_embedder", SideEmbedder)
    task, out = _task(tmp_path / "study"), tmp_path / "caches"
    with caplog.at_level(logging.WARNING, logger="tefcore.judges.e5_crossfit"):  # tef prints it as `tef: WARNING: ...`
        assert main(["extract", "--task", str(task), "--model", "e5-crossfit", "--out", str(out), "--no-progress"]) == 0
    (skipped,) = [r.getMessage() for r in caplog.records if "skips" in r.getMessage()]  # one line, Housing alone
    assert skipped.startswith("e5-crossfit skips en/Housing: labelled texts per side 'down' 1")
    assert "invalid: e5-crossfit skips en/Housing (too few labelled texts per side)" in capsys.readouterr().err
    (cache,) = out.rglob("*.jsonl")
    frame, prov = read_cache(cache)
    transport = frame[frame["dimension"] == "Transport"]
    assert len(transport) == 36 and transport["side"].notna().sum() == 18
    assert np.isfinite(np.stack(transport["direct_probs"].to_numpy())).all()  # every text scored, gold or not
    assert frame[frame["dimension"] == "Housing"]["direct"].isna().all()
    assert prov["subsets"]["en/Transport"]["n_labelled"] == 18

    assert main(["evaluate", "--cache", str(cache), "--intervals"]) == 0
    shown, err = capsys.readouterr()
    assert "Housing has no readable answer (skipped by the judge); left out" in err
    assert "language en: 18 pairs" in shown and "Acc, 95% interval (bootstrap of the texts):" in shown
    assert "against the strongest baseline" in shown and "TEF - " in shown
    assert main(["evaluate", "--cache", str(cache), "--intervals", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    tef = next(r for r in rows if r["rule"] == "tef" and r["dimension"] == "Transport")
    assert tef["n"] == 18 and tef["accuracy_low"] <= tef["accuracy"] <= tef["accuracy_high"]
    assert tef["baseline"] in ("direct", "majority_vote", "soft_vote") and 0 <= tef["p_mcnemar"] <= 1


class ConstantJudge:
    """Gives every text the first side: the blind judge of a first try at a task."""

    name = "constant"
    reading = "summed"

    def provenance(self) -> dict[str, str]:
        return {"backend": "constant", "model": "constant"}

    def prepare(self, pairs: object, **options: object) -> None:
        pass

    def score(self, requests: Sequence[ScoreRequest]) -> list:
        from tefcore.judges.e5 import embedding_score

        return [embedding_score(0.8 if r.choices.K == 2 else np.array([0.8, 0.1, 0.1])) for r in requests]


def test_a_constant_judge_is_named_blind_in_one_line_and_loses_its_star(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import tefcore.judges

    monkeypatch.setattr(tefcore.judges, "make_backend", lambda *spec_and_options: ConstantJudge())
    task, out = _task(tmp_path / "study"), tmp_path / "caches"
    assert main(["extract", "--task", str(task), "--model", "e5-zeroshot", "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    (cache,) = out.rglob("*.jsonl")
    assert main(["evaluate", "--cache", str(cache), "--rules", "direct", "tef"]) == 0
    shown, err = capsys.readouterr()
    (line,) = [x for x in err.splitlines() if "blind" in x]
    assert line.endswith("en: one side for >= 95% of the texts (blind; no best mark): Direct, TEF on Transport")
    acc = next(x for x in shown.splitlines() if x.startswith("Acc")).split()
    assert "!" in acc[-3] and "*" not in acc[-3]  # Transport: 18 texts all 'car', no best mark

    from tefcore.evaluate import predict_pairs
    from tefcore.inference import BlindWarning, blind_rows

    frame, prov = read_cache(cache)
    pred = predict_pairs(frame[frame["side"].notna()], rules=["tef"], classes={"Transport": SIDES,
                                                                              "Housing": ("up", "down")})
    with pytest.warns(BlindWarning, match="TEF on Transport"):
        assert blind_rows(pred)["dimension"].tolist() == ["Transport"]


def test_the_invalid_share_warning_names_deliberate_skips_and_says_what_would_help_instead_of_a_retry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.extraction.cache import SKIP_DETAIL, cache_invalid_answers, cache_skipped_answers

    monkeypatch.setattr(e5, "shared_embedder", SideEmbedder)
    task, out = _task(tmp_path / "study"), tmp_path / "caches"
    assert main(["extract", "--task", str(task), "--model", "e5-crossfit", "--out", str(out), "--no-progress"]) == 0
    (cache,) = out.rglob("*.jsonl")
    bad, answers, pairs = cache_invalid_answers(cache)
    assert cache_skipped_answers(cache) == (bad, pairs) and len(pairs) == 36  # every Housing pair, each a skip
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("tef: warning: ") and "are invalid" in x]
    assert line.startswith(f"tef: warning: {cache}: {bad} of {answers} answers ")
    assert f"; {bad} of them, in 36 pair(s), are the judge's deliberate skips {SKIP_DETAIL}" in line
    assert "give more texts a gold side" in line
    assert "--retry-invalid" not in line and "once the judge answers again" not in line


def test_the_warning_offers_the_retry_for_the_other_invalid_answers_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.cli import _warn_invalid

    skip = "e5-crossfit skips en/Housing (too few labelled texts per side)"
    cache = tmp_path / "en.jsonl"
    records = [{"type": "pair", "post_id": "p1", "dimension": "Housing", "direct_source": "invalid",
                "direct_detail": skip, "sentence_sources": ["invalid"], "sentence_details": [skip]},
               {"type": "pair", "post_id": "p2", "dimension": "Transport", "direct_source": "invalid",
                "sentence_sources": ["logprobs"]}]
    cache.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    _warn_invalid(cache, ["extract", "--task", "t.yaml"])
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tef: warning: {cache}: 3 of 4 answers (75.0%) are invalid, in 2 pair(s), more than 5%; "
                           "2 of them, in 1 pair(s), are the judge's deliberate skips")
    assert line.endswith("; once the judge answers again, score the other pairs again with: "
                         "tef extract --task t.yaml --retry-invalid")
