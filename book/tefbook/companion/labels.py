"""How the book names things: rules, metrics, judges, languages, and the rows of its tables.

The library's tables hold rule names, registry names and floats; the chapters show them with the
paper's short name of each rule (:data:`RULE_LABELS`, defined beside the rules in :mod:`tefcore.fusion`),
the book's name of each judge (:data:`JUDGE_LABELS`, :func:`judge_label`, :func:`short_names`) and
language (:data:`LANG_LABELS`), and label each row with where it comes from (:func:`row_label`,
:func:`paper_label`); verdict columns read yes / no (:func:`yes_no`) and a whole table as a reader reads it
(:func:`reader_table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from tefbook.companion.provenance import PAPER_LABEL
from tefpaper.tables import MODEL_LABELS

JUDGE_LABELS: dict[str, str] = {
    "local": "SmolLM2-135M (CPU)",
    "e5-zeroshot": "e5-small zero-shot (CPU)",
    "e5-crossfit": "e5-small cross-fit (CPU)",
    "e5-crossfit-std": "e5-small cross-fit, standardized, C = 1 (CPU)",
    "e5-crossfit-raw": "e5-small cross-fit, raw vectors, C = 1 (CPU)",
    **MODEL_LABELS,
}
"""How the book names each judge (registry name -> label)."""


LANG_LABELS: dict[str, str] = {"zh": "Chinese", "en": "English"}
"""How the book names each language."""


RELIABILITY_LABELS: dict[str, str] = {"bin_lower": "p from", "bin_upper": "p to", "count": "sentences",
                                      "mean_predicted": "mean p", "observed": "share from change posts",
                                      "stderr": "standard error"}
"""The columns of :func:`tefcore.metrics.reliability_table` as a reader reads them."""


def maintainer_note(notes: list[str], summary: str) -> Any:
    """What only a maintainer needs, collapsed under ``summary``: the notes of
    :attr:`tefbook.companion.runs.Runs.missing` (``"<judge>/<prompt>: <what the caches record>"``), one row
    each; ``None`` without notes.

    Examples
    --------
    >>> maintainer_note(["local/original: the caches record different `system_prompt`"], "For maintainers").data[:47]
    '<details><summary>For maintainers</summary><tab'
    >>> maintainer_note([], "For maintainers") is None
    True
    """
    from IPython.display import HTML

    if not notes:
        return None
    rows = pd.DataFrame([note.replace("`", "").split(": ", 1) for note in notes],
                        columns=["caches (judge/prompt)", "what the cache headers record"])
    return HTML(f"<details><summary>{summary}</summary>{rows.to_html(index=False, border=0)}</details>")


YES_NO: dict[bool, str] = {True: "yes", False: "no"}
"""How the book's tables print a verdict column (never ``True``/``False``)."""


