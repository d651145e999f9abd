"""Tests of tefcore.mind.load: the validating loader, evaluation pairs, download and data card."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import stat
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tefcore.mind.load import (
    mind_pair,
    Label,
    MindFormatError,
    Post,
    evaluation_pairs,
    excluded_pairs,
    load_posts,
    read_mind_file,
    resolve_data_dir,
    sample_dir,
)
from tefbook.chapters.ch03 import data_frame, label_counts
from tefcore.mind.release import (
    RELEASE_BASE_URL,
    DownloadError,
    data_card,
    describe_data,
    download_release,
    pair_counts,
)

ECO_CHANGE = {"dimension": "Economy", "subcategory": "Economic Models", "orientation": "Free-Market",
              "side": "change"}


def record(**changes: object) -> dict:
    """A valid English record with some fields replaced (``None`` deletes a field)."""
    rec: dict = {"id": "en-single-1", "lang": "en", "event": "COL", "text": "A valid post about markets.",
                 "labels": [dict(ECO_CHANGE)]}
    for key, value in changes.items():
        if value is None:
            del rec[key]
        else:
            rec[key] = value
    return rec


def label(**changes: object) -> dict:
    """A valid label with some fields replaced (``None`` deletes a field)."""
    lab = dict(ECO_CHANGE)
    for key, value in changes.items():
        if value is None:
            del lab[key]
        else:
            lab[key] = value
    return lab


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def first_line() -> str:
    return dumps(record(id="en-single-0"))


def write(directory: Path, content: str | bytes, name: str = "mind_en.jsonl") -> Path:
    path = directory / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


# --- the sample -----------------------------------------------------------------------------
def test_sample_counts(mind_posts: dict) -> None:
    en, zh = mind_posts["en"], mind_posts["zh"]
    assert (len(en), len(zh)) == (381, 649)
    assert (sum(len(p.labels) for p in en), sum(len(p.labels) for p in zh)) == (637, 1393)
    assert (len(evaluation_pairs(en)), len(evaluation_pairs(zh))) == (605, 1215)
    assert (len(excluded_pairs(en)), len(excluded_pairs(zh))) == (2, 16)
    assert excluded_pairs(en) == [("en-multi-1227", "en", "Politics"), ("en-multi-1463", "en", "Politics")]
    assert all(p.lang == "en" for p in en) and all(p.lang == "zh" for p in zh)


def test_sample_first_pairs(mind_posts: dict) -> None:
    en_pair = evaluation_pairs(mind_posts["en"])[0]
    assert (en_pair.post_id, en_pair.lang, en_pair.dimension, en_pair.side) == (
        "en-single-9", "en", "Economy", "stability")
    assert en_pair.text.startswith("The logic behind this is actually very simple")
    zh_pair = evaluation_pairs(mind_posts["zh"])[0]
    assert (zh_pair.post_id, zh_pair.dimension, zh_pair.side) == ("zh-single-OL0002", "Culture", "change")


def test_sample_pair_counts(mind_posts: dict) -> None:
    expected = {
        "en": [(64, 80), (74, 75), (86, 45), (84, 39), (17, 17), (16, 8)],
        "zh": [(84, 177), (90, 70), (126, 90), (180, 113), (138, 67), (76, 4)],
    }
    for lang, rows in expected.items():
        table = pair_counts(evaluation_pairs(mind_posts[lang]))
        assert list(table.index) == ["Culture", "Economy", "Society", "Politics", "Technology", "Environment"]
        assert list(table.columns) == ["change", "stability", "total"]
        assert [tuple(r) for r in table[["change", "stability"]].itertuples(index=False)] == rows
        assert (table["total"] == table["change"] + table["stability"]).all()


def test_sample_data_card(mind_posts: dict) -> None:
    en = data_card(mind_posts["en"])
    assert en == {
        "lang": "en", "posts": 381, "labels": 637, "pairs": 605, "excluded_pairs": 2,
        "change_pairs": 341, "stability_pairs": 264,
        "mean_length": pytest.approx(32695 / 381), "length_unit": "words",
        "segmentation_rule": "reference", "mean_sentences": pytest.approx(2210 / 381),
        "dimensions_per_post": {1: 192, 2: 155, 3: 31, 4: 3},
    }
    zh = data_card(mind_posts["zh"], rule="improved")
    assert zh["mean_length"] == pytest.approx(90366 / 649) and zh["length_unit"] == "characters"
    assert zh["mean_sentences"] == pytest.approx(2791 / 649) and zh["segmentation_rule"] == "improved"
    assert zh["dimensions_per_post"] == {1: 255, 2: 216, 3: 169, 4: 8, 5: 1}
    assert (zh["change_pairs"], zh["stability_pairs"]) == (694, 521)


def test_sample_label_counts(mind_posts: dict) -> None:
    table = label_counts(mind_posts["zh"])
    assert list(table.columns) == ["dimension", "subcategory", "orientation", "side", "count"]
    assert len(table) == 24 and table["count"].sum() == 1393
    assert table.iloc[0].tolist() == ["Politics", "Policy Orientations", "Revolutionism", "change", 44]
    skeptic = table[table["orientation"] == "Climate Skepticism"]["count"].item()
    assert skeptic == 0  # absent from the zh sample, still listed


def test_sample_loads_via_env_and_name(mind_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIND_DATA_DIR", str(mind_dir))
    assert resolve_data_dir() == mind_dir
    assert len(load_posts("zh")) == 649
    assert read_mind_file(mind_dir / "mind_en.jsonl")[0].id == "en-single-9"  # lang from the name


# --- data directory -------------------------------------------------------------------------
def test_resolve_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Argument, else $MIND_DATA_DIR, else the embedded sample; relative paths mean the working directory."""
    default = sample_dir()  # package data: the repository's data/mind, wherever tefcore is installed
    monkeypatch.delenv("MIND_DATA_DIR", raising=False)
    assert resolve_data_dir() == default and default.is_absolute()
    assert sorted(p.name for p in default.glob("*.jsonl")) == ["mind_en.jsonl", "mind_zh.jsonl"]
    monkeypatch.setenv("MIND_DATA_DIR", "  ")
    assert resolve_data_dir() == default
    monkeypatch.setenv("MIND_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_data_dir(str(tmp_path / "arg")) == tmp_path / "arg"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MIND_DATA_DIR", "rel/dir")
    assert resolve_data_dir() == tmp_path / "rel" / "dir"
    assert resolve_data_dir("other") == tmp_path / "other"


