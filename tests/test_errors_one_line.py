"""Bad input is refused in one line that names where: the file, the parameter or the variable.

Each case used to end in a traceback or in a message that blamed something else (a broken build, a
connection error, a codec); here each one is one line on stderr, with exit code 2 from ``tef``, and
nothing half-written is left behind.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest


from fault_server import CLI_KEY_ENV, FaultServer, cli_openai_args, synthetic_mind
from secrets_util import assert_text_clean
from tefcore.cli import main

KEY = "sk-one-line-test-0123456789abcdef"


def one_line_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    """The stderr of a ``tef`` run that must have failed with exit code 2 in one line, no traceback."""
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("tef: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- the API key -----------------------------------------------------------------------------------
def openai_cli(monkeypatch: pytest.MonkeyPatch, server: FaultServer, tmp_path: Path) -> list[str]:
    """``tef extract`` arguments against the fault server, its environment set (the key left to the caller)."""
    spec = cli_openai_args(server.base_url, synthetic_mind(tmp_path / "data", n_posts=2), tmp_path / "out")
    if spec is None:
        pytest.skip("the registry has no entry for an OpenAI-compatible server")
    cmd, env = spec
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return cmd[cmd.index("extract"):]


@pytest.mark.parametrize(("key", "why"), [
    (KEY + "\r", "ends with a line break or space"),
    (KEY + "\n", "ends with a line break or space"),
    (" " + KEY, "starts with a space or line break"),
    (KEY[:10] + "é" + KEY[10:], "non-ASCII"),
    (KEY[:10] + "\x00" + KEY[10:], "control character"),
])
def test_a_key_an_http_header_cannot_carry_is_named_by_its_variable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str,
        why: str) -> None:
    with FaultServer() as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, key.replace("\x00", "\x01"))  # an environment cannot hold NUL
        line = one_line_error(capsys, main(args))
        assert server.n_requests == 0  # refused before any request, never retried as a connection error
    assert f"the API key in {CLI_KEY_ENV} " in line and why.split()[-1] in line
    assert_text_clean(line, KEY, "the error line")
    assert_text_clean(line, KEY[10:], "the error line")


# -- the book's parameters ---------------------------------------------------------------------------
BOOTSTRAP_CHAPTER = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
n_boot: "int >= 1" = 1000  # bootstrap replicates
seed: "int >= 0" = 0  # bootstrap seed
langs = "en,zh"

# %%
raise ValueError("the chapter ran")
"""


def tiny_book(root: Path) -> Path:
    """A book of one chapter whose parameters cell declares ``n_boot`` and ``seed``."""
    (root / "notebooks").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: t\n")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n- file: notebooks/05_x\n")
    (root / "notebooks" / "05_x.py").write_text(BOOTSTRAP_CHAPTER)
    return root


@pytest.mark.parametrize(("param", "message"), [
    ("n_boot=-1", "05_x: parameter 'n_boot' must be an int >= 1, got -1"),
    ("n_boot=0", "05_x: parameter 'n_boot' must be an int >= 1, got 0"),
    ("n_boot=1.5", "05_x: parameter 'n_boot' must be an int >= 1, got 1.5"),
    ("n_boot=many", "05_x: parameter 'n_boot' must be an int >= 1, got 'many'"),
    ("seed=-5", "05_x: parameter 'seed' must be an int >= 0, got -5"),
    ("seed=true", "05_x: parameter 'seed' must be an int >= 0, got True"),
])
def test_a_bad_book_parameter_is_named_before_any_chapter_runs(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], param: str, message: str) -> None:
    from tefbook import build

    root = tiny_book(tmp_path / "root")
    assert build.main(["--root", str(root), "--execute-only", "-p", f"05.{param}"]) == 1
    err = capfd.readouterr().err
    assert [line for line in err.splitlines() if line.strip()] == [f"tef book: error: {message}"], err
    assert not (root / "_build" / "executed").exists()


def test_1e9_is_a_number_and_an_integral_one_an_int() -> None:
    from tefbook.parameters import check_declared, declared_in, parse_param, read_chapter, set_parameters

    assert parse_param("05.n_boot=1e9") == ("05", "n_boot", 1e9)  # YAML 1.1 alone reads a string
    assert parse_param("05.langs=en") == ("05", "langs", "en")
    notebook = jupytext_notebook(BOOTSTRAP_CHAPTER)
    assert check_declared({"n_boot": 1e9, "langs": "en"}, declared_in(notebook)) == {"n_boot": 10**9, "langs": "en"}
    set_parameters(notebook, {"n_boot": 2e3})
    assert 'n_boot: "int >= 1" = 2000  # bootstrap replicates' in notebook.cells[0].source
    assert callable(read_chapter)


