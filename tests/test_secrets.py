"""API keys stay in the environment (issue 5, "Secrets").

A unique random key is put in an ``*_API_KEY`` variable; the backend must send it as a bearer token to
the (fake) endpoint and nowhere else: not in provenance, reprs, caches, log records, exception messages
(even when the server quotes it back), nor the output of the ``tef`` command line. The redaction helpers
of :mod:`tefcore.redact` are tested on their own. The book's pages and executed notebooks are checked by
the book's tests with :func:`secrets_util.assert_no_secret`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import os
import random
import secrets
import subprocess
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fault_server import FaultServer, make_requests
from secrets_util import assert_no_secret, assert_text_clean
from tefcore.judges.openai import MissingAPIKey, OpenAIBackend
from tefcore.retry import BackendRejected, BackendUnavailable
from tefcore.redact import MASK, clean_url, is_secret_name, redact, secret_variables

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "TEF_SECRETS_TEST_API_KEY"
LOGGERS = ("", "openai", "httpx", "httpx2", "httpcore", "httpcore2", "tefcore")


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh random key in ``TEF_SECRETS_TEST_API_KEY`` (no ``sk-`` prefix: no pattern can catch it)."""
    value = "tefkey" + secrets.token_hex(20)
    monkeypatch.setenv(KEY_ENV, value)
    return value


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(hang=1.0) as fs:
        yield fs


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Capture every record of the client stack at DEBUG level."""
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name or None)
    return caplog


def make_backend(server: FaultServer, env: str = KEY_ENV, **kw: Any) -> OpenAIBackend:
    opts: dict[str, Any] = dict(top_logprobs=5, max_concurrency=2, timeout=0.5, max_retries=2,
                                base_delay=0.01, max_delay=0.02, rng=random.Random(0))
    opts.update(kw)
    return OpenAIBackend("fault-model", server.base_url, env, **opts)


def assert_logs_clean(caplog: pytest.LogCaptureFixture, key: str) -> int:
    for rec in caplog.records:
        assert_text_clean(rec.getMessage(), key, f"log record of {rec.name}")
        if rec.exc_info:
            assert_text_clean("".join(traceback.format_exception(*rec.exc_info)), key,
                              f"logged traceback of {rec.name}")
    assert_text_clean(caplog.text, key, "the captured log")
    return len(caplog.records)


# -- where the key comes from ---------------------------------------------------------------------------

def test_key_is_not_a_parameter() -> None:
    params = inspect.signature(OpenAIBackend).parameters
    assert not any("key" in name and name != "api_key_env" for name in params)
    with pytest.raises(TypeError):
        OpenAIBackend("m", "http://127.0.0.1:9/v1", KEY_ENV, api_key="x")  # type: ignore[call-arg]


@pytest.mark.parametrize("value", [None, "", "   "])
def test_missing_or_empty_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, value)
    with pytest.raises(MissingAPIKey) as err:
        OpenAIBackend("m", "http://127.0.0.1:9/v1", KEY_ENV)
    msg = str(err.value)
    assert KEY_ENV in msg and "not set or empty" in msg and "\n" not in msg


def test_a_key_passed_as_the_variable_name_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    for mistaken in ("sk-proj-" + secrets.token_hex(16), "tef" + secrets.token_hex(8)):
        monkeypatch.delenv(mistaken, raising=False)
        with pytest.raises((ValueError, MissingAPIKey)) as err:
            OpenAIBackend("m", "http://127.0.0.1:9/v1", mistaken)
        assert mistaken not in str(err.value)


# -- where the key goes ------------------------------------------------------------------------------

def test_key_is_sent_as_bearer_and_nowhere_else(server: FaultServer, key: str,
                                                debug_logs: pytest.LogCaptureFixture) -> None:
    backend = make_backend(server)
    scores = backend.score(make_requests(6, "s"))
    assert len(scores) == 6 and all(s.source == "logprobs" for s in scores)
    assert {r.authorization for r in server.records} == {f"Bearer {key}"}  # it WAS sent, as a bearer token
    for what, text in (("provenance", json.dumps(backend.provenance())), ("repr", repr(backend)),
                       ("stats", json.dumps(dataclasses.asdict(backend.stats))), ("scores", repr(scores)),
                       ("vars", repr({k: v for k, v in vars(backend).items() if k != "_secrets"}))):
        assert_text_clean(text, key, what)
    assert assert_logs_clean(debug_logs, key) > 0  # the client stack did log: the check means something


def test_error_messages_never_quote_the_key(server: FaultServer, key: str,
                                            debug_logs: pytest.LogCaptureFixture) -> None:
    # a 401 whose body quotes the Authorization header it received
    server.script(default="401")
    backend = make_backend(server)
    with pytest.raises(BackendRejected) as rejected:
        backend.score(make_requests(2, "e"))
    msg = str(rejected.value)
    assert "invalid credentials: Bearer" in msg and MASK in msg  # the quote is there, redacted
    # exhausted retries
    server.script(default="503")
    with pytest.raises(BackendUnavailable) as exhausted:
        make_backend(server, max_concurrency=1).score(make_requests(1, "e2"))
    for err in (rejected.value, exhausted.value):
        assert_text_clean(str(err), key, "an exception message")
        assert_text_clean("".join(traceback.format_exception(err)), key, "a formatted traceback")
    assert_logs_clean(debug_logs, key)


def test_redaction_does_not_rely_on_the_variable_name(server: FaultServer,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A key in a variable whose name does not look secret is still masked (the backend knows it)."""
    value = "plain" + secrets.token_hex(20)
    monkeypatch.setenv("TEF_PLAIN_SETTING", value)
    server.script(default="401")
    with pytest.raises(BackendRejected) as err:
        make_backend(server, env="TEF_PLAIN_SETTING").score(make_requests(1, "p"))
    assert_text_clean(str(err.value), value, "an exception message")
    assert MASK in str(err.value)