def test_load_posts_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIND_DATA_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"mind_en\.jsonl not found \(data directory from \$MIND_DATA_DIR\)"
                       r".*`tef download`"):
        load_posts("en")
    with pytest.raises(ValueError, match="unsupported language 'fr'"):
        load_posts("fr", tmp_path)


# --- evaluation pairs -----------------------------------------------------------------------
def test_pairs_order_and_exclusion() -> None:
    labels = (
        Label("Culture", "Value Orientations", "Individualism", "change"),
        Label("Politics", "Diplomatic Strategies", "Globalism", "change"),
        Label("Economy", "Economic Models", "Interventionist", "stability"),
        Label("Culture", "Ethical Orientations", "Ethical Liberalism", "change"),
        Label("Politics", "Policy Orientations", "Reformism", "stability"),
    )
    posts = [Post("en-multi-7", "en", "RU", "Text seven.", labels),
             Post("en-single-8", "en", "RU", "Text eight.", labels[2:3])]
    assert evaluation_pairs(posts) == [
        mind_pair("en-multi-7", "en", "Culture", "change", "Text seven."),
        mind_pair("en-multi-7", "en", "Economy", "stability", "Text seven."),
        mind_pair("en-single-8", "en", "Economy", "stability", "Text eight."),
    ]
    assert excluded_pairs(posts) == [("en-multi-7", "en", "Politics")]
    assert excluded_pairs(posts)[0].dimension == "Politics"
    assert evaluation_pairs([]) == [] and excluded_pairs(iter(posts[1:])) == []


