"""Chapter 6 (ablation): how the chapter lays out its paired comparisons. The numbers are computed on the page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from companion.labels import LANG_LABELS
from companion.tables import format_interval, format_p, plain
from tefcore.fusion import RULE_LABELS


def comparison_table(cmp: pd.DataFrame, names: Mapping[str, str], n_boot: int | None = None) -> Any:
    """Full TEF against each ablation (:func:`companion.results.compare_runs` rows with the chapter's
    ``effect`` column), as text: index ``(judge, language, removed)``."""
    out = pd.DataFrame({
        "judge": cmp["model"].map(names), "language": cmp["lang"].map(LANG_LABELS),
        "ablation": cmp["b"].map(RULE_LABELS),
        "TEF − ablation [95 % CI]": [format_interval(d, lo, hi, signed=True)
                                     for d, lo, hi in zip(cmp["difference"], cmp["low"], cmp["high"])],
        "p (bootstrap)": [format_p(p, n_boot) for p in cmp["p_bootstrap"]],
        "b": cmp["mcnemar_b"], "c": cmp["mcnemar_c"], "p (McNemar)": [format_p(p) for p in cmp["p_mcnemar"]],
        "the component": cmp["effect"]})
    return plain(out.set_index(["judge", "language", "ablation"]))
