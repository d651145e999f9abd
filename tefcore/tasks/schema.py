"""What every corpus shares: a dimension's K sides (:class:`Choices`), the prompt's slots, the evaluation
pair, and :class:`Task`, what the loop, the judges and the cache ask of a corpus (MIND's, or one's own).

The paper writes its rule for K categories :math:`\\mathcal Y = \\{c_1, \\ldots, c_K\\}`; MIND has
K = 2 per dimension (change, stability). A task of one's own has K >= 2 sides per dimension, each
with a description (what an LLM prompt shows beside the side's letter, and what the e5 zero-shot
judge compares a text with) and one answer letter: ``A, B, C, ...`` in the order the task lists
them (MIND's are ``C`` and ``S``). :class:`Choices` carries the three, in side order, to the judges.

Examples
--------
>>> housing = Choices("Housing", ("supply", "preservation"),
...                   ("Build more homes; relax zoning.", "Protect neighbourhoods from densification."))
>>> housing.letters, housing.K
(('A', 'B'), 2)
>>> print(housing.side_lines("en"))
A (supply): Build more homes; relax zoning.
B (preservation): Protect neighbourhoods from densification.
>>> housing.letter_list("en"), Choices("D", ("x", "y", "z"), ("1", "2", "3")).letter_list("zh")
('A or B', 'A、B 或 C')
"""

from __future__ import annotations

import re
import string
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tefcore.errors import UnknownName
from tefcore.tasks.segment import check_lang

__all__ = ["GENERAL_TEMPLATES", "PLACEHOLDERS", "Choices", "EvaluationPair", "Task", "fill_prompt",
           "fill_slots", "placeholders", "sides_by_dimension", "task_template"]

_MAX_SIDES = 26
"""At most one answer letter per side, ``A`` to ``Z``."""

PLACEHOLDERS: tuple[str, ...] = ("text", "dimension", "sides", "letters")
"""The slots of a task's prompt: ``{text}`` is required, the others are filled from the schema."""

_ANY_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Choices:
    """The K ``sides`` of one ``dimension`` (as a prompt names it), in order, with one of ``descriptions``
    and one answer letter of ``letters`` (default ``A, B, C, ...``) each. A gold label is one of the
    sides, and so is every prediction."""

    dimension: str
    sides: tuple[str, ...]
    descriptions: tuple[str, ...]
    letters: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.letters:
            object.__setattr__(self, "letters", tuple(string.ascii_uppercase[:len(self.sides)]))
        k = len(self.sides)
        if not 2 <= k <= _MAX_SIDES:
            raise ValueError(f"dimension {self.dimension!r} has {k} side{'s' * (k != 1)} "
                             f"({', '.join(self.sides) or 'none'}); a dimension needs 2 to {_MAX_SIDES} named sides")
        if len(self.descriptions) != k or len(self.letters) != k:
            raise ValueError(f"dimension {self.dimension!r}: {k} sides need as many descriptions and letters; "
                             f"got {len(self.descriptions)} and {len(self.letters)}")
        if len(set(self.sides)) != k or len(set(self.letters)) != k:
            raise ValueError(f"dimension {self.dimension!r}: side names and letters must be distinct")

    @property
    def K(self) -> int:
        """The number of sides."""
        return len(self.sides)

    def side_lines(self, lang: str) -> str:
        """``{sides}``: one line per side, ``A (name): description`` (zh ``A（name）：description``)."""
        form = "{}（{}）：{}" if lang == "zh" else "{} ({}): {}"
        return "\n".join(form.format(*row) for row in zip(self.letters, self.sides, self.descriptions))

    def letter_list(self, lang: str) -> str:
        """``{letters}``: ``A or B``, ``A, B or C`` (zh ``A 或 B``, ``A、B 或 C``)."""
        comma, last = ("、", " 或 ") if lang == "zh" else (", ", " or ")
        return comma.join(self.letters[:-1]) + last + self.letters[-1]


def placeholders(template: str) -> list[str]:
    """The ``{name}`` slots of a template, in order (known or not).

    Examples
    --------
    >>> placeholders("Dimension: {dimension}. {sides} Text: {text} {json}")
    ['dimension', 'sides', 'text', 'json']
    """
    return _ANY_SLOT.findall(template)


