"""The paper's published tables and the claims ledger: what ``tef claims`` checks (``python -m tefpaper``).

Part of the book's distribution (``pip install -e ./book``), beside the book's tools: the paper's claims are
the companion's business, not the method's, and the library (``tefcore``) never imports this package.
:mod:`~tefpaper.tables` reads Tables 1-4 of the paper (``data/paper/*.csv`` of the repository) and recomputes the aggregates its text states, and
:mod:`~tefpaper.review` reads them as a reviewer does; :mod:`~tefpaper.ledger` lists every checkable
claim, runs their checks (:mod:`~tefpaper.checks`, :mod:`~tefpaper.results`, built on
:mod:`~tefpaper.evidence` and :mod:`~tefpaper.runs`) and prints them.
"""
