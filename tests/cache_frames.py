"""Cache frames for the tests of tefbook.companion.runs, tefbook.companion.results and tefbook.companion.calibration.

:func:`synthetic_cache` is a seeded synthetic judge whose sentence posteriors lean, noisily,
towards the gold side; :func:`hand_cache` is five hand-made pairs with unreadable answers and
several answer sources.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

NAN = math.nan
DIMS = ("Culture", "Economy", "Politics")


def synthetic_cache(seed: int = 0, n_per_cell: int = 40, langs=("en", "zh"), sharp: float = 2.0) -> pd.DataFrame:
    """A cache frame whose sentence posteriors lean, noisily, towards the gold side."""
    rng = np.random.default_rng(seed)
    rows = []
    for lang in langs:
        for d, dim in enumerate(DIMS):
            for i in range(n_per_cell):
                side = "change" if rng.random() < 0.6 else "stability"
                sign = 1.0 if side == "change" else -1.0
                k = int(rng.integers(1, 6))
                logits = rng.normal(0.4 * sign, sharp, size=k)
                sent = list(1.0 / (1.0 + np.exp(-logits)))
                direct = float(1.0 / (1.0 + np.exp(-rng.normal(0.3 * sign, 1.0))))
                rows.append((f"{lang}-{dim}-{i}", lang, dim, side, direct, sent))
    return pd.DataFrame(rows, columns=["post_id", "lang", "dimension", "side", "direct", "sentences"])


def hand_cache() -> pd.DataFrame:
    """Five pairs: an unreadable Direct answer, unreadable sentences, a post with none readable."""
    rows = [
        ("a", "en", "Economy", "change", 0.8, [0.9, 0.45, 0.45], ["logprobs"] * 3),
        ("b", "en", "Economy", "stability", 0.6, [0.02, 0.55, 0.55], ["logprobs", "partial", "logprobs"]),
        ("c", "en", "Culture", "stability", NAN, [NAN, 0.3], ["invalid", "logprobs"]),
        ("d", "en", "Culture", "change", 0.4, [NAN, NAN], ["invalid", "invalid"]),
        ("e", "en", "Culture", "stability", 0.2, [0.1], ["generated_text"]),
    ]
    return pd.DataFrame(rows, columns=["post_id", "lang", "dimension", "side", "direct", "sentences",
                                       "sentence_sources"])