def test_pair_counts_empty_and_card_errors() -> None:
    table = pair_counts([])
    assert table.shape == (6, 3) and int(table.to_numpy().sum()) == 0
    post = Post("en-single-1", "en", "COL", "x", (Label(**ECO_CHANGE),))
    with pytest.raises(ValueError, match="exactly one language, got no posts"):
        data_card([])
    with pytest.raises(ValueError, match=r"exactly one language, got \['en', 'zh'\]"):
        data_card([post, Post("zh-single-1", "zh", "COL", "好", post.labels)])
    assert isinstance(label_counts([post]), pd.DataFrame)


# --- loader: accepted inputs ----------------------------------------------------------------
def test_accepts_variants(tmp_path: Path) -> None:
    second = dumps(record(id="en-multi-2"))
    for content in (
        f"{first_line()}\n{second}\n",
        f"{first_line()}\n{second}",  # no final newline
        f"{first_line()}\n{second}\n\n  \n",  # trailing blank lines
        f"{first_line()}\r\n{second}\r\n",  # CRLF
        "\ufeff" + f"{first_line()}\n{second}\n",  # byte-order mark
    ):
        posts = read_mind_file(write(tmp_path, content))
        assert [p.id for p in posts] == ["en-single-0", "en-multi-2"]
    assert posts[0] == Post("en-single-0", "en", "COL", "A valid post about markets.", (Label(**ECO_CHANGE),))


def test_any_id_string_loads(tmp_path: Path) -> None:
    """The protocol keys posts and pairs by id and needs no id form: the release's loader takes any id, so a
    MIND-format file of one's own with other ids loads (it was refused for not reading <lang>-<single|multi>-<n>);
    a duplicate id is still refused."""
    ids = ["post 17", "zh-single-3", "a1b2c3", "en-2"]
    path = write(tmp_path, "".join(dumps(record(id=i)) + "\n" for i in ids))
    posts = read_mind_file(path)
    assert [p.id for p in posts] == ids
    assert [pair.post_id for pair in evaluation_pairs(posts)] == ids
    with pytest.raises(MindFormatError, match=r":2: duplicate id 'a1b2c3' \(first on line 1\)"):
        read_mind_file(write(tmp_path, dumps(record(id="a1b2c3")) + "\n" + dumps(record(id="a1b2c3")) + "\n"))


def test_language_from_first_record(tmp_path: Path) -> None:
    zh = record(id="zh-multi-RU0001", lang="zh", text="一个有效的帖子。")
    posts = read_mind_file(write(tmp_path, dumps(zh) + "\n", name="other.jsonl"))
    assert posts[0].lang == "zh"
    path = write(tmp_path, dumps(record(lang="fr", id="fr-single-1")) + "\n", name="other.jsonl")
    with pytest.raises(MindFormatError, match=r"other\.jsonl:1: unknown lang 'fr'; expected one of"):
        read_mind_file(path)
    with pytest.raises(ValueError, match="unsupported language 'fr'"):
        read_mind_file(path, lang="fr")


@pytest.mark.timeout(60)
def test_a_post_as_long_as_the_bound_loads_and_a_longer_one_is_refused(tmp_path: Path) -> None:
    from tefcore.tasks.load import MAX_TEXT_CHARS

    text = ("Markets decide. " * 70_000)[:MAX_TEXT_CHARS]
    posts = read_mind_file(write(tmp_path, f"{first_line()}\n{dumps(record(id='en-multi-2', text=text))}\n"))
    assert posts[1].text == text and len(posts[1].text) == MAX_TEXT_CHARS == 200_000
    with pytest.raises(MindFormatError, match=r":2: record: field 'text' holds 200,001 characters; the bound is 200,000"):
        read_mind_file(write(tmp_path, f"{first_line()}\n{dumps(record(id='en-multi-2', text=text + '!'))}\n"))


