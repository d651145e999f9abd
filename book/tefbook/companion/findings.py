"""What the book found, as the front page opens with it: one Markdown table computed when the book is built.

Each row is one finding, the premise it rests on and the chapter that shows it, computed by the same functions
the chapters call, on the same data, so that the front page and the chapters cannot disagree:

* TEF against the strongest baseline on the CPU judges (chapter 5: :func:`tefbook.companion.results.versus_best_baseline`
  on the committed caches), in how many judge-language cells the difference lies beyond the noise, and in how
  many of them the judge stays below the majority-class floor of its pairs;
* the claims ledger's counts, the paper's claims apart from the reader's checks (chapter 11);
* what a reviewer's reading of the paper's tables finds (:mod:`tefpaper.review`): Table 3 against its floors
  and its noise (chapter 5), Table 1 against its floor (chapter 7, :func:`table1_floor`),
  Table 2's tokens per query (chapter 8, :func:`table2_per_query`), each with its premise and what holds
  without it;
* what only a GPU run can settle (the ledger's GPU rows).

The Sphinx extension ``book/_ext/tef_findings.py`` puts :func:`findings_markdown` on the front page.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tefbook.companion.labels import LANG_LABELS, SHORT_NAMES, of_count
from tefpaper import review
from tefpaper import tables as paper
from tefpaper.evidence import HOLDS, KINDS, NOT_CHECKED, NOT_HOLD, WHOSE
from tefpaper.ledger import evaluate_ledger, whose_counts

#: The CPU judges of chapter 5, as its parameters cell names them.
CPU_JUDGES: tuple[str, ...] = ("e5-crossfit", "e5-zeroshot", "local")
_CHAPTER = "../notebooks/{}.html"  # the front page lives in book/, the chapters in notebooks/
COLUMNS: tuple[str, ...] = ("What was asked", "What the book found", "On what premise", "Shown in")
"""The front page's columns: the question, the finding, its premise, the chapter that shows it (a link)."""
_PAIRS = "the paper scored the pairs of the release's files, which the paper does not print"


def cpu_versus(cache_dir: str | Path = "data/caches", models: Sequence[str] = CPU_JUDGES, n_boot: int = 1000,
               seed: int = 0) -> pd.DataFrame:
    """Chapter 5's comparison of TEF with the strongest baseline (accuracy, original prompt, both languages),
    with a ``verdict`` column: ``"TEF ahead"``, ``"baseline ahead"`` or ``"within noise"`` (the paired
    bootstrap's 95 % interval of the difference of Averages against zero); ``floor``, the majority-class
    floor of the cell's pairs, and ``clears``, whether the better of TEF and the baseline is above it, as
    chapter 5 sets each judge against its floor."""
    from tefbook.companion.results import predict_runs, versus_best_baseline
    from tefbook.companion.runs import chapter_runs

    from tefbook.companion.results import majority_floor

    runs = chapter_runs(list(models), "original", ["zh", "en"], cache_dir)
    pred = predict_runs(runs, rules=["direct", "majority_vote", "soft_vote", "tef"], invalid="drop")
    vs = versus_best_baseline(pred, metrics_=("accuracy",), n_boot=n_boot, random_state=seed)
    floor = vs["lang"].map(majority_floor(runs))  # chapter 5's floor: the Average of the larger sides' shares
    return vs.assign(verdict=np.select([vs["low"] > 0, vs["high"] < 0], ["TEF ahead", "baseline ahead"],
                                       "within noise"),
                     floor=floor, clears=vs[["tef", "baseline"]].max(axis=1) > floor)


def _link(stem: str, text: str, anchor: str = "") -> str:
    """A link to a chapter's page as raw HTML, as the introduction writes them (a partial build leaves some out)."""
    return f'<a href="{_CHAPTER.format(stem)}{"#" + anchor if anchor else ""}">{text}</a>'


Row = tuple[str, str, str, str]


