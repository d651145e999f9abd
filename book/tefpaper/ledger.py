r"""The claims ledger: every checkable claim of the paper, one row each, with the kind of evidence its verdict
rests on (:mod:`tefpaper.evidence`).

The claims are data (``claims.yaml``, package data of :mod:`tefpaper`, one
:class:`~tefpaper.evidence.Claim` each); their checks (:mod:`tefpaper.checks`,
:mod:`tefpaper.results`) return our value, whether the claim holds and how it was computed. A ``gpu``
or ``cannot`` row without a cache at hand gives the ``tef reproduce`` line that makes one.

A checked claim *fails* when its check gives another verdict than the one recorded, or raises (a row
checked on a run of ours has nothing recorded: it holds or it does not);
:func:`assert_ledger` then raises, which fails the book's ledger page and makes ``tef claims`` exit 1.
Claims about the MIND data are checked on the data at hand; a data directory that cannot answer (a
language's file missing) leaves them unchecked, saying why. The book's pages show the same rows: an
anchor per row (:func:`claim_anchor`), links from a chapter's prose (:func:`claim_link`), the ledger page's
table (:func:`ledger_html`) and the rows a chapter examines (:func:`chapter_claims`).

Examples
--------
>>> from tefpaper.ledger import LEDGER, evaluate_ledger, summary_counts
>>> row = evaluate_ledger([c for c in LEDGER if c.id == "gain-accuracy"]).iloc[0]
>>> row["value"], row["verdict"], row["kind"]
('4.465', 'holds', "recomputed from the paper's tables")
"""

from __future__ import annotations

import html
import json
import re
import shlex
import textwrap
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path

import pandas as pd
import yaml

from tefcore.fusion import RULE_LABELS
from tefcore.mind.release import FULL_RELEASE_DIR
from tefpaper import checks, results  # noqa: F401 (they register the checks)
from tefpaper.evidence import (CHECKS, FAILS, HOLDS, KINDS, NOT_CHECKED, NOT_HOLD, READER_VERDICTS, SECTIONS, VERDICTS,
                               WHOSE, Claim, DataUnavailable, Evidence, LedgerError, Verdict)

__all__ = ["FORMATS", "LEDGER", "assert_ledger", "chapter_claims", "claim_anchor", "claim_link", "describe_claim",
           "evaluate_ledger", "failures", "find_claim", "format_ledger", "ledger_html", "reproduce_line",
           "readable", "shown_verdict", "summary_counts", "whose_counts"]

FORMATS: tuple[str, ...] = ("text", "csv", "markdown", "json")
"""Output formats of :func:`format_ledger` (``tef claims --format``)."""

LEDGER: list[Claim] = [Claim(**entry) for entry in yaml.safe_load(
    resources.files("tefpaper").joinpath("claims.yaml").read_text(encoding="utf-8"))]
"""Every checkable claim of the paper, in ledger order."""


def reproduce_line(model: str, prompts: str = "original") -> str:
    """The ``tef reproduce`` line on the full release with the reference release's reading of the answer
    token, as the paper's numbers were made (``tefbook.commands.reproduce_command`` prints the same line;
    a test holds the two equal).

    Examples
    --------
    >>> reproduce_line("qwen2.5-7b")
    'tef reproduce qwen2.5-7b --prompts original --langs en,zh --data-dir data/mind-full --reading reference'
    """
    return shlex.join(["tef", "reproduce", model, "--prompts", prompts, "--langs", "en,zh", "--data-dir",
                       FULL_RELEASE_DIR, "--reading", "reference"])


def _run(claim: Claim, ev: Evidence) -> Verdict:
    """The verdict of a claim's check; a ``gpu`` or ``cannot`` row without a cache at hand says what it needs."""
    fn = CHECKS.get(claim.id)
    try:
        verdict = fn(ev) if fn is not None else None
    except DataUnavailable as exc:
        return Verdict("—", None, f"not checked: {exc}")
    except Exception as exc:  # a check that raises fails, with the reason in the ledger
        return Verdict("error", not claim.expected, f"{type(exc).__name__}: {exc}")
    if verdict is not None:
        return verdict
    command = f": {reproduce_line(claim.model, claim.prompts)}" if claim.model else ""
    if claim.kind == "gpu":
        return Verdict("—", None, f"needs {claim.needs}{command}")
    return Verdict("—", None, claim.reason + (f"; with the key set{command}" if claim.model else ""))