def fill_slots(template: str, values: Mapping[str, str]) -> str:
    """Fill the ``{name}`` slots named in ``values`` in one pass; other braces stay as written.

    Examples
    --------
    >>> fill_slots("{a} and {b} but not {c}", {"a": "{b}", "b": "x"})
    '{b} and x but not {c}'
    """
    slot = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return slot.sub(lambda match: values[match.group(1)], template)


def fill_prompt(template: str, text: str, choices: Choices, lang: str) -> str:
    """Fill a task's template for one text with :func:`fill_slots` (``{text}`` stripped).

    Parameters
    ----------
    template : str
        A prompt with a ``{text}`` slot and any of ``{dimension}``, ``{sides}``, ``{letters}``.
    text : str
        A whole document or one sentence.
    choices : Choices
        The dimension asked about.
    lang : {"en", "zh"}
        The text's language (the form of ``{sides}`` and ``{letters}``).

    Returns
    -------
    str

    Examples
    --------
    >>> c = Choices("Tone", ("calm", "angry"), ("measured words", "outrage"))
    >>> fill_prompt("{dimension}? {letters}\\n{sides}\\nText: {text}", " Fine. {sides} ", c, "en")
    'Tone? A or B\\nA (calm): measured words\\nB (angry): outrage\\nText: Fine. {sides}'
    """
    return fill_slots(template, {"text": text.strip(), "dimension": choices.dimension,
                                 "sides": choices.side_lines(lang), "letters": choices.letter_list(lang)})


@dataclass(frozen=True)
class EvaluationPair:
    """One evaluation unit (protocol §2): a text and a dimension with that dimension's sides (``choices``);
    ``side`` is the gold side, or None where there is no gold."""

    post_id: str
    lang: str
    dimension: str
    side: str | None
    text: str
    choices: Choices


def sides_by_dimension(labels: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """The sides that ``(dimension, side)`` labels give each dimension, in order of first appearance.

    One side is the pair's target; labels on two sides leave the pair without one (protocol §2). MIND's
    posts and a task's gold follow this one rule.

    Examples
    --------
    >>> found = sides_by_dimension([("Economy", "change"), ("Culture", "change"), ("Economy", "stability")])
    >>> {dimension: sorted(sides) for dimension, sides in found.items()}
    {'Economy': ['change', 'stability'], 'Culture': ['change']}
    """
    sides: dict[str, set[str]] = {}
    for dimension, side in labels:
        sides.setdefault(dimension, set()).add(side)
    return sides


class Task(ABC):
    """What the extraction loop, the judges and the cache ask of a corpus: its name, the prompt's name (the
    cache's ``<prompt>`` folder), each dimension's sides, the prompt of a text, and what a cache records
    of it. MIND's (:func:`tefcore.mind.mind_task`) and a task file's (:func:`tefcore.tasks.load_task`) are two."""

    name: str

    @property
    @abstractmethod
    def prompt_name(self) -> str:
        """The prompt's name: MIND's variant, or a task's prompt file stem."""

    @abstractmethod
    def choices(self, dimension: str, lang: str) -> Choices:
        """The sides of ``dimension`` as a prompt in ``lang`` names them."""

    @abstractmethod
    def prompt(self, text: str, dimension: str, lang: str) -> str:
        """The prompt of one text (a whole document or one sentence) on one dimension."""

    @abstractmethod
    def provenance(self, lang: str) -> dict[str, Any]:
        """What a cache of this task records beside the judge (``template_sha256`` at least)."""


# The paper's original and verbose prompts, written with a task's slots; MIND's fill {sides} and {letters}
# with its two side lines and "C or S" (tefcore.mind.prompts), a task's from its schema (task_template).
_QUESTION = {
    "en": "Dimension: {dimension}\n{sides}\n\nText: {text}\n\n",
    "zh": "维度：{dimension}\n{sides}\n\n文本：{text}\n\n",
}
GENERAL_TEMPLATES: dict[tuple[str, str], str] = {
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
"""``(lang, variant) -> template`` of the prompts with a task's slots (``original`` and ``verbose``)."""


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
    if (check_lang(lang), variant) in GENERAL_TEMPLATES:
        return GENERAL_TEMPLATES[(lang, variant)]
    if variant == "minimal":
        raise ValueError("the minimal prompt lists exactly two sides; a task's prompt is original or verbose")
    raise UnknownName(f"unknown prompt variant {variant!r}; expected one of ('original', 'verbose', 'minimal')")
