"""A task of one's own (tefcore.tasks, `tef init|validate|extract --task|evaluate|fuse`): the whole path on
real judges, a three-side task through the general-K rules, and every bad input as one line that writes
nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tefcore.mind import mind_task
from tefcore.cli import main
from tefcore.evaluate import decisions, predict_pairs, score_table
from tefcore.fusion import fuse_many
from tefcore.extraction.cache import read_cache
from tefcore.judges.labels import score_from_logprobs
from tefcore.tasks import Choices, TaskError, fill_prompt, init_task, load_task

TASK = """name: study
data: posts.csv
language: en
dimensions:
  Housing:
    sides:
      supply: Build more homes; relax zoning.
      preservation: Protect neighbourhoods from densification.
"""
POSTS = """id,text,Housing
p1,"Rents keep rising. We must build more flats near the station.",supply
p2,"The old streets give this town its character. No towers here.",preservation
p3,"Meetings run late. Nobody agrees on anything yet.",
"""
THREE = """name: three
data: posts.jsonl
language: en
dimensions:
  Transport:
    sides:
      car: Roads, parking and lower costs for drivers.
      transit: More and cheaper buses, trams and trains.
      cycling: Safe bike lanes and streets for walking.
"""
THREE_POSTS = [
    ("t1", "I drive to work every day. Please fix the potholes and keep the parking spaces.", "car"),
    ("t2", "The bus comes twice an hour. We need a tram line and more trains to the centre.", "transit"),
    ("t3", "My kids cycle to school on a busy road. Build protected bike lanes now.", "cycling"),
    ("t4", "The council met on Tuesday. The minutes will be published next week.", None),
]


def study(folder: Path, task: str = TASK, posts: str = POSTS, name: str = "posts.csv",
          prompt: str | None = None) -> Path:
    """A task folder; returns the task file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(posts, encoding="utf-8")
    if prompt is not None:
        (folder / "prompt.txt").write_text(prompt, encoding="utf-8")
        task += "prompt: prompt.txt\n"
    (folder / "task.yaml").write_text(task, encoding="utf-8")
    return folder / "task.yaml"


def three_side_task(folder: Path) -> Path:
    lines = [json.dumps({"id": i, "text": t, **({"labels": [{"dimension": "Transport", "side": s}]} if s else {})})
             for i, t, s in THREE_POSTS]
    return study(folder, THREE, "\n".join(lines) + "\n", "posts.jsonl")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- the whole path ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_init_validate_extract_evaluate_fuse_with_the_e5_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["init", "my-study"], capsys)[0] == 0
    code, out, _ = run(["validate", "my-study/task.yaml"], capsys)
    assert code == 0 and "data: my-study/posts.csv, 8 rows (en 8)" in out
    assert "Transport (K = 3): car [A], transit [B], cycling [C]; gold on 4 rows" in out
    code, out, _ = run(["extract", "--task", "my-study/task.yaml", "--model", "e5-zeroshot", "--out", "out",
                        "--no-progress"], capsys)
    assert code == 0 and "16/16 pairs (16 new, 0 already there)" in out
    cache = tmp_path / "out" / "e5-zeroshot" / "prompt" / "en.jsonl"
    frame, prov = read_cache(cache)
    assert prov["task"] == "my-study" and prov["K"] == {"Housing": 2, "Transport": 3}
    assert prov["task_sha256"] == load_task("my-study/task.yaml").sha256
    code, out, _ = run(["evaluate", "--cache", "out/e5-zeroshot/prompt"], capsys)
    header = out.splitlines()[2].split()
    assert code == 0 and header == ["Housing", "Transport", "Avg."]
    assert "judge e5-zeroshot, prompt prompt, language en: 8 pairs" in out  # the rows with gold only
    code, out, _ = run(["fuse", "--cache", "out/e5-zeroshot/prompt", "--rule", "tef", "--format", "csv"], capsys)
    rows = out.splitlines()
    assert code == 0 and len(rows) == 1 + 16  # one decision per document and dimension
    assert rows[0].startswith("cache,lang,id,dimension,rule,decision,confidence,gold")
    assert {r.split(",")[3] for r in rows[1:]} == {"Housing", "Transport"}
    # a second run resumes: nothing new, and the same numbers
    code, out, _ = run(["extract", "--task", "my-study/task.yaml", "--model", "e5-zeroshot", "--out", "out",
                        "--no-progress"], capsys)
    assert code == 0 and "16/16 pairs (0 new, 16 already there)" in out


