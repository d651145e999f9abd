"""Keep secrets out of messages, logs and provenance.

API keys live only in environment variables (never in a parameter, a file of the repository or a notebook).
Whatever text may leave the process (an exception message, a log record, a provenance URL) goes through
:func:`redact` first; :func:`is_secret_name` is the project's one rule of what names a secret, and
:func:`clean_url` strips credentials from a base URL for provenance records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "clean_url", "is_secret_name",
           "redact", "secret_variables"]

MASK: str = "***"
"""What a secret is replaced with."""

_MIN_ENV_SECRET_LENGTH: int = 8
"""Environment values shorter than this are not treated as secrets (``"1"`` would mask every digit)."""

_NOT_SECRET_VARIABLES: frozenset[str] = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_KEY"})
"""Environment variables whose names look secret but which hold paths or public ids."""

_SECRET_PARTS = ("secret", "password", "passwd", "apikey", "api_key", "accesskey", "access_key",
                 "privatekey", "private_key", "credential")
_SECRET_WORDS = frozenset({"key", "token", "pwd", "auth", "bearer", "passphrase"})
_SECRET_QUERY = re.compile(r"(key|token|secret|password|passwd|sig|signature|auth)", re.IGNORECASE)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization headers, whatever the scheme's case
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 " + MASK),
    # OpenAI-style keys (sk-..., sk-proj-...) and similar prefixed keys
    (re.compile(r"\b(sk|pk|rk|xox[abpr])-[A-Za-z0-9_-]{16,}"), MASK),
    # user-info in URLs: scheme://user:pass@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(:[^/\s@]*)?@"), r"\1" + MASK + "@"),
    # key=value pairs with a secret-looking key (query strings, log lines)
    (re.compile(r"(?i)\b([\w-]*(?:api[_-]?key|token(?!s)|secret|password)[\w-]*)([=:]\s*)([^\s&\"',;]{4,})"),
     r"\1\2" + MASK),
)


def _words(name: str) -> list[str]:
    """Split an identifier into lower-case words (snake, kebab and camel case)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_secret_name(name: str) -> bool:
    """Whether a variable or parameter name says it holds a credential.

    Names containing ``secret``, ``password``/``passwd``, ``api_key``/``apikey``, ``access_key``,
    ``private_key`` or ``credential`` (any case), or with a word ``key``, ``token``, ``pwd``, ``auth``,
    ``bearer`` or ``passphrase`` (snake, kebab or camel case; a word ending in ``token`` counts) are
    secret. Plural counts such as ``max_tokens`` are not.

    Parameters
    ----------
    name : str
        A variable name (``OPENAI_API_KEY``, ``HF_TOKEN``) or a notebook parameter (``apiKey``).

    Returns
    -------
    bool

    Examples
    --------
    >>> [is_secret_name(n) for n in ("OPENAI_API_KEY", "hf_token", "ANTHROPIC_KEY", "max_tokens", "keyword")]
    [True, True, True, False, False]
    """
    lowered = name.lower()
    if any(part in lowered for part in _SECRET_PARTS):
        return True
    return any(word in _SECRET_WORDS or word.endswith("token") for word in _words(name))


def secret_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables :func:`is_secret_name` calls secret, less :data:`_NOT_SECRET_VARIABLES`.

    Parameters
    ----------
    environ : mapping, optional
        The environment to read (default :data:`os.environ`, read at call time).

    Returns
    -------
    dict
        Variable name -> value.

    Examples
    --------
    >>> secret_variables({"HF_TOKEN": "hf_123", "PWD": "/home/me", "PATH": "/bin"})
    {'HF_TOKEN': 'hf_123'}
    """
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k not in _NOT_SECRET_VARIABLES and is_secret_name(k)}


def _secret_values(extra: Iterable[str | None] | None = None,
                   environ: Mapping[str, str] | None = None) -> list[str]:
    """Every value :func:`redact` masks, longest first.

    Parameters
    ----------
    extra : iterable of str, optional
        Secrets given explicitly (any non-empty value counts, whatever its length).
    environ : mapping, optional
        As for :func:`secret_variables`.

    Returns
    -------
    list of str
        Values of :func:`secret_variables` at least :data:`_MIN_ENV_SECRET_LENGTH` long and the explicit
        ones, without duplicates, longest first (a secret that contains another is masked whole).

    Examples
    --------
    >>> _secret_values(["abc"], environ={"OPENAI_API_KEY": "sk-0123456789", "HOME": "/home/me"})
    ['sk-0123456789', 'abc']
    """
    values = {v for v in secret_variables(environ).values() if len(v) >= _MIN_ENV_SECRET_LENGTH}
    values.update(s for s in (extra or ()) if s)
    return sorted(values, key=len, reverse=True)


def redact(text: object, secrets: Iterable[str | None] | None = None,
           environ: Mapping[str, str] | None = None) -> str:
    """Mask every secret in ``text``.

    Parameters
    ----------
    text : object
        The text (anything else is converted with :func:`str`).
    secrets, environ : optional
        Extra secret values, and the environment, as for :func:`_secret_values`.

    Returns
    -------
    str
        ``text`` with each secret value, bearer credential, ``sk-`` key, URL user-info and secret-named
        ``key=value`` replaced by :data:`MASK`.

    Examples
    --------
    >>> redact("Authorization: Bearer abcdefgh12345", environ={})
    'Authorization: Bearer ***'
    >>> redact("call failed for key hunter2!", secrets=["hunter2!"], environ={})
    'call failed for key ***'
    """
    out = str(text)
    for value in _secret_values(secrets, environ):
        out = out.replace(value, MASK)
    for pattern, repl in _PATTERNS:
        out = pattern.sub(repl, out)
    return out


def clean_url(url: str) -> str:
    """A URL fit for a provenance record: no user-info, no secret-looking query values, no fragment.

    Parameters
    ----------
    url : str
        A base URL such as ``https://user:pw@host/v1?api-key=...``.

    Returns
    -------
    str
        The URL without user-info, secret-looking query values (``key``, ``token``, ``sig``, ...) masked.

    Examples
    --------
    >>> clean_url("https://bob:pw@api.example.com/v1?api-key=abc&region=eu")
    'https://api.example.com/v1?api-key=%2A%2A%2A&region=eu'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    query = urlencode([(k, MASK if _SECRET_QUERY.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


