"""tefcore: Tempered Evidence Fusion (TEF) of LLM judgments, exact to the paper.

The face of the library is the paper's fusion rules (:mod:`tefcore.fusion`) and their metrics
(:mod:`tefcore.metrics`). Imports run one way, from :mod:`tefcore.cli` (the ``tef`` command) through
:mod:`tefpaper` (the paper's tables and the claims ledger), :mod:`tefcore.judges` (prompts in,
probabilities out) and :mod:`tefcore.mind` (the MIND benchmark) down to the core of pure functions on
arrays: :mod:`tefcore.fusion`, :mod:`tefcore.metrics`, :mod:`tefcore.evaluate` (predictions, score
tables, the Average, the strongest baseline, paired comparisons), :mod:`tefcore.information` and
:mod:`tefcore.simulate`. What exists only for the book is a separate distribution in ``book/``, which
this library never imports.

Examples
--------
>>> from tefcore import tef, majority_vote
>>> p = [0.02, 0.55, 0.55, 0.55, 0.55]   # one decisive stability sentence, four lukewarm ones
>>> majority_vote(p).prediction, tef(p).prediction
('change', 'stability')
"""

from __future__ import annotations

from tefcore.fusion import (RULE_LABELS, RULE_NAMES, FusionBatch, FusionResult, clipped_log_odds, direct,
                            entropy_weight, fuse_many, majority_vote, soft_vote, tef, tef_without_entropy,
                            tef_without_log_odds)
from tefcore.metrics import accuracy, bootstrap_ci, expected_calibration_error, macro_f1, mcnemar_test, paired_bootstrap

__version__ = "0.2.0"

__all__ = ["RULE_LABELS", "RULE_NAMES", "FusionBatch", "FusionResult", "__version__", "accuracy", "bootstrap_ci",
           "clipped_log_odds", "direct", "entropy_weight", "expected_calibration_error", "fuse_many", "macro_f1",
           "majority_vote", "mcnemar_test", "paired_bootstrap", "soft_vote", "tef", "tef_without_entropy",
           "tef_without_log_odds"]
