"""Tests of tefcore.mind.prompts: verbatim templates (protocol §4), side descriptions, filled prompts."""

from __future__ import annotations

import hashlib
import re

import pytest

from tefcore.mind.prompts import (
    ANSWER_LETTERS,
    VARIANTS,
    build_prompt,
    describe_side,
    template,
    template_hash,
)
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES

EN_ORIGINAL_ECONOMY = """You are a careful annotator who measures public value orientations in social media text.

Decide which position the text supports on the given value dimension.

Dimension: Economy
C (change-oriented): Free-Market (Economic Models); Equality of Opportunity (Distribution Justice)
S (stability-oriented): Interventionist (Economic Models); Equality of Outcome (Distribution Justice)

Text: The market should decide prices, not the state.

Answer with a single letter, C or S.
Answer:"""

ZH_ORIGINAL_ECONOMY = """你是一名严谨的标注员，负责测量社交媒体文本中的公共价值取向。

请判断文本在给定价值维度上支持哪一种立场。

维度：经济
C（变革取向）：市场自由（经济模式）；机会平等（分配正义）
S（稳定取向）：国家干预（经济模式）；结果平等（分配正义）

文本：价格应该由市场决定，而不是由政府决定。

只回答一个字母：C 或 S。
答案："""

EN_MINIMAL_CULTURE = (
    "Dimension: Culture. C: Ethical Liberalism (Ethical Orientations); Individualism (Value Orientations). "
    "S: Ethical Conservatism (Ethical Orientations); Collectivism (Value Orientations).\n"
    "Text: Family comes first.\n"
    "Answer C or S:"
)

ZH_MINIMAL_ENVIRONMENT = (
    "维度：生态文明。C：保护优先（发展取向）；气候行动（气候立场）。S：发展优先（发展取向）；气候怀疑（气候立场）。\n"
    "文本：先发展经济再说。\n"
    "回答 C 或 S："
)


def test_constants() -> None:
    assert VARIANTS == ("original", "verbose", "minimal")
    assert ANSWER_LETTERS == {"change": "C", "stability": "S"}
    assert all(template(lang, variant) for lang in LANGS for variant in VARIANTS)


def test_templates_match_protocol(protocol_text: str) -> None:
    section = protocol_text[protocol_text.index("## 4. Prompts"):protocol_text.index("## 5.")]
    blocks = re.findall(r"^(en|zh) / (\w+)[^\n]*\n```\n(.*?)\n```", section, re.S | re.M)
    assert len(blocks) == 6
    for lang, variant, body in blocks:
        assert template(lang, variant) == body, (lang, variant)


@pytest.mark.parametrize(("lang", "variant"), [(lang, v) for lang in LANGS for v in VARIANTS])
def test_template_shape(lang: str, variant: str) -> None:
    text = template(lang, variant)
    assert text == text.rstrip() and not text.startswith((" ", "\n"))
    assert [m for m in re.findall(r"\{(\w+)\}", text)] == ["dimension", "change", "stability", "text"]
    assert text.count("\n") == {"original": 11, "verbose": 15, "minimal": 2}[variant]
    assert template_hash(lang, variant) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_verbose_first_paragraph_is_one_line() -> None:
    en = template("en", "verbose").split("\n")[0]
    assert en.startswith("You are a political scientist") and en.endswith("stability-oriented position.")
    assert "  " not in en
    zh = template("zh", "verbose").split("\n")[0]
    assert zh.startswith("你是一名政治学研究者") and zh.endswith("作出区分。")


def test_template_hashes_distinct() -> None:
    assert len({template_hash(lang, v) for lang in LANGS for v in VARIANTS}) == 6
    assert template_hash("en") == template_hash("en", "original")


