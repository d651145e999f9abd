"""The prompts of protocol §4: one template per language and variant, verbatim.

The same prompt serves a whole post (Direct) and a single sentence. Each template asks for one
answer letter, ``C`` (change-oriented) or ``S`` (stability-oriented), and has four slots:

``{dimension}``
    the English dimension name in en prompts, the Chinese one in zh prompts;
``{change}`` / ``{stability}``
    the dimension's two positions on that side (:func:`describe_side`);
``{text}``
    the input, stripped of surrounding white space.

Slots are filled in a single pass (:func:`tefcore.tasks.schema.fill_slots`), so braces inside a
text stay literal.

Examples
--------
>>> describe_side("Economy", "change", "en")
'Free-Market (Economic Models); Equality of Opportunity (Distribution Justice)'
>>> describe_side("Economy", "change", "zh")
'市场自由（经济模式）；机会平等（分配正义）'
>>> build_prompt("  Taxes should fall. ", "Economy", "en", "minimal").splitlines()[1:]
['Text: Taxes should fall.', 'Answer C or S:']
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import TYPE_CHECKING

from tefcore.errors import UnknownName
from tefcore.mind.schema import SIDES, check_lang, get_dimension

if TYPE_CHECKING:  # at import time, tefcore.tasks (its __init__ imports tasks.load) would import this module
    from tefcore.tasks.schema import Choices

__all__ = ["ANSWER_LETTERS", "TEMPLATES", "VARIANTS", "build_prompt", "choices", "describe_side", "task_template",
           "template", "template_hash"]

VARIANTS: tuple[str, ...] = ("original", "verbose", "minimal")
"""Prompt variants; ``original`` is the one of the paper's main experiments."""

ANSWER_LETTERS: dict[str, str] = {"change": "C", "stability": "S"}
"""Side -> the answer letter a prompt asks for."""

# The original and verbose prompts are written once with a task's slots {sides} and {letters}
# (task_template); MIND's fill them from its schema, giving protocol §4's text verbatim.
_QUESTION = {
    "en": "Dimension: {dimension}\n{sides}\n\nText: {text}\n\n",
    "zh": "维度：{dimension}\n{sides}\n\n文本：{text}\n\n",
}
_GENERAL: dict[tuple[str, str], str] = {
    ("en", "original"): (
        "You are a careful annotator who measures public value orientations in social media text.\n"
        "\n"
        "Decide which position the text supports on the given value dimension.\n"
        "\n"
        + _QUESTION["en"]
        + "Answer with a single letter, {letters}.\n"
        "Answer:"
    ),
    ("en", "verbose"): (
        "You are a political scientist and a trained annotator in computational social science. "
        "You measure the value orientation an author expresses in a social media post. "
        "Each value dimension contains two subcategories, and each subcategory contrasts "
        "a change-oriented position with a stability-oriented position.\n"
        "\n"
        "Annotation guidelines:\n"
        "1. Judge the position the author supports, not positions the author quotes, reports, or rejects.\n"
        "2. Rely on explicit arguments first, then on tone, framing, and conclusions.\n"
        "3. If both positions appear, choose the one the author endorses more strongly.\n"
        "4. Use the position definitions below rather than general political labels.\n"
        "\n"
        + _QUESTION["en"]
        + "Answer with a single letter, {letters}, and nothing else.\n"
        "Answer:"
    ),
    ("zh", "original"): (
        "你是一名严谨的标注员，负责测量社交媒体文本中的公共价值取向。\n"
        "\n"
        "请判断文本在给定价值维度上支持哪一种立场。\n"
        "\n"
        + _QUESTION["zh"]
        + "只回答一个字母：{letters}。\n"
        "答案："
    ),
    ("zh", "verbose"): (
        "你是一名政治学研究者，也是计算社会科学领域受过训练的标注员，负责测量社交媒体帖子中作者表达的价值取向。"
        "每个价值维度包含两个子类，每个子类都在变革取向立场与稳定取向立场之间作出区分。\n"
        "\n"
        "标注准则：\n"
        "1. 判断作者本人支持的立场，而不是作者引用、转述或反对的立场。\n"
        "2. 优先依据明确的论点，其次依据语气、框架和结论。\n"
        "3. 如果两种立场同时出现，选择作者更明确支持的一方。\n"
        "4. 以下方给出的立场定义为准，不要套用笼统的政治标签。\n"
        "\n"
        + _QUESTION["zh"]
        + "只回答一个字母：{letters}，不要输出其他内容。\n"
        "答案："
    ),
}
_MIND_SIDES = {"en": "C (change-oriented): {change}\nS (stability-oriented): {stability}",
               "zh": "C（变革取向）：{change}\nS（稳定取向）：{stability}"}
_MIND_LETTERS = {"en": "C or S", "zh": "C 或 S"}

