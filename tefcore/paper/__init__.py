"""The paper's published tables and the claims ledger: what ``tef claims`` checks.

:mod:`~tefcore.paper.tables` reads Tables 1-4 of the paper (package data :mod:`tefcore.paper.published`,
``data/paper/*.csv`` of the repository) and recomputes the aggregates its text states, and
:mod:`~tefcore.paper.review` reads them as a reviewer does; :mod:`~tefcore.paper.ledger` lists every checkable
claim, runs their checks (:mod:`~tefcore.paper.checks`, :mod:`~tefcore.paper.results`, built on
:mod:`~tefcore.paper.evidence` and :mod:`~tefcore.paper.runs`) and prints them.
"""