def _verdict_label(holds: bool | None, expected: bool, kind: str) -> str:
    """The verdict printed; a row checked on a run of ours has no recorded verdict to fail against."""
    if holds is None:
        return NOT_CHECKED
    if holds != expected and kind != "run":
        return FAILS
    return HOLDS if holds else NOT_HOLD


def evaluate_ledger(claims: Sequence[Claim] | None = None, *, tables: Mapping[str, pd.DataFrame] | None = None,
                    paper_dir: str | Path | None = None, data_dir: str | Path | None = None,
                    cache_dir: str | Path | None = None) -> pd.DataFrame:
    """Run every check of the ledger.

    Parameters
    ----------
    claims : sequence of Claim, optional
        Default :data:`LEDGER`.
    tables, paper_dir, data_dir, cache_dir
        See :class:`~tefpaper.evidence.Evidence`.

    Returns
    -------
    pandas.DataFrame
        One row per claim, in ledger order: ``id, whose, section, where, words, number, chapter, kind, value,
        holds, expected, verdict, note, premise``; ``whose`` (claim of the paper, count of the release or reader's check), ``section``
        and ``kind`` as the ledger prints them; ``premise`` what a reader's check rests on (empty for a claim).
        ``verdict``
        is ``"holds"``, ``"does not hold"`` (recorded so), ``"not checked"`` or ``"FAILS"``. When a
        check read the MIND data, ``frame.attrs["dataset"]`` says which, and ``frame.attrs["data_problem"]``
        why it could not be read.
    """
    ev = Evidence(tables, paper_dir=paper_dir, data_dir=data_dir, cache_dir=cache_dir)
    rows = []
    for claim in LEDGER if claims is None else claims:
        v = _run(claim, ev)
        rows.append({"id": claim.id, "whose": WHOSE[claim.whose], "section": SECTIONS[claim.section],
                     "where": claim.where, "words": claim.words,
                     "number": claim.number, "chapter": claim.chapter, "kind": KINDS[v.kind or claim.kind],
                     "value": v.value, "holds": v.holds, "expected": claim.expected,
                     "verdict": _verdict_label(v.holds, claim.expected, v.kind or claim.kind), "note": v.note,
                     "premise": claim.premise})
    frame = pd.DataFrame(rows)
    try:
        if "posts" in ev.__dict__ or claims is None:
            frame.attrs["dataset"] = ev.dataset
    except DataUnavailable as exc:
        frame.attrs["data_problem"] = str(exc)
    return frame


def shown_verdict(row: Mapping[str, object]) -> str:
    """The verdict of an evaluated ledger row as the pages and ``tef claims`` print it: a claim of the paper
    *holds* or *does not hold*; a reader's check *passes* or *fails*
    (:data:`~tefpaper.evidence.READER_VERDICTS`), so that a standard the paper never claimed is not read as
    a claim of it that does not hold.

    Examples
    --------
    >>> shown_verdict({"whose": "reader's check", "verdict": "does not hold"})
    "reader's check: fails"
    >>> shown_verdict({"whose": "claim of the paper", "verdict": "does not hold"})
    'does not hold'
    """
    verdict = str(row["verdict"])
    return READER_VERDICTS[verdict] if row["whose"] == WHOSE["reader"] else verdict


def failures(ledger: pd.DataFrame) -> pd.DataFrame:
    """The rows of an evaluated ledger whose check does not give the recorded verdict."""
    return ledger[ledger["verdict"] == FAILS]


def assert_ledger(ledger: pd.DataFrame) -> None:
    """Raise :class:`~tefpaper.evidence.LedgerError` naming every failing claim."""
    bad = failures(ledger)
    if len(bad):
        listed = "; ".join(f"{r.id}: ours {r.value} ({r.note})" for r in bad.itertuples())
        raise LedgerError(f"{len(bad)} claim(s) of the ledger fail: {listed}")