@pytest.mark.slow
def test_a_three_side_task_runs_end_to_end_with_the_general_k_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    task_file = three_side_task(tmp_path / "three")
    assert run(["extract", "--task", str(task_file), "--model", "e5-zeroshot", "--out", "out", "--no-progress"],
               capsys)[0] == 0
    frame, prov = read_cache(tmp_path / "out" / "e5-zeroshot" / "original" / "en.jsonl")
    assert prov["sides"] == {"Transport": ["car", "transit", "cycling"]} and prov["K"] == {"Transport": 3}
    for direct, sentences in zip(frame["direct_probs"], frame["sentence_probs"]):
        assert len(direct) == 3 and math.isclose(sum(direct), 1.0, abs_tol=1e-12)
        assert all(len(row) == 3 and math.isclose(sum(row), 1.0, abs_tol=1e-12) for row in sentences)
    assert (frame["direct"] == [p[0] for p in frame["direct_probs"]]).all()
    # every rule decides among the three sides, as fuse_many does on each pair's (n, 3) distributions
    sides = prov["sides"]
    table = decisions(frame, rules=["tef", "majority_vote", "soft_vote", "direct"], classes=sides)
    assert len(table) == 4 * 4 and set(table["decision"]) <= {"car", "transit", "cycling"}
    for (_, row), probs in zip(table[table["rule"] == "tef"].iterrows(), frame["sentence_probs"]):
        batch = fuse_many(np.array(probs), np.zeros(len(probs), dtype=int), rule="tef", classes=sides["Transport"])
        assert row["decision"] == batch.prediction[0]
        assert row[["score_car", "score_transit", "score_cycling"]].tolist() == batch.scores[0].tolist()
    scores = score_table(predict_pairs(frame[frame["side"].notna()], classes=sides), classes=sides)
    assert set(scores["dimension"]) == {"Transport", "Average"} and (scores["n"] == 3).all()
    code, out, _ = run(["evaluate", "--cache", "out/e5-zeroshot/original"], capsys)
    assert code == 0 and out.splitlines()[2].split() == ["Transport", "Avg."]


