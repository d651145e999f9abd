r"""The claims ledger: every checkable claim of the paper, one row each, as data.

:data:`LEDGER` is a list of small :class:`Claim` objects. Each holds the paper's words and number,
where the paper says it, the chapter of the book that examines it, how it is checked (:data:`HOW`) and
a short check function that returns a :class:`Verdict`: our value, whether the claim holds (``None``
when it is not checked here) and a note saying how, or why not.

How a claim is checked:

* ``"reproduced on our runs"``: computed by this library on the MIND data at hand, on simulated
  detectors or on the fusion rules themselves;
* ``"recomputed from the paper's own tables"``: arithmetic on the paper's Tables 1-4
  (:mod:`tefcore.paper.tables`);
* ``"GPU command"``: needs the paper's models; the note gives the command;
* ``"cannot be checked from the release"``: the note says why.

Claims about the full MIND release are checked when the data directory holds it
(``MIND_DATA_DIR``, see :func:`tefcore.mind.load.resolve_data_dir`); on the embedded sample the
ledger shows the sample's value and says that the full release is needed.

Each claim also records the verdict the ledger expects (``expected``): a few statements of the paper
do not hold on its own tables, and the ledger says so. A checked claim *fails* when its check gives
another verdict than the one recorded, or raises; :func:`assert_ledger` then raises, which fails the
book's ledger page and makes ``tef claims`` exit non-zero.

Examples
--------
>>> from tefcore.paper.ledger import LEDGER, evaluate_ledger
>>> len(LEDGER) >= 40
True
>>> row = evaluate_ledger([c for c in LEDGER if c.id == "gain-accuracy"]).iloc[0]
>>> row["value"], row["verdict"]
('4.465', 'holds')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from tefcore.paper.datacard import DATA_CLAIMS
from tefcore.paper.evidence import (
    FAILS,
    FORMATS,
    HOLDS,
    HOW_SHORT,
    NOT_CHECKED,
    NOT_HOLD,
    Claim,
    Evidence,
    LedgerError,
    Verdict,
)
from tefcore.paper.method import METHOD_CLAIMS
from tefcore.paper.results import RESULT_CLAIMS

LEDGER: list[Claim] = [*METHOD_CLAIMS, *DATA_CLAIMS, *RESULT_CLAIMS]

# --------------------------------------------------------------------------------------------------
# evaluation and display
# --------------------------------------------------------------------------------------------------
def _verdict_label(holds: bool | None, expected: bool) -> str:
    if holds is None:
        return NOT_CHECKED
    if holds != expected:
        return FAILS
    return HOLDS if holds else NOT_HOLD


def _run(claim: Claim, ev: Evidence) -> Verdict:
    try:
        return claim.check(ev)
    except Exception as exc:  # a check that raises fails, with the reason in the ledger
        return Verdict("error", not claim.expected, f"{type(exc).__name__}: {exc}")


def evaluate_ledger(
    claims: Sequence[Claim] | None = None,
    *,
    tables: Mapping[str, pd.DataFrame] | None = None,
    paper_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
) -> pd.DataFrame:
    """Run every check of the ledger.

    Parameters
    ----------
    claims : sequence of Claim, optional
        Default :data:`LEDGER`.
    tables, paper_dir, data_dir
        See :class:`Evidence`.

    Returns
    -------
    pandas.DataFrame
        One row per claim, in ledger order: ``id, section, where, words, number, chapter, how, value,
        holds, expected, verdict, note``. ``verdict`` is ``"holds"``, ``"does not hold"`` (recorded
        so), ``"not checked"`` or ``"FAILS"``. When a check read the MIND data,
        ``frame.attrs["dataset"]`` says which: ``"MIND sample"``, ``"full MIND release"`` or
        ``"custom data"``.
    """
    ev = Evidence(tables, paper_dir=paper_dir, data_dir=data_dir)
    rows = []
    for claim in LEDGER if claims is None else claims:
        v = _run(claim, ev)
        rows.append({
            "id": claim.id, "section": claim.section, "where": claim.where, "words": claim.words,
            "number": claim.number, "chapter": claim.chapter, "how": claim.how, "value": v.value,
            "holds": v.holds, "expected": claim.expected,
            "verdict": _verdict_label(v.holds, claim.expected), "note": v.note,
        })
    frame = pd.DataFrame(rows)
    if "posts" in ev.__dict__:  # the data were read: say which
        frame.attrs["dataset"] = ev.dataset
    return frame


def failures(ledger: pd.DataFrame) -> pd.DataFrame:
    """The rows of an evaluated ledger whose check does not give the recorded verdict."""
    return ledger[ledger["verdict"] == FAILS]


def assert_ledger(ledger: pd.DataFrame) -> None:
    """Raise :class:`LedgerError` naming every failing claim (nothing when all give their verdict)."""
    bad = failures(ledger)
    if len(bad):
        listed = "; ".join(f"{r.id}: ours {r.value} ({r.note})" for r in bad.itertuples())
        raise LedgerError(f"{len(bad)} claim(s) of the ledger fail: {listed}")


def summary_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """Number of claims per verdict, plus ``"claims"`` (all rows)."""
    counts = ledger["verdict"].value_counts()
    return {"claims": len(ledger)} | {v: int(counts.get(v, 0)) for v in (HOLDS, NOT_HOLD, NOT_CHECKED, FAILS)}


_TEXT_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("id", "claim", 22), ("number", "paper", 15), ("value", "ours", 33), ("how", "how", 6),
    ("verdict", "verdict", 13),
)


def _cell(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _text(ledger: pd.DataFrame) -> str:
    header = " ".join(f"{title:<{w}}" for _, title, w in _TEXT_COLUMNS).rstrip()
    lines = [header]
    for section, rows in ledger.groupby("section", sort=False):
        lines.append(f"-- {section}")
        for row in rows.to_dict("records"):
            row["how"] = HOW_SHORT[row["how"]]
            lines.append(" ".join(f"{_cell(row[k], w):<{w}}" for k, _, w in _TEXT_COLUMNS).rstrip())
    counts = summary_counts(ledger)
    lines.append(f"{counts['claims']} claims: {counts[HOLDS]} hold, {counts[NOT_HOLD]} do not hold (as "
                 f"recorded), {counts[NOT_CHECKED]} not checked here, {counts[FAILS]} fail")
    return "\n".join(lines)


def format_ledger(ledger: pd.DataFrame, fmt: str = "text") -> str:
    """The evaluated ledger as text (compact, under 100 columns), csv, markdown or json.

    Parameters
    ----------
    ledger : pandas.DataFrame
        From :func:`evaluate_ledger`.
    fmt : {"text", "csv", "markdown", "json"}
        ``text`` shows id, the paper's number, ours, how and the verdict, grouped by section; the
        others hold every column.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "text":
        return _text(ledger)
    if fmt == "csv":
        return ledger.to_csv(index=False)
    if fmt == "json":
        return json.dumps(json.loads(ledger.to_json(orient="records")), ensure_ascii=False, indent=1)
    return ledger.astype({"holds": str, "expected": str}).to_markdown(index=False)


