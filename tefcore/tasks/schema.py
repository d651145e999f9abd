"""The answer space of one dimension of a task: K named sides, a description and an answer letter each.

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
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["MAX_SIDES", "PLACEHOLDERS", "Choices", "fill_prompt", "fill_slots", "placeholders"]

MAX_SIDES = 26
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
        if not 2 <= k <= MAX_SIDES:
            raise ValueError(f"dimension {self.dimension!r} has {k} side{'s' * (k != 1)} "
                             f"({', '.join(self.sides) or 'none'}); a dimension needs 2 to {MAX_SIDES} named sides")
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
