"""Shared pytest fixtures.

``mind_dir`` locates the MIND data the tests read: the environment variable ``MIND_DATA_DIR`` when it
is set and not blank, else the embedded sample (``data/mind``, :func:`tefcore.mind.load.sample_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"

# The real-engine tier runs vLLM itself, in its own environment: `make test-vllm` sets TEF_VLLM_ENGINE=1.
collect_ignore = [] if os.environ.get("TEF_VLLM_ENGINE") == "1" else ["vllm_engine"]


def _mind_sample_dir() -> Path:
    """Return where the MIND data should be (a given ``MIND_DATA_DIR`` may not exist)."""
    from tefcore.mind.load import sample_dir

    env = os.environ.get("MIND_DATA_DIR", "").strip()
    return Path(env).expanduser().absolute() if env else sample_dir()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the parent of ``tests/``)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def mind_dir() -> Path:
    """Directory holding ``mind_en.jsonl`` and ``mind_zh.jsonl``; skips the test when absent."""
    path = _mind_sample_dir()
    if not all((path / f"mind_{lang}.jsonl").is_file() for lang in ("en", "zh")):
        pytest.skip(f"MIND sample not found at {path}; set MIND_DATA_DIR")
    return path


@pytest.fixture(scope="session")
def mind_posts(mind_dir: Path) -> dict:
    """The validated posts of the MIND sample: ``{"en": [...], "zh": [...]}``."""
    from tefcore.mind.load import load_posts

    return {lang: load_posts(lang, mind_dir) for lang in ("en", "zh")}


@pytest.fixture(scope="session")
def protocol_text() -> str:
    """The text of ``../shared/spec/protocol.md``; skips the test when absent."""
    path = SHARED_DIR / "spec" / "protocol.md"
    if not path.is_file():
        pytest.skip(f"protocol not found at {path}")
    return path.read_text(encoding="utf-8")
