"""The evidence view (tefcore.explain, `tef explain`): every sentence's term of Eq. 3 adds up to the score
fuse_many gives, for K = 2 (committed MIND caches) and K = 3 (a task's cache); the four formats; the one-line
refusal when the texts changed since the extraction; a whole cache's HTML report, fast and offline."""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tefcore.explain import DataChanged, explain, explain_cache, explain_file, render
from tefcore.extraction.cache import CacheWriter, read_cache
from tefcore.fusion import clipped_log_odds, entropy_weight, fuse_many
from tefcore.judges.base import INVALID, Score
from tefcore.mind.load import resolve_data_dir
from tefcore.tasks.segment import split_sentences
from tefcore.tasks import load_task, recorded_sides

ROOT = Path(__file__).resolve().parents[1]
MIND_CACHE = ROOT / "data" / "caches" / "e5-crossfit" / "original"
HARBOUR = ROOT / "data" / "examples" / "harbour-town"
TEXT_KEYS = ["cache", "lang", "id", "dimension"]
REMOTE = re.compile(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|<script|<link""",
                    re.IGNORECASE)


def synthetic_task_cache(folder: Path, seed: int = 0) -> Path:
    """The harbour-town task copied into ``folder`` and a cache of it from a seeded random judge, written
    through the library's cache writer with the provenance fields an extraction records (one file per language);
    returns the cache folder. Some sentence answers are unreadable."""
    shutil.copytree(HARBOUR, folder / "task")
    task = load_task(folder / "task" / "task.yaml")
    rng = np.random.default_rng(seed)
    out = folder / "caches" / "synthetic" / task.prompt_name
    for lang in task.languages:
        provenance = {"judge": "synthetic", "seed": seed, "lang": lang, "prompt_variant": task.prompt_name,
                      "segmentation_rule": task.segmentation, "min_sentence_length": 10, **task.provenance(lang)}
        with CacheWriter(out / f"{lang}.jsonl", provenance) as writer:
            for pair in task.pairs(lang):
                n = len(split_sentences(pair.text, lang, rule=task.segmentation))
                writer.write_pair(pair, _score(rng, pair.choices.K), [_score(rng, pair.choices.K, 0.1)
                                                                       for _ in range(n)])
    return out


def _score(rng: np.random.Generator, K: int, invalid: float = 0.0) -> Score:
    """A random answer over K sides (unreadable with probability ``invalid``)."""
    if rng.random() < invalid:
        return INVALID
    p = rng.dirichlet(np.full(K, 0.6))
    return Score(float(p[0]), math.nan, "embedding", probs=tuple(map(float, p)) if K > 2 else ())


@pytest.fixture(scope="module")
def task_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_task_cache(tmp_path_factory.mktemp("explain"))


def fused_scores(frame: pd.DataFrame, classes: dict[str, list[str]] | None = None) -> dict[tuple, np.ndarray]:
    """TEF's scores by fuse_many, per (cache, lang, id, dimension), on the readable sentences of every pair."""
    out = {}
    for _, row in frame.iterrows():
        sides = (classes or {}).get(row["dimension"], ["change", "stability"])
        p = np.asarray(row["sentence_probs"] if len(sides) > 2 else row["sentences"], dtype=float)
        p = p[~np.isnan(p).any(axis=1)] if p.ndim == 2 else p[~np.isnan(p)]
        if len(p):
            out[row.get("cache"), row["lang"], row["post_id"], row["dimension"]] = fuse_many(p, np.zeros(len(p), int), "tef",
                                                                                classes=sides).scores[0]
    return out


def assert_contributions_sum_to_tef(view: pd.DataFrame, fused: dict[tuple, np.ndarray], tol: float = 1e-12) -> None:
    contrib = [c for c in view.columns if c.startswith("contribution_")]
    sums = view.groupby(TEXT_KEYS, sort=False, dropna=False)[contrib].sum(min_count=1)
    assert len(fused) > 0
    worst = 0.0
    for key, scores in fused.items():
        got = sums.loc[key].to_numpy(dtype=float)
        worst = max(worst, float(np.abs(got[~np.isnan(got)] - scores).max()))
    assert worst <= tol, worst


# ---- contributions add up to TEF's score --------------------------------------------------------------
def test_contributions_sum_to_fuse_many_on_every_text_of_a_committed_cache() -> None:
    view = explain_file(MIND_CACHE)
    frame, _ = read_cache(MIND_CACHE)
    assert view.groupby(TEXT_KEYS, sort=False).ngroups == len(frame) > 1000
    assert_contributions_sum_to_tef(view, fused_scores(frame))
    # the columns are fusion's own definitions
    p = view["p_change"].to_numpy()
    assert np.array_equal(view["weight"].to_numpy(), entropy_weight(p))
    assert np.array_equal(view["log_odds_change"].to_numpy(), clipped_log_odds(p))
    assert np.array_equal(view["log_odds_stability"].to_numpy(), -clipped_log_odds(p))
    # and the texts are the sentences the cache scored, by its segmentation
    first = view.iloc[0]
    post = next(line for line in (resolve_data_dir() / "mind_en.jsonl").read_text(encoding="utf-8").splitlines()
                if json.loads(line)["id"] == first["id"])
    assert view.loc[(view["id"] == first["id"]) & (view["dimension"] == first["dimension"]), "text"].tolist() \
        == split_sentences(json.loads(post)["text"], "en")


def test_contributions_sum_to_fuse_many_with_three_sides_and_unreadable_answers(task_cache: Path) -> None:
    view = explain_file(task_cache, task=task_cache.parents[2] / "task" / "task.yaml")
    frame, provenance = read_cache(task_cache)
    sides = recorded_sides(next(iter(provenance.values())))
    assert sides is not None and len(sides["Transport"]) == 3
    assert_contributions_sum_to_tef(view, fused_scores(frame, sides))
    transport = view[view["dimension"] == "Transport"]
    assert transport["contribution_supply"].isna().all() and transport["contribution_cycling"].notna().all()
    unreadable = view["weight"].isna()
    assert unreadable.any() and (view.loc[unreadable, "contribution_car"].fillna(0.0) == 0.0).all()


def test_shares_split_the_margin_and_the_decisive_sentence_is_named() -> None:
    view = explain([0.02, 0.55, 0.55, 0.55, 0.55], ["a", "b", "c", "d", "e"])
    assert view["tef"].iloc[0] == "stability" and view["majority_vote"].iloc[0] == "change"
    assert view["share"].abs().sum() == pytest.approx(1.0)
    assert view["share"].idxmax() == 0 and view["share"].iloc[0] > 0.99 and view["leans"].iloc[0] == "stability"
    assert (view["share"].iloc[1:] < 0).all()  # the four lukewarm sentences argue against the decision


@settings(max_examples=60, deadline=None)
@given(K=st.integers(2, 5), n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1), sharp=st.floats(0.05, 5.0))
def test_property_contributions_sum_to_tef_for_random_k_and_n(K: int, n: int, seed: int, sharp: float) -> None:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(K, sharp), size=n)
    p[rng.random(n) < 0.2] = np.eye(K)[0]  # sure sentences, clipped at M
    p = p / p.sum(axis=1, keepdims=True)
    classes = [f"s{k}" for k in range(K)]
    view = explain(p if K > 2 else p[:, 0], classes=classes)
    fused = fuse_many(p if K > 2 else p[:, 0], np.zeros(n, int), "tef", classes=classes)
    got = view[[f"contribution_{c}" for c in classes]].sum().to_numpy()
    evidence = np.abs(view[[f"contribution_{c}" for c in classes]].to_numpy()).sum(axis=0).max()
    # fuse_many averages scores closer than 2e-12 * evidence (its tie rule): within that, exact
    assert np.abs(got - fused.scores[0]).max() <= 1e-12 * max(1.0, evidence)
    assert view["tef"].iloc[0] == fused.prediction[0]
    assert view["share"].abs().sum() == pytest.approx(1.0) or (view["share"] == 0).all()
    assert view["share"].sum() >= -1e-9  # the decision's side has the margin