@pytest.mark.slow
def test_an_llm_judge_reads_one_letter_per_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The embedded SmolLM2 on the three-side task: K letters read from the log-probabilities, renormalised."""
    pytest.importorskip("llama_cpp",
                        reason="llama-cpp-python is not installed (bash scripts/setup.sh --local-llm adds it)")
    monkeypatch.chdir(tmp_path)
    task_file = three_side_task(tmp_path / "three")
    code, out, _ = run(["extract", "--task", str(task_file), "--model", "local", "--out", "out", "--limit", "2",
                        "--no-progress"], capsys)
    assert code == 0 and "2/2 pairs" in out
    lines = (tmp_path / "out" / "local" / "original" / "en.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    assert record["direct_source"] == "logprobs" and len(record["direct_logprobs"]) == 3
    lp = np.array(record["direct_logprobs"])
    assert np.allclose(record["direct_probs"], np.exp(lp) / np.exp(lp).sum())
    assert math.isclose(record["direct_mass"], float(np.exp(lp).sum()))


@pytest.mark.slow
def test_the_cross_fitted_judge_learns_a_two_side_task_with_gold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    # one labelled text per side is too few for a probe: the dimension is skipped in one line, never guessed
    study(tmp_path / "partial")  # p3 has no gold
    code, _, err = run(["extract", "--task", "partial/task.yaml", "--model", "e5-crossfit", "--out", "few",
                        "--no-progress"], capsys)
    assert code == 0 and "e5-crossfit skips en/Housing (too few labelled texts per side)" in err
    three_side_task(tmp_path / "three")
    code, _, err = run(["extract", "--task", "three/task.yaml", "--model", "e5-crossfit", "--out", "few3",
                        "--no-progress"], capsys)
    assert code == 0 and "e5-crossfit skips en/Transport (too few labelled texts per side)" in err
    rows = "".join(f'{i},"{t}",{s}\n' for i, t, s in [("a", "Build more flats now.", "supply"),
                                                    ("b", "Keep the old streets as they are.", "preservation"),
                                                    ("c", "More homes near the station, please.", "supply"),
                                                    ("d", "No towers in our quiet town.", "preservation")])
    study(tmp_path / "full", posts="id,text,Housing\n" + rows)
    code, out, _ = run(["extract", "--task", "full/task.yaml", "--model", "e5-crossfit", "--out", "out",
                        "--no-progress"], capsys)
    assert code == 0 and "4/4 pairs" in out
    _, prov = read_cache(tmp_path / "out" / "e5-crossfit" / "original" / "en.jsonl")
    assert prov["labels"].startswith("Housing: side == 'supply' of the labelled pairs")
    assert prov["subsets"]["en/Housing"]["n_posts"] == 4 and prov["subsets"]["en/Housing"]["n_change"] == 2


def test_k_letters_are_renormalised_and_missing_ones_share_the_rest() -> None:
    letters = ("A", "B", "C")
    full = score_from_logprobs({"A": math.log(0.5), " B": math.log(0.2), "C.": math.log(0.1)}, letters=letters)
    assert full.source == "logprobs" and np.allclose(full.probs, [0.625, 0.25, 0.125])
    assert full.p_change == full.probs[0] and math.isclose(full.mass, 0.8)
    none = score_from_logprobs({"X": 0.0}, letters=letters)
    assert none.source == "invalid" and all(math.isnan(p) for p in none.probs)
    ref = score_from_logprobs({"A": math.log(0.5)}, "B", reading="reference", letters=letters)
    assert ref.source == "generated_text" and ref.probs == (0.0, 1.0, 0.0)
    two = score_from_logprobs({"A": math.log(0.3), "B": math.log(0.1)}, letters=("A", "B"))
    assert two.probs == () and math.isclose(two.p_change, 0.75)  # two sides: MIND's record


def test_vllm_asks_for_and_reads_a_task_s_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    """The vLLM judge (stand-in engine): a task's request gets sampling parameters with its letters' token ids
    (the exact read), and the answer is renormalised over the three letters."""
    import test_vllm as tv

    from tefcore.judges.base import ScoreRequest

    monkeypatch.setattr(tv, "VOCAB", [*tv.VOCAB, "A", " B", "B"])  # ids 12, 13, 14; "C" is 2, " C" 3, "C." 7
    judge, llm = tv.backend(monkeypatch)
    choices = Choices("Tone", ("calm", "angry", "sad"), ("1", "2", "3"))
    llm.answers = [tv.output({12: math.log(0.5), 13: math.log(0.2), 14: math.log(0.1), 2: math.log(0.1)}, "A")]
    [score] = judge.score([ScoreRequest("p", "t", "en", "Tone", "x", "sentence", choices=choices)])
    assert score.source == "logprobs" and np.allclose(score.probs, np.array([0.5, 0.3, 0.1]) / 0.9)
    [params] = llm.calls[-1][1]
    assert params.logprob_token_ids == [2, 3, 7, 12, 13, 14] and params.logprobs == 6


def test_an_api_judge_reads_a_task_s_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    """An OpenAI-compatible judge: the top-k of the answer position read over the task's letters."""
    from types import SimpleNamespace

    from tefcore.judges.base import ScoreRequest
    from tefcore.judges.openai import OpenAIBackend

    monkeypatch.setenv("TEF_TEST_KEY", "not-a-key")
    judge = OpenAIBackend("m", "http://127.0.0.1:9/v1", "TEF_TEST_KEY", max_concurrency=1)
    top = [{"token": t, "logprob": math.log(p)} for t, p in (("B", 0.6), (" A", 0.2), ("C", 0.1), ("Sure", 0.05))]
    answer = {"model": "m", "choices": [{"message": {"content": "B"}, "logprobs": {"content": [
        {"token": "B", "logprob": math.log(0.6), "top_logprobs": top}]}}]}
    judge._client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=lambda **kw: answer)))
    choices = Choices("Tone", ("calm", "angry", "sad"), ("1", "2", "3"))
    [score] = judge.score([ScoreRequest("p", "t", "en", "Tone", "x", "sentence", choices=choices)])
    assert score.source == "logprobs" and np.allclose(score.probs, [2 / 9, 6 / 9, 1 / 9])