def jupytext_notebook(text: str) -> Any:
    import jupytext

    return jupytext.reads(text, fmt="py:percent")


def test_a_chapter_run_by_hand_checks_its_declared_parameters_in_its_kernel() -> None:
    from tefbook.parameters import BadParameter, check_parameters

    space = {"__annotations__": {"n_boot": "int >= 1", "seed": "int >= 0"}, "n_boot": 1000, "seed": -5}
    with pytest.raises(BadParameter, match=r"^05_main_results: parameter 'seed' must be an int >= 0, got -5$"):
        check_parameters("05_main_results", [], space)
    space["seed"] = 3
    check_parameters("05_main_results", [], space)


@pytest.mark.parametrize(("chapter", "names"), [
    ("05_main_results", {"n_boot", "seed"}), ("06_ablation", {"n_boot", "seed"}),
    ("07_prompt_robustness", {"n_boot", "seed"}), ("09_calibration", {"n_boot", "seed", "n_bins"}),
    ("08_efficiency", {"count_sample", "ttft_sample", "seed"}), ("02_propositions", {"seed", "sweep_bootstrap"}),
    ("10_teaching_lab", {"seed", "n_posts"}),
])
def test_the_chapters_declare_their_counts_and_seeds(chapter: str, names: set[str]) -> None:
    from tefbook.parameters import check_declared, declared_in, parameter_defaults, read_chapter

    notebook = read_chapter(Path(__file__).parents[1] / "notebooks" / f"{chapter}.py")
    declared = declared_in(notebook)
    assert names <= set(declared)
    defaults = parameter_defaults(notebook)
    assert check_declared(defaults, declared) == defaults  # every default within its own declaration


