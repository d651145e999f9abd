"""Tests of tefcore.tasks.segment: the reference rule of protocol §3 and the improved rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tefcore.tasks.segment import SEGMENTATION_RULES, split_sentences

PROTOCOL_EXAMPLE = "Why? Because the market decides everything. The U.S. economy grew."


def test_rules() -> None:
    assert SEGMENTATION_RULES == ("reference", "improved")


# --- reference rule -------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    # protocol §3: "Why?" and "The U.S." are dropped, "economy grew." survives on its own
    (PROTOCOL_EXAMPLE, ["Because the market decides everything.", "economy grew."]),
    ("Taxes are too high!", ["Taxes are too high!"]),
    ("Yes. No.", ["Yes. No."]),  # nothing kept: the whole stripped post
    ("  Yes. No.  ", ["Yes. No."]),
    ("First line without stop\nSecond line. Third sentence here.",
     ["First line without stop\nSecond line.", "Third sentence here."]),  # no newline handling
    ("Version 2.0 is out.Really great news! ok", ["Version 2.0 is out.Really great news!"]),
    ("This is the first one.  And the second one.", ["This is the first one.", "And the second one."]),
    ('He said "Stop!" Then he left the room.', ['He said "Stop!" Then he left the room.']),
    ("So true? I think it is true. Ten chars.", ["I think it is true.", "Ten chars."]),
    ("", [""]),
    ("   ", [""]),
])
def test_reference_en(text: str, expected: list[str]) -> None:
    assert split_sentences(text, "en") == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("好！你好吗？这是一个足够长的中文句子。", ["这是一个足够长的中文句子。"]),
    ("真的吗？！我简直不敢相信这个消息会是真的。", ["我简直不敢相信这个消息会是真的。"]),
    ("第一句话已经足够长了吧。第二句没有结尾标点但也足够长",
     ["第一句话已经足够长了吧。", "第二句没有结尾标点但也足够长"]),
    ("这是半角的句号.这不是分隔符!所以整段是一句", ["这是半角的句号.这不是分隔符!所以整段是一句"]),
    # the closing quote travels to the next sentence under the reference rule
    ("他说：“我们必须改革。”然后大家都同意了这个看法。", ["他说：“我们必须改革。", "”然后大家都同意了这个看法。"]),
    ("好。", ["好。"]),
    ("  前后有空格的一句话，很长很长。  ", ["前后有空格的一句话，很长很长。"]),
])
def test_reference_zh(text: str, expected: list[str]) -> None:
    assert split_sentences(text, "zh") == expected


def test_reference_min_length() -> None:
    assert split_sentences("好！你好吗？", "zh", min_length=3) == ["你好吗？"]
    assert split_sentences("Hi. Yo. Ok", "en", min_length=0) == ["Hi.", "Yo.", "Ok"]
    # exactly min_length code points is kept
    assert split_sentences("一二三四五六七八九。十", "zh") == ["一二三四五六七八九。"]


@pytest.mark.parametrize("rule", SEGMENTATION_RULES)
def test_bad_arguments(rule: str) -> None:
    with pytest.raises(ValueError, match=r"unsupported language 'fr'; expected one of \('en', 'zh'\)"):
        split_sentences("Bonjour. Ça va?", "fr", rule=rule)
    with pytest.raises(ValueError, match="min_length must be a non-negative int"):
        split_sentences("text", "en", min_length=-1, rule=rule)
    with pytest.raises(TypeError, match="text must be a str"):
        split_sentences(None, "en", rule=rule)  # type: ignore[arg-type]


def test_unknown_rule() -> None:
    with pytest.raises(ValueError, match=r"unknown segmentation rule 'nltk'; expected one of"):
        split_sentences("text", "en", rule="nltk")


# --- improved rule --------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    (PROTOCOL_EXAMPLE, ["Why? Because the market decides everything.", "The U.S. economy grew."]),
    ("Mr. Smith met Dr. Jones at 5 p.m. on Friday. They talked, e.g. about taxes, jobs etc. and more.",
     ["Mr. Smith met Dr. Jones at 5 p.m. on Friday.", "They talked, e.g. about taxes, jobs etc. and more."]),
    ("J. K. Rowling sold 3.5 million copies. No. 5 on the list is new.",
     ["J. K. Rowling sold 3.5 million copies.", "No. 5 on the list is new."]),
    ('He said "Stop!" Then he left. She replied (quietly.) Fine by me, really.',
     ['He said "Stop!"', "Then he left.", "She replied (quietly.)", "Fine by me, really."]),
    ("She wrote “We will win.” Nobody believed her at all.",
     ["She wrote “We will win.”", "Nobody believed her at all."]),
    ("First line without a stop\nSecond line is here. Third one\n\nLast paragraph",
     ["First line without a stop", "Second line is here.", "Third one\n\nLast paragraph"]),
    ("I don't know... Maybe we should wait. Wait... what did you say?",
     ["I don't know...", "Maybe we should wait.", "Wait... what did you say?"]),
    ("Well… that is odd. Hmm… Fine then, go.", ["Well… that is odd.", "Hmm… Fine then, go."]),
    ("Yes. I agree with this completely. Ok.", ["Yes. I agree with this completely. Ok."]),
    ("No way! This is a long enough sentence. Sure. Another long sentence here.",
     ["No way! This is a long enough sentence.", "Sure. Another long sentence here."]),
    ("Hi. Yo.", ["Hi. Yo."]),
    ("We met in the U.K. last year (i.e. 2023). It rained.",
     ["We met in the U.K. last year (i.e. 2023).", "It rained."]),
    ("  ", [""]),
])
def test_improved_en(text: str, expected: list[str]) -> None:
    assert split_sentences(text, "en", rule="improved") == expected


def test_improved_en_min_length() -> None:
    assert split_sentences("Say No. Then leave now.", "en", min_length=1, rule="improved") == [
        "Say No.", "Then leave now."]
    assert split_sentences("Really?! That is surprising news to me.", "en", min_length=1, rule="improved") == [
        "Really?!", "That is surprising news to me."]
    assert split_sentences("Really?! That is surprising news to me.", "en", rule="improved") == [
        "Really?! That is surprising news to me."]


@pytest.mark.parametrize(("text", "expected"), [
    ("他说：“我们必须改革。”然后大家都同意了这个看法。", ["他说：“我们必须改革。”", "然后大家都同意了这个看法。"]),
    ("又被狗咬了？这种事不是第一次了吧！", ["又被狗咬了？这种事不是第一次了吧！"]),
    ("第一段没有句号\n第二段有句号。第三句足够长的文字在这里。",
     ["第一段没有句号\n第二段有句号。", "第三句足够长的文字在这里。"]),
    ("我们要改革；我们也要稳定，这两者并不矛盾。", ["我们要改革；我们也要稳定，这两者并不矛盾。"]),
    ("真的吗？！我简直不敢相信这个消息会是真的。", ["真的吗？！我简直不敢相信这个消息会是真的。"]),
    ("这是一个足够长的中文句子。好的。", ["这是一个足够长的中文句子。好的。"]),
    ("看到'马龙，巴黎见！'这句话，我心里暖暖的，真的很感动。",
     ["看到'马龙，巴黎见！'", "这句话，我心里暖暖的，真的很感动。"]),
])
def test_improved_zh(text: str, expected: list[str]) -> None:
    assert split_sentences(text, "zh", rule="improved") == expected


def test_improved_zh_min_length() -> None:
    assert split_sentences("真的吗？！我简直不敢相信这个消息会是真的。", "zh", min_length=1, rule="improved") == [
        "真的吗？！", "我简直不敢相信这个消息会是真的。"]
    assert split_sentences("他说「我们赢了！」大家都很开心地庆祝了起来。", "zh", min_length=1, rule="improved") == [
        "他说「我们赢了！」", "大家都很开心地庆祝了起来。"]


# --- properties -----------------------------------------------------------------------------
_PIECES = ["a", "Bc", "word", "U.S.", "Mr.", "e.g.", "No.", "5", "3.5", "J.", ". ", "! ", "? ", "...", "…",
           "\n", "  ", '"', "”", ")", "」", "。", "！", "？", "；", "中文", "好", " ", "\r\n", "\u2028", "\t"]
texts = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join), st.text(max_size=200))


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _in_order(sentences: list[str], text: str) -> bool:
    position = 0
    for sentence in sentences:
        found = text.find(sentence, position)
        if found < 0:
            return False
        position = found + len(sentence)
    return True


@settings(max_examples=300, deadline=None)
@given(text=texts, lang=st.sampled_from(["en", "zh"]), min_length=st.integers(0, 15))
def test_improved_keeps_every_character(text: str, lang: str, min_length: int) -> None:
    sentences = split_sentences(text, lang, min_length, rule="improved")
    assert _squeeze("".join(sentences)) == _squeeze(text)
    assert _in_order(sentences, text)  # verbatim spans, in order
    assert all(s == s.strip() for s in sentences)
    if len(sentences) > 1:
        assert all(s and len(s) >= min_length for s in sentences)
    if lang == "en":  # English cuts fall on white space only
        assert " ".join(" ".join(s.split()) for s in sentences) == " ".join(text.split())


@settings(max_examples=300, deadline=None)
@given(text=texts, lang=st.sampled_from(["en", "zh"]), min_length=st.integers(0, 15))
def test_reference_properties(text: str, lang: str, min_length: int) -> None:
    sentences = split_sentences(text, lang, min_length)
    assert sentences
    assert _in_order(sentences, text)
    if sentences != [text.strip()]:
        assert all(s == s.strip() and len(s) >= min_length for s in sentences)


def _protocol_oracle(text: str, lang: str, min_length: int) -> list[str]:
    """Protocol §3 read literally, one character at a time (an independent check of the regex rule)."""
    pieces, current, i = [], "", 0
    while i < len(text):
        current += text[i]
        if (lang == "zh" and text[i] in "。！？") or (
                lang == "en" and text[i] in ".!?" and text[i + 1:i + 2] == " "):
            pieces.append(current)
            current = ""
            i += lang == "en"  # the space of ". " belongs to the delimiter
        i += 1
    kept = [p.strip() for p in [*pieces, current] if len(p.strip()) >= min_length]
    return kept or [text.strip()]


@settings(max_examples=300, deadline=None)
@given(text=texts, lang=st.sampled_from(["en", "zh"]), min_length=st.integers(0, 15))
def test_reference_equals_protocol_oracle(text: str, lang: str, min_length: int) -> None:
    assert split_sentences(text, lang, min_length) == _protocol_oracle(text, lang, min_length)


def test_reference_equals_oracle_on_sample(mind_posts: dict) -> None:
    for lang, posts in mind_posts.items():
        for post in posts:
            assert split_sentences(post.text, lang) == _protocol_oracle(post.text, lang, 10)


def test_min_length_accepts_integer_likes() -> None:
    import numpy as np

    assert split_sentences("Hi. Yo. Ok", "en", min_length=np.int64(0)) == ["Hi.", "Yo.", "Ok"]
    with pytest.raises(ValueError, match="min_length"):
        split_sentences("Hi.", "en", min_length=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_length"):
        split_sentences("Hi.", "en", min_length=True)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("rule", SEGMENTATION_RULES)
def test_one_megabyte_post(rule: str) -> None:
    en = ("The U.S. economy grew by 3.5 percent. Why? " * 25_000)[:1_000_000]
    assert len(split_sentences(en, "en", rule=rule)) > 20_000
    zh = ("我们必须改革现有的制度。“好！”为什么不呢？" * 50_000)[:1_000_000]
    assert len(split_sentences(zh, "zh", rule=rule)) > 40_000
    assert len(split_sentences("x" * 1_000_000, "en", rule=rule)) == 1


def test_sample_sentence_counts(mind_posts: dict) -> None:
    """Sentences per post on the MIND sample (the full release gives 5.84 en / 4.35 zh, reference)."""
    totals = {(lang, rule): sum(len(split_sentences(p.text, lang, rule=rule)) for p in posts)
              for lang, posts in mind_posts.items() for rule in SEGMENTATION_RULES}
    assert totals == {("en", "reference"): 2210, ("en", "improved"): 2200,
                      ("zh", "reference"): 2781, ("zh", "improved"): 2791}
