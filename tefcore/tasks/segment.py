"""Sentence segmentation of posts (protocol §3) and a better segmenter as a named option.

Two rules, chosen by name:

``"reference"`` (default)
    The rule behind the paper's numbers. zh: cut after each of ``。`` ``！`` ``？``; en: cut after each
    of the two-character strings ``". "``, ``"! "``, ``"? "`` (the punctuation stays with its
    sentence). Every piece, the remainder after the last delimiter included, is stripped of
    surrounding white space and kept only if it has at least ``min_length`` code points; shorter
    pieces are dropped. If nothing is kept, the whole stripped post is the only sentence. No quote,
    newline or abbreviation handling.

``"improved"``
    Loses no text. It cuts at sentence-final punctuation and at line breaks, keeps closing quotes
    and brackets with their sentence, does not cut English abbreviations (``U.S.``, ``Mr.``,
    ``e.g.``, ...), initials (``J. K. Rowling``), ``No. 5``-style numbers or an ellipsis followed by
    a lower-case word, and merges every piece shorter than ``min_length`` code points into a
    neighbour (the following piece when there is one, else the preceding one). Each sentence is
    a verbatim span of the text, stripped of surrounding white space; the spans cover every
    non-space character of the text, in order.

Examples
--------
>>> text = "Why? Because the market decides everything. The U.S. economy grew."
>>> split_sentences(text, "en")
['Because the market decides everything.', 'economy grew.']
>>> split_sentences(text, "en", rule="improved")
['Why? Because the market decides everything.', 'The U.S. economy grew.']
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterator

from tefcore.errors import UnknownName

__all__ = ["LANGS", "MIN_LENGTH", "SEGMENTATION_RULES", "check_lang",
           "split_sentences"]

LANGS: tuple[str, str] = ("en", "zh")
"""The languages a text may be in (those of MIND), each with its own sentence rules."""

SEGMENTATION_RULES: tuple[str, ...] = ("reference", "improved")


def check_lang(lang: object) -> str:
    """``lang`` when it is one of :data:`LANGS`; else :class:`~tefcore.errors.UnknownName` (a KeyError and a
    ValueError) naming the languages there are.

    Examples
    --------
    >>> check_lang("zh")
    'zh'
    """
    if lang not in LANGS:
        raise UnknownName(f"unsupported language {lang!r}; expected one of {LANGS}")
    return str(lang)


MIN_LENGTH = 10
"""Default minimum sentence length in code points (protocol §3)."""

# --- reference rule -------------------------------------------------------------------------
# en: the space after the punctuation is consumed by the cut; stripping makes that immaterial.
_REFERENCE_CUTS: dict[str, re.Pattern[str]] = {
    "zh": re.compile(r"(?<=[。！？])"),
    "en": re.compile(r"(?<=[.!?]) "),
}

# --- improved rule --------------------------------------------------------------------------
_EN_ABBREVIATIONS: frozenset[str] = frozenset({
    "U.S.", "U.K.", "U.N.", "E.U.", "Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "St.", "Jr.", "Sr.", "Inc.",
    "e.g.", "E.g.", "i.e.", "I.e.", "etc.", "vs.", "a.m.", "p.m.", "A.M.", "P.M.",
})
"""English tokens after which the improved rule never cuts (matched case-sensitively)."""

_EN_NUMBER_ABBREVIATIONS: frozenset[str] = frozenset({"No.", "no.", "Nos.", "Vol.", "pp.", "p."})
"""English tokens after which the improved rule does not cut when a digit follows (``No. 5``)."""

_LINE = re.compile(r"[^\n\r\u2028\u2029\x85]+")
_CLOSERS = "\"'”’)）]】」』》〉»"
_ZH_END = re.compile(f"[。！？]+[{re.escape(_CLOSERS)}]*")
_EN_END = re.compile(f"[.!?…]+[{re.escape(_CLOSERS)}]*(?=\\s|\\Z)")
_OPENERS = "\"'“‘([{（【「『《"
_VISIBLE = re.compile(r"\S")
_LOOKBEHIND = 12  # longer than any abbreviation: keeps the abbreviation check O(1) per candidate


def split_sentences(
    text: str, lang: str, min_length: int = MIN_LENGTH, rule: str = "reference"
) -> list[str]:
    """Split a post into sentences.

    Parameters
    ----------
    text : str
        The post.
    lang : {"en", "zh"}
        Its language; any other value is an error.
    min_length : int, default 10
        Minimum sentence length in code points (punctuation included).
    rule : {"reference", "improved"}, default "reference"
        See the module notes; ``"reference"`` reproduces the paper.

    Returns
    -------
    list of str
        At least one sentence; when no piece qualifies, ``[text.strip()]`` (which is ``[""]`` for a
        blank text).

    Raises
    ------
    UnknownName
        On an unknown language or rule (a KeyError and a ValueError).
    ValueError
        On a negative ``min_length``.
    TypeError
        If ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    check_lang(lang)
    if rule not in SEGMENTATION_RULES:
        raise UnknownName(f"unknown segmentation rule {rule!r}; expected one of {SEGMENTATION_RULES}")
    if isinstance(min_length, bool) or not hasattr(min_length, "__index__") or operator.index(min_length) < 0:
        raise ValueError(f"min_length must be a non-negative int, got {min_length!r}")
    split = _reference if rule == "reference" else _improved
    return split(text, lang, operator.index(min_length)) or [text.strip()]