# --- MIND as one task among others: its numbers do not move ------------------------------------------
def test_mind_prompts_are_the_task_prompt_filled_from_mind_s_schema() -> None:
    """Every prompt of the embedded sample (original and verbose, both languages, every sentence) built
    through the task path equals the protocol's prompt, and the committed caches' template hashes hold."""
    from tefcore.extraction.run import build_requests
    from tefcore.mind import evaluation_pairs, load_posts
    from tefcore.mind.prompts import build_prompt, describe_side, template_hash
    from tefcore.tasks.schema import task_template
    from tefcore.mind.schema import get_dimension

    labels = {"en": ("change-oriented", "stability-oriented"), "zh": ("变革取向", "稳定取向")}
    for lang in ("en", "zh"):
        for pair in evaluation_pairs(load_posts(lang)):
            dim = get_dimension(pair.dimension)
            mind = Choices(dim.zh if lang == "zh" else dim.name, labels[lang],
                           tuple(describe_side(pair.dimension, s, lang) for s in ("change", "stability")), ("C", "S"))
            for variant in ("original", "verbose"):
                for request in build_requests(pair, mind_task(variant), "reference"):
                    assert fill_prompt(task_template(lang, variant), request.text, mind, lang) == request.prompt
                    assert request.prompt == build_prompt(request.text, pair.dimension, lang, variant)
    caches = sorted((Path(__file__).parents[1] / "data" / "caches").rglob("*.jsonl"))
    assert caches
    for cache in caches:
        prov = json.loads(cache.read_text(encoding="utf-8").splitlines()[0])["provenance"]
        assert prov["template_sha256"] == template_hash(prov["lang"], prov["prompt_variant"]), cache


def test_mind_caches_score_the_same_through_the_task_path() -> None:
    """Every committed cache: the score table with MIND's sides given per dimension, as a task gives them,
    equals the MIND table exactly."""
    from tefcore.fusion import CLASSES
    from tefcore.extraction.cache import COLUMNS

    for cache in sorted((Path(__file__).parents[1] / "data" / "caches").rglob("*.jsonl")):
        frame, _ = read_cache(cache)
        assert list(frame.columns) == list(COLUMNS)  # a MIND cache reads as before: no K-side columns
        sides = {d: list(CLASSES) for d in frame["dimension"].unique()}
        mind = score_table(predict_pairs(frame))
        task = score_table(predict_pairs(frame, classes=sides), classes=sides)
        assert mind.equals(task), cache


