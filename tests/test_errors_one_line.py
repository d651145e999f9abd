"""Bad input is refused in one line that names where: the file, the parameter or the variable.

Each case used to end in a traceback or in a message that blamed something else (a broken build, a
connection error, a codec); here each one is one line on stderr, with exit code 2 from ``tef``, and
nothing half-written is left behind.
"""

from __future__ import annotations

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
