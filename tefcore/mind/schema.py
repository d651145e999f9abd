"""The MIND label schema (protocol §1): six dimensions, two subcategories each, two positions each.

Every subcategory contrasts a change-oriented position with a stability-oriented one; the target of a
(post, dimension) pair is the side, so K = 2. :data:`DIMENSIONS` is in schema order, the paper's tables
use :data:`TABLE_ORDER` and :data:`ABBREVIATIONS`. English names are the label strings of the MIND
files; Chinese names are used in the Chinese prompts.

Examples
--------
>>> from tefcore.mind.schema import get_dimension, side_of
>>> get_dimension("Economy").zh
'经济'
>>> side_of("Economy", "Economic Models", "Interventionist")
'stability'
"""

from __future__ import annotations

from dataclasses import dataclass

from tefcore.errors import UnknownName
from tefcore.fusion import CLASSES
from tefcore.tasks.segment import LANGS, check_lang

__all__ = ["ABBREVIATIONS", "DIMENSIONS", "LANGS", "SIDES", "TABLE_ORDER", "Dimension",
           "Position", "Subcategory", "check_lang", "get_dimension", "side_of"]

SIDES: tuple[str, str] = CLASSES
"""The two sides, change-oriented first: the classes of :data:`tefcore.fusion.CLASSES`."""
_CHANGE = SIDES[0]



@dataclass(frozen=True)
class Position:
    """One position (value orientation) of a subcategory: ``name`` as in a MIND label's ``orientation``,
    ``zh`` in Chinese."""

    name: str
    zh: str


@dataclass(frozen=True)
class Subcategory:
    """A subcategory of a dimension (English ``name``, Chinese ``zh``) with its ``change`` and ``stability``
    positions."""

    name: str
    zh: str
    change: Position
    stability: Position

    def position(self, side: str) -> Position:
        """Return the position on ``side`` ("change" or "stability").

        Raises
        ------
        UnknownName
            If ``side`` is not one of :data:`SIDES` (a KeyError and a ValueError).
        """
        if side not in SIDES:
            raise UnknownName(f"unknown side {side!r}; expected one of {SIDES}")
        return self.change if side == _CHANGE else self.stability


@dataclass(frozen=True)
class Dimension:
    """A value dimension (English ``name``, Chinese ``zh``, ``abbr`` of the paper's tables, e.g. ``"Cul."``)
    with its two ``subcategories`` in schema order."""

    name: str
    zh: str
    abbr: str
    subcategories: tuple[Subcategory, Subcategory]

    def subcategory(self, name: str) -> Subcategory:
        """Return the subcategory with English name ``name``.

        Raises
        ------
        UnknownName
            If the dimension has no such subcategory (a KeyError and a ValueError); the message lists the
            valid ones.
        """
        for sub in self.subcategories:
            if sub.name == name:
                return sub
        valid = [sub.name for sub in self.subcategories]
        raise UnknownName(f"unknown subcategory {name!r} of dimension {self.name!r}; expected one of {valid}")


def _sub(name: str, zh: str, change: tuple[str, str], stability: tuple[str, str]) -> Subcategory:
    """Build a :class:`Subcategory` from ``(English, Chinese)`` position pairs."""
    return Subcategory(name, zh, Position(*change), Position(*stability))


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("Politics", "政治", "Pol.", (
        _sub("Policy Orientations", "政策导向", ("Revolutionism", "革命主义"), ("Reformism", "改良主义")),
        _sub("Diplomatic Strategies", "外交战略", ("Globalism", "全球主义"), ("Isolationism", "孤立主义")),
    )),
    Dimension("Economy", "经济", "Eco.", (
        _sub("Economic Models", "经济模式", ("Free-Market", "市场自由"), ("Interventionist", "国家干预")),
        _sub("Distribution Justice", "分配正义",
             ("Equality of Opportunity", "机会平等"), ("Equality of Outcome", "结果平等")),
    )),
    Dimension("Culture", "文化", "Cul.", (
        _sub("Ethical Orientations", "道德取向",
             ("Ethical Liberalism", "伦理自由"), ("Ethical Conservatism", "伦理保守")),
        _sub("Value Orientations", "社会价值", ("Individualism", "个人主义"), ("Collectivism", "集体主义")),
    )),
    Dimension("Society", "社会", "Soc.", (
        _sub("Fairness Principles", "公正理念",
             ("Substantive Justice", "结果公正"), ("Procedural Justice", "程序正义")),
        _sub("Judicial Philosophies", "法律取向",
             ("Progressive Jurisprudence", "进步法理"), ("Conservative Jurisprudence", "保守法理")),
    )),
    Dimension("Environment", "生态文明", "Env.", (
        _sub("Sustainability Strategies", "发展取向",
             ("Conservation Priority", "保护优先"), ("Development Priority", "发展优先")),
        _sub("Climate Stances", "气候立场", ("Climate Actionism", "气候行动"), ("Climate Skepticism", "气候怀疑")),
    )),
    Dimension("Technology", "科技", "Tech.", (
        _sub("Innovation Models", "创新模式", ("Inclusive Sharing", "普惠共享"), ("IP Protection", "知识产权保护")),
        _sub("Governance Models", "风险治理",
             ("Technological Libertarianism", "技术自由"), ("Technological Regulation", "技术监管")),
    )),
)
"""The six dimensions in schema order (protocol §1)."""

_BY_NAME: dict[str, Dimension] = {dim.name: dim for dim in DIMENSIONS}

TABLE_ORDER: tuple[str, ...] = ("Culture", "Economy", "Society", "Politics", "Technology", "Environment")
"""Column order of every table of the paper."""

ABBREVIATIONS: dict[str, str] = {name: _BY_NAME[name].abbr for name in TABLE_ORDER}
"""English dimension name -> the paper's abbreviation, in :data:`TABLE_ORDER`."""


def get_dimension(name: str) -> Dimension:
    """Return the dimension with English name ``name``.

    Parameters
    ----------
    name : str
        English name as in the MIND labels, e.g. ``"Economy"``.

    Returns
    -------
    Dimension

    Raises
    ------
    UnknownName
        If ``name`` is not a dimension (a KeyError and a ValueError); the message lists the valid names.
    """
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise UnknownName(f"unknown dimension {name!r}; expected one of {list(_BY_NAME)}") from None


def side_of(dimension: str, subcategory: str, orientation: str) -> str:
    """Return the side ("change" or "stability") of an orientation, checking the whole label path.

    Parameters
    ----------
    dimension, subcategory, orientation : str
        English names as in a MIND label.

    Returns
    -------
    str
        ``"change"`` or ``"stability"``.

    Raises
    ------
    UnknownName
        If the dimension is unknown, the subcategory does not belong to it, or the orientation is
        not one of that subcategory's two positions (a KeyError and a ValueError).
    """
    sub = get_dimension(dimension).subcategory(subcategory)
    for side in SIDES:
        if sub.position(side).name == orientation:
            return side
    valid = [sub.change.name, sub.stability.name]
    raise UnknownName(
        f"unknown orientation {orientation!r} of subcategory {subcategory!r} ({dimension}); "
        f"expected one of {valid}"
    )