def _cpu_row(vs: pd.DataFrame) -> Row:
    counts = vs["verdict"].value_counts()
    below = vs[~vs["clears"]]
    judges = "; ".join(f"{SHORT_NAMES.get(m, m)}, {' and '.join(LANG_LABELS[lang] for lang in g['lang'])}"
                       for m, g in below.groupby("model", sort=False))
    found = (f"TEF minus the strongest baseline: {vs['difference'].min():+.1f} to {vs['difference'].max():+.1f} "
             f"accuracy points over {len(vs)} judge-language cells; TEF ahead beyond the noise in "
             f"{counts.get('TEF ahead', 0)}, behind in {counts.get('baseline ahead', 0)}, within the noise in "
             f"{counts.get('within noise', 0)}. {len(below)} of the {len(vs)} cells are judges below the "
             f"majority-class floor of their pairs ({judges}): in those no rule beats always answering the larger "
             "side, so TEF against the baseline there compares ways of rounding noise")
    premise = "our judges on the embedded MIND sample: a statement about them, not about the paper's models"
    return "TEF against the strongest baseline, CPU judges", found, premise, _link("05_main_results", "ch. 5")


def unchecked_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """The paper's claims the ledger does not check here, by what they wait for: a GPU run of the paper's models
    (``gpu``), the full MIND release rather than the embedded sample (``full release``: counts of the MIND files
    that only the whole release settles), or nothing the release holds (``cannot``); the three add up to the
    claims not checked.

    Examples
    --------
    >>> from tefpaper.ledger import evaluate_ledger
    >>> c = unchecked_counts(evaluate_ledger())
    >>> sum(c.values()) == int(whose_counts(evaluate_ledger()).loc[WHOSE["paper"], NOT_CHECKED])
    True
    """
    kinds = ledger[(ledger["whose"] == WHOSE["paper"]) & (ledger["verdict"] == NOT_CHECKED)]["kind"]
    counts = {"gpu": int((kinds == KINDS["gpu"]).sum()), "full release": int((kinds == KINDS["data"]).sum()),
              "cannot": int((kinds == KINDS["cannot"]).sum())}
    if sum(counts.values()) != len(kinds):
        raise ValueError(f"ledger: {len(kinds)} claims not checked, but {sum(counts.values())} of them wait for a GPU "
                         "run, the full release or nothing the release holds; name the others' kind in the front page")
    return counts


def _release_state(counts: pd.Series) -> str:
    """What the data at hand checked of the release's counts (a :func:`whose_counts` row).

    Examples
    --------
    >>> _release_state(pd.Series({"all": 6, HOLDS: 0, NOT_HOLD: 0, NOT_CHECKED: 6}))
    'none checked here: each needs the full release'
    >>> _release_state(pd.Series({"all": 6, HOLDS: 5, NOT_HOLD: 1, NOT_CHECKED: 0}))
    '5 hold, 1 do not'
    """
    if counts[NOT_CHECKED] == counts["all"]:
        return "none checked here: each needs the full release"
    return f"{counts[HOLDS]} hold, {counts[NOT_HOLD]} do not" + (
        f", {counts[NOT_CHECKED]} not checked" if counts[NOT_CHECKED] else "")


