"""Formatting for chapter 2 (the propositions): count words and the settings a judge's languages differ in.

The chapter's computations stay on its page; these helpers only turn counts and cache-header fields into the
words its prose glues.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from tefbook.companion.labels import LANG_LABELS

#: What a cache-header field of :data:`tefbook.companion.runs.SETTING_FIELDS` records, in a reader's words.
SETTING_WORDS: dict[str, str] = {
    "system_prompt": "the system turn the prompt was wrapped in",
    "chat_template_sha256": "the chat template",
    "reading": "how the answer's probability was read",
    "standardize": "whether the embeddings were standardized",
    "C": "the probe's regularisation",
    "weights_sha256": "the model's weights file",
    "llama_cpp_cpu": "the CPU instructions of the llama.cpp build",
}


def count_words(k: int, n: int, singular: str, plural: str) -> str:
    """``k`` of ``n`` things in words: "both", "all", "neither" or "none" when the count says so.

    Examples
    --------
    >>> count_words(2, 2, "language", "languages"), count_words(0, 2, "language", "languages")
    ('both languages', 'neither language')
    >>> count_words(1, 2, "language", "languages"), count_words(3, 3, "judge", "judges")
    ('1 of the 2 languages', 'all 3 judges')
    >>> count_words(0, 3, "judge", "judges")
    'none of the 3 judges'
    """
    if n == 2 and k in (0, 2):
        return f"both {plural}" if k == 2 else f"neither {singular}"
    if k == n:
        return f"all {n} {plural}"
    return f"none of the {n} {plural}" if k == 0 else f"{k} of the {n} {plural}"


def differing_settings(provenance: pd.DataFrame, names: Mapping[str, str]) -> str:
    """The judges whose languages were scored under different settings, each with the setting in words and
    what each language's cache header records; ``"none"`` when they agree.

    Examples
    --------
    >>> prov = pd.DataFrame({"model": ["local", "local"], "prompt": ["original"] * 2, "lang": ["en", "zh"],
    ...                      "system_prompt": ["template default", "none"]})
    >>> differing_settings(prov, {"local": "SmolLM2-135M"})
    'SmolLM2-135M (the system turn the prompt was wrapped in: English, template default; Chinese, none)'
    """
    found = []
    for (model, _), g in provenance.groupby(["model", "prompt"], sort=False):
        for field in (f for f in SETTING_WORDS if f in g.columns and g[f].notna().any()):
            values = ["not recorded" if pd.isna(v) else str(v) for v in g[field]]
            if len(set(values)) > 1:
                each = "; ".join(f"{LANG_LABELS.get(lang, lang)}, {v}" for lang, v in zip(g["lang"], values))
                found.append(f"{names.get(model, model)} ({SETTING_WORDS[field]}: {each})")
    return "; ".join(found) or "none"