def summary_counts(ledger: pd.DataFrame) -> pd.DataFrame:
    """Claims per kind of evidence (rows, in :data:`~tefpaper.evidence.KINDS` order) and verdict (columns),
    with totals.

    Examples
    --------
    >>> counts = summary_counts(evaluate_ledger())
    >>> int(counts.loc["reproduced by our run", "all"]), int(counts.loc["all", "FAILS"])
    (0, 0)
    """
    table = pd.crosstab(ledger["kind"], ledger["verdict"]).reindex(index=list(KINDS.values()),
                                                                 columns=list(VERDICTS), fill_value=0)
    table.loc["all"] = table.sum()
    table["all"] = table.sum(axis=1)
    table.index.name, table.columns.name = "evidence", None
    return table


def whose_counts(ledger: pd.DataFrame) -> pd.DataFrame:
    """Rows per kind of row (claims of the paper, counts of the release it does not print, reader's checks of its
    tables; :data:`~tefpaper.evidence.WHOSE`) and verdict (columns), with totals: neither a count the paper does
    not print nor a standard it never claimed is counted as its claim.

    Examples
    --------
    >>> counts = whose_counts(evaluate_ledger())
    >>> int(counts.loc["reader's check", "does not hold"]), int(counts.loc["claim of the paper", "does not hold"])
    (6, 3)
    >>> int(counts.loc["count of the release", "all"])
    6
    """
    table = pd.crosstab(ledger["whose"], ledger["verdict"]).reindex(index=list(WHOSE.values()),
                                                                  columns=list(VERDICTS), fill_value=0)
    table.loc["all"] = table.sum()
    table["all"] = table.sum(axis=1)
    table.index.name, table.columns.name = "row", None
    return table


def find_claim(claim_id: str) -> Claim:
    """The ledger's claim ``claim_id``; a one-line :class:`ValueError` naming the nearest ids otherwise.

    Examples
    --------
    >>> find_claim("k3-bayes").section
    'method'
    """
    for claim in LEDGER:
        if claim.id == claim_id:
            return claim
    near = [c.id for c in LEDGER if claim_id.split("-")[0] in c.id][:6]
    raise ValueError(f"no claim {claim_id!r} in the ledger" + (f"; did you mean {', '.join(near)}?" if near else
                                                                "; `tef claims` lists every id"))


def describe_claim(row: Mapping[str, object]) -> str:
    """One evaluated ledger row in full, one field a line: the paper's words, where it says them, the kind
    of row and of evidence, the chapter, the check (our value, how it was computed), a reader's check's
    premise, and the verdict (:func:`shown_verdict`).

    Examples
    --------
    >>> print(describe_claim(evaluate_ledger([find_claim("gain-accuracy")]).iloc[0]).splitlines()[0])
    claim     gain-accuracy (claim of the paper)
    """
    fields = (("claim", f"{row['id']} ({row['whose']})"), ("words", row["words"]),
              ("paper", f"{row['where']}; ledger section: {row['section']}"), ("stated", row["number"]),
              ("evidence", row["kind"]), ("chapter", row["chapter"]), ("ours", row["value"]),
              ("check", row["note"] or "—"), *((("premise", row["premise"]),) if row.get("premise") else ()),
              ("verdict", shown_verdict(row)))
    lines = []
    for name, text in fields:
        wrapped = textwrap.wrap(" ".join(str(text).split()), 88) or ["—"]
        lines += [f"{name:<9} {wrapped[0]}", *(f"{'':<9} {more}" for more in wrapped[1:])]
    return "\n".join(lines)


_TEXT_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("id", "claim", 22), ("number", "stated", 14), ("value", "ours", 29), ("kind", "kind", 8), ("verdict", "verdict", 21))
_PLURAL = {WHOSE["paper"]: "claims of the paper", WHOSE["release"]: "counts of the release the paper does not print",
           WHOSE["reader"]: "reader's checks of its tables"}
_SHORT = dict(zip(KINDS.values(), ("run", "data", "tables", "formula", "GPU", "n/a")))


