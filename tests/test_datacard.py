"""Chapter 3, the data card: the chapter run on a small MIND-format folder counts it (its glued numbers and
its card), and its figures draw every language."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tefbook.chapters import ch03
from tefbook.chapters.ch03 import label_counts, post_table
from tefbook.build import execute_chapter
from tefbook.toc import load_toc, select_chapters, toc_chapters
from tefcore.mind.load import evaluation_pairs, load_posts

ECO = ("Economy", "Economic Models", "Free-Market", "change"), ("Economy", "Economic Models", "Interventionist", "stability")
POL = ("Politics", "Policy Orientations", "Revolutionism", "change"), ("Politics", "Policy Orientations", "Reformism", "stability")

# (id, event, text, labels as (dimension, subcategory, orientation, side))
RECORDS = {
    "zh": [
        ("zh-single-1", "RU", "市场应该决定价格和资源配置。政府不应过多干预经济运行。", [ECO[0], POL[1]]),
        ("zh-single-2", "RU", "国家必须统筹经济发展的方向。", [ECO[1]]),
        ("zh-single-3", "SY", "改革要一步一步来，不能急于求成。", [POL[1], ECO[0], ECO[1]]),
    ],
    "en": [
        ("en-single-1", "GPT", "Why? Markets decide prices. Taxes should fall now.", [ECO[0], POL[0]]),
        ("en-single-2", "COL", "The state must plan the economy and keep prices stable.", [ECO[1]]),
    ],
}


def _write(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, records in RECORDS.items():
        lines = [json.dumps({"id": i, "lang": lang, "event": e, "text": t,
                             "labels": [dict(zip(("dimension", "subcategory", "orientation", "side"), lab))
                                        for lab in labels]}, ensure_ascii=False)
                 for i, e, t, labels in records]
        (folder / f"mind_{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def glued(notebook: Path) -> dict[str, object]:
    """The values a notebook glued (myst_nb ``glue``), by name: plain text as Python literals where they are."""
    out: dict[str, object] = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook", {})
            if record.get("name"):
                name = record["name"]
                text = output["data"].get(f"{record.get('mime_prefix', '')}text/plain", "")
                text = "".join(text) if isinstance(text, list) else text
                try:
                    out[name] = json.loads(text.replace("'", '"'))
                except ValueError:
                    out[name] = text.strip("'")
    return out


@pytest.mark.slow
def test_chapter_3_counts_the_folder_it_is_given(tmp_path: Path, repo_root: Path) -> None:
    folder = _write(tmp_path / "mind")
    chapter = select_chapters(toc_chapters(repo_root, load_toc(repo_root)), ["03"])[0][0]
    executed = execute_chapter(chapter, {"data_dir": str(folder)}, tmp_path / "out", project_root=repo_root)
    values = glued(executed)
    assert values["data_kind"] == "custom data"
    assert values["posts_zh"] == 3 and values["posts_en"] == 2
    pairs = {lang: evaluation_pairs(load_posts(lang, folder)) for lang in ("zh", "en")}
    # zh: post 3 is labelled on both sides of Economy (excluded); post 1 Economy and Politics, post 2 Economy
    assert [len(pairs["zh"]), len(pairs["en"])] == [4, 3]
    text = executed.read_text(encoding="utf-8")
    assert "custom data: the full release" in text  # the full release's counts are not checked on these data
    assert values["small_n_en"] == 1 and values["small_dim_en"] in {"Economy", "Politics"}


def test_figures_draw_every_language(tmp_path: Path) -> None:
    folder = _write(tmp_path / "mind")
    langs = ["zh", "en"]
    posts = {lang: load_posts(lang, folder) for lang in langs}
    table = pd.concat([post_table(posts[lang]) for lang in langs], ignore_index=True)
    by_rule = table.melt(id_vars=["lang"], value_vars=["sentences_reference", "sentences_improved"], var_name="rule",
                         value_name="sentences")
    assert len(ch03.length_figure(table, langs).data) == 3  # two histograms and the key of the mean line
    assert len(ch03.sentences_figure(by_rule, langs).data) == 4
    labels = pd.concat([label_counts(posts[lang]).assign(lang=lang) for lang in langs], ignore_index=True)
    fig = ch03.orientation_figure(labels, langs)
    keyed = [t.name for t in fig.data if t.showlegend is not False]
    assert keyed[:6] == ["Culture", "Economy", "Society", "Politics", "Technology", "Environment"]  # a colour key
    assert keyed[6:] == ["change (pattern)", "stability (pattern)"]


def test_the_floor_is_computed_once_and_rounded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-dimension floor and its Average come from the book's one definition
    (tefbook.companion.results.majority_rate / majority_floor), and the table and the prose print the same
    rounding of the same value: Chinese Economy's 90 of 160 pairs is 56.25 %, printed 56.3 in both."""
    import myst_nb

    from tefbook.companion.results import majority_floor, majority_rate

    rows = ch03.pair_rows({"zh": {"Economy": (90, 70), "Environment": (76, 4)}}, ["zh"])
    assert len(rows) == 240 and rows["post_id"].is_unique
    rates = majority_rate(rows).set_index("dimension")["accuracy"]
    assert rates["Economy"] == pytest.approx(56.25) and rates["Environment"] == pytest.approx(95.0)
    assert majority_floor(rows)["zh"] == pytest.approx((56.25 + 95.0) / 2)

    index = pd.MultiIndex.from_tuples([("zh", "data at hand", d) for d in ("Economy", "Environment")],
                                      names=["lang", "what", "dimension"])
    dims = pd.DataFrame({"change": [90, 76], "stability": [70, 4], "pairs": [160, 80],
                         "majority %": [56.25, 95.0], "share %": [66.7, 33.3]}, index=index)
    table = ch03.dimension_table(dims, pd.DataFrame({"data at hand": majority_floor(rows)}))
    assert table.loc[("Chinese", "Economy"), ("data at hand", "majority %")] == "56.3"
    assert table.loc[("Chinese", "Average")].tolist() == ["", "", "240", "75.6"]  # counts as integers

    captured: dict[str, object] = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: captured.__setitem__(name, value))
    quoted = pd.DataFrame({"floor": [75.625], "lowest": [56.25], "lowest in": ["Economy"], "highest": [95.0],
                           "highest in": ["Environment"], "smallest": ["Environment"], "its pairs": [80]},
                          index=["zh"])
    ch03.glue_floors(quoted)
    assert f"{captured['floor_min_zh']:.1f}" == "56.3" and f"{captured['floor_zh']:.1f}" == "75.6"
    assert captured["floor_min_dim_zh"] == "Economy" and captured["small_n_zh"] == 80


def test_events_print_integer_pairs_and_no_share_without_pairs() -> None:
    events = pd.DataFrame({("size", "zh"): [158, 0], ("<lambda>", "zh"): [22.2222, 0.0],
                           ("size", "en"): [0, 56], ("<lambda>", "en"): [0.0, 26.7857]}, index=["SY", "COL"])
    shown = ch03.event_table(events, ["zh", "en"])
    assert shown.loc["SY"].tolist() == ["158", "22.2", "0", "–"]
    assert shown.loc["COL"].tolist() == ["0", "–", "56", "26.8"]