def _ledger_row(ledger: pd.DataFrame) -> Row:
    whose = whose_counts(ledger)
    paper_row, reader_row, release_row = (whose.loc[WHOSE[k]] for k in ("paper", "reader", "release"))
    holds = ledger[(ledger["verdict"] == HOLDS) & (ledger["whose"] == WHOSE["paper"])]["kind"].value_counts()
    unchecked = unchecked_counts(ledger)
    found = (f"{paper_row['all']} claims of the paper: {paper_row[HOLDS]} hold, {paper_row[NOT_HOLD]} do not, "
             f"{paper_row[NOT_CHECKED]} not checked here ({unchecked['gpu']} wait for a GPU run of the paper's models, "
             f"{unchecked['full release']} for counts of the full MIND release, which `tef download` fetches, "
             f"rather than of the sample the book runs on, and {unchecked['cannot']} cannot be checked from the "
             "release at all). What holds is arithmetic on the paper's "
             f"tables ({holds.get(KINDS['tables'], 0)}), formula and simulation checks "
             f"({holds.get(KINDS['formula'], 0)}) and counts of the MIND files ({holds.get(KINDS['data'], 0)}); "
             f"{int((ledger['kind'] == KINDS['run']).sum())} rows rest on a run of the paper's models. Apart from "
             f"the claims, {release_row['all']} counts of the release's files that the paper does not print "
             f"({_release_state(release_row)}) and {reader_row['all']} reader's checks of its tables: "
             f"{reader_row[HOLDS]} pass, {reader_row[NOT_HOLD]} fail")
    return ("The claims ledger", found, "the paper's printed tables and formulas; no LLM output; each reader's "
            "check states its own premise", _link("11_claims_ledger", "ch. 11"))


def table2_per_query(prompt: str = "original") -> pd.DataFrame:
    """Table 2 read per query as chapter 8 reads it: each row's token total over the release's queries (one
    Direct query per evaluation pair, pairs x mean sentences per post sentence queries) beside the fewest
    tokens a query of its kind can hold (the words of the protocol's prompt around the text, the fewest
    over the six dimensions, and an English post's mean words; no token of Qwen2.5's or LLaMA 3's tokenizer
    spans two words).

    Returns
    -------
    pandas.DataFrame
        Index ``(model, method)`` of Table 2; columns ``queries``, ``tokens per query`` and ``fewest possible``.

    Examples
    --------
    >>> t = table2_per_query()
    >>> t.loc[("qwen2.5-7b", "direct"), ["tokens per query", "fewest possible"]].round(1).tolist()
    [33.4, 59.7]
    """
    from tefcore.mind.prompts import build_prompt
    from tefcore.mind.release import FULL_RELEASE
    from tefcore.mind.schema import TABLE_ORDER

    release = pd.DataFrame(FULL_RELEASE).T[["pairs", "mean_length", "mean_sentences"]]
    release["sentence queries"] = release["pairs"] * release["mean_sentences"]
    release["prompt words"] = [min(review.prompt_words(build_prompt("x", d, lang, prompt)) - 1 for d in TABLE_ORDER)
                               for lang in release.index]  # the text "x" is one word
    release["post words"] = np.where(release.index == "en", release["mean_length"], 0.0)
    least = pd.Series({
        "direct": (release["pairs"] * (release["prompt words"] + release["post words"])).sum() / release["pairs"].sum(),
        "sentence": (release["sentence queries"] * release["prompt words"]).sum() / release["sentence queries"].sum()})
    wide = paper.load_table("table2").pivot_table(index=["model", "method"], columns="quantity", values="value",
                                                  sort=False)
    kind = np.where(wide.index.get_level_values("method") == "direct", "direct", "sentence")
    queries = np.where(kind == "direct", release["pairs"].sum(), release["sentence queries"].sum())
    return pd.DataFrame({"queries": queries, "tokens per query": wide["tokens"] * 1e6 / queries,
                         "fewest possible": least[kind].to_numpy()}, index=wide.index)