def yes_no(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose boolean columns read ``yes`` / ``no`` (:data:`YES_NO`), for a table a reader reads.

    Examples
    --------
    >>> yes_no(pd.DataFrame({"within": [True, False], "n": [3, 4]}))
      within  n
    0    yes  3
    1     no  4
    """
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_bool_dtype(out[col]):
            out[col] = out[col].map(YES_NO)
    return out


def reader_table(frame: pd.DataFrame, digits: int = 1, **per_column: int) -> pd.DataFrame:
    """A table as a reader reads it: the languages of an index level ``lang`` by name (the level named
    ``language``), counts with thousands separators, floats rounded half up to ``digits`` decimals
    (``per_column`` overrides, by a column's last level), missing values empty, verdicts yes / no.

    Examples
    --------
    >>> t = pd.DataFrame({"pairs": [1215, 605], "share": [99.745, float("nan")], "ok": [True, False]},
    ...                  index=pd.Index(["zh", "en"], name="lang"))
    >>> reader_table(t, share=2)
             pairs  share   ok
    language
    Chinese  1,215  99.75  yes
    English    605          no
    """
    from tefbook.companion.tables import format_cell

    out = yes_no(frame)
    if "lang" in out.index.names:
        out = out.rename(index=LANG_LABELS, level="lang").rename_axis(
            index=["language" if name == "lang" else name for name in out.index.names])
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col]):
            places = per_column.get(str(col[-1] if isinstance(col, tuple) else col), digits)
            out[col] = [format_cell(v, places) for v in out[col]]
    return out


def judge_label(model: str) -> str:
    """The book's name of a judge (its registry name when unknown).

    Examples
    --------
    >>> judge_label("qwen2.5-7b"), judge_label("my-judge")
    ('Qwen2.5-7B', 'my-judge')
    """
    return JUDGE_LABELS.get(model, model)


def row_label(model: str, labels: Mapping[str, str] | None = None) -> str:
    """The label of a judge's rows: its provenance label (:func:`tefbook.companion.provenance.run_labels`), else
    ``"ours: <the book's name of the judge>"``.

    Examples
    --------
    >>> row_label("local", {"local": "ours: SmolLM2-135M, llama.cpp, CPU, MIND sample"})
    'ours: SmolLM2-135M, llama.cpp, CPU, MIND sample'
    >>> row_label("my-judge")
    'ours: my-judge'
    """
    return (labels or {}).get(model) or f"ours: {judge_label(model)}"


def paper_label(model: str) -> str:
    """The label of the paper's rows of a model: ``"paper: <model>"``.

    Examples
    --------
    >>> paper_label("qwen2.5-7b")
    'paper: Qwen2.5-7B'
    """
    return f"{PAPER_LABEL}: {judge_label(model)}"


SHORT_NAMES: dict[str, str] = {
    "local": "SmolLM2-135M",
    "e5-zeroshot": "e5 zero-shot",
    "e5-crossfit": "e5 cross-fit",
    "e5-crossfit-std": "e5 cross-fit (std., C = 1)",
    "e5-crossfit-raw": "e5 cross-fit (raw, C = 1)",
}
"""The book's short names of its CPU judges, for table rows and figure legends."""


def short_names(runs: Any) -> dict[str, str]:
    """A short row name per judge of ``runs``: the book's short name (else the judge its provenance
    records) and the hardware class its provenance records, e.g. ``"e5 cross-fit, CPU"``.

    Parameters
    ----------
    runs : Runs
        :func:`tefbook.companion.runs.load_runs` output.

    Examples
    --------
    >>> from tefbook.companion.runs import load_runs
    >>> short_names(load_runs("local,e5-crossfit", langs="en"))
    {'local': 'SmolLM2-135M, CPU', 'e5-crossfit': 'e5 cross-fit, CPU'}
    """
    from tefbook.companion.provenance import engine_name, hardware_class, judge_name

    provs = runs.provenance.drop_duplicates("model").to_dict("records")
    base = {p["model"]: SHORT_NAMES.get(p["model"]) or judge_name(p) for p in provs}
    taken = pd.Series([f"{base[p['model']]}, {hardware_class(p)}" for p in provs])
    # two judges with the same weights and hardware (llama.cpp and vLLM on SmolLM2) also name their engine
    return {p["model"]: f"{base[p['model']]}, {engine_name(p)}, {hardware_class(p)}" if clash else name
            for p, name, clash in zip(provs, taken, taken.duplicated(keep=False))}


def run_table(runs: Any, names: Mapping[str, str] | None = None) -> Any:
    """What a chapter's caches hold, one row per judge, prompt and language: the judge's short name, the
    pairs and posts, and what the cache header records (engine, hardware, data; :mod:`tefbook.companion.provenance`)
    and the cache file. A styled table (one line per row).

    Examples
    --------
    >>> from tefbook.companion.runs import load_runs
    >>> run_table(load_runs("e5-crossfit", langs="en")).data["pairs"].tolist()
    [605]
    """
    from tefbook.companion.provenance import data_kind, engine_name, hardware_class
    from tefbook.companion.tables import plain

    names = names or short_names(runs)
    rows = []
    for prov in runs.provenance.to_dict("records"):
        frame = runs.frame[(runs.frame["model"] == prov["model"]) & (runs.frame["prompt"] == prov["prompt"])
                           & (runs.frame["lang"] == prov["lang"])]
        rows.append({"judge": names[prov["model"]], "prompt": prov["prompt"],
                     "language": LANG_LABELS.get(prov["lang"], prov["lang"]), "pairs": len(frame),
                     "posts": frame["post_id"].nunique(), "engine": engine_name(prov),
                     "hardware": hardware_class(prov), "data": data_kind(frame),
                     "cache": "/".join(str(prov["path"]).split("/")[-3:])})
    return plain(pd.DataFrame(rows).set_index(["judge", "prompt", "language"]))


def of_count(k: int, n: int, noun: str = "") -> str:
    """``k`` of ``n`` things as the prose says it: ``"all 5 models"`` or ``"both languages"`` when ``k`` is the
    whole, ``"none of the 3 prompt variants"`` when it is nothing, ``"2 of the 5 models"`` otherwise (``noun``
    singular; an ``s`` is added where the count needs it).

    Examples
    --------
    >>> of_count(5, 5, "model"), of_count(2, 2, "language"), of_count(0, 3, "prompt variant"), of_count(2, 5)
    ('all 5 models', 'both languages', 'none of the 3 prompt variants', '2 of the 5')
    >>> of_count(1, 1, "judge"), of_count(0, 1, "judge"), of_count(0, 2, "language")
    ('the one judge', 'not the one judge', 'neither of the 2 languages')
    """
    nouns = f" {noun}s" if noun and n != 1 else f" {noun}" if noun else ""
    if n == 1:
        return f"the one{nouns}" if k == 1 else f"not the one{nouns}"
    if k == n:
        return f"both{nouns}" if n == 2 else f"all {n}{nouns}"
    if k == 0:
        return f"{'neither' if n == 2 else 'none'} of the {n}{nouns}"
    return f"{k} of the {n}{nouns}"
