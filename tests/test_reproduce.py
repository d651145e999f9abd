"""``tef reproduce`` and the chapter parameter checks, up to the engine boundary.

* ``tef reproduce qwen2.5-7b --dry-run``: every step's exact command, the data directory and the reading
  named, every ``-p`` a parameter the chapter declares, every cache a chapter reads written by the
  extraction; the checks that refuse a plan (missing data, a reading the chapters cannot read, a
  tensor-parallel size the box cannot resume).
* Unknown parameters are errors however a chapter runs: ``tef book -p 04.model=...`` and papermill by
  hand (a tiny notebook, and chapter 4 itself), with the same message.
* The same steps with vLLM replaced by a stand-in engine (``tests/fixtures/fake_vllm``: vLLM's API,
  fixed log-probabilities): ``tef extract`` writes the caches with their provenance, chapter 5 runs
  under papermill with the plan's own parameters on them, and the run's label is read from the cache.
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tefbook.commands import RESULT_CHAPTERS, chapter_file, command_for_chapter, plan, reproduce_command
from tefbook.parameters import (
    UnknownParameter,
    assigned_names,
    check_parameters,
    declared_parameters,
    unknown_parameters,
)
from tefbook.reproduce import run_step
from tefcore.mind import mind_task
from tefcore.mind.load import resolve_data_dir

REPO = Path(__file__).resolve().parents[1]
FAKE_VLLM = REPO / "tests" / "fixtures" / "fake_vllm"
TEMPLATES = REPO / "tests" / "fixtures" / "chat_templates"


def _book_argv(report: str) -> list[str]:
    """The ``tef book`` command of a printed plan, split as the shell splits it."""
    joined = report.replace("\\\n", " ")
    words = shlex.split(next(x for x in joined.splitlines() if "tef book " in x and not x.startswith("#")))
    return words[words.index("tef"):]  # after the variables set for the step


# --------------------------------------------------------------------------------------------------
# the dry run
# --------------------------------------------------------------------------------------------------
def test_dry_run_prints_and_checks_every_step(capfd: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tefcore.cli import main

    monkeypatch.delenv("QWEN25_7B_PATH", raising=False)
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PYTHONPATH", str(FAKE_VLLM))  # the dry run imports vLLM: the stand-in here
    assert main(["reproduce", "qwen2.5-7b", "--dry-run"]) == 0
    out = capfd.readouterr().out
    assert "note: vLLM 0.0.0+fake (distribution unknown) imports here: platform unknown (unknown)" in out
    data = os.path.relpath(resolve_data_dir(), REPO) if resolve_data_dir().is_relative_to(REPO) else str(resolve_data_dir())
    extract = next(x for x in out.splitlines() if x.startswith("tef extract "))
    assert shlex.split(extract) == ["tef", "extract", "--model", "qwen2.5-7b", "--lang", "en", "zh", "--prompt",
                                    "original", "--data-dir", data, "--out", "data/caches", "--reading", "summed"]
    serve = next(x for x in out.splitlines() if x.startswith("vllm serve "))
    assert serve.startswith("vllm serve Qwen/Qwen2.5-7B-Instruct ") and serve.endswith(" &")
    book = _book_argv(out)
    assert book[:8] == ["tef", "book", "--chapters", *RESULT_CHAPTERS]
    params = [book[i + 1] for i, a in enumerate(book) if a == "-p"]
    for text in params:  # every -p names a parameter its chapter declares
        target, _, value = text.partition("=")
        number, _, name = target.partition(".")
        assert name in declared_parameters(chapter_file(number, REPO)), text
    given_params = {p.partition("=")[0]: yaml.safe_load(p.partition("=")[2]) for p in params}
    assert given_params["05.models"] == "e5-crossfit,e5-zeroshot,local,qwen2.5-7b"
    assert given_params["07.llm_models"] == "local,qwen2.5-7b"
    assert given_params["08.model"] == "qwen2.5-7b" and given_params["08.data_dir"] == data
    assert given_params["08.endpoint"] == "http://127.0.0.1:8000/v1"
    assert given_params["08.endpoint_model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert {given_params[f"{n}.cache_dir"] for n in ("05", "06", "07", "09")} == {"data/caches"}
    assert "checks passed" in out and "problem:" not in out
    # the server the plan starts has no authentication: chapter 8's client gets a placeholder key
    assert "VLLM_API_KEY=none tef book --chapters" in out.replace("\\\n", " ")


def test_dry_run_through_the_console_script() -> None:
    env = {**os.environ, "PYTHONPATH": str(FAKE_VLLM)}
    result = subprocess.run([sys.executable, "-m", "tefcore.cli", "reproduce", "qwen2.5-7b", "--dry-run"],
                            cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "tef extract --model qwen2.5-7b" in result.stdout and "tef book --chapters 05 06 07 08 09" in result.stdout


def test_dry_run_without_vllm_does_not_pass(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Where vLLM cannot be imported, the dry run of a vLLM model prints the steps, says why step 1 would
    stop, and exits 2 (it used to say "checks passed"); an API model needs no engine here."""
    from tefcore.cli import main

    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(REPO)
    assert main(["reproduce", "qwen2.5-7b", "--dry-run"]) == 2
    out = capfd.readouterr().out
    assert "tef extract --model qwen2.5-7b" in out and "checks passed" not in out
    assert ("problem: vLLM cannot be imported here (ModuleNotFoundError: No module named 'vllm'): step 1 would "
            "stop at once") in out
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test-only")
    assert main(["reproduce", "deepseek-v3.2", "--dry-run"]) == 0
    assert "checks passed" in capfd.readouterr().out


