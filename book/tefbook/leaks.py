"""The secret guard of the book build: no credential from the environment may be published.

API keys reach the chapters' kernels only through the environment. The library's one rule,
:func:`tefcore.redact.is_secret_name`, tells the parameter names that look like a credential
(:mod:`tefbook.parameters` refuses them, since papermill writes parameters into the published
notebook); :func:`find_secret_leaks` searches executed notebooks and built pages for the
values of the environment's secret-like variables
(raw, JSON-escaped, HTML-escaped, URL-quoted and base64), and :func:`guard_outputs` deletes
outputs that hold one and fails the build with :class:`SecretLeakError`, naming the variable,
never the value.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from tefbook.errors import BookError
from tefcore.redact import secret_variables

__all__ = [
    "MIN_SECRET_LENGTH",
    "SecretLeakError",
    "find_secret_leaks",
    "guard_outputs",
    "secret_values",
]

#: Secret values shorter than this are not searched for (too many false hits, e.g. "EMPTY").
MIN_SECRET_LENGTH = 8


class SecretLeakError(BookError):
    """A secret from the environment was found in an executed notebook or a built page."""


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The values of the secret-like environment variables worth searching for.

    The variables are those the library's log redaction masks
    (:func:`tefcore.redact.secret_variables`).

    Parameters
    ----------
    env : mapping or None
        Environment to read; ``None`` reads :data:`os.environ`.

    Returns
    -------
    dict
        Variable name -> value, for values of at least :data:`MIN_SECRET_LENGTH` characters,
        leaving out a few standard variables that hold paths or public ids (``PWD``,
        ``SSH_AUTH_SOCK``, ...).
    """
    found = secret_variables(env)
    return {name: value for name, value in found.items() if len(value.strip()) >= MIN_SECRET_LENGTH}


def _encodings(value: str) -> set[bytes]:
    """The byte forms under which a value can appear in a notebook, a page or a URL."""
    forms = {value, json.dumps(value)[1:-1], html.escape(value, quote=True), quote(value, safe="")}
    encoded = {form.encode("utf-8") for form in forms if form}
    encoded.add(base64.b64encode(value.encode("utf-8")))
    return encoded


def find_secret_leaks(
    paths: Iterable[Path], secrets: Mapping[str, str] | None = None
) -> list[tuple[Path, str]]:
    """Search files for secret values.

    Parameters
    ----------
    paths : iterable of Path
        Files, or folders searched recursively.
    secrets : mapping or None
        Variable name -> value; ``None`` uses :func:`secret_values` of the environment.

    Returns
    -------
    list of (Path, str)
        Each file that holds a secret, with the name (never the value) of the variable.
    """
    secrets = secret_values() if secrets is None else secrets
    needles = {name: _encodings(value) for name, value in secrets.items()}
    if not needles:
        return []
    leaks: list[tuple[Path, str]] = []
    for path in _iter_files(paths):
        try:
            content = path.read_bytes()
        except OSError:
            continue
        for name, forms in needles.items():
            if any(form in content for form in forms):
                leaks.append((path, name))
    return leaks


def _iter_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Yield the files among ``paths``, descending into folders."""
    for path in paths:
        path = Path(path)
        if path.is_dir():
            yield from (p for p in sorted(path.rglob("*")) if p.is_file())
        elif path.is_file():
            yield path


def guard_outputs(paths: Sequence[Path], what: str, secrets: Mapping[str, str] | None = None) -> None:
    """Fail the build when an output holds a secret, deleting every one of ``paths`` first.

    Parameters
    ----------
    paths : sequence of Path
        The outputs (files, or folders searched recursively), deleted on a hit.
    what : str
        What they are, for the message (``"the built book _build/html"``).
    secrets : mapping or None
        Variable name -> value; ``None`` uses :func:`secret_values` of the environment.

    Raises
    ------
    SecretLeakError
        When any of ``paths`` holds a secret; the message names the files and the variables,
        never the values.
    """
    leaks = find_secret_leaks(paths, secrets)
    if not leaks:
        return
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    listed = "; ".join(f"{path} holds the value of ${name}" for path, name in leaks[:10])
    raise SecretLeakError(
        f"secret found in {what}: {listed}. The output was deleted. Never print, return or "
        "pass a credential as a parameter: read it from the environment inside tefcore."
    )