def _cell(text: object, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _text(ledger: pd.DataFrame) -> str:
    counts = summary_counts(ledger[ledger["whose"] == WHOSE["paper"]])
    lines = ["The paper's claims per kind of evidence (the reader's checks are counted at the end)", counts.to_string(),
             ""]
    if "data_problem" in ledger.attrs:
        lines += [*textwrap.wrap(f"data: {ledger.attrs['data_problem']} (the data-card rows are not checked)", 99), ""]
    lines.append(" ".join(f"{title:<{w}}" for _, title, w in _TEXT_COLUMNS).rstrip())
    for section, rows in ledger.groupby("section", sort=False):
        lines.append(f"-- {section}")
        for row in rows.to_dict("records"):
            row["kind"], row["verdict"] = _SHORT[row["kind"]], shown_verdict(row)
            lines.append(" ".join(f"{_cell(row[k], w):<{w}}" for k, _, w in _TEXT_COLUMNS).rstrip())
    whose = whose_counts(ledger)
    paper, reader = whose.loc[WHOSE["paper"]], whose.loc[WHOSE["reader"]]
    lines.append(f"{paper['all']} {_PLURAL[WHOSE['paper']]}: {paper[HOLDS]} hold, {paper[NOT_HOLD]} do not hold (as "
                 f"recorded), {paper[NOT_CHECKED]} not checked, {paper[FAILS]} fail")
    release = whose.loc[WHOSE["release"]]
    lines.append(f"{release['all']} {_PLURAL[WHOSE['release']]}: {release[HOLDS]} hold, {release[NOT_HOLD]} do not, "
                 f"{release[NOT_CHECKED]} not checked, {release[FAILS]} fail")
    lines.append(f"{reader['all']} {_PLURAL[WHOSE['reader']]}: {reader[HOLDS]} pass, {reader[NOT_HOLD]} fail (as "
                 f"recorded), {reader[NOT_CHECKED]} not checked, {reader[FAILS]} FAIL")
    runs = int((ledger["kind"] == KINDS["run"]).sum())
    lines.append(f"{runs} of the {len(ledger)} rows reproduced by our run")
    return "\n".join(lines)


def format_ledger(ledger: pd.DataFrame, fmt: str = "text") -> str:
    """The evaluated ledger as text (the counts per kind of evidence, then the rows, under 100 columns), csv,
    markdown or json (every column)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "text":
        return _text(ledger)
    if fmt == "csv":
        return ledger.to_csv(index=False)
    if fmt == "json":
        return json.dumps(json.loads(ledger.to_json(orient="records")), ensure_ascii=False, indent=1)
    return summary_counts(ledger).to_markdown() + "\n\n" + whose_counts(ledger).to_markdown() + "\n\n" + ledger.astype(
        {"holds": str, "expected": str}).to_markdown(index=False)


# The ledger on the book's pages: an anchor per row, links from the chapters, the HTML table.
def claim_anchor(claim_id: str) -> str:
    """HTML anchor of a claim's row on the ledger page: ``claims-<id>``."""
    return f"claims-{claim_id.replace('.', '-')}"


def claim_link(claim_id: str, text: str | None = None, page: str = "11_claims_ledger.html") -> str:
    """An HTML link to a claim's row of the ledger page, for a chapter's Markdown.

    Parameters
    ----------
    claim_id : str
        An id of :data:`LEDGER`.
    text : str, optional
        Link text; default the id.
    page : str
        The ledger page relative to the chapter (the chapters' pages sit beside each other).

    Examples
    --------
    >>> claim_link("best-or-tied", "116 of 120")
    '<a href="11_claims_ledger.html#claims-best-or-tied">116 of 120</a>'
    """
    if claim_id not in {c.id for c in LEDGER}:
        raise ValueError(f"no claim {claim_id!r} in the ledger")
    return f'<a href="{page}#{claim_anchor(claim_id)}">{html.escape(text or claim_id)}</a>'


_KEY_LABELS: dict[str, str] = {**{k: v for k, v in RULE_LABELS.items() if "_" in k}, "macro_f1": "macro-F1",
                                "without_entropy": RULE_LABELS["tef_without_entropy"],
                                "without_log_odds": RULE_LABELS["tef_without_log_odds"]}
_KEY = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, _KEY_LABELS), key=len, reverse=True)) + r")(?![\w.])")