def test_extraction_cache_never_holds_the_key(server: FaultServer, key: str, tmp_path: Path,
                                              debug_logs: pytest.LogCaptureFixture) -> None:
    extract = pytest.importorskip("tefcore.extraction.run", reason="tefcore.extraction.run not written yet")
    if not hasattr(extract, "run_extraction"):
        pytest.skip("tefcore.extraction.run.run_extraction not available")
    from fault_server import cache_pairs, run_openai_extraction, synthetic_mind

    out = tmp_path / "out"
    run_openai_extraction(make_backend(server), synthetic_mind(tmp_path / "mind", n_posts=3), out)
    assert len(cache_pairs(out)) == 3
    # then a failing run into the same cache (two more posts; the endpoint answers 503)
    server.script(default="503")
    with pytest.raises(BackendUnavailable):
        run_openai_extraction(make_backend(server), synthetic_mind(tmp_path / "mind", n_posts=5), out)
    assert len(cache_pairs(out)) == 3
    assert_no_secret([out], key)
    assert_logs_clean(debug_logs, key)


@pytest.mark.slow
def test_cli_output_never_holds_the_key(server: FaultServer, tmp_path: Path) -> None:
    pytest.importorskip("tefcore.cli", reason="tefcore.cli not written yet")
    from fault_server import CLI_KEY_ENV, cache_pairs, cli_openai_args, synthetic_mind

    data_dir = synthetic_mind(tmp_path / "mind", n_posts=2)
    if cli_openai_args(server.base_url, data_dir, tmp_path / "out") is None:
        pytest.skip("the registry has no entry that can point at a custom OpenAI-compatible endpoint")
    key = "tefcli" + secrets.token_hex(20)
    base_env = {k: v for k, v in os.environ.items() if k != CLI_KEY_ENV}
    # success; a 401 whose body quotes the key; retries exhausted (429 with Retry-After: 0, so fast)
    for script, code in (("ok", 0), ("401", 2), ("429:0", 2)):
        args = cli_openai_args(server.base_url, data_dir, tmp_path / "out" / script.replace(":", "-"))
        assert args is not None
        cmd, extra = args
        env = {**base_env, **extra, CLI_KEY_ENV: key, "PYTHONUNBUFFERED": "1"}
        server.script(default=script)
        proc = subprocess.run(cmd, env=env, capture_output=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == code, (script, proc.returncode, proc.stderr[-2000:])
        assert_text_clean(proc.stdout, key, f"stdout of `tef extract` ({script})")
        assert_text_clean(proc.stderr, key, f"stderr of `tef extract` ({script})")
        if code:
            assert b"Traceback" not in proc.stderr and proc.stderr.count(b"tef: error:") == 1
    assert {r.authorization for r in server.records} == {f"Bearer {key}"}  # the key was used
    assert_no_secret([tmp_path / "out"], key)
    assert len(cache_pairs(tmp_path / "out")) == 2  # the successful run's pairs, nothing from the others
    # no key at all: one clear line naming the variable
    proc = subprocess.run(cmd, env={**base_env, **extra}, capture_output=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2 and CLI_KEY_ENV.encode() in proc.stderr and b"Traceback" not in proc.stderr


# -- the helpers and the repository ------------------------------------------------------------------

def test_redact_masks_environment_explicit_and_pattern_secrets() -> None:
    env = {"OPENAI_API_KEY": "abc123def456ghi", "GITHUB_TOKEN": "ghp_zzzzzzzzzzzz", "MY_SECRET": "hunter2hunter2",
           "DEEPSEEK_API_KEY": "short", "PATH": "/usr/bin:/bin", "HOME": "/root"}
    text = ("key abc123def456ghi, token ghp_zzzzzzzzzzzz, secret hunter2hunter2, short, /usr/bin:/bin, "
            "explicit qwertyuiop, Authorization: Bearer anything-long-enough, sk-proj-ABCDEFGHIJKLMNOPQRSTUV, "
            "https://bob:pw@example.com/v1, url?api_key=zzzz1234&x=1, max_tokens=1000, prompt_tokens: 45")
    out = redact(text, secrets=["qwertyuiop"], environ=env)
    for leaked in ("abc123def456ghi", "ghp_zzzzzzzzzzzz", "hunter2hunter2", "qwertyuiop", "anything-long-enough",
                   "ABCDEFGHIJKLMNOPQRSTUV", "bob:pw", "zzzz1234"):
        assert leaked not in out, leaked
    # not secrets: short values, ordinary variables, token counts
    for kept in ("short", "/usr/bin:/bin", "max_tokens=1000", "prompt_tokens: 45", "https://***@example.com/v1"):
        assert kept in out, kept


def test_redact_uses_the_live_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    value = "live" + secrets.token_hex(12)
    monkeypatch.setenv("SOME_VENDOR_API_KEY", value)
    assert redact(f"failed with {value}") == f"failed with {MASK}"


@pytest.mark.parametrize("name,secret", [("OPENAI_API_KEY", True), ("HF_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True),
                                         ("DB_PASSWORD", True), ("ANTHROPIC_KEY", True), ("PATH", False),
                                         ("MIND_DATA_DIR", False), ("OPENAI_BASE_URL", False)])
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


@pytest.mark.parametrize("name,secret", [("apiKey", True), ("HFTOKEN", True), ("private_key_path", True),
                                         ("bearer_header", True), ("max_tokens", False), ("TOKENIZERS_PARALLELISM", False),
                                         ("keyword", False), ("monkey", False)])
def test_one_rule_for_parameters_and_variables(name: str, secret: bool) -> None:
    from tefbook.errors import BookError
    from tefbook.parameters import check_parameter_name

    assert is_secret_name(name) is secret
    if secret:  # the book tool refuses such a parameter name with the library's rule
        with pytest.raises(BookError):
            check_parameter_name(name, "-p 05.x")
    else:
        check_parameter_name(name, "-p 05.x")


def test_secret_variables_leave_out_paths_and_public_ids() -> None:
    env = {"PWD": "/home/someone/work", "GPG_KEY": "0123456789ABCDEF", "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
           "HF_TOKEN": "hf_0123456789", "PATH": "/usr/bin:/bin"}
    assert secret_variables(env) == {"HF_TOKEN": "hf_0123456789"}
    assert redact("cwd /home/someone/work, token hf_0123456789", environ=env) == f"cwd /home/someone/work, token {MASK}"


def test_clean_url_strips_credentials() -> None:
    assert clean_url("https://bob:pw@api.example.com:8443/v1?api-key=abc&region=eu#frag") == \
        "https://api.example.com:8443/v1?api-key=%2A%2A%2A&region=eu"
    assert clean_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_assert_no_secret_finds_encoded_forms(tmp_path: Path) -> None:
    value = "needle" + secrets.token_hex(8) + "/+="
    (tmp_path / "a.json").write_text(json.dumps({"k": value}))
    (tmp_path / "b.txt").write_text("clean")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.url").write_text("x?k=" + __import__("urllib.parse").parse.quote(value, safe=""))
    with pytest.raises(AssertionError) as err:
        assert_no_secret([tmp_path], value)
    assert value not in str(err.value) and "a.json" in str(err.value) and "c.url" in str(err.value)
    assert assert_no_secret([tmp_path / "b.txt"], value) == 1


def test_gitignore_keeps_env_files_out() -> None:
    lines = {ln.strip() for ln in (REPO / ".gitignore").read_text().splitlines()}
    assert ".env" in lines
    assert lines & {".env.*", "*.env", ".env*"}
    if (REPO / ".git").exists():
        for path in (".env", "config/.env.local", "notebooks/.env"):
            probe = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO, capture_output=True)
            assert probe.returncode == 0, path  # git itself ignores it (check-ignore changes nothing)

