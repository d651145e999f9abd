r"""tefcore: Tempered Evidence Fusion (TEF) of LLM judgments, exact to the paper.

The face of the library is the paper's fusion rules and their metrics::

    from tefcore import tef, fuse_many, majority_vote, soft_vote, direct

Rooms (imports run one way, from the top of this list to the bottom):

* :mod:`tefcore.paper`: the paper's published Tables 1-4 as data and the claims ledger with its checks
  (``tef claims``);
* :mod:`tefcore.judges`: extraction machinery, prompts in and probabilities out (one module per judge,
  the registry, the provenance cache, the extraction loop);
* :mod:`tefcore.mind`: the MIND benchmark as the protocol defines it (schema, validated loading,
  evaluation pairs, segmentation, prompts, release);
* the core, pure functions on arrays: :mod:`tefcore.fusion` (the rules), :mod:`tefcore.metrics`,
  :mod:`tefcore.evaluate` (the one evaluation layer: predictions, score tables, the Average, the
  strongest baseline, paired comparisons), :mod:`tefcore.information` (entropy, information, the
  additive identity) and :mod:`tefcore.simulate` (synthetic detectors).

:mod:`tefcore.cli` (the ``tef`` command) sits above all rooms. Everything that exists only for the book
(the build tool ``tefbook``, the chapter support ``companion`` and ``chapters``) is a separate distribution
in the repository's ``book/`` folder, which this library never imports.

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
