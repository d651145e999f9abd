"""Chapter 11 (the claims ledger): how the page names what the checks print. The verdicts are computed on the page."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefpaper.evidence import HOLDS, NOT_CHECKED
from tefpaper.tables import MODEL_LABELS

__all__ = ["READER_LABELS", "labelled", "reader_labels", "release_numbers"]

READER_LABELS: dict[str, str] = {**MODEL_LABELS, **LANG_LABELS, "tef": "TEF", "direct": "Direct"}
"""The registry's model names, the language codes and the lower-case rule names a check's value or note may
hold, and how the page names them (the library's other keys are named by :func:`tefpaper.ledger.readable`)."""

_COMMAND = re.compile(r"\btef (?:reproduce|download|extract|claims|book)\b[^;)]*")
_WORD = re.compile(r"(?<![\w.\-/])(" + "|".join(sorted(map(re.escape, READER_LABELS), key=len, reverse=True))
                   + r")(?![\w\-/]|\.\w)")


def reader_labels(text: object) -> str:
    """A check's value or note with reader labels for model names, language codes and rule names; the commands
    it quotes (``tef reproduce ...``, ``tef download``) are left as they are typed.

    Examples
    --------
    >>> reader_labels("smallest margin 0.93 (qwen3-14b, en, macro-F1); tef 94.02 %, MV 79.75 %")
    'smallest margin 0.93 (Qwen3-14B, English, macro-F1); TEF 94.02 %, MV 79.75 %'
    >>> reader_labels("needs Qwen2.5-7B on a GPU: tef reproduce qwen2.5-7b --langs en,zh --reading reference")
    'needs Qwen2.5-7B on a GPU: tef reproduce qwen2.5-7b --langs en,zh --reading reference'
    >>> reader_labels("649 zh / 381 en; needs the full release (tef download); tefcore.fusion")
    '649 Chinese / 381 English; needs the full release (tef download); tefcore.fusion'
    """
    text, out, at = str(text), [], 0
    for command in _COMMAND.finditer(text):
        out += [_WORD.sub(lambda m: READER_LABELS[m.group(1)], text[at:command.start()]), command.group(0)]
        at = command.end()
    return "".join(out) + _WORD.sub(lambda m: READER_LABELS[m.group(1)], text[at:])


def labelled(rows: pd.DataFrame) -> pd.DataFrame:
    """Ledger rows with their ``value`` and ``note`` in reader labels (:func:`reader_labels`); the verdicts unchanged.

    Examples
    --------
    >>> labelled(pd.DataFrame({"value": ["6 zh / 6 en"], "note": ["on the MIND sample"]}))["value"].tolist()
    ['6 Chinese / 6 English']
    """
    return rows.assign(value=rows["value"].map(reader_labels), note=rows["note"].map(reader_labels))


def release_numbers(release: pd.DataFrame, rows: pd.DataFrame, ledger: pd.DataFrame) -> dict[str, Any]:
    """What the page says of the ledger's counts of the release's files (``release``, rows the paper does not
    print) beside the paper's claims: how many, how many hold and are not checked, in words what the data at
    hand can check of them; the rows of claims (``rows``: the paper's and the release's) and of the ledger.

    Examples
    --------
    >>> release = pd.DataFrame({"verdict": ["not checked", "not checked"]})
    >>> numbers = release_numbers(release, pd.DataFrame(index=range(5)), pd.DataFrame(index=range(7)))
    >>> numbers["release_state"], numbers["n_rows"], numbers["n_ledger"]
    ('none of them can be checked, each needs the full release', 5, 7)
    >>> release_numbers(pd.DataFrame({"verdict": ["holds", "not checked"]}), release, release)["release_state"]
    '1 of the 1 checked hold'
    """
    holds, unchecked = int((release["verdict"] == HOLDS).sum()), int((release["verdict"] == NOT_CHECKED).sum())
    checked = len(release) - unchecked
    state = ("none of them can be checked, each needs the full release" if checked == 0
             else f"{holds} of the {checked} checked hold")
    return {"n_release": len(release), "n_release_holds": holds, "n_release_unchecked": unchecked,
            "release_state": state, "n_rows": len(rows), "n_ledger": len(ledger)}
