"""No API key from the environment reaches an executed notebook or a page of the built book.

Each test lays out a small book in a temporary folder (the repository's ``_config.yml``,
``_toc.yml`` and ``book/``, plus one chapter) and runs ``tefbook.build.main`` on it with fresh
random values in ``OPENAI_API_KEY`` and ``DEEPSEEK_API_KEY``:

* a chapter that uses the keys the way the library does (reads them from the environment)
  builds, and no file of the executed notebooks, the staged tree, the HTML or the report holds
  either value (searched in raw, JSON-escaped, URL-quoted and base64 forms);
* a chapter that prints a key makes the build fail, deletes the executed notebook and names
  the variable, never the value;
* a parameter named like a key is refused before any kernel starts, whether it comes from
  ``-p``, ``--param-overrides`` or the chapter's own ``parameters`` cell;
* when the repository's own chapter 1 exists, its execution with the keys set leaves no trace.
"""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

import pytest
from secrets_util import assert_no_secret, contains_secret

from tefbook import build as book

ROOT = Path(__file__).resolve().parents[1]
KEY_VARIABLES = ("OPENAI_API_KEY", "DEEPSEEK_API_KEY")

HEADER = """# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
"""

SAFE_CHAPTER = (
    HEADER
    + """
# %% [markdown]
# # Keys stay in the environment
#
# The judge's client reads its key itself; the chapter only says whether one is configured.

# %% tags=["parameters"]
model = "gpt-4o-mini"
limit = 2

# %%
import os

configured = {name: bool(os.environ.get(name)) for name in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY")}
print(model, limit, configured)
"""
)

LEAKY_CHAPTER = (
    HEADER
    + """
# %% tags=["parameters"]
limit = 1

# %%
import os

print("debugging:", os.environ["OPENAI_API_KEY"])
"""
)


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Unique random values in the key variables (no recognisable prefix)."""
    values = {name: "tefbook" + secrets.token_hex(20) for name in KEY_VARIABLES}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def make_book(root: Path, chapter_text: str, name: str = "01_derivation") -> Path:
    """A book root holding the repository's configuration and pages and one chapter."""
    root.mkdir(parents=True, exist_ok=True)
    for config in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / config, root / config)
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "notebooks").mkdir(exist_ok=True)
    (root / "notebooks" / f"{name}.py").write_text(chapter_text, encoding="utf-8")
    return root


def build_chapter_one(tmp_path: Path, chapter_text: str, *args: str, status: int) -> Path:
    """Lay out a book whose chapter 01 is ``chapter_text`` and run ``tefbook.build.main`` on that
    chapter with ``args``, checking its exit status; returns the book root."""
    root = make_book(tmp_path / "book", chapter_text)
    assert book.main(["--root", str(root), "--chapters", "01", *args]) == status
    return root


def assert_clean(paths: list[Path], keys: dict[str, str], min_files: int = 1) -> None:
    """No file under ``paths`` holds any of the keys."""
    for value in keys.values():
        assert_no_secret(paths, value, min_files=min_files)


@pytest.mark.slow
def test_keys_reach_neither_notebooks_nor_pages(
    tmp_path: Path, keys: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    root = build_chapter_one(tmp_path, SAFE_CHAPTER, status=0)
    build = root / "_build"
    executed = build / "executed" / "notebooks" / "01_derivation.ipynb"
    page = build / "html" / "notebooks" / "01_derivation.html"
    assert executed.is_file() and page.is_file()
    # the chapter did run with the keys in its environment
    text = executed.read_text(encoding="utf-8")
    assert "'OPENAI_API_KEY': True, 'DEEPSEEK_API_KEY': True" in text
    assert "'OPENAI_API_KEY': True" in page.read_text(encoding="utf-8")
    assert_clean([build], keys, min_files=50)
    out, err = capfd.readouterr()
    for value in keys.values():
        assert not contains_secret(out + err, value), "a key appeared in the build's output"


@pytest.mark.slow
def test_chapter_printing_a_key_fails_and_leaves_nothing(
    tmp_path: Path, keys: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    root = build_chapter_one(tmp_path, LEAKY_CHAPTER, status=1)
    out, err = capfd.readouterr()
    assert "holds the value of $OPENAI_API_KEY" in err
    assert not (root / "_build" / "executed" / "notebooks" / "01_derivation.ipynb").exists()
    assert not (root / "_build" / "html").exists()
    for value in keys.values():
        assert not contains_secret(out + err, value), "the error message quoted the key"
        assert not any(
            contains_secret(p.read_bytes(), value) for p in (root / "_build").rglob("*") if p.is_file()
        )


@pytest.mark.parametrize(
    "argv",
    [
        ["-p", "01.openai_api_key=abc"],
        ["-p", "01.deepseek_token=abc"],
        ["--param-overrides", "{01_derivation: {api_key: abc}}"],
    ],
)
def test_secret_named_parameter_is_refused(
    tmp_path: Path, argv: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    root = build_chapter_one(tmp_path, SAFE_CHAPTER, *argv, status=1)
    assert "looks like a key, token or secret" in capfd.readouterr().err
    assert not (root / "_build" / "executed").exists(), "a kernel ran before the refusal"


def test_secret_named_parameter_in_the_chapter_is_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    chapter = SAFE_CHAPTER.replace("limit = 2", "limit = 2\nopenai_api_key = None")
    root = build_chapter_one(tmp_path, chapter, "--execute-only", status=1)
    assert "refusing parameter 'openai_api_key'" in capfd.readouterr().err
    assert not (root / "_build" / "executed" / "notebooks" / "01_derivation.ipynb").exists()


@pytest.mark.slow
def test_real_chapter_one_keeps_keys_out(tmp_path: Path, keys: dict[str, str]) -> None:
    source = ROOT / "notebooks" / "01_derivation.py"
    if not source.is_file():
        pytest.skip("notebooks/01_derivation.py does not exist yet")
    root = build_chapter_one(tmp_path, source.read_text(encoding="utf-8"), "--execute-only", status=0)
    executed = root / "_build" / "executed" / "notebooks"
    assert (executed / "01_derivation.ipynb").is_file()
    assert_clean([executed], keys)