# -- a full disk, a read-only folder, a path through a file ------------------------------------------
def no_space(*args: Any, **kwargs: Any) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_init_on_a_full_disk_leaves_nothing_and_a_rerun_succeeds(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import tefcore.tasks as tasks

    write = tasks._write_example
    calls: list[Path] = []

    def full_after_two(source: Path, target: Path, name: str) -> None:
        calls.append(target)
        if len(calls) > 2:
            target.write_bytes(b"")  # the disk filled up in the middle of this file
            no_space()
        write(source, target, name)

    folder = tmp_path / "studies" / "my-study"
    monkeypatch.setattr(tasks, "_write_example", full_after_two)
    line = one_line_error(capsys, main(["init", str(folder)]))
    assert line == f"tef: error: {folder}: No space left on device (the disk is full: free some space, then run " \
                   "the same command again)"
    assert list(tmp_path.iterdir()) == []  # no README.md, posts.csv or empty prompt.txt, no hidden folder
    monkeypatch.setattr(tasks, "_write_example", write)
    assert main(["init", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "posts.csv", "prompt.txt", "task.yaml"]


def test_init_into_a_folder_that_holds_other_files_moves_all_four_or_none(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import tefcore.tasks as tasks

    (tmp_path / "notes.txt").write_text("mine")
    rename, calls = os.rename, []

    def fail_third(src: Any, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))
        rename(src, dst)

    monkeypatch.setattr(tasks.os, "rename", fail_third)
    line = one_line_error(capsys, main(["init", str(tmp_path)]))
    assert f"{tmp_path}: Read-only file system" in line
    monkeypatch.setattr(tasks.os, "rename", rename)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_init_and_extract_through_a_file_say_so_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    line = one_line_error(capsys, main(["init", str(tmp_path / "notes.txt" / "study")]))
    assert line == f"tef: error: {tmp_path / 'notes.txt' / 'study'}: Not a directory (a part of the path is a file, " \
                   "not a folder)"
    with FaultServer() as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, KEY)
        args[args.index("--out") + 1] = str(tmp_path / "notes.txt" / "out")
        line = one_line_error(capsys, main(args))
    assert line.startswith(f"tef: error: {tmp_path / 'notes.txt' / 'out'}") and "Not a directory" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder (chmod does not bite)")
def test_init_and_extract_into_a_read_only_folder_say_so_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        line = one_line_error(capsys, main(["init", str(locked / "study")]))
        assert f"{locked / 'study'}: Permission denied" in line
        with FaultServer() as server:
            args = openai_cli(monkeypatch, server, tmp_path)
            monkeypatch.setenv(CLI_KEY_ENV, KEY)
            args[args.index("--out") + 1] = str(locked)
            line = one_line_error(capsys, main(args))
        assert str(locked) in line and "Permission denied" in line
    finally:
        locked.chmod(0o755)


def test_init_and_extract_into_a_read_only_folder_say_so_in_one_line_even_as_root(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The read-only folder of the test above, simulated where the writers reach the system (``os.mkdir``,
    which ``Path.mkdir`` calls, and ``os.open`` and ``open`` for a new file), so that it bites as root too."""
    import builtins

    locked = tmp_path / "locked"
    locked.mkdir()
    mkdir, os_open, py_open, refused = os.mkdir, os.open, builtins.open, []

    def denied(path: Any) -> bool:
        target = Path(os.fsdecode(path)).absolute()
        if locked in target.parents and not target.exists():
            refused.append(target)
            return True
        return False

    def fake_mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if denied(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))
        mkdir(path, *args, **kwargs)

    def fake_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and denied(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))
        return os_open(path, flags, *args, **kwargs)

    def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, bytes, os.PathLike)) and set(mode) & set("wax") and denied(file):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(file))
        return py_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    monkeypatch.setattr(os, "open", fake_os_open)
    monkeypatch.setattr(builtins, "open", fake_open)
    line = one_line_error(capsys, main(["init", str(locked / "study")]))
    assert f"{locked / 'study'}: Permission denied" in line and refused
    assert list(locked.iterdir()) == []  # nothing half-written
    refused.clear()
    with FaultServer() as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, KEY)
        args[args.index("--out") + 1] = str(locked)
        line = one_line_error(capsys, main(args))
    assert str(locked) in line and "Permission denied" in line and refused
    assert list(locked.iterdir()) == []


def test_extract_on_a_full_disk_names_the_cache_keeps_it_whole_and_resumes(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import tefcore.extraction.cache as cache
    from tefcore.extraction.cache import read_cache

    write, calls = cache.write_all, []

    def full_after_two(fd: int, data: bytes) -> None:
        calls.append(len(data))
        if len(calls) > 2:
            os.write(fd, data[: len(data) // 2])  # half a record reached the disk
            no_space()
        write(fd, data)

    monkeypatch.setattr(cache, "write_all", full_after_two)
    with FaultServer() as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, KEY)
        line = one_line_error(capsys, main(args))
        files = list((tmp_path / "out").rglob("*.jsonl"))
        assert len(files) == 1 and line == f"tef: error: {files[0]}: No space left on device (the disk is full: " \
                                           "free some space, then run the same command again)"
        assert len(read_cache(files[0])[0]) == 1  # the header and one whole pair; the torn half cut away
        monkeypatch.setattr(cache, "write_all", write)
        assert main(args) == 0
    assert len(read_cache(files[0])[0]) == 2  # two posts of one label each: every pair once


# -- tef claims --data-dir -----------------------------------------------------------------------------
def test_claims_with_a_missing_or_corrupt_data_dir_fails_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tefpaper.__main__ import main as claims

    assert claims(["--data-dir", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"tef claims: error: --data-dir {tmp_path / 'absent'}: no such folder"
    for lang in ("en", "zh"):
        (tmp_path / f"mind_{lang}.jsonl").write_text("{not json\n")
    assert claims(["--data-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"tef claims: error: --data-dir {tmp_path}: ") and "mind_" in err and ":1: " in err


# -- the cache of a prompt file named ...txt -------------------------------------------------------------
def test_a_prompt_file_named_dots_txt_keeps_its_cache_inside_the_model_folder(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tefcore.extraction.cache import cache_path
    from tefcore.tasks import init_task, load_task

    folder = init_task(tmp_path / "study")
    (folder / "prompt.txt").rename(folder / "...txt")
    yaml_file = folder / "task.yaml"
    yaml_file.write_text(yaml_file.read_text().replace("prompt: prompt.txt", "prompt: ...txt"))
    assert load_task(yaml_file).prompt_name == "__"
    with FaultServer() as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, KEY)
        args = [a for a in args if a not in ("--lang", "en", "--prompt", "original", "--data-dir")]
        args = [a for a in args if not a.endswith("data")] + ["--task", str(yaml_file), "--limit", "1"]
        assert main(args) == 0, capsys.readouterr().err
    caches = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.jsonl"))
    assert caches and all(len(Path(c).parts) == 3 and Path(c).parts[1] == "__" for c in caches), caches
    with pytest.raises(ValueError, match=r"the prompt name '\.\.' cannot name a cache folder"):
        cache_path(tmp_path, "local", "..", "en")


# -- an endpoint that answers without usable log-probabilities --------------------------------------------
def warnings_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("tef: warning: ") and "are invalid" in line]


@pytest.mark.parametrize("fault", ["no-logprobs", "empty-content", "neither", "malformed"])
def test_a_cache_of_invalid_answers_warns_and_retry_invalid_scores_them_again(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, fault: str) -> None:
    from tefcore.extraction.cache import cache_invalid_answers

    with FaultServer(default=fault) as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, KEY)
        assert main(args) == 0
        [cache] = list((tmp_path / "out").rglob("*.jsonl"))
        bad, answers, pairs = cache_invalid_answers(cache)
        assert bad == answers > 0 and len(pairs) == 2
        [line] = warnings_of(capsys.readouterr().err)
        assert line.startswith(f"tef: warning: {cache}: {bad} of {answers} answers (100.0%) are invalid, in 2 pair(s), "
                               "more than 5%")
        assert line.endswith(" --retry-invalid") and KEY not in line
        server.script(default="ok")
        assert main(args) == 0  # a plain rerun keeps them, and says so again
        assert len(warnings_of(capsys.readouterr().err)) == 1 and cache_invalid_answers(cache)[0] == bad
        assert main([*args, "--retry-invalid"]) == 0
        err = capsys.readouterr().err
    assert f"tef: {cache}: 2 pair(s) with an invalid answer removed, to be scored again" in err
    assert warnings_of(err) == [] and cache_invalid_answers(cache)[:2] == (0, answers)


# -- Ctrl-C and SIGTERM while a judge is inside one long computation ----------------------------------------
LONG_CALL = """
import hashlib, pathlib, sys
import tefcore.judges.openai as judge
from tefcore.cli import main

score, calls = judge.OpenAIBackend.score, []

def slow_second_call(self, requests):
    calls.append(len(requests))
    if len(calls) == 2:  # the first pair is stored; the second sits in one C call (the GIL released)
        pathlib.Path(sys.argv[1]).touch()
        hashlib.pbkdf2_hmac("sha256", b"text", b"salt", 60_000_000)
    return score(self, requests)

judge.OpenAIBackend.score = slow_second_call
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_a_signal_during_one_long_computation_stops_within_seconds_and_the_cache_resumes(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, signum: str) -> None:
    import signal
    import subprocess
    import sys
    import time

    from sigint import sigint_default_in_child
    from tefcore.cli import STOP_GRACE
    from tefcore.extraction.cache import read_cache

    with FaultServer() as server:
        args = openai_cli(monkeypatch, server, tmp_path)
        monkeypatch.setenv(CLI_KEY_ENV, KEY)
        flag = tmp_path / "inside"
        proc = subprocess.Popen([sys.executable, "-c", LONG_CALL, str(flag), *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                                preexec_fn=sigint_default_in_child)
        end = time.monotonic() + 120
        while not flag.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert flag.exists(), proc.communicate()[1]
        sent = time.monotonic()
        proc.send_signal(getattr(signal, signum))
        _, err = proc.communicate(timeout=120)
        waited = time.monotonic() - sent
        assert proc.returncode == 130, err
        assert waited < STOP_GRACE + 5, f"stopped {waited:.1f} s after {signum}"
        assert "Traceback" not in err and len([line for line in err.splitlines() if line.strip()]) == 1, err
        assert "to resume, run the same command again" in err
        [cache] = list((tmp_path / "out").rglob("*.jsonl"))
        assert len(read_cache(cache)[0]) == 1  # the first pair, whole
        assert main(args) == 0  # the same command resumes it
    assert "2/2 pairs (1 new, 1 already there)" in capsys.readouterr().out