def test_mind_requests_carrying_mind_s_choices_score_the_same(tmp_path: Path) -> None:
    """The e5 zero-shot judge on MIND pairs, with and without MIND's sides in the pairs: bitwise equal."""
    from dataclasses import replace

    from tefcore.judges import make_backend
    from tefcore.extraction.run import Setting, chunks, score_chunk
    from tefcore.mind import evaluation_pairs, load_posts
    from tefcore.mind.prompts import choices

    pairs = evaluation_pairs(load_posts("en"))[:12]
    as_task = [replace(p, choices=choices(p.dimension, p.lang)) for p in pairs]
    results = []
    for these in (pairs, as_task):
        judge = make_backend("e5-zeroshot")
        judge.prepare(these)
        results.append([[s.p_change for s in scores] for chunk in chunks(these, Setting("en", mind_task("original")), 64)
                        for _, scores in score_chunk(judge, chunk)])
    assert results[0] == results[1]


@pytest.mark.parametrize("module", ["tefcore.mind", "tefcore.mind.load", "tefcore.mind.prompts", "tefcore.tasks",
                                    "tefcore.tasks.schema", "tefcore.tasks.load", "tefcore.judges.base",
                                    "tefcore.judges.e5", "tefcore.evaluate", "tefcore.cli"])
