"""Bad input is refused in one line that names where: the file, the parameter or the variable.

Each case used to end in a traceback or in a message that blamed something else (a broken build, a
connection error, a codec); here each one is one line on stderr, with exit code 2 from ``tef``, and
nothing half-written is left behind.
"""

from __future__ import annotations

from pathlib import Path

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
