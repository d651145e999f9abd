"""Tests of tefcore.mind.schema: names, orders, abbreviations and the protocol §1 table."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tefcore.errors import UnknownName
from tefcore.mind.prompts import template
from tefcore.mind.schema import (
    ABBREVIATIONS,
    DIMENSIONS,
    LANGS,
    SIDES,
    TABLE_ORDER,
    Dimension,
    Position,
    Subcategory,
    check_lang,
    get_dimension,
    side_of,
)
from tefcore.tasks.segment import split_sentences


def test_constants() -> None:
    assert SIDES == ("change", "stability")
    assert LANGS == ("en", "zh")
    assert TABLE_ORDER == ("Culture", "Economy", "Society", "Politics", "Technology", "Environment")
    assert list(ABBREVIATIONS.items()) == [
        ("Culture", "Cul."), ("Economy", "Eco."), ("Society", "Soc."),
        ("Politics", "Pol."), ("Technology", "Tech."), ("Environment", "Env."),
    ]


def test_schema_order_and_chinese_names() -> None:
    assert [(d.name, d.zh, d.abbr) for d in DIMENSIONS] == [
        ("Politics", "政治", "Pol."), ("Economy", "经济", "Eco."), ("Culture", "文化", "Cul."),
        ("Society", "社会", "Soc."), ("Environment", "生态文明", "Env."), ("Technology", "科技", "Tech."),
    ]


def test_economy_in_full() -> None:
    assert get_dimension("Economy") == Dimension("Economy", "经济", "Eco.", (
        Subcategory("Economic Models", "经济模式", Position("Free-Market", "市场自由"),
                    Position("Interventionist", "国家干预")),
        Subcategory("Distribution Justice", "分配正义", Position("Equality of Opportunity", "机会平等"),
                    Position("Equality of Outcome", "结果平等")),
    ))


def test_names_are_unique() -> None:
    subs = [s for d in DIMENSIONS for s in d.subcategories]
    positions = [p for s in subs for p in (s.change, s.stability)]
    assert len(subs) == len({s.name for s in subs}) == len({s.zh for s in subs}) == 12
    assert len(positions) == len({p.name for p in positions}) == len({p.zh for p in positions}) == 24


def _protocol_rows(text: str) -> list[tuple[str, ...]]:
    """Parse the §1 table into (dimension, zh, abbr, subcategory, zh, change, zh, stability, zh)."""
    section = text[text.index("## 1."):text.index("## 2.")]
    rows, current = [], None
    cell = re.compile(r"^(.*) \((.*)\)$")
    for line in section.splitlines():
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) != 4 or cols[1].startswith("Subcategory") or set(cols[1]) <= {"-"}:
            continue
        if cols[0]:
            name, rest = cell.match(cols[0]).groups()
            current = (name, *[part.strip() for part in rest.split(",")])
        parts = [cell.match(c).groups() for c in cols[1:]]
        rows.append((*current, *[x for pair in parts for x in pair]))
    return rows


def test_matches_protocol_table(protocol_text: str) -> None:
    ours = [
        (d.name, d.zh, d.abbr, s.name, s.zh, s.change.name, s.change.zh, s.stability.name, s.stability.zh)
        for d in DIMENSIONS for s in d.subcategories
    ]
    assert _protocol_rows(protocol_text) == ours


def test_get_dimension_unknown() -> None:
    with pytest.raises(ValueError, match=r"unknown dimension 'Sports'; expected one of \['Politics'"):
        get_dimension("Sports")
    with pytest.raises(ValueError, match="unknown dimension"):
        get_dimension("经济")  # English names only
    with pytest.raises(ValueError, match="unknown dimension"):
        get_dimension(["Economy"])  # type: ignore[arg-type]


@pytest.mark.parametrize(("dimension", "subcategory", "orientation", "side"), [
    ("Politics", "Policy Orientations", "Revolutionism", "change"),
    ("Politics", "Policy Orientations", "Reformism", "stability"),
    ("Environment", "Climate Stances", "Climate Skepticism", "stability"),
    ("Technology", "Innovation Models", "Inclusive Sharing", "change"),
    ("Society", "Judicial Philosophies", "Conservative Jurisprudence", "stability"),
])
def test_side_of(dimension: str, subcategory: str, orientation: str, side: str) -> None:
    assert side_of(dimension, subcategory, orientation) == side


def test_side_of_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown subcategory 'Climate Stances' of dimension 'Economy'"):
        side_of("Economy", "Climate Stances", "Climate Actionism")
    with pytest.raises(ValueError, match=r"unknown orientation 'Globalism'.*\['Free-Market', 'Interventionist'\]"):
        side_of("Economy", "Economic Models", "Globalism")
    with pytest.raises(ValueError, match="unknown dimension"):
        side_of("Sports", "Economic Models", "Free-Market")


def test_positions_and_frozen() -> None:
    eco = get_dimension("Economy")
    assert [sub.position("stability").name for sub in eco.subcategories] == ["Interventionist", "Equality of Outcome"]
    with pytest.raises(ValueError, match="unknown side 'left'"):
        eco.subcategories[0].position("left")
    with pytest.raises(dataclasses.FrozenInstanceError):
        eco.name = "Money"  # type: ignore[misc]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: get_dimension("Sports"), "unknown dimension 'Sports'; expected one of ['Politics', 'Economy', "
     "'Culture', 'Society', 'Environment', 'Technology']"),
    (lambda: side_of("Economy", "Economic Models", "Globalism"),
     "unknown orientation 'Globalism' of subcategory 'Economic Models' (Economy); expected one of ['Free-Market', "
     "'Interventionist']"),
    (lambda: get_dimension("Economy").subcategory("Trade"), "unknown subcategory 'Trade' of dimension 'Economy'; "
     "expected one of ['Economic Models', 'Distribution Justice']"),
    (lambda: get_dimension("Economy").subcategories[0].position("left"),
     "unknown side 'left'; expected one of ('change', 'stability')"),
    (lambda: check_lang("fr"), "unsupported language 'fr'; expected one of ('en', 'zh')"),
    (lambda: split_sentences("A text.", "en", rule="nltk"),
     "unknown segmentation rule 'nltk'; expected one of ('reference', 'improved')"),
    (lambda: template("en", "short"), "unknown prompt variant 'short'; expected one of ('original', 'verbose', "
     "'minimal')"),
])
def test_unknown_names_raise_a_key_error_that_is_a_value_error(call, message: str) -> None:
    """Python's lookups and the reference release raise KeyError for a name that is not there (tefcore raised
    ValueError alone): the error is both, and prints its one line unquoted."""
    with pytest.raises(KeyError) as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, UnknownName)
    assert str(info.value) == message
