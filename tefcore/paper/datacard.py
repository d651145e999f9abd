"""The claims about the MIND data (Sec. 4 and the release's published counts), each with its check."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from tefcore.mind.load import evaluation_pairs
from tefcore.mind.release import (
    FULL_RELEASE,
    FULL_RELEASE_PAIRS,
    pair_counts,
)
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES, TABLE_ORDER
from tefcore.paper.evidence import (
    CANNOT,
    RUNS,
    SECTIONS,
    TABLES,
    Claim,
    Evidence,
    Verdict,
    cannot_check,
    on_data,
    per_lang,
)

_M, _P, _D, _H = SECTIONS[0], SECTIONS[1], SECTIONS[2], SECTIONS[3]
_T3, _T4, _T1, _T2, _F4 = SECTIONS[4], SECTIONS[5], SECTIONS[6], SECTIONS[7], SECTIONS[8]
_CH1, _CH2, _CH3, _CH4 = "01_derivation", "02_propositions", "03_mind_statistics", "04_extraction"
_CH5, _CH6, _CH7, _CH8, _CH9 = (
    "05_main_results", "06_ablation", "07_prompt_robustness", "08_efficiency", "09_calibration")
_RELEASE = "MIND release (published counts)"


# --------------------------------------------------------------------------------------------------
# the MIND data card
# --------------------------------------------------------------------------------------------------
def _posts_sum(ev: Evidence) -> Verdict:
    zh, en = FULL_RELEASE["zh"]["posts"], FULL_RELEASE["en"]["posts"]
    return Verdict(
        f"{int(zh):,} + {int(en):,} = {int(zh + en):,}",
        int(zh + en) == 8358,
        "the paper's two language counts (also the published counts of the release) add up",
    )


def _card_check(key: str, digits: int | None) -> Callable[[Evidence], Verdict]:
    """Check one statistic of the data card per language against the published full release."""

    def check(ev: Evidence) -> Verdict:
        got = {lang: ev.cards[lang][key] for lang in ("zh", "en")}
        shown = {lang: f"{v:,.{digits}f}" if digits is not None else f"{v:,}" for lang, v in got.items()}
        same = all(
            (round(float(got[lang]), digits) if digits is not None else got[lang]) == FULL_RELEASE[lang][key]
            for lang in ("zh", "en")
        )
        return on_data(ev, per_lang(shown), same, sample_confirms=False)

    return check


def _pairs_by_dimension(ev: Evidence) -> Verdict:
    same = 0
    for lang in ("zh", "en"):
        counts = pair_counts(evaluation_pairs(ev.posts[lang]))
        for dim in TABLE_ORDER:
            same += sum(int(counts.loc[dim, side]) == FULL_RELEASE_PAIRS[lang][dim][i]
                        for i, side in enumerate(SIDES))
    return on_data(ev, f"{same} of 24 counts equal", same == 24, sample_confirms=False)


def _six_dimensions(ev: Evidence) -> Verdict:
    seen = {lang: {lab.dimension for p in posts for lab in p.labels} for lang, posts in ev.posts.items()}
    holds = len(DIMENSIONS) == 6 and all(s == set(TABLE_ORDER) for s in seen.values())
    return on_data(ev, per_lang({lang: f"{len(s)}" for lang, s in seen.items()}), holds, sample_confirms=True)


def _two_languages(ev: Evidence) -> Verdict:
    langs = {p.lang for posts in ev.posts.values() for p in posts}
    return on_data(ev, ", ".join(sorted(langs)), langs == set(LANGS) == {"zh", "en"}, sample_confirms=True)


def _events(ev: Evidence) -> Verdict:
    counts = {lang: Counter(p.event for p in posts) for lang, posts in ev.posts.items()}
    holds = all(c["RU"] > 0 and c["GPT"] > 0 for c in counts.values())
    value = "RU " + per_lang({k: c["RU"] for k, c in counts.items()}) + "; GPT " + per_lang(
        {k: c["GPT"] for k, c in counts.items()})
    verdict = on_data(ev, value, holds, sample_confirms=True)
    codes = sorted(set().union(*counts.values()))
    return Verdict(verdict.value, verdict.holds, f"{verdict.note}; event codes present: {', '.join(codes)}")


def _twelve_subsets(ev: Evidence) -> Verdict:
    subsets = {(pair.lang, pair.dimension) for posts in ev.posts.values() for pair in evaluation_pairs(posts)}
    return on_data(ev, f"{len(subsets)} subsets", len(subsets) == 12, sample_confirms=True)


def _deduplicated(ev: Evidence) -> Verdict:
    dup = {lang: sum(n - 1 for n in Counter(p.text.strip() for p in posts).values())
           for lang, posts in ev.posts.items()}
    return on_data(ev, per_lang(dup) + " duplicates", not any(dup.values()), sample_confirms=False)


DATA_CLAIMS: list[Claim] = [
    # --- data card ---------------------------------------------------------------------------------
    Claim("mind-posts-sum", _D, "Abstract, Sec. 4", "8,358 posts, including 5,474 Chinese posts and "
          "2,884 English posts", "8,358", _CH3, TABLES, _posts_sum),
    Claim("mind-posts", _D, "Sec. 4", "5,474 Chinese posts and 2,884 English posts", "5,474 / 2,884", _CH3,
          RUNS, _card_check("posts", None)),
    Claim("mind-dimensions", _D, "Abstract, Sec. 4", "six value dimensions", "6", _CH3, RUNS,
          _six_dimensions),
    Claim("mind-languages", _D, "Sec. 1, Sec. 4", "a cross-lingual benchmark of Chinese and English posts",
          "2", _CH3, RUNS, _two_languages),
    Claim("mind-events", _D, "Sec. 4 (Stage I)", "covering major public events such as the Russia–Ukraine "
          "war and the rise of generative AI", "—", _CH3, RUNS, _events),
    Claim("mind-subsets", _D, "Table 2 caption", "the twelve evaluation subsets (language × dimension)",
          "12", _CH3, RUNS, _twelve_subsets),
    Claim("mind-deduplicated", _D, "Sec. 4 (Stage I)", "raw posts are … anonymized, de-duplicated", "0",
          _CH3, RUNS, _deduplicated),
    Claim("mind-period", _D, "Abstract, Sec. 4", "posts from January 2020 to January 2025, five years of "
          "public events", "5 years", _CH3, CANNOT,
          cannot_check("records carry an event code but no date")),
    Claim("mind-sources", _D, "Sec. 4 (Stage I)", "posts from X, Weibo, Reddit, Zhihu, discussion forums "
          "and news feeds", "6 sources", _CH3, CANNOT, cannot_check("records carry no source")),
    Claim("mind-annotation", _D, "Sec. 4 (Stage II)", "three annotation rounds, three annotators each, a "
          "label accepted when at least two agree", "3 × 3, ≥ 2", _CH3, CANNOT,
          cannot_check("the release has the accepted labels only, no annotator or round")),
    Claim("mind-agents", _D, "Sec. 4 (Stage III)", "a balancing agent generates synthetic samples; a "
          "semantic-edit agent revises ambiguous texts", "—", _CH3, CANNOT,
          cannot_check("records do not mark synthetic or edited posts, so their share is unknown")),
    Claim("mind-figure", _D, "Fig. 3", "radial bars report the number of labels for each value "
          "orientation", "—", _CH3, CANNOT,
          cannot_check("the figure prints no numbers; chapter 3 draws the counts of the data at hand")),
    Claim("release-labels", _D, _RELEASE, "labels of the full release", "11,762 / 4,919", _CH3, RUNS,
          _card_check("labels", None)),
    Claim("release-pairs", _D, _RELEASE, "evaluation pairs (post, dimension) of the full release",
          "10,330 / 4,621", _CH3, RUNS, _card_check("pairs", None)),
    Claim("release-excluded", _D, _RELEASE, "pairs whose labels fall on both sides (no target)",
          "208 / 40", _CH3, RUNS, _card_check("excluded_pairs", None)),
    Claim("release-pairs-by-dim", _D, _RELEASE, "change / stability pairs per language and dimension",
          "24 counts", _CH3, RUNS, _pairs_by_dimension),
    Claim("release-length", _D, _RELEASE, "mean post length, characters (zh) and words (en)",
          "138.2 / 86.8", _CH3, RUNS, _card_check("mean_length", 1)),
    Claim("release-sentences", _D, _RELEASE, "mean sentences per post under the reference segmentation",
          "4.35 / 5.84", _CH3, RUNS, _card_check("mean_sentences", 2)),
]