# --- loader: rejected inputs ----------------------------------------------------------------
_BAD_LINES: list[tuple[str, str, str]] = [
    ("invalid_json", '{"id": "en-single-2", "lang": "en",\n', "invalid JSON"),
    ("not_object", "[1, 2]\n", "record must be a JSON object, got list"),
    ("missing_field", dumps(record(text=None)) + "\n", "record: missing field(s) ['text']"),
    ("extra_field", dumps(record(source="x")) + "\n", "record: unexpected field(s) ['source']"),
    ("duplicate_key", '{"id": "a", "id": "b"}\n', "duplicate field(s) ['id']"),
    ("label_missing", dumps(record(labels=[label(side=None)])) + "\n", "label 1: missing field(s) ['side']"),
    ("label_extra", dumps(record(labels=[label(score=1)])) + "\n", "label 1: unexpected field(s) ['score']"),
    ("label_not_object", dumps(record(labels=["Economy"])) + "\n", "label 1 must be a JSON object, got str"),
    ("text_type", dumps(record(text=5)) + "\n", "field 'text' must be a string, got int"),
    ("text_nan", '{"id": "en-single-2", "lang": "en", "event": "COL", "text": NaN, "labels": []}\n',
     "field 'text' must be a string, got float"),
    ("labels_type", dumps(record(labels={"a": 1})) + "\n", "field 'labels' must be a list, got dict"),
    ("side_null", dumps(record(labels=[label(side=0)])) + "\n", "label 1: field 'side' must be a string, got int"),
    ("unknown_dimension", dumps(record(labels=[label(dimension="Sports")])) + "\n",
     "label 1: unknown dimension 'Sports'"),
    ("unknown_subcategory", dumps(record(labels=[label(subcategory="Trade")])) + "\n",
     "label 1: unknown subcategory 'Trade' of dimension 'Economy'"),
    ("subcategory_elsewhere", dumps(record(labels=[label(subcategory="Climate Stances",
                                                         orientation="Climate Actionism")])) + "\n",
     "unknown subcategory 'Climate Stances' of dimension 'Economy'"),
    ("unknown_orientation", dumps(record(labels=[label(orientation="Globalism")])) + "\n",
     "label 1: unknown orientation 'Globalism'"),
    ("unknown_side", dumps(record(labels=[label(side="left")])) + "\n", "label 1: unknown side 'left'"),
    ("contradicting_side", dumps(record(labels=[dict(ECO_CHANGE), label(side="stability")])) + "\n",
     "label 2: orientation 'Free-Market' is on side 'change', but the label says 'stability'"),
    ("empty_text", dumps(record(text="")) + "\n", "field 'text' is empty or white space only"),
    ("blank_text", dumps(record(text=" \n\t\u3000")) + "\n", "field 'text' is empty or white space only"),
    ("empty_event", dumps(record(event="")) + "\n", "field 'event' is empty"),
    ("empty_labels", dumps(record(labels=[])) + "\n", "empty 'labels' list"),
    ("wrong_lang", dumps(record(lang="zh")) + "\n", "lang 'zh' but this is a 'en' file"),
    ("id_blank", dumps(record(id=" ")) + "\n", "field 'id' is empty or white space only"),
    ("id_number", dumps(record(id=2)) + "\n", "field 'id' must be a string, got int"),
    ("surrogate", dumps(record(text="\ud800 half")).replace("\ud800", "\\ud800") + "\n", "lone surrogate"),
    ("deep_nesting", "[" * 100_000 + "\n", "invalid JSON"),
    ("huge_int", '{"id": 1' + "0" * 5000 + "}\n", "invalid JSON"),
]


