"""Chapter 4 (extraction): what only that chapter uses."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from companion.labels import LANG_LABELS, judge_label
from companion.runs import Runs
from tefcore.evaluate import flatten_sentences
from tefcore.fusion import entropy_weight
from tefcore.judges.cache import TIME_KEYS
from tefcore.mind.load import EvaluationPair

VERSION_FIELDS: tuple[str, ...] = ("tefcore_version",)
"""Provenance fields that record this library's version. A cache whose provenance differs from a run's
only there is compared all the same: the library must not change a judge's numbers silently, so a
deterministic judge that gives other numbers under another library version fails the check (an engine's
version, such as llama.cpp's, is not ignored: a new engine may compute differently)."""


DETERMINISTIC: tuple[str, ...] = ("local",)
"""Judges whose numbers depend only on their provenance and the pair: same file, same prompt, same
rendering give the same numbers, bit for bit (the JSON cache keeps every float exactly)."""


_SAYS_CHANGE, _GOLD_CHANGE = "Direct answers 'change' %", "gold 'change' %"


_RUN_FIELDS = frozenset({"model", "prompt", "lang", "path", "n_pairs", "provenance_id", "recorded_lang"})


def run_judges(models: Sequence[str], pairs: Mapping[str, Sequence[EvaluationPair]], out_dir: str | os.PathLike[str],
               prompt: str = "original", scratch: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Extract every judge's probabilities for the given pairs into ``<out_dir>/<model>/<prompt>/<lang>.jsonl``.

    A cache that already holds a pair under the same provenance is resumed. A cache of another
    provenance inside ``scratch`` (left there by an older version of a judge) is set aside as
    ``*.stale`` and rewritten; anywhere else it is an error (:class:`tefcore.judges.cache.ProvenanceMismatch`).

    Parameters
    ----------
    models : sequence of str
        Registry names or ``.gguf`` paths.
    pairs : mapping of str to sequence of EvaluationPair
        The pairs of each language.
    out_dir : path-like
        Cache root.
    prompt : str
        Prompt variant (protocol §4).
    scratch : path-like, optional
        The folder whose stale caches may be set aside.

    Returns
    -------
    pandas.DataFrame
        One row per judge and language: ``judge, language, pairs, prompts scored, seconds, prompts/s``.
    """
    from tefcore.judges import make_backend
    from tefcore.judges.cache import ProvenanceMismatch
    from tefcore.judges.registry import resolve_model
    from tefcore.judges.cache import cache_path
    from tefcore.judges.run import run_extraction

    scratch_dir = Path(scratch).resolve() if scratch is not None else None
    rows = []
    for model in models:
        spec = resolve_model(model)
        judge = make_backend(spec)
        for lang, chosen in pairs.items():
            path = cache_path(out_dir, spec.name, prompt, lang)
            try:
                report = run_extraction(judge, chosen, path, variant=prompt, progress=False)
            except ProvenanceMismatch:
                if scratch_dir is None or scratch_dir not in path.resolve().parents:
                    raise
                path.replace(path.with_name(path.name + ".stale"))
                report = run_extraction(judge, chosen, path, variant=prompt, progress=False)
            rows.append({"judge": judge_label(spec.name), "language": LANG_LABELS.get(lang, lang),
                         "pairs": report.pairs_done, "prompts scored": report.prompts,
                         "seconds": report.seconds, "prompts/s": report.prompts_per_second})
        del judge
    return pd.DataFrame(rows).set_index(["judge", "language"])


def sentence_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The sentences of cache rows, one per row: ``model, lang, pair, p, source, mass, weight``.

    ``p`` is P(change) (NaN when the answer was invalid), ``weight`` its TEF weight :math:`w(p)`
    (NaN for an invalid answer), ``pair`` the position of the sentence's pair in ``frame``.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": ["m", "m"], "lang": ["en", "en"], "sentences": [[0.5, 1.0], [0.9]],
    ...                      "sentence_sources": [["logprobs"] * 2, ["logprobs"]],
    ...                      "sentence_masses": [[0.9, 0.8], [0.7]]})
    >>> sentence_frame(rows)[["pair", "p", "weight"]].round(3).values.tolist()
    [[0.0, 0.5, 0.0], [0.0, 1.0, 1.0], [1.0, 0.9, 0.531]]
    """
    p, doc = flatten_sentences(frame["sentences"])
    out = pd.DataFrame({"model": frame["model"].to_numpy()[doc], "lang": frame["lang"].to_numpy()[doc],
                        "pair": doc, "p": p})
    if "sentence_sources" in frame.columns:
        out["source"] = flatten_sentences(frame["sentence_sources"], dtype=object)[0]
    if "sentence_masses" in frame.columns:
        out["mass"] = flatten_sentences(frame["sentence_masses"])[0]
    ok = ~np.isnan(p)
    out["weight"] = np.nan
    out.loc[ok, "weight"] = entropy_weight(p[ok])
    return out


def _answers(frame: pd.DataFrame) -> pd.DataFrame:
    """Every answer of the cache rows (Direct and sentences): ``model, lang, kind, source, mass``."""
    direct = pd.DataFrame({"model": frame["model"], "lang": frame["lang"], "kind": "Direct",
                           "source": frame["direct_source"], "mass": frame["direct_mass"].astype(float)})
    sent = sentence_frame(frame)
    sentences = pd.DataFrame({"model": sent["model"], "lang": sent["lang"], "kind": "sentences",
                              "source": sent.get("source"), "mass": sent.get("mass")})
    return pd.concat([direct, sentences], ignore_index=True)


def _label_index(table: pd.DataFrame, labels: Mapping[str, str] | None) -> pd.DataFrame:
    """Replace registry names by row labels and language codes by names in the first two index levels."""
    out = table.rename(index=dict(labels) if labels else judge_label, level=0).rename(index=LANG_LABELS, level=1)
    return out.rename_axis(index={"model": "judge", "lang": "language"})


def source_table(frame: pd.DataFrame, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """How each number was obtained: the share (%) of every source per judge, language and kind, and the count.

    Parameters
    ----------
    frame : pandas.DataFrame
        Cache rows of several judges (:attr:`companion.runs.Runs.frame`).
    labels : mapping of str to str, optional
        Row label of each judge (e.g. :func:`companion.provenance.run_labels`); default the
        book's judge names.

    Returns
    -------
    pandas.DataFrame
        Index ``(judge, language, kind)``; one column per source (%), then ``answers`` (count).
    """
    answers = _answers(frame)
    keys = ["model", "lang", "kind"]
    shares = answers.groupby(keys, sort=False)["source"].value_counts(normalize=True).mul(100).unstack(fill_value=0.0)
    counts = answers.groupby(keys, sort=False).size().rename("answers")
    return _label_index(shares.join(counts), labels)


def mass_table(frame: pd.DataFrame, models: Sequence[str], labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The C+S mass of the LLM judges' answers: count, mean, 5 %, median, 95 % and minimum.

    Returns
    -------
    pandas.DataFrame
        Index ``(judge, language, kind)``; empty when no judge of ``models`` is in ``frame``.
    """
    answers = _answers(frame)
    answers = answers[answers["model"].isin(list(models))].astype({"mass": float})
    if answers.empty:
        return pd.DataFrame(columns=["count", "mean", "5%", "50%", "95%", "min"])
    table = answers.groupby(["model", "lang", "kind"], sort=False)["mass"].describe(percentiles=[0.05, 0.5, 0.95])
    return _label_index(table[["count", "mean", "5%", "50%", "95%", "min"]], labels)


def mass_figure(frame: pd.DataFrame, models: Sequence[str], labels: Mapping[str, str] | None = None) -> Any:
    """Overlaid histograms of the C+S mass of every answer (Direct and sentences) of the LLM judges."""
    import plotly.graph_objects as go

    answers = _answers(frame)
    answers = answers[answers["model"].isin(list(models))].astype({"mass": float})
    fig = go.Figure()
    for (model, lang), g in answers.groupby(["model", "lang"], sort=False):
        name = (labels or {}).get(model, judge_label(model))
        fig.add_histogram(x=g["mass"], name=f"{name} · {LANG_LABELS.get(lang, lang)}",
                          xbins={"start": 0, "end": 1.0001, "size": 0.02}, opacity=0.7)
    fig.update_layout(title="C+S mass of every answer (Direct and sentences)", barmode="overlay",
                      xaxis_title="P(C) + P(S)", yaxis_title="answers", height=380, legend={"orientation": "h", "y": -0.25})
    return fig


def probability_figure(frame: pd.DataFrame) -> Any:
    """Per judge, histograms of every sentence's P(change) (left) and TEF weight (right), per language.

    The panels are titled with the book's short judge names (:func:`companion.labels.judge_label`).
    """
    from plotly.subplots import make_subplots

    sent = sentence_frame(frame).dropna(subset=["p"])
    judges = list(pd.unique(sent["model"]))
    names = {m: judge_label(m) for m in judges}
    fig = make_subplots(rows=max(1, len(judges)), cols=2, shared_xaxes=True, vertical_spacing=0.06,
                        horizontal_spacing=0.08,
                        subplot_titles=[f"{names[m]}: {what}" for m in judges
                                        for what in ("sentence P(change)", "TEF weight w(p)")])
    colors = {"en": "#4e79a7", "zh": "#e15759"}
    for row, model in enumerate(judges, start=1):
        for lang, g in sent[sent["model"] == model].groupby("lang", sort=False):
            for col, column in ((1, "p"), (2, "weight")):
                fig.add_histogram(x=g[column], name=LANG_LABELS.get(lang, lang), legendgroup=lang,
                                  showlegend=row == 1 and col == 1, marker_color=colors.get(lang), opacity=0.6,
                                  histnorm="percent", xbins={"start": 0, "end": 1.0001, "size": 0.025},
                                  row=row, col=col)
    fig.update_yaxes(title_text="% of sentences", col=1)
    fig.update_xaxes(range=[0, 1])
    fig.update_annotations(font_size=11)
    fig.update_layout(barmode="overlay", height=260 * max(1, len(judges)) + 120,
                      title="What the judges said about each sentence", legend={"orientation": "h", "y": -0.08})
    return fig


def letter_bias(frame: pd.DataFrame, model: str = "local") -> pd.DataFrame:
    """How much a judge's answers vary from text to text, beside the spread of the gold sides.

    Returns
    -------
    pandas.DataFrame
        One row per language (names): ``pairs``, mean and standard deviation of the Direct and of the
        sentence P(change), the share (%) of Direct answers on the change side, and the share (%) of
        gold change targets. Empty when ``model`` is not in ``frame``.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": ["m"] * 2, "lang": ["en"] * 2, "direct": [0.8, 0.82],
    ...                      "sentences": [[0.8, 0.81], [0.79]], "side": ["change", "stability"]})
    >>> letter_bias(rows, "m").loc["English", ["Direct answers 'change' %", "gold 'change' %"]].tolist()
    [100.0, 50.0]
    """
    mine = frame[frame["model"] == model]
    if mine.empty:
        return pd.DataFrame()
    sent = sentence_frame(mine)
    by = mine.groupby("lang", sort=False)
    table = pd.DataFrame({
        "pairs": by.size(),
        "Direct P(change) mean": by["direct"].mean(), "Direct P(change) std": by["direct"].std(),
        "sentence P(change) mean": sent.groupby("lang")["p"].mean(),
        "sentence P(change) std": sent.groupby("lang")["p"].std(),
        _SAYS_CHANGE: by["direct"].apply(lambda s: 100 * float((s >= 0.5).mean())),
        _GOLD_CHANGE: by["side"].apply(lambda s: 100 * float((s == "change").mean())),
    })
    return table.rename(index=LANG_LABELS).rename_axis("language")


def bias_markdown(frame: pd.DataFrame, model: str = "local", labels: Mapping[str, str] | None = None) -> str:
    """The letter bias of one judge in words: the spread of its Direct answers against the gold sides'.

    Empty when ``model`` is not in ``frame``.
    """
    table = letter_bias(frame, model)
    masses = frame.loc[frame["model"] == model, ["lang", "direct_mass"]].astype({"direct_mass": float})
    mean_mass = masses.groupby("lang")["direct_mass"].mean().rename(index=LANG_LABELS)
    name = (labels or {}).get(model, judge_label(model))
    parts = []
    for lang, r in table.iterrows():
        mass = f"; C and S together get {mean_mass[lang]:.2f} of its answer distribution on average" \
            if lang in mean_mass.index and np.isfinite(mean_mass[lang]) else ""
        parts.append(f"in {lang} ({int(r['pairs'])} pairs) its Direct P(change) has mean "
                     f"{r['Direct P(change) mean']:.3f} and standard deviation {r['Direct P(change) std']:.3f}; "
                     f"it answers change for {r[_SAYS_CHANGE]:.1f} % of the pairs, while "
                     f"{r[_GOLD_CHANGE]:.1f} % of the gold targets are change{mass}")
    return f"{name}: " + "; ".join(parts) + "." if parts else ""


def provenance_differences(ours: Mapping[str, Any], theirs: Mapping[str, Any], limit: int = 4,
                           ignore: Sequence[str] = ()) -> list[str]:
    """The provenance fields on which two caches differ (rows of :attr:`Runs.provenance`), as ``name: a ≠ b``.

    Fields of the run itself (model, prompt, language, path, size), the time fields
    (:data:`tefcore.judges.cache.TIME_KEYS`) and ``ignore`` are not compared. Nested fields (flattened
    as ``name.key``) are reported once per top-level name, with the number of entries that differ; at
    most ``limit`` names are spelt out, the rest counted.

    Examples
    --------
    >>> provenance_differences({"system_prompt": "template default", "n_ctx": 4096, "started_at": "x"},
    ...                        {"system_prompt": "none", "n_ctx": 4096, "started_at": "y"})
    ["system_prompt: 'template default' ≠ 'none'"]
    >>> provenance_differences({"temperature.en/Culture": 0.1, "temperature.en/Economy": 0.2},
    ...                        {"temperature.en/Culture": 0.3, "temperature.en/Economy": 0.2})
    ['temperature (1 entry)']
    """
    def stable(row: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k not in _RUN_FIELDS and k not in ignore
                and k.split(".")[0] not in TIME_KEYS and not (isinstance(v, float) and np.isnan(v))}

    a, b = stable(ours), stable(theirs)
    groups: dict[str, list[str]] = {}
    for k in sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)):
        groups.setdefault(k.split(".")[0], []).append(k)
    shown = []
    for name, keys in list(groups.items())[:limit]:
        if keys == [name]:
            shown.append(f"{name}: {_short(a.get(name))} ≠ {_short(b.get(name))}")
        else:
            shown.append(f"{name} ({len(keys)} {'entry' if len(keys) == 1 else 'entries'})")
    if len(groups) > limit:
        shown.append(f"and {len(groups) - limit} more")
    return shown


def _short(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Agreement:
    """A run compared with the committed caches.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (judge, language) found in both: ``same provenance`` (bool), ``pairs compared``,
        ``same sentence count``, ``max |Δ Direct|``, ``max |Δ sentence|`` (NaN where nothing is compared).
    notes : list of str
        One sentence per judge and language: what was compared, or which provenance fields differ.
    deterministic : tuple of str
        The judges whose numbers must be equal when the provenance is.
    """

    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    deterministic: tuple[str, ...] = DETERMINISTIC

    @property
    def notes_markdown(self) -> str:
        """The notes as a Markdown bullet list."""
        return "\n".join(f"* {note}" for note in self.notes) or "* no judge of this run has a committed cache"


def _max_abs(a: np.ndarray, b: np.ndarray) -> float:
    both = ~(np.isnan(a) | np.isnan(b))
    if (np.isnan(a) != np.isnan(b)).any():
        return float("inf")  # an answer invalid in one cache only
    return float(np.max(np.abs(a[both] - b[both]))) if both.any() else 0.0


def _same_setting(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether two caches have the same provenance up to :data:`VERSION_FIELDS`, and what differs."""
    if ours.get("provenance_id") == theirs.get("provenance_id"):
        return True, ""
    differ = provenance_differences(ours, theirs, ignore=VERSION_FIELDS)
    if differ:
        return False, "; ".join(differ)
    versions = "; ".join(provenance_differences(ours, theirs)) or "only the provenance id differs"
    return True, f" (only the library version differs: {versions})"


def reference_agreement(runs: Runs, reference: Runs, deterministic: Sequence[str] = DETERMINISTIC) -> Agreement:
    """Compare a run with the committed caches, judge by judge and language by language.

    Only caches of the same provenance are compared, on the pairs both hold; the provenance may differ
    in :data:`VERSION_FIELDS` alone. For the others the note names the fields that differ and nothing
    is compared.

    Parameters
    ----------
    runs, reference : Runs
        The chapter's run and the committed caches (:func:`companion.runs.load_runs`).
    deterministic : sequence of str
        Judges whose numbers must be equal under the same provenance (:func:`assert_reproduced`).
    """
    keys = ["post_id", "dimension"]
    rows, notes = [], []
    for prov in runs.provenance.to_dict("records"):
        model, lang = prov["model"], prov["lang"]
        match = reference.provenance[(reference.provenance["model"] == model) & (reference.provenance["lang"] == lang)]
        name = f"{judge_label(model)}, {LANG_LABELS.get(lang, lang)}"
        if match.empty:
            notes.append(f"{name}: no committed cache.")
            continue
        same, detail = _same_setting(prov, match.iloc[0].to_dict())
        row = {"judge": judge_label(model), "language": LANG_LABELS.get(lang, lang), "same provenance": same}
        if not same:
            notes.append(f"{name}: the committed cache has another provenance ({detail}), so nothing is compared.")
            rows.append({**row, "pairs compared": 0})
            continue
        ours = runs.frame[(runs.frame["model"] == model) & (runs.frame["lang"] == lang)]
        theirs = reference.frame[(reference.frame["model"] == model) & (reference.frame["lang"] == lang)]
        both = ours.merge(theirs, on=keys, suffixes=("", "_ref"))
        same_n = (both["sentences"].map(len) == both["sentences_ref"].map(len)).to_numpy(dtype=bool)
        flat, _ = flatten_sentences(list(both["sentences"][same_n]))
        flat_ref, _ = flatten_sentences(list(both["sentences_ref"][same_n]))
        direct = both["direct"].to_numpy(float), both["direct_ref"].to_numpy(float)
        rows.append({**row, "pairs compared": len(both), "same sentence count": int(same_n.sum()),
                     "max |Δ Direct|": _max_abs(*direct) if len(both) else np.nan,
                     "max |Δ sentence|": _max_abs(flat, flat_ref) if flat.size else np.nan})
        notes.append(f"{name}: same provenance as the committed cache{detail}; {len(both)} pairs compared.")
    table = pd.DataFrame(rows, columns=["judge", "language", "same provenance", "pairs compared",
                                        "same sentence count", "max |Δ Direct|", "max |Δ sentence|"])
    return Agreement(table.set_index(["judge", "language"]), notes, tuple(judge_label(m) for m in deterministic))


def assert_reproduced(agreement: Agreement, tol: float = 1e-9) -> list[str]:
    """Check that every deterministic judge of the same provenance gave the committed numbers.

    Returns
    -------
    list of str
        One sentence per deterministic judge and language that was compared (empty when none was).

    Raises
    ------
    AssertionError
        When such a judge differs by more than ``tol`` anywhere, or segments a post differently.
    """
    table = agreement.table.reset_index()
    checked = table[table["judge"].isin(agreement.deterministic) & table["same provenance"].astype(bool)
                    & (table["pairs compared"] > 0)]
    out = []
    for r in checked.to_dict("records"):
        worst = float(np.nanmax([r["max |Δ Direct|"], r["max |Δ sentence|"], 0.0]))
        n, same_n = int(r["pairs compared"]), int(r["same sentence count"])
        if worst > tol or same_n != n:
            raise AssertionError(f"{r['judge']}, {r['language']}: the judge is deterministic, yet under the same "
                                 f"provenance its numbers differ from the committed cache (max |Δ| {worst:.3g}, "
                                 f"{same_n} of {n} pairs with the same sentence count)")
        out.append(f"{r['judge']}, {r['language']}: identical to the committed cache on all {n} compared pairs.")
    return out