def readable(text: object) -> str:
    """A check's value or note as the ledger's pages print it: the library's rule and metric keys
    (``soft_vote``, ``tef_without_entropy``, ``macro_f1``) by their labels; code names such as
    ``tefcore.fusion.fuse_many`` are left as they are.

    Examples
    --------
    >>> readable("trails it: majority_vote 81, soft_vote 72; qwen3-14b en Culture macro_f1; tefcore.x.soft_vote")
    'trails it: MV 81, SV 72; qwen3-14b en Culture macro-F1; tefcore.x.soft_vote'
    """
    return _KEY.sub(lambda m: _KEY_LABELS[m.group(1)], str(text))


def _html_row(row: Mapping[str, object], chapter_href: Callable[[str], str]) -> str:
    e = {k: html.escape(readable(v) if k in ("value", "note") else str(v)) for k, v in row.items()}
    chapter = str(row["chapter"])
    cls = {HOLDS: "holds", NOT_HOLD: "differs", NOT_CHECKED: "unchecked", FAILS: "fails"}[str(row["verdict"])]
    return (
        f'<tr id="{claim_anchor(str(row["id"]))}" class="claim-{cls}">'
        f'<td><a href="#{claim_anchor(str(row["id"]))}"><code>{e["id"]}</code></a></td>'
        f'<td>{e["words"]}<br><small>{e["where"]}</small></td><td>{e["number"]}</td>'
        f'<td>{e["value"]}<br><small>{e["note"]}</small></td>'
        f'<td><b>{html.escape(shown_verdict(row))}</b><br><small>{e["kind"]}</small></td>'
        f'<td><a href="{html.escape(chapter_href(chapter))}">ch.&nbsp;{int(chapter[:2])}</a></td></tr>'
    )


def ledger_html(ledger: pd.DataFrame, chapter_href: Callable[[str], str] | None = None) -> str:
    """One HTML table of ledger rows, each row anchored at :func:`claim_anchor` of its id.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Rows of :func:`evaluate_ledger` (usually one section).
    chapter_href : callable, optional
        Link of a chapter stem; default ``"<stem>.html"`` (the chapters' pages sit beside each other).
    """
    href = chapter_href or (lambda stem: f"{stem}.html")
    head = "".join(f"<th>{h}</th>" for h in ("id", "the paper says, or a reader asks", "stated", "ours", "verdict",
                                                    "chapter"))
    body = "".join(_html_row(r, href) for r in ledger.to_dict("records"))
    return f'<table class="claims-ledger"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def chapter_claims(chapter: str, data_dir: str | None = None, page: str = "11_claims_ledger.html") -> str:
    """The ledger rows a chapter examines, checked now, as an HTML table whose ids link to the ledger page.

    Parameters
    ----------
    chapter : str
        The chapter's stem (``"05_main_results"``).
    data_dir : str, optional
        The MIND directory the data-card rows are checked on (default: as :func:`evaluate_ledger`).
    page : str
        The ledger page, relative to the chapter.

    Examples
    --------
    >>> chapter_claims("06_ablation").count("<tr>") > 1
    True
    """
    rows = evaluate_ledger([c for c in LEDGER if c.chapter == chapter], data_dir=data_dir)
    kind = "kind" if "kind" in rows.columns else "how"
    head = "".join(f"<th>{h}</th>" for h in ("claim", "the paper says, or a reader asks", "stated", "ours",
                                                    "verdict"))
    body = "".join(
        f'<tr><td><a href="{page}#{claim_anchor(r["id"])}"><code>{html.escape(r["id"])}</code></a></td>'
        f'<td>{html.escape(str(r["words"]))}<br><small>{html.escape(str(r["where"]))}</small></td>'
        f'<td>{html.escape(str(r["number"]))}</td><td>{html.escape(readable(r["value"]))}</td>'
        f'<td><b>{html.escape(shown_verdict(r))}</b><br><small>{html.escape(str(r[kind]))}</small></td></tr>'
        for r in rows.to_dict("records"))
    return f'<table class="claims-ledger"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