def test_dry_run_of_an_api_model_without_its_key_does_not_pass(capfd: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An API judge whose key variable is unset fails the dry run, as a vLLM judge without vLLM does."""
    from tefcore.cli import main

    monkeypatch.chdir(REPO)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    assert main(["reproduce", "deepseek-v3.2", "--dry-run"]) == 2
    out = capfd.readouterr().out
    assert "problem: DEEPSEEK_API_KEY is not set: step 1 would stop at its first request" in out
    assert "checks passed" not in out
    monkeypatch.setenv("DEEPSEEK_API_KEY", "  ")  # blank is unset
    assert main(["reproduce", "deepseek-v3.2", "--dry-run"]) == 2


def test_dry_run_says_what_the_run_needs(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The data (the embedded sample, and how to get the full release), the disk for weights and caches, the
    GPU memory, the time at the paper's scale labelled as an estimate, and the gated model's access."""
    from tefbook.reproduce import needs
    from tefcore.cli import main

    monkeypatch.chdir(REPO)
    monkeypatch.delenv("MIND_DATA_DIR", raising=False)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test-only")
    assert main(["reproduce", "deepseek-v3.2", "--dry-run"]) == 0  # the notes are printed with the plan
    out = capfd.readouterr().out
    assert "note: data: the embedded MIND sample (605 of 4,621 en pairs, 1,215 of 10,330 zh pairs)" in out
    notes, problems = needs("llama3-8b", resolve_data_dir(), ["original", "verbose"], ["en", "zh"],
                            REPO / "data" / "caches", {})
    said = "\n".join(notes)
    assert "`tef download --dest data/mind-full`" in said and problems == []
    assert "disk for the weights: about 16.1 GB (8.03 billion parameters in bfloat16)" in said
    assert re.search(r"disk for the caches of the full release: about \d+ MB \(14,951 pairs x 2 prompt", said)
    assert "GPU memory: one 24 GB GPU" in said
    time = next(n for n in notes if n.startswith("time at the paper's scale"))
    assert "(an estimate, not a measurement)" in time
    minutes = int(re.search(r"about ([\d,]+) minutes", time).group(1).replace(",", ""))
    queries = 2 * (4621 * 5.84 + 10330 * 4.35)
    assert minutes == round(queries / 40 / 60 + 5), time  # full release's sentence queries at 40 a second
    assert "access: Meta-Llama-3-8B-Instruct is a gated model" in said and "HF_TOKEN" in said
    qwen = "\n".join(needs("qwen2.5-7b", resolve_data_dir(), ["original"], ["en"], REPO / "data" / "caches", {})[0])
    assert "access:" not in qwen and "15.2 GB" in qwen  # not gated: no access note


def test_the_full_release_is_not_called_the_sample(tmp_path: Path) -> None:
    from tefbook.reproduce import needs
    from tefcore.mind.load import sample_dir

    for lang in ("en", "zh"):
        shutil.copy2(sample_dir() / f"mind_{lang}.jsonl", tmp_path / f"mind_{lang}.jsonl")
    notes, problems = needs("qwen2.5-7b", tmp_path, ["original"], ["en", "zh"], tmp_path / "caches", {})
    assert notes[0] == f"data: {tmp_path}" and problems == []
    assert "1,000 bytes a pair, an estimate" in notes[1]  # no cache here to measure


def test_step_3_leaves_the_books_html_alone(tmp_path: Path) -> None:
    """The result chapters are rebuilt into their own folder: `tef book` empties the folder it builds into,
    so building into _build would delete every other chapter's page."""
    book = plan("qwen2.5-7b", out=tmp_path / "caches", root=REPO).step("book")
    argv = list(book.argv)
    assert argv[argv.index("--build-dir") + 1] == "_build/reproduce/qwen2.5-7b"
    assert book.writes == ((REPO / "_build" / "reproduce" / "qwen2.5-7b" / "html").resolve(),)
    assert (REPO / "_build" / "html").resolve() not in book.writes


def test_limit_reaches_the_extraction() -> None:
    planned = plan("qwen2.5-7b", limit=3, root=REPO)
    argv = planned.step("extract").argv
    assert argv[argv.index("--limit") + 1] == "3" and "the first 3 pairs" in planned.step("extract").note
    assert "--limit" not in plan("qwen2.5-7b", root=REPO).step("extract").argv
    with pytest.raises(ValueError, match="--limit must be >= 0"):
        plan("qwen2.5-7b", limit=-1, root=REPO)


def test_missing_model_folder_is_a_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QWEN25_7B_PATH", str(tmp_path / "absent"))
    planned = plan("qwen2.5-7b", root=REPO)
    assert f"model folder {tmp_path / 'absent'} not found" in " ".join(planned.problems)


def test_the_plans_steps_link_up(tmp_path: Path) -> None:
    planned = plan("qwen2.5-7b", ("original", "verbose"), out=tmp_path / "caches", root=REPO)
    assert planned.ok, planned.problems
    extract, serve, book = planned.steps
    assert (extract.name, serve.name, book.name) == ("extract", "serve", "book") and serve.background
    assert set(book.reads) <= set(extract.writes) | set(extract.reads)
    assert (tmp_path / "caches" / "qwen2.5-7b" / "verbose" / "zh.jsonl").resolve() in extract.writes
    assert book.parameters()["07"]["prompts"] == "original,verbose"
    assert book.parameters()["05"]["cache_dir"] == str((tmp_path / "caches").resolve())


def test_api_models_leave_chapter_8_out_and_start_no_server() -> None:
    planned = plan("deepseek-v3.2", root=REPO)
    assert planned.ok and [s.name for s in planned.steps] == ["extract", "book"]
    assert "08" not in planned.step("book").parameters()
    assert any("chapter 08 is left out" in n for n in planned.notes)


def test_problems_are_reported_not_run(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from tefcore.cli import main

    planned = plan("qwen2.5-7b", data_dir=tmp_path / "nowhere", root=REPO)
    assert not planned.ok and any("no mind_en.jsonl" in p for p in planned.problems)
    assert main(["reproduce", "qwen2.5-7b", "--data-dir", str(tmp_path / "nowhere"), "--dry-run"]) == 2
    assert "problem: no mind_en.jsonl" in capfd.readouterr().out
    with pytest.raises(ValueError, match="the plan cannot run"):
        from tefbook.reproduce import run_plan

        run_plan(planned)


def test_bad_arguments_are_one_line_errors(capfd: pytest.CaptureFixture[str]) -> None:
    from tefcore.cli import main

    assert main(["reproduce", "gpt-5", "--dry-run"]) == 2
    assert "unknown model 'gpt-5'" in capfd.readouterr().err
    with pytest.raises(ValueError, match="unknown prompt variant"):
        plan("qwen2.5-7b", ("long",))
    with pytest.raises(ValueError, match="not a result chapter"):
        plan("qwen2.5-7b", chapters=("04",))
    with pytest.raises(ValueError, match="--reading applies to LLM judges"):
        plan("e5-zeroshot", reading="reference")


def test_the_reference_reading_needs_chapters_that_read_it() -> None:
    planned = plan("qwen2.5-7b", reading="reference", root=REPO)
    assert planned.step("extract").argv[-2:] == ("--reading", "reference")
    reading_chapters = [n for n in ("05", "06", "07", "09")
                        if "reading" in declared_parameters(chapter_file(n, REPO))]
    if len(reading_chapters) == 4:  # the chapters read <lang>.reading-reference.jsonl: the plan links up
        assert planned.ok and planned.step("book").parameters()["05"]["reading"] == "reference"
    else:  # they read <lang>.jsonl only: refused, naming why
        assert not planned.ok
        assert any("has no `reading` parameter" in p for p in planned.problems)


def _cache_header(path: Path, tensor_parallel: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "header", "provenance_id": "x",
              "provenance": {"backend": "vllm", "tensor_parallel_size": tensor_parallel}}
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")


def test_resuming_pins_the_recorded_tensor_parallel_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QWEN3_14B_TP", raising=False)
    _cache_header(tmp_path / "qwen3-14b" / "original" / "en.jsonl", 2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    planned = plan("qwen3-14b", langs=("en",), out=tmp_path, chapters=("05",), root=REPO)
    assert planned.ok and dict(planned.step("extract").env) == {"QWEN3_14B_TP": "2"}
    assert planned.step("extract").command().startswith("QWEN3_14B_TP=2 tef extract --model qwen3-14b")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    refused = plan("qwen3-14b", langs=("en",), out=tmp_path, chapters=("05",), root=REPO)
    assert any("tensor_parallel_size=2" in p and "1 GPU(s)" in p and "floating-point" in p
               for p in refused.problems)
    _cache_header(tmp_path / "qwen2.5-7b" / "original" / "en.jsonl", 2)  # a fixed size of 1 now
    fixed = plan("qwen2.5-7b", langs=("en",), out=tmp_path, chapters=("05",), root=REPO)
    assert any("registry now gives 1" in p for p in fixed.problems)


def test_exact_labels_go_through_the_registry_variable() -> None:
    planned = plan("qwen2.5-7b", exact_labels="never", chapters=("05",), root=REPO)
    assert dict(planned.step("extract").env) == {"TEF_VLLM_EXACT_LABELS": "never"}
    with pytest.raises(ValueError, match="applies to vllm judges"):
        plan("gpt-4o-mini", exact_labels="never")


def test_commands_the_chapters_print() -> None:
    assert reproduce_command("qwen3-14b", ("original",), ("zh",), reading="reference") == \
        "tef reproduce qwen3-14b --prompts original --langs zh --reading reference"
    text = command_for_chapter("07", "llama3-8b")
    assert text.startswith("tef reproduce llama3-8b --prompts original,verbose,minimal --langs en,zh "
                           "--reading summed --chapters 07")
    assert "tef extract --model llama3-8b --lang en zh --prompt original verbose minimal" in text
    assert "tef book --chapters 07" in text and "-p 05." not in text and "vllm serve" not in text
    assert "vllm serve meta-llama/Meta-Llama-3-8B-Instruct" in command_for_chapter("08", "llama3-8b")


ONE_LINE = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=30)


@given(st.one_of(ONE_LINE, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()))
def test_book_parameter_values_read_back(value: Any) -> None:
    """Whatever the value, ``tef book`` reads back what the plan meant (``-p`` values are YAML)."""
    from tefbook.commands import Step, _yaml

    step = Step("book", ("tef", "book", "-p", f"05.x={_yaml(value)}"))
    assert step.parameters() == {"05": {"x": value}}


# --------------------------------------------------------------------------------------------------
# unknown parameters are errors however a chapter runs
# --------------------------------------------------------------------------------------------------
def test_assigned_and_declared_names() -> None:
    assert list(declared_parameters(chapter_file("04", REPO)))[:2] == ["models", "langs"]
    assert assigned_names("a = 1\nb: str = 'x'\nc, d = 1, 2\ne.f = 3\n") == {"a": 1, "b": "x"}
    with pytest.raises(ValueError, match="no code cell is tagged 'parameters'"):
        declared_parameters(TEMPLATES / "README.md")


def test_unknown_parameters_from_the_history() -> None:
    history = ["", 'models = "local"\nlimit = 12', '# Parameters\nmodel = "x"\nlimit = 0\n', "import os"]
    assert unknown_parameters(history) == (["model"], ["models", "limit"])
    assert unknown_parameters(["", "a = 1", "import os"]) == ([], [])  # nothing injected
    with pytest.raises(UnknownParameter, match=r"^ch has no parameter 'model' \(did you mean 'models'\?\); "
                                              r"its parameters are: models, limit$"):
        check_parameters("ch", history)
    check_parameters("ch", ["", "a = 1", "# Parameters\na = 2\n"])


TINY = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
alpha = 1
beta = "b"

# %%
from tefbook.parameters import check_parameters

check_parameters("tiny")
print("alpha is", alpha)
'''


def _papermill(source: Path, out: Path, parameters: dict[str, Any]) -> Any:
    import jupytext
    import papermill

    return papermill.execute_notebook(jupytext.read(source), str(out), parameters=parameters,
                                      kernel_name="python3", cwd=str(out.parent), progress_bar=False,
                                      log_output=False)


@pytest.mark.slow
def test_papermill_with_an_unknown_name_fails_in_the_first_cell(tmp_path: Path) -> None:
    from papermill.exceptions import PapermillExecutionError

    source = tmp_path / "tiny.py"
    source.write_text(TINY, encoding="utf-8")
    ran = _papermill(source, tmp_path / "ok.ipynb", {"alpha": 5})
    assert "alpha is 5" in json.dumps(ran.cells[-1].outputs)
    with pytest.raises(PapermillExecutionError) as failed:
        _papermill(source, tmp_path / "bad.ipynb", {"gamma": 5})
    assert failed.value.ename == "UnknownParameter"
    assert failed.value.evalue == "tiny has no parameter 'gamma'; its parameters are: alpha, beta"


@pytest.mark.slow
def test_papermill_on_chapter_4_with_model_fails_naming_models(tmp_path: Path) -> None:
    from papermill.exceptions import PapermillExecutionError

    with pytest.raises(PapermillExecutionError) as failed:
        _papermill(chapter_file("04", REPO), tmp_path / "04.ipynb", {"model": "qwen2.5-7b"})
    assert failed.value.ename == "UnknownParameter"
    assert failed.value.evalue.startswith("04_extraction has no parameter 'model' (did you mean 'models'?)")
    assert "its parameters are: models, langs, prompt" in failed.value.evalue


@pytest.mark.slow
def test_tef_book_refuses_an_unknown_parameter_naming_the_chapters() -> None:
    result = subprocess.run([sys.executable, "-m", "tefbook", "--chapters", "04", "-p", "04.model=qwen2.5-7b",
                             "--execute-only"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "04_extraction has no parameter 'model'" in result.stderr
    assert "its parameters are: models, langs, prompt" in result.stderr


# --------------------------------------------------------------------------------------------------
# the same steps with a stand-in engine
# --------------------------------------------------------------------------------------------------
def _covering_sample(folder: Path, per_side: int = 2) -> Path:
    """MIND sample records (verbatim lines) until every (dimension, side) has ``per_side`` labels."""
    from tefcore.mind.load import mind_filename, sample_dir

    folder.mkdir(parents=True, exist_ok=True)
    for lang in ("en", "zh"):
        seen: dict[tuple[str, str], int] = defaultdict(int)
        keep = []
        for line in (sample_dir() / mind_filename(lang)).read_text(encoding="utf-8").splitlines():
            labels = json.loads(line)["labels"]
            if any(seen[(lab["dimension"], lab["side"])] < per_side for lab in labels):
                keep.append(line)
                for lab in labels:
                    seen[(lab["dimension"], lab["side"])] += 1
        (folder / mind_filename(lang)).write_text("\n".join(keep) + "\n", encoding="utf-8")
    return folder


def _fake_engine() -> Any:
    spec = importlib.util.spec_from_file_location("fake_vllm_for_checks", FAKE_VLLM / "vllm" / "__init__.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Plan qwen2.5-7b for chapter 5, run its extraction with the stand-in engine, then chapter 5."""
    root = tmp_path_factory.mktemp("reproduce")
    data, out = _covering_sample(root / "data"), root / "caches"
    # the default --out is data/caches, where the CPU judges' caches that the result chapters also read live
    shutil.copytree(REPO / "data" / "caches", out)
    env = {"PYTHONPATH": os.pathsep.join([str(FAKE_VLLM), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "CUDA_VISIBLE_DEVICES": "0"}
    saved = {k: os.environ.get(k) for k in (*env, "QWEN25_7B_PATH", "TEF_PROJECT_ROOT")}
    os.environ.update(env)
    os.environ.pop("QWEN25_7B_PATH", None)
    try:
        planned = plan("qwen2.5-7b", data_dir=data, out=out, chapters=("05",), root=REPO)
        assert planned.ok, planned.problems
        codes = [run_step(planned.step("extract"), planned.root) for _ in range(2)]  # the second resumes
        os.environ["TEF_PROJECT_ROOT"] = str(REPO)
        params = {**planned.step("book").parameters()["05"], "n_boot": 20}
        notebook = _papermill(chapter_file("05", REPO), root / "05_main_results.ipynb", params)
        yield {"plan": planned, "codes": codes, "data": data, "out": out, "notebook": notebook, "params": params}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.mark.slow
def test_the_stand_in_run_writes_the_caches_the_chapter_reads(fake_run: dict[str, Any]) -> None:
    from tefcore.extraction.cache import read_cache_file
    from tefcore.judges.chat import ChatTemplate
    from tefcore.extraction.run import build_requests
    from tefcore.mind.load import evaluation_pairs, load_posts

    assert fake_run["codes"] == [0, 0]
    engine = _fake_engine()
    chat = ChatTemplate((TEMPLATES / "Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8"), "", "<|im_end|>")
    for lang in ("en", "zh"):
        path = fake_run["out"] / "qwen2.5-7b" / "original" / f"{lang}.jsonl"
        assert path.resolve() in fake_run["plan"].step("extract").writes
        frame, prov = read_cache_file(path)
        pairs = evaluation_pairs(load_posts(lang, fake_run["data"]))
        assert len(frame) == len(pairs) > 12  # every pair once: the rerun resumed, added nothing
        assert (prov["backend"], prov["vllm"], prov["model"]) == ("vllm", "0.0.0+fake", "Qwen/Qwen2.5-7B-Instruct")
        assert prov["system_prompt"] == "template default (reference rendering)"
        assert prov["label_read"] == "exact log-probabilities of every label token (tefcore)"
        assert prov["hardware"]["class"] == "GPU" and prov["tensor_parallel_size"] == 1
        first = build_requests(pairs[0], mind_task("original"), "reference")
        expected = [engine.p_change(engine.Tokenizer().encode(chat.render(r.prompt), add_special_tokens=False))
                    for r in first]
        row = frame.set_index(["post_id", "dimension"]).loc[(pairs[0].post_id, pairs[0].dimension)]
        assert row["direct"] == pytest.approx(expected[0], abs=1e-12)
        assert row["sentences"] == pytest.approx(expected[1:], abs=1e-12)
        assert row["direct_mass"] == pytest.approx(engine.MASS)


@pytest.mark.slow
def test_the_run_is_labelled_from_its_provenance(fake_run: dict[str, Any]) -> None:
    from tefbook.companion.provenance import run_label, run_labels
    from tefbook.companion.runs import load_runs
    from tefcore.extraction.cache import read_cache

    frame, provenance = read_cache(fake_run["out"] / "qwen2.5-7b" / "original")
    labels = {run_label(prov, frame) for prov in provenance.values()}
    assert labels == {"ours: Qwen2.5-7B, vLLM 0.0, GPU, MIND sample"}
    runs = load_runs(fake_run["params"]["models"], "original", ("en", "zh"), fake_run["out"])
    assert run_labels(runs)["qwen2.5-7b"] == "ours: Qwen2.5-7B, vLLM 0.0, GPU, MIND sample"


def _outputs(notebook: Any) -> str:
    texts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            texts += [output.get("text", ""), data.get("text/plain", ""), data.get("text/markdown", ""),
                      html.unescape(re.sub(r"<[^>]+>", " ", data.get("text/html", "")))]
    return re.sub(r"\s+", " ", "\n".join(texts))


@pytest.mark.slow
def test_chapter_5_runs_on_the_stand_in_caches_with_the_plans_parameters(fake_run: dict[str, Any]) -> None:
    text = _outputs(fake_run["notebook"])
    assert fake_run["params"]["cache_dir"] == str(fake_run["out"].resolve())
    # the judge table reads the run's engine and hardware from its provenance, beside the CPU judges
    assert "Qwen2.5-7B, GPU original Chinese 24 20 vLLM 0.0 GPU MIND sample" in text
    assert "SmolLM2-135M, CPU" in text
    assert fake_run["params"]["example_judge"] == "qwen2.5-7b"  # the worked example is the model's own cache


@pytest.mark.slow
def test_chapter_5_labels_the_rows_from_the_provenance(fake_run: dict[str, Any]) -> None:
    text = _outputs(fake_run["notebook"])
    assert "ours: Qwen2.5-7B, GPU Direct" in text and "CPU judge" not in text


def test_stand_in_engine_answers_like_vllm() -> None:
    engine = _fake_engine()
    params = engine.SamplingParams(temperature=0.0, max_tokens=1, logprobs=2, logprob_token_ids=[2, 4])
    llm = engine.LLM("m", max_model_len=8)
    answer = llm.generate([{"prompt_token_ids": [20, 21]}], params)[0]
    first = answer.outputs[0].logprobs[0]
    p = engine.p_change([20, 21])
    assert set(first) == {2, 4} and math.exp(first[2].logprob) == pytest.approx(0.9 * p * engine.MASS)
    with pytest.raises(ValueError, match="longer than the maximum model length"):
        llm.generate([{"prompt_token_ids": list(range(8))}], params)


# --------------------------------------------------------------------------------------------------
# the commands book/running.md shows are the generated ones
# --------------------------------------------------------------------------------------------------
def _generated_blocks(page: str) -> list[str]:
    """The fenced blocks that follow a ``<!-- generated by tefbook.commands...`` comment."""
    blocks = []
    for part in page.split("<!-- generated by tefbook.commands")[1:]:
        fence = part.index("```bash\n") + len("```bash\n")
        blocks.append(part[fence:part.index("\n```", fence)])
    return blocks


def test_running_md_shows_the_generated_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    for var in ("QWEN25_7B_PATH", "QWEN25_7B_TP", "TEF_VLLM_EXACT_LABELS"):
        monkeypatch.delenv(var, raising=False)
    lines, script = _generated_blocks((REPO / "book" / "running.md").read_text(encoding="utf-8"))
    variants = ("original", "verbose", "minimal")
    models = ("qwen2.5-7b", "llama3-8b", "qwen3-14b", "deepseek-v3.2", "gpt-4o-mini")
    assert lines == "\n".join(reproduce_command(m, variants, reading="reference") for m in models)
    assert script == plan("qwen2.5-7b", variants, data_dir="data/mind", reading="reference", root=REPO).script()


def test_the_ledger_names_the_command_tef_reproduce_plans() -> None:
    """tefpaper cannot import the book tools; its GPU rows print the same line they would."""
    from tefcore.mind.release import FULL_RELEASE_DIR
    from tefpaper.ledger import reproduce_line

    for model, prompts in (("qwen2.5-7b", "original"), ("llama3-8b", "original,verbose,minimal")):
        assert reproduce_line(model, prompts) == reproduce_command(
            model, tuple(prompts.split(",")), ("en", "zh"), data_dir=FULL_RELEASE_DIR, reading="reference")