_MINIMAL = {
    "en": "Dimension: {dimension}. C: {change}. S: {stability}.\nText: {text}\nAnswer C or S:",
    "zh": "维度：{dimension}。C：{change}。S：{stability}。\n文本：{text}\n回答 C 或 S：",
}
_TEMPLATES: dict[tuple[str, str], str] = {
    (lang, variant): _MINIMAL[lang] if variant == "minimal" else
    _GENERAL[(lang, variant)].replace("{sides}", _MIND_SIDES[lang]).replace("{letters}", _MIND_LETTERS[lang])
    for lang in ("en", "zh") for variant in ("original", "verbose", "minimal")
}

TEMPLATES = MappingProxyType(_TEMPLATES)
"""Read-only ``(lang, variant) -> template`` mapping."""


def _check(lang: str, variant: str) -> None:
    """Raise :class:`~tefcore.errors.UnknownName` on an unknown language or variant."""
    check_lang(lang)
    if variant not in VARIANTS:
        raise UnknownName(f"unknown prompt variant {variant!r}; expected one of {VARIANTS}")


def template(lang: str, variant: str = "original") -> str:
    """Return the raw template of protocol §4 for ``lang`` and ``variant``.

    Raises
    ------
    UnknownName
        On an unknown language or variant (a KeyError and a ValueError); the message lists the valid ones.
    """
    _check(lang, variant)
    return _TEMPLATES[(lang, variant)]


def task_template(lang: str, variant: str = "original") -> str:
    """The original (or verbose) prompt with the slots of a task's own schema, ``{sides}`` and ``{letters}``.

    It is the default prompt of a task (:mod:`tefcore.tasks`): MIND's template of ``lang`` and
    ``variant`` is this text with MIND's two side lines and ``C or S`` put in those slots.

    Examples
    --------
    >>> task_template("en").splitlines()[4:6]
    ['Dimension: {dimension}', '{sides}']
    >>> task_template("zh").splitlines()[-2]
    '只回答一个字母：{letters}。'
    """
    _check(lang, variant)
    if variant == "minimal":
        raise ValueError("the minimal prompt lists exactly two sides; a task's prompt is original or verbose")
    return _GENERAL[(lang, variant)]


def choices(dimension: str, lang: str) -> Choices:
    """MIND's answer space of one dimension: change and stability, letters C and S, described as the prompts
    describe them (:func:`describe_side`), the dimension named in ``lang``.

    Examples
    --------
    >>> c = choices("Economy", "zh")
    >>> c.dimension, c.sides, c.letters, c.descriptions[0]
    ('经济', ('change', 'stability'), ('C', 'S'), '市场自由（经济模式）；机会平等（分配正义）')
    """
    from tefcore.tasks.schema import Choices

    dim = get_dimension(dimension)
    return Choices(dim.zh if lang == "zh" else dim.name, SIDES,
                   tuple(describe_side(dimension, side, lang) for side in SIDES),
                   tuple(ANSWER_LETTERS[side] for side in SIDES))


def template_hash(lang: str, variant: str = "original") -> str:
    """The SHA-256 hex digest of the UTF-8 template (recorded in caches as provenance)."""
    return hashlib.sha256(template(lang, variant).encode("utf-8")).hexdigest()


def describe_side(dimension: str, side: str, lang: str) -> str:
    """Describe one side of a dimension by its two positions, in schema order.

    en: ``Position (Subcategory)`` joined by ``"; "``; zh: ``立场（子类）`` with full-width
    parentheses, joined by ``"；"``.

    Parameters
    ----------
    dimension : str
        English dimension name.
    side : {"change", "stability"}
        Which side to describe.
    lang : {"en", "zh"}
        Language of the description.

    Raises
    ------
    UnknownName
        On an unknown dimension, side or language (a KeyError and a ValueError).
    """
    dim = get_dimension(dimension)
    _check(lang, "original")  # an unknown side: Subcategory.position's error
    if lang == "zh":
        return "；".join(f"{sub.position(side).zh}（{sub.zh}）" for sub in dim.subcategories)
    return "; ".join(f"{sub.position(side).name} ({sub.name})" for sub in dim.subcategories)


def build_prompt(text: str, dimension: str, lang: str, variant: str = "original") -> str:
    """Fill the template of ``lang``/``variant`` for one text and one dimension.

    Parameters
    ----------
    text : str
        A whole post or one sentence; it is stripped of surrounding white space.
    dimension : str
        English dimension name (the zh prompt shows the Chinese one).
    lang : {"en", "zh"}
        Language of the template.
    variant : {"original", "verbose", "minimal"}, default "original"
        Template variant (protocol §4).

    Returns
    -------
    str
        The prompt, without trailing newline or space.

    Raises
    ------
    UnknownName
        On an unknown language, variant or dimension (a KeyError and a ValueError, listing the valid ones).
    ValueError
        On a blank text.
    TypeError
        If ``text`` is not a string.
    """
    from tefcore.tasks.schema import fill_slots

    _check(lang, variant)
    mind = choices(dimension, lang)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text is empty or white space only")
    change, stability = mind.descriptions
    return fill_slots(_TEMPLATES[(lang, variant)], {"dimension": mind.dimension, "change": change,
                                                    "stability": stability, "text": text.strip()})
