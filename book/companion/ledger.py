"""The claims ledger on the book's pages: an anchor per row, links from the chapters, the HTML table.

The ledger itself (claims, checks, verdicts) is :mod:`tefpaper`; this module only presents it.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

import pandas as pd

from tefpaper.evidence import FAILS, HOLDS, NOT_CHECKED, NOT_HOLD
from tefpaper.ledger import LEDGER


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


def _html_row(row: Mapping[str, object], chapter_href: Callable[[str], str]) -> str:
    e = {k: html.escape(str(v)) for k, v in row.items()}
    chapter = str(row["chapter"])
    cls = {HOLDS: "holds", NOT_HOLD: "differs", NOT_CHECKED: "unchecked", FAILS: "fails"}[str(row["verdict"])]
    return (
        f'<tr id="{claim_anchor(str(row["id"]))}" class="claim-{cls}">'
        f'<td><a href="#{claim_anchor(str(row["id"]))}"><code>{e["id"]}</code></a></td>'
        f'<td>{e["words"]}<br><small>{e["where"]}</small></td><td>{e["number"]}</td>'
        f'<td>{e["value"]}<br><small>{e["note"]}</small></td>'
        f'<td><b>{e["verdict"]}</b><br><small>{e["kind"]}</small></td>'
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
    head = "".join(f"<th>{h}</th>" for h in ("id", "the paper says", "stated", "ours", "verdict", "chapter"))
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
    from tefpaper.ledger import evaluate_ledger

    rows = evaluate_ledger([c for c in LEDGER if c.chapter == chapter], data_dir=data_dir)
    kind = "kind" if "kind" in rows.columns else "how"
    head = "".join(f"<th>{h}</th>" for h in ("claim", "the paper says", "stated", "ours", "verdict"))
    body = "".join(
        f'<tr><td><a href="{page}#{claim_anchor(r["id"])}"><code>{html.escape(r["id"])}</code></a></td>'
        f'<td>{html.escape(str(r["words"]))}<br><small>{html.escape(str(r["where"]))}</small></td>'
        f'<td>{html.escape(str(r["number"]))}</td><td>{html.escape(str(r["value"]))}</td>'
        f'<td><b>{html.escape(str(r["verdict"]))}</b><br><small>{html.escape(str(r[kind]))}</small></td></tr>'
        for r in rows.to_dict("records"))
    return f'<table class="claims-ledger"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