def table1_floor() -> dict[str, float | int]:
    """Table 1 read against its majority-class floor as chapter 7 reads it: the floor of Table 1's quantity on
    the release's pairs (the mean over languages of the mean over dimensions of the larger side's share), the
    printed accuracies below it (all, the strongest baselines', TEF's), and for how many models TEF's margin
    grows from the original to the verbose to the minimal prompt (no premise). A test holds these equal to
    chapter 7's numbers (``tefbook.chapters.ch07.paper_numbers``; the companion imports no chapter module).

    Examples
    --------
    >>> t = table1_floor()
    >>> round(t["paper_floor"], 1), t["paper_below"], t["paper_cells"], t["n_grows"], t["n_models"]
    (62.6, 6, 30, 5, 5)
    """
    t1 = paper.load_table("table1")
    wide = t1.pivot_table(index="model", columns=["method", "prompt"], values="value").reindex(paper.MODELS)
    floor = float(review.cell_counts()["floor"].groupby("lang").mean().mean())
    margins = paper.prompt_robustness_summary(t1)[[f"margin_{p}" for p in ("original", "verbose", "minimal")]]
    grows = (margins["margin_verbose"] > margins["margin_original"]) & (
        margins["margin_minimal"] > margins["margin_verbose"])
    return {"paper_floor": floor, "paper_below": int((wide < floor).to_numpy().sum()), "paper_cells": int(wide.size),
            "paper_below_base": int((wide["strongest_baseline"] < floor).to_numpy().sum()),
            "paper_base_cells": int(wide["strongest_baseline"].size),
            "paper_below_tef": int((wide["tef"] < floor).to_numpy().sum()),
            "n_grows": int(grows.sum()), "n_models": len(margins)}


def _review_rows() -> list[Row]:
    t3 = paper.load_table("table3")
    confusion, floors, noise = review.confusion_check(t3), review.floors(t3), review.noise(t3)
    misfit, no_k = int((~confusion["consistent"]).sum()), int(confusion["reachable"].isna().sum())
    premise = (f"{_PAIRS}; {misfit} of its {len(confusion)} (accuracy, macro-F1) pairs fit no confusion matrix on "
               f"those counts and {no_k} accuracies are no fraction k/n, so the premise is in doubt")
    t1n = table1_floor()
    direct = table2_per_query().xs("direct", level="method")
    payable = direct["tokens per query"] / direct["fewest possible"]
    return [
        ("Table 3 against its majority-class floors",
         f"if the premise holds, {int(floors['below'].sum())} of {len(floors)} printed accuracies lie below the "
         f"floor of their cell, {int(floors.loc[floors['method'] == 'tef', 'below'].sum())} of them TEF's", premise,
         _link("05_main_results", "ch. 5")),
        ("Table 3: TEF's wins and the sampling noise",
         f"TEF ahead of the strongest baseline in {int(noise['win'].sum())} of {len(noise)} accuracy cells "
         f"(no premise); if the premise holds, {int(noise['inside'].sum())} of these wins lie inside the noise of "
         "TEF's accuracy",
         "the wins: none; the noise: the same premise", _link("05_main_results", "ch. 5")),
        ("Table 1 (the three prompts) against its majority-class floor",
         f"if the premise holds, {t1n['paper_below']} of Table 1's {t1n['paper_cells']} printed accuracies lie "
         f"below the floor of {t1n['paper_floor']:.1f} %: {t1n['paper_below_base']} of the "
         f"{t1n['paper_base_cells']} strongest baselines and {t1n['paper_below_tef']} of TEF's. Without it: TEF's "
         f"margin grows from the original to the verbose to the minimal prompt for "
         f"{of_count(t1n['n_grows'], t1n['n_models'], 'model')}",
         f"the floor: {_PAIRS}; the margins: none", _link("07_prompt_robustness", "ch. 7")),
        ("Table 2: the tokens of one query",
         f"if the premise holds, a Direct query of Table 2 holds {direct['tokens per query'].min():.1f} to "
         f"{direct['tokens per query'].max():.1f} tokens, but the protocol's prompt words alone need "
         f"{direct['fewest possible'].min():.1f}: the token column cannot be the Direct prompts' tokens. Without "
         f"it the verdict stands unless the paper scored at least {100 * (1 - payable.max()):.0f} % fewer pairs "
         f"than its release holds: at the fewest tokens a query can hold, the Direct totals pay for at most "
         f"{100 * payable.max():.0f} % of the release's Direct queries",
         "one Direct query per pair of the release's files (the paper prints no count of queries)",
         _link("08_efficiency", "ch. 8")),
    ]