def _reference(text: str, lang: str, min_length: int) -> list[str]:
    """Protocol §3: cut, strip, drop pieces shorter than ``min_length``."""
    pieces = (piece.strip() for piece in _REFERENCE_CUTS[lang].split(text))
    return [piece for piece in pieces if len(piece) >= min_length]


def _improved(text: str, lang: str, min_length: int) -> list[str]:
    """Apply the improved rule: cut, strip to spans, merge short spans; every character is kept."""
    spans = list(_stripped_spans(text, _cuts(text, lang)))
    return [text[start:end] for start, end in _merge_short(spans, min_length)]


def _cuts(text: str, lang: str) -> Iterator[int]:
    """Yield the cut positions (sentence ends) of the improved rule, line ends included, in order."""
    for line in _LINE.finditer(text):
        if lang == "zh":
            yield from (m.end() for m in _ZH_END.finditer(text, line.start(), line.end()))
        else:
            yield from (m.end() for m in _EN_END.finditer(text, line.start(), line.end())
                        if _is_en_sentence_end(text, m))
        yield line.end()


def _is_en_sentence_end(text: str, match: re.Match[str]) -> bool:
    """Decide whether an English terminator run followed by white space ends a sentence."""
    run = match.group().rstrip(_CLOSERS)
    following = _next_visible(text, match.end())
    if set(run) <= {".", "…"} and (len(run) > 1 or run == "…"):  # an ellipsis
        return not following.islower()
    if run != ".":
        return True
    token = _token_before(text, match.start()) + "."
    if token in _EN_ABBREVIATIONS:
        return False
    if token in _EN_NUMBER_ABBREVIATIONS and following.isdigit():
        return False
    return not (len(token) == 2 and token[0].isupper())  # an initial: "J. K. Rowling"


def _token_before(text: str, end: int) -> str:
    """Return the word that ends at ``end`` (bounded look-behind), without opening punctuation."""
    window = text[max(0, end - _LOOKBEHIND):end]
    words = window.split()
    if not words or window[-1].isspace():
        return ""
    return words[-1].lstrip(_OPENERS)


def _next_visible(text: str, start: int) -> str:
    """Return the first non-space character shortly after ``start`` ("" if none is near)."""
    match = _VISIBLE.search(text, start, start + _LOOKBEHIND * 8)
    return match.group() if match else ""


def _stripped_spans(text: str, cuts: Iterator[int]) -> Iterator[tuple[int, int]]:
    """Turn cut positions into non-empty ``(start, end)`` spans without surrounding white space."""
    start = 0
    for cut in cuts:
        if cut <= start:
            continue
        piece = text[start:cut]
        stripped = piece.strip()
        if stripped:
            left = start + len(piece) - len(piece.lstrip())
            yield left, left + len(stripped)
        start = cut


def _merge_short(spans: list[tuple[int, int]], min_length: int) -> list[tuple[int, int]]:
    """Merge every span shorter than ``min_length`` into the next one (the last into the previous)."""
    merged: list[tuple[int, int]] = []
    pending: int | None = None  # where the short spans not yet merged begin
    for start, end in spans:
        pending = start if pending is None else pending
        if end - pending >= min_length:
            merged.append((pending, end))
            pending = None
    if pending is not None:
        merged[-1:] = [(merged[-1][0] if merged else pending, spans[-1][1])]
    return merged