@pytest.mark.parametrize(("second", "reason"), [(b, r) for _, b, r in _BAD_LINES],
                         ids=[name for name, _, _ in _BAD_LINES])
def test_rejects_bad_record(tmp_path: Path, second: str, reason: str) -> None:
    path = write(tmp_path, f"{first_line()}\n{second}{dumps(record(id='en-single-3'))}\n")
    with pytest.raises(MindFormatError) as info:
        read_mind_file(path)
    assert info.value.line == 2
    assert info.value.path == str(path)
    assert str(info.value).startswith(f"{path}:2: ")
    assert reason in info.value.reason


@pytest.mark.parametrize(("content", "line", "reason"), [
    (b"", 0, "empty file"),
    (b"\n \n\t\n", 0, "empty file"),
    (f"{first_line()}\n".encode() + b'{"id": "en-single-2", "te', 2, "truncated last line"),
    (f"{first_line()}\n\n{first_line()}\n".encode(), 2, "blank line"),
    (f"\n{first_line()}\n".encode(), 1, "blank line"),
    (f"{first_line()}\n{first_line()}\n".encode(), 2, "duplicate id 'en-single-0' (first on line 1)"),
    (f"{first_line()}\n".encode() + dumps(record(id="en-single-2", text="caf\u00e9")).encode("latin-1") + b"\n",
     2, "not UTF-8: byte 0xe9"),
])
def test_rejects_bad_file(tmp_path: Path, content: bytes, line: int, reason: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(MindFormatError) as info:
        read_mind_file(path)
    assert (info.value.line, info.value.path) == (line, str(path))
    assert str(info.value).startswith(f"{path}:{line}: ") and reason in str(info.value)


def test_wrong_lang_argument(tmp_path: Path) -> None:
    path = write(tmp_path, first_line() + "\n")
    with pytest.raises(MindFormatError, match=r":1: lang 'en' but this is a 'zh' file"):
        read_mind_file(path, lang="zh")
    with pytest.raises(ValueError, match=r"unsupported language 'de'; expected one of \('en', 'zh'\)"):
        read_mind_file(path, lang="de")
    with pytest.raises(KeyError) as info:  # a lookup of a name that is not there, as Python's own lookups raise
        read_mind_file(path, lang="de")
    assert str(info.value) == "unsupported language 'de'; expected one of ('en', 'zh')"


def test_error_is_a_picklable_value_error() -> None:
    err = MindFormatError(Path("a/mind_en.jsonl"), 7, "invalid JSON")
    assert isinstance(err, ValueError) and str(err) == "a/mind_en.jsonl:7: invalid JSON"
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.path, copy.line, copy.reason, str(copy)) == (err.path, 7, "invalid JSON", str(err))