def test_each_room_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """tasks imports mind, and mind names a task's sides only for type checking (or inside a function): no
    package-level cycle, whichever module a program imports first."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


# --- bad input: one line each, nothing written --------------------------------------------------------
BAD = {
    "gold side not in the schema": (
        TASK, POSTS.replace(",supply\n", ",suply\n"), "posts.csv", None,
        "study/posts.csv, row 1, column 'Housing': gold side 'suply' is not a side of 'Housing' "
        "(supply, preservation)"),
    "gold side not in the schema (JSON lines)": (
        TASK.replace("posts.csv", "posts.jsonl"),
        '{"id": "a", "text": "Build homes.", "labels": [{"dimension": "Housing", "side": "towers"}]}\n',
        "posts.jsonl", None,
        "study/posts.jsonl, line 1, field 'labels': gold side 'towers' is not a side of 'Housing' "
        "(supply, preservation)"),
    "missing text column": (
        TASK, POSTS.replace("id,text,", "id,body,"), "posts.csv", None,
        "study/posts.csv: no column 'text' (columns: id, body, Housing); set `text:`"),
    "missing id column": (
        TASK, POSTS.replace("id,text,", "key,text,"), "posts.csv", None,
        "study/posts.csv: no column 'id' (columns: key, text, Housing); set `id:`"),
    "empty text": (
        TASK, POSTS.replace('"Meetings run late. Nobody agrees on anything yet."', '"  "'), "posts.csv", None,
        "study/posts.csv, row 3, column 'text': empty text"),
    "duplicate ids": (
        TASK, POSTS.replace("p3,", "p1,"), "posts.csv", None,
        "study/posts.csv, row 3, column 'id': duplicate id 'p1' (first on row 1)"),
    "prompt without {text}": (
        TASK, POSTS, "posts.csv", "Dimension: {dimension}\n{sides}\nAnswer {letters}:\n",
        "study/prompt.txt: the prompt has no {text} placeholder (where the document or sentence goes)"),
    "dimension with one side": (
        TASK.replace("      preservation: Protect neighbourhoods from densification.\n", ""), POSTS, "posts.csv",
        None, "study/task.yaml, line 6: dimension 'Housing' has 1 side (supply); a dimension needs 2 to 26 named sides"),
    "unreadable data file": (
        TASK.replace("posts.csv", "missing.csv"), POSTS, "posts.csv", None,
        "study/missing.csv: cannot read the data (No such file or directory)"),
    "data file not UTF-8": (
        TASK, POSTS.replace("Rents", "Loyers \udcff"), "posts.csv", None, "study/posts.csv: cannot read the data ("),
    "unknown language": (
        TASK.replace("language: en", "language: fr"), POSTS, "posts.csv", None,
        "study/task.yaml, line 3: unknown language 'fr'; use one of en, zh"),
    "unknown language in a lang column": (
        TASK.replace("language: en\n", ""), "id,text,lang\na,Build more homes.,de\n", "posts.csv", None,
        "study/posts.csv, row 1, column 'lang': unknown language 'de'; use one of en, zh"),
}


@pytest.mark.parametrize("case", sorted(BAD), ids=str)
def test_bad_input_is_one_line_and_writes_nothing(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    task, posts, name, prompt, expected = BAD[case]
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / name).write_bytes(posts.encode("utf-8", errors="surrogateescape"))
    if prompt is not None:
        (folder / "prompt.txt").write_text(prompt, encoding="utf-8")
        task += "prompt: prompt.txt\n"
    (folder / "task.yaml").write_text(task, encoding="utf-8")
    code, out, err = run(["validate", "study/task.yaml"], capsys)
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and err.startswith(f"tef: error: {expected}"), err
    code, out, err = run(["extract", "--task", "study/task.yaml", "--model", "e5-zeroshot", "--out", "out"], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith(f"tef: error: {expected}")
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_every_problem_is_listed_and_a_missing_task_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    study(tmp_path / "study", posts=POSTS.replace(",supply\n", ",suply\n").replace("p3,", "p1,"))
    with pytest.raises(TaskError) as bad:
        load_task("study/task.yaml")
    assert len(bad.value.problems) == 2 and str(bad.value).endswith("(and 1 more problem: see `tef validate`)")
    code, _, err = run(["validate", "study/task.yaml"], capsys)
    assert code == 1 and len(err.splitlines()) == 2
    code, _, err = run(["validate", "nowhere/task.yaml"], capsys)
    assert code == 1 and err == "tef: error: nowhere/task.yaml: cannot read the task file (No such file or directory)\n"
    study(tmp_path / "typo", task=TASK.replace("dimensions:", "dimesions:"))
    code, _, err = run(["validate", "typo/task.yaml"], capsys)
    assert code == 1 and "typo/task.yaml, line 4: unknown key 'dimesions'" in err


def test_task_flags_that_belong_to_mind_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    study(tmp_path / "study")
    code, _, err = run(["extract", "--task", "study/task.yaml", "--model", "e5-zeroshot", "--prompt", "verbose"],
                       capsys)
    assert code == 2 and "--prompt applies to MIND, not to --task" in err
    code, _, err = run(["extract", "--task", "study/task.yaml", "--model", "e5-zeroshot", "--lang", "zh"], capsys)
    assert code == 2 and "--lang zh: task 'study' has no text in it (its languages: en)" in err
    assert not (tmp_path / "data").exists()


def test_a_task_prompt_and_its_pairs(tmp_path: Path) -> None:
    task = load_task(study(tmp_path / "study", prompt="Q: {dimension}?\n{sides}\nText: {text}\nAnswer {letters}:\n\n"))
    pairs = task.pairs()
    assert [(p.post_id, p.side) for p in pairs] == [("p1", "supply"), ("p2", "preservation"), ("p3", None)]
    assert task.prompt("  Build. ", "Housing", "en") == (
        "Q: Housing?\nA (supply): Build more homes; relax zoning.\n"
        "B (preservation): Protect neighbourhoods from densification.\nText: Build.\nAnswer A or B:")
    assert task.prompt_name == "prompt" and task.provenance("en")["K"] == {"Housing": 2}
    default = load_task(study(tmp_path / "plain"))
    assert default.prompt_name == "original" and "Answer with a single letter, A or B." in default.prompt(
        "x", "Housing", "en")
    with pytest.raises(KeyError) as unknown:  # a lookup of a name that is not there: a KeyError, and a ValueError
        task.prompt("x", "Transport", "en")
    assert isinstance(unknown.value, ValueError) and str(unknown.value) == "task 'study' has no dimension 'Transport'"


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    init_task(tmp_path / "s")
    (tmp_path / "s" / "task.yaml").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="already holds"):
        init_task(tmp_path / "s")
    assert (tmp_path / "s" / "task.yaml").read_text(encoding="utf-8") == "mine"
