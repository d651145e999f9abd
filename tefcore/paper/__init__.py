"""The paper's published tables and the claims ledger: what ``tef claims`` checks.

:mod:`~tefcore.paper.tables` reads Tables 1-4 of the paper (package data :mod:`tefcore.paper.published`,
``data/paper/*.csv`` of the repository) and recomputes the aggregates its text states;
:mod:`~tefcore.paper.ledger` lists every checkable claim (:data:`~tefcore.paper.ledger.LEDGER`), runs the
checks (:func:`~tefcore.paper.ledger.evaluate_ledger`) and prints them
(:func:`~tefcore.paper.ledger.format_ledger`). The claims and their checks are in
:mod:`~tefcore.paper.method`, :mod:`~tefcore.paper.datacard` and :mod:`~tefcore.paper.results`, built
on :mod:`~tefcore.paper.evidence`.
"""