# ---- formats ------------------------------------------------------------------------------------------
def disputed_id(view: pd.DataFrame) -> str:
    return str(view.loc[view["tef"] != view["majority_vote"], "id"].iloc[0])


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from tefcore.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def mind_view() -> pd.DataFrame:
    return explain_file(MIND_CACHE / "en.jsonl")


def test_cli_text_csv_json_on_a_mind_post_where_tef_and_mv_disagree(mind_view: pd.DataFrame,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    post = disputed_id(mind_view)
    cache = str(MIND_CACHE / "en.jsonl")
    code, out, err = run(["explain", "--cache", cache, "--id", post], capsys)
    assert code == 0, err
    assert post in out and "TEF" in out and "MV" in out and "Score(change)" in out
    first_sentence = mind_view.loc[mind_view["id"] == post, "text"].iloc[0]
    assert first_sentence.split()[0] in out
    code, out, _ = run(["explain", "--cache", cache, "--id", post, "--format", "csv"], capsys)
    table = pd.read_csv(StringIO(out))
    assert code == 0 and set(table["id"]) == {post} and {"weight", "share", "contribution_change"} <= set(table.columns)
    for _, text in table.groupby("dimension"):
        assert text["contribution_change"].sum() == pytest.approx(text["tef_score_change"].iloc[0], abs=1e-12)
    code, out, _ = run(["explain", "--cache", cache, "--id", post, "--format", "json"], capsys)
    texts = json.loads(out)
    assert code == 0 and {t["id"] for t in texts} == {post}
    one = texts[0]
    assert set(one["decisions"]) == {"direct", "majority_vote", "soft_vote", "tef"}
    assert sum(s["contribution"]["change"] for s in one["sentences"]) == pytest.approx(one["tef_scores"]["change"],
                                                                                       abs=1e-12)


def test_cli_on_a_three_side_task_and_the_disagreement_index(task_cache: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    task = str(task_cache.parents[2] / "task" / "task.yaml")
    code, out, err = run(["explain", "--cache", str(task_cache), "--task", task, "--id", "t09"], capsys)
    assert code == 0, err
    assert "p(cycling)" in out and "w*l(transit)" in out and "t09" in out
    code, out, _ = run(["explain", "--cache", str(task_cache), "--task", task, "--disagree", "--format", "json"],
                       capsys)
    texts = json.loads(out)
    assert code == 0 and texts and all(t["disagreement"] > 0 for t in texts)
    assert [t["disagreement"] for t in texts] == sorted((t["disagreement"] for t in texts), reverse=True)
    report = tmp_path / "report.html"
    code, _, _ = run(["explain", "--cache", str(task_cache), "--task", task, "--format", "html", "--out",
                      str(report)], capsys)
    page = report.read_text(encoding="utf-8")
    assert code == 0 and page.count("<h2 id=") == 2 * 36 and not REMOTE.search(page)
    code, _, err = run(["explain", "--cache", str(task_cache), "--id", "t09"], capsys)
    assert code == 2 and "--task" in err and err.count("\n") == 1


# ---- the texts changed since the extraction -----------------------------------------------------------
def test_a_changed_task_text_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = synthetic_task_cache(tmp_path)
    posts = tmp_path / "task" / "posts.csv"
    posts.write_text(posts.read_text(encoding="utf-8").replace("Our daughter pays half her wage in rent.",
                                                               "Our daughter pays half her wage in rent, sadly."),
                     encoding="utf-8")
    with pytest.raises(DataChanged, match=r"'h01' .* changed since the extraction") as caught:
        explain_file(cache, task=tmp_path / "task" / "task.yaml")
    assert "\n" not in str(caught.value)
    code, out, err = run(["explain", "--cache", str(cache), "--task", str(tmp_path / "task" / "task.yaml"),
                          "--all"], capsys)
    assert code == 2 and out == "" and err.startswith("tef: error:") and err.count("\n") == 1


def test_a_changed_mind_post_is_refused_in_one_line(tmp_path: Path) -> None:
    lines = (resolve_data_dir() / "mind_en.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["text"] = first["text"] + " One more sentence, added after the extraction."
    (tmp_path / "mind_en.jsonl").write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n",
                                            encoding="utf-8")
    with pytest.raises(DataChanged, match=re.escape(repr(first["id"]))) as caught:
        explain_file(MIND_CACHE / "en.jsonl", data_dir=tmp_path)
    assert "\n" not in str(caught.value) and "--data-dir" in str(caught.value)


def test_sentence_texts_that_do_not_match_the_cache_are_refused() -> None:
    frame = pd.DataFrame({"post_id": ["a"], "lang": ["en"], "dimension": ["Economy"], "side": ["change"],
                          "direct": [0.6], "sentences": [[0.9, 0.2]]})
    with pytest.raises(DataChanged, match="1 sentence texts for the cache's 2"):
        explain_cache(frame, [["only one"]])


# ---- the HTML report of a whole cache -----------------------------------------------------------------
def test_the_html_report_of_a_whole_committed_cache_is_fast_and_offline() -> None:
    start = time.perf_counter()
    view = explain_file(MIND_CACHE)
    page = render(view, "html", title="e5-crossfit, original")
    seconds = time.perf_counter() - start
    texts = view.groupby(TEXT_KEYS, sort=False).ngroups
    assert texts > 1000 and page.count("<h2 id=") == texts
    assert seconds < 10.0, f"{seconds:.1f} s for {texts} texts"
    assert not REMOTE.search(page), REMOTE.search(page)
    assert "<style>" in page and page.startswith("<!DOCTYPE html>")
    # the index lists the most disputed texts first
    index = re.findall(r"<td class=n>([0-9.]+)</td></tr>", page.split("</table>", 1)[0])
    assert len(index) == texts and index == sorted(index, key=float, reverse=True)