# --- loader fuzz ----------------------------------------------------------------------------
def _load_or_format_error(content: bytes) -> None:
    """Loading either succeeds with valid posts or raises MindFormatError; anything else fails the test."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), content)
        try:
            posts = read_mind_file(path)
        except MindFormatError as err:
            assert str(err).startswith(f"{path}:{err.line}: ")
            return
    assert posts and all(p.lang == "en" and p.text.strip() and p.labels for p in posts)


_VALID = (first_line() + "\n" + dumps(record(id="en-multi-9", labels=[dict(ECO_CHANGE), label(
    dimension="Culture", subcategory="Value Orientations", orientation="Collectivism", side="stability")])) + "\n"
          ).encode("utf-8")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(content: bytes) -> None:
    _load_or_format_error(content)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(position=st.integers(0, len(_VALID)), cut=st.integers(0, 40), insert=st.binary(max_size=8))
def test_fuzz_mutated_lines(position: int, cut: int, insert: bytes) -> None:
    _load_or_format_error(_VALID[:position] + insert + _VALID[position + cut:])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(["id", "lang", "event", "text", "labels", "dimension", "subcategory",
                               "orientation", "side"]), value=json_values)
def test_fuzz_field_values(field: str, value: object) -> None:
    rec = record(id="en-single-2")
    target = rec if field in rec else rec["labels"][0]
    target[field] = value
    _load_or_format_error((first_line() + "\n" + dumps(rec) + "\n").encode("utf-8", "surrogatepass"))


# --- download -------------------------------------------------------------------------------
def test_release_url() -> None:
    assert RELEASE_BASE_URL == ("https://raw.githubusercontent.com/Kzczc/ICASSP2027-TEF/"
                                "3992d6257db508240ee41d2b7619fc182e880358/data")
    assert RELEASE_BASE_URL.split("/")[-2].startswith("3992d625")


@pytest.fixture()
def release(tmp_path: Path, mind_dir: Path) -> Path:
    """A local copy of the sample standing in for the release directory."""
    source = tmp_path / "release"
    source.mkdir()
    for lang in ("en", "zh"):
        shutil.copyfile(mind_dir / f"mind_{lang}.jsonl", source / f"mind_{lang}.jsonl")
    return source


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".part"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_download_success(release: Path, tmp_path: Path) -> None:
    dest = tmp_path / "new" / "dir"
    result = download_release(dest, base_url=release.as_uri())
    assert set(result) == {"en", "zh"}
    for lang, (path, digest) in result.items():
        assert path == dest / f"mind_{lang}.jsonl"
        assert path.read_bytes() == (release / path.name).read_bytes()
        assert digest == _sha(release / path.name)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert _leftovers(dest) == []
    assert len(load_posts("en", dest)) == 381
    again = download_release(dest, ["zh"], base_url=release.as_uri() + "/",
                             checksums={"zh": result["zh"][1].upper()}, force=True)
    assert again == {"zh": result["zh"]}


def test_download_checksum_mismatch_keeps_old_file(release: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mind_en.jsonl").write_text("OLD", encoding="utf-8")
    wrong = "0" * 64
    with pytest.raises(ValueError, match=f"SHA-256 mismatch for .*mind_en.jsonl: expected {wrong}, "
                                         f"got {_sha(release / 'mind_en.jsonl')}"):
        download_release(dest, ["en"], base_url=release.as_uri(), checksums={"en": wrong}, force=True)
    assert (dest / "mind_en.jsonl").read_text(encoding="utf-8") == "OLD"
    assert sorted(os.listdir(dest)) == ["mind_en.jsonl"]


def test_download_rejects_corrupt_content(release: Path, tmp_path: Path) -> None:
    corrupt = release / "mind_en.jsonl"
    corrupt.write_bytes(corrupt.read_bytes()[:-40])  # a torn last record
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mind_en.jsonl").write_text("OLD", encoding="utf-8")
    with pytest.raises(MindFormatError, match=r"^file://.*mind_en\.jsonl:381: truncated last line") as info:
        download_release(dest, ["en"], base_url=release.as_uri(), force=True)
    assert info.value.line == 381
    assert (dest / "mind_en.jsonl").read_text(encoding="utf-8") == "OLD"
    assert _leftovers(dest) == []


def test_download_keeps_existing_without_force(release: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    existing = dest / "mind_zh.jsonl"
    existing.write_text("LOCAL", encoding="utf-8")
    result = download_release(dest, "zh", base_url=(tmp_path / "nowhere").as_uri())
    assert result == {"zh": (existing, _sha(existing))}
    with pytest.raises(ValueError, match="SHA-256 mismatch"):
        download_release(dest, ["zh"], base_url=release.as_uri(), checksums={"zh": "1" * 64})
    assert existing.read_text(encoding="utf-8") == "LOCAL"


def test_download_errors(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    with pytest.raises(DownloadError, match=r"^cannot download file://.*/missing/mind_en\.jsonl: "):
        download_release(dest, ["en"], base_url=(tmp_path / "missing").as_uri())
    with pytest.raises(DownloadError, match=r"^cannot download http://127\.0\.0\.1:9/mind_en\.jsonl: .*network"):
        download_release(dest, ["en"], base_url="http://127.0.0.1:9", timeout=5)  # nothing listens there
    assert not dest.exists()  # no partial file, and the folder the failed download made is gone
    with pytest.raises(ValueError, match="unsupported URL scheme 'ftp'"):
        download_release(dest, base_url="ftp://example.org/data")
    with pytest.raises(ValueError, match="unsupported language 'fr'"):
        download_release(dest, ["en", "fr"])


def test_download_without_sample(tmp_path: Path) -> None:
    """The checksum and atomic-write logic on synthetic files (runs even without the MIND sample)."""
    source = tmp_path / "source"
    source.mkdir()
    content = (first_line() + "\n").encode("utf-8")
    (source / "mind_en.jsonl").write_bytes(content)
    dest = tmp_path / "dest"
    digest = hashlib.sha256(content).hexdigest()
    assert download_release(dest, ["en"], base_url=source.as_uri(), checksums={"en": digest}) == {
        "en": (dest / "mind_en.jsonl", digest)}
    (source / "mind_en.jsonl").write_bytes(content.replace(b"COL", b"RU"))
    with pytest.raises(ValueError, match=f"expected {digest}, got "):
        download_release(dest, ["en"], base_url=source.as_uri(), checksums={"en": digest}, force=True)
    assert (dest / "mind_en.jsonl").read_bytes() == content and _leftovers(dest) == []


# --- which data -----------------------------------------------------------------------------
def _write_lines(directory: Path, lang: str, lines: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"mind_{lang}.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_describe_data_says_sample_full_or_custom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MIND_DATA_DIR", raising=False)
    sample = describe_data()
    assert (sample.kind, sample.directory) == ("MIND sample", sample_dir())
    assert sample.posts == {"en": 381, "zh": 649} and sample.pairs == {"en": 605, "zh": 1215}
    assert sample.sha256["en"] == _sha(sample_dir() / "mind_en.jsonl")
    assert data_frame(sample)[["lang", "posts", "pairs"]].values.tolist() == [["en", 381, 605], ["zh", 649, 1215]]
    # the same records in other bytes are still the sample; a part of it is custom data
    records = [json.loads(line) for line in (sample_dir() / "mind_en.jsonl").read_text(encoding="utf-8").splitlines()]
    _write_lines(tmp_path / "same", "en", [json.dumps(r, ensure_ascii=True, indent=None) for r in records])
    same = describe_data(tmp_path / "same", ["en"])
    assert same.kind == "MIND sample" and same.sha256["en"] != sample.sha256["en"]
    _write_lines(tmp_path / "part", "en", [json.dumps(r) for r in records[:10]])
    part = describe_data(tmp_path / "part", "en")
    assert (part.kind, part.posts) == ("custom data", {"en": 10})
    # the full release is told by its published counts
    import tefcore.mind.release as release

    counts = {"posts": 10, "labels": sum(len(r["labels"]) for r in records[:10]), "pairs": part.pairs["en"],
              "excluded_pairs": len(excluded_pairs(read_mind_file(tmp_path / "part" / "mind_en.jsonl")))}
    monkeypatch.setitem(release.FULL_RELEASE, "en", {**release.FULL_RELEASE["en"], **counts})
    assert describe_data(tmp_path / "part", ["en"]).kind == "full MIND release"
    monkeypatch.setitem(release.FULL_RELEASE, "en", {**release.FULL_RELEASE["en"], "labels": counts["labels"] + 1})
    assert describe_data(tmp_path / "part", ["en"]).kind == "custom data"


def test_describe_data_needs_every_file(tmp_path: Path) -> None:
    _write_lines(tmp_path, "en", [first_line()])
    with pytest.raises(FileNotFoundError, match="mind_zh.jsonl not found"):
        describe_data(tmp_path)
    assert describe_data(tmp_path, ["en"]).kind == "custom data"