@pytest.mark.parametrize(("dimension", "side", "lang", "expected"), [
    ("Economy", "change", "en", "Free-Market (Economic Models); Equality of Opportunity (Distribution Justice)"),
    ("Economy", "change", "zh", "市场自由（经济模式）；机会平等（分配正义）"),
    ("Economy", "stability", "zh", "国家干预（经济模式）；结果平等（分配正义）"),
    ("Technology", "stability", "en",
     "IP Protection (Innovation Models); Technological Regulation (Governance Models)"),
    ("Politics", "change", "zh", "革命主义（政策导向）；全球主义（外交战略）"),
])
def test_describe_side(dimension: str, side: str, lang: str, expected: str) -> None:
    assert describe_side(dimension, side, lang) == expected


def test_describe_side_errors() -> None:
    with pytest.raises(ValueError, match="unknown side 'left'"):
        describe_side("Economy", "left", "en")
    with pytest.raises(ValueError, match="unsupported language 'de'"):
        describe_side("Economy", "change", "de")
    with pytest.raises(ValueError, match="unknown dimension 'Sports'"):
        describe_side("Sports", "change", "en")


def test_build_prompt_en_original_economy() -> None:
    text = "  The market should decide prices, not the state.\n"
    assert build_prompt(text, "Economy", "en") == EN_ORIGINAL_ECONOMY
    assert build_prompt(text, "Economy", "en", "original") == EN_ORIGINAL_ECONOMY


def test_build_prompt_zh_original_economy() -> None:
    assert build_prompt("价格应该由市场决定，而不是由政府决定。", "Economy", "zh") == ZH_ORIGINAL_ECONOMY


def test_build_prompt_minimal() -> None:
    assert build_prompt("Family comes first.", "Culture", "en", "minimal") == EN_MINIMAL_CULTURE
    assert build_prompt("\t先发展经济再说。 ", "Environment", "zh", "minimal") == ZH_MINIMAL_ENVIRONMENT


def test_build_prompt_verbose_tail() -> None:
    prompt = build_prompt("Ban it.", "Technology", "en", "verbose")
    assert prompt.endswith(
        "Dimension: Technology\n"
        "C (change-oriented): Inclusive Sharing (Innovation Models); "
        "Technological Libertarianism (Governance Models)\n"
        "S (stability-oriented): IP Protection (Innovation Models); Technological Regulation (Governance Models)\n"
        "\nText: Ban it.\n\nAnswer with a single letter, C or S, and nothing else.\nAnswer:"
    )
    assert build_prompt("禁止。", "Technology", "zh", "verbose").endswith(
        "文本：禁止。\n\n只回答一个字母：C 或 S，不要输出其他内容。\n答案：")


def test_braces_in_text_stay_literal() -> None:
    text = "Keep {dimension}, {text}, {0} and {} as typed. {change"
    prompt = build_prompt(text, "Economy", "en", "minimal")
    assert prompt.splitlines()[1] == f"Text: {text}"
    assert prompt.startswith("Dimension: Economy. C: Free-Market")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_dimension_fills(lang: str, variant: str) -> None:
    for dim in DIMENSIONS:
        prompt = build_prompt("x", dim.name, lang, variant)
        assert "{" not in prompt and "}" not in prompt
        assert (dim.zh if lang == "zh" else dim.name) in prompt
        for side in SIDES:
            assert describe_side(dim.name, side, lang) in prompt


def test_build_prompt_errors() -> None:
    with pytest.raises(ValueError, match=r"unsupported language 'fr'; expected one of \('en', 'zh'\)"):
        build_prompt("text", "Economy", "fr")
    with pytest.raises(ValueError, match=r"unknown prompt variant 'short'; expected one of \('original', "):
        build_prompt("text", "Economy", "en", "short")
    with pytest.raises(ValueError, match=r"unknown dimension 'economy'; expected one of \['Politics', 'Economy'"):
        build_prompt("text", "economy", "en")
    with pytest.raises(ValueError, match="empty or white space only"):
        build_prompt(" \n ", "Economy", "en")
    with pytest.raises(TypeError, match="text must be a str"):
        build_prompt(None, "Economy", "en")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown prompt variant"):
        template("en", "short")