def _gpu_row(ledger: pd.DataFrame) -> Row:
    unchecked = unchecked_counts(ledger)
    return ("What only a GPU run can settle",
            f"{unchecked['gpu']} of the claims not checked: the accuracies of Qwen2.5-7B, LLaMA3-8B and Qwen3-14B (Table 3), the reading of "
            "the answer token, the ablation of Qwen2.5-7B (Table 4), the three prompts (Table 1), the efficiency on "
            f"GPUs (Table 2) and the calibration figure; each chapter prints its `tef reproduce` command. Of the "
            f"others, {unchecked['full release']} need the full MIND release (chapter 3 counts the sample) and "
            f"{unchecked['cannot']} cannot be checked from the release (the API models may have changed, the data's "
            "collection is not in it)",
            "a GPU with vLLM and the full MIND release, reading the answer token as the reference release does",
            _link("11_claims_ledger", "ch. 11", "claims-table3"))


def findings_frame(cache_dir: str | Path = "data/caches") -> pd.DataFrame:
    """The front page's findings: one row per finding, columns :data:`COLUMNS` (the question, the finding, its
    premise, the chapter that shows it); ``frame.attrs["summary"]`` says them in one paragraph."""
    ledger, vs = evaluate_ledger(), cpu_versus(cache_dir)
    rows = [_cpu_row(vs), _ledger_row(ledger), *_review_rows(), _gpu_row(ledger)]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    ahead, paper_claims = int((vs["verdict"] == "TEF ahead").sum()), ledger[ledger["whose"] == WHOSE["paper"]]
    frame.attrs["summary"] = (
        f"In short: on the judges that run on a CPU, TEF is ahead of the strongest baseline beyond the noise in "
        f"{ahead} of {len(vs)} cells. None of the {int((paper_claims['verdict'] == HOLDS).sum())} claims of the paper "
        "that hold rests on a run of its LLMs: they are its arithmetic, its formulas and its data card. The reviewer's "
        "readings of Tables 1, 2 and 3 hold only if the paper scored the pairs its release holds, which its own "
        "numbers put in doubt. The paper's accuracies themselves wait for a GPU run."
        if not (ledger["kind"] == KINDS["run"]).any() else
        f"In short: on the judges that run on a CPU, TEF is ahead of the strongest baseline beyond the noise in "
        f"{ahead} of {len(vs)} cells; the ledger's rows reproduced by a run of the paper's models say how its "
        "LLM results fare.")
    return frame


def findings_markdown(cache_dir: str | Path = "data/caches") -> str:
    """:func:`findings_frame` as a Markdown table (``|`` in a cell escaped) and its summary, for the front page."""
    frame = findings_frame(cache_dir)
    lines = ["| " + " | ".join(COLUMNS) + " |", "| " + " | ".join("---" for _ in COLUMNS) + " |"]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n\n" + frame.attrs["summary"]


def cache_pairs_markdown(cache_dir: str | Path = "data/caches", judge: str = "local",
                         prompts: Sequence[str] = ("original", "verbose", "minimal")) -> str:
    """The pairs each of a judge's committed caches holds, one row per prompt and one column per language, as a
    Markdown table counted from the caches (the appendix's account of the SmolLM2 caches); a dash where a cache
    is absent.

    Examples
    --------
    >>> from tefbook.companion.runs import repo_path
    >>> print(cache_pairs_markdown(repo_path("data/caches")).splitlines()[0])
    | prompt | pairs, English | pairs, Chinese |
    """
    from tefcore.extraction.cache import read_cache_file

    root, langs = Path(cache_dir) / judge, ("en", "zh")
    lines = ["| prompt | " + " | ".join(f"pairs, {LANG_LABELS[lang]}" for lang in langs) + " |",
             "| --- | " + " | ".join("---:" for _ in langs) + " |"]
    for prompt in prompts:
        cells = [f"{len(read_cache_file(root / prompt / f'{lang}.jsonl')[0]):,}"
                 if (root / prompt / f"{lang}.jsonl").is_file() else "–" for lang in langs]
        lines.append(f"| {prompt} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
