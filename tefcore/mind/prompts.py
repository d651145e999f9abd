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

import functools
import hashlib
from typing import Any

from tefcore.errors import UnknownName
from tefcore.mind.schema import SIDES, check_lang, get_dimension
from tefcore.tasks.schema import GENERAL_TEMPLATES, Choices, Task, fill_slots

__all__ = ["ANSWER_LETTERS", "VARIANTS", "MindTask", "build_prompt", "choices", "describe_side",
           "mind_task", "template", "template_hash"]

VARIANTS: tuple[str, ...] = ("original", "verbose", "minimal")
"""Prompt variants; ``original`` is the one of the paper's main experiments."""

ANSWER_LETTERS: dict[str, str] = {"change": "C", "stability": "S"}
"""Side -> the answer letter a prompt asks for."""

_MIND_SIDES = {"en": "C (change-oriented): {change}\nS (stability-oriented): {stability}",
               "zh": "C（变革取向）：{change}\nS（稳定取向）：{stability}"}
_MIND_LETTERS = {"en": "C or S", "zh": "C 或 S"}

_MINIMAL = {
    "en": "Dimension: {dimension}. C: {change}. S: {stability}.\nText: {text}\nAnswer C or S:",
    "zh": "维度：{dimension}。C：{change}。S：{stability}。\n文本：{text}\n回答 C 或 S：",
}
_TEMPLATES: dict[tuple[str, str], str] = {
    (lang, variant): _MINIMAL[lang] if variant == "minimal" else
    GENERAL_TEMPLATES[(lang, variant)].replace("{sides}", _MIND_SIDES[lang]).replace("{letters}", _MIND_LETTERS[lang])
    for lang in ("en", "zh") for variant in ("original", "verbose", "minimal")
}


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


@functools.cache
def choices(dimension: str, lang: str) -> Choices:
    """MIND's answer space of one dimension: change and stability, letters C and S, described as the prompts
    describe them (:func:`describe_side`), the dimension named in ``lang``.

    Examples
    --------
    >>> c = choices("Economy", "zh")
    >>> c.dimension, c.sides, c.letters, c.descriptions[0]
    ('经济', ('change', 'stability'), ('C', 'S'), '市场自由（经济模式）；机会平等（分配正义）')
    """
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
    _check(lang, variant)
    mind = choices(dimension, lang)
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text is empty or white space only")
    change, stability = mind.descriptions
    return fill_slots(_TEMPLATES[(lang, variant)], {"dimension": mind.dimension, "change": change,
                                                    "stability": stability, "text": text.strip()})


class MindTask(Task):
    """MIND as a task: its six dimensions with change and stability (:func:`choices`) and the protocol's
    prompt ``variant`` (:func:`build_prompt`); a cache records the template's hash, as it always has.

    Examples
    --------
    >>> task = mind_task("minimal")
    >>> task.prompt_name, task.choices("Economy", "en").letters
    ('minimal', ('C', 'S'))
    >>> task.prompt(" Taxes should fall. ", "Economy", "en").splitlines()[1]
    'Text: Taxes should fall.'
    """

    name = "mind"

    def __init__(self, variant: str = "original") -> None:
        _check("en", variant)
        self.variant = variant

    def __repr__(self) -> str:
        return f"mind_task({self.variant!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MindTask) and other.variant == self.variant

    def __hash__(self) -> int:
        return hash(("mind", self.variant))

    @property
    def prompt_name(self) -> str:
        return self.variant

    def choices(self, dimension: str, lang: str) -> Choices:
        return choices(dimension, lang)

    def prompt(self, text: str, dimension: str, lang: str) -> str:
        return build_prompt(text, dimension, lang, self.variant)

    def provenance(self, lang: str) -> dict[str, Any]:
        return {"template_sha256": template_hash(lang, self.variant)}


def mind_task(variant: str = "original") -> MindTask:
    """MIND's task with the prompt ``variant`` (protocol §4: original, verbose, minimal).

    Raises
    ------
    UnknownName
        On an unknown variant (a KeyError and a ValueError).
    """
    return MindTask(variant)
