"""The model registry: names of judges -> backend and constructor options (``tefcore/judges/models.yaml``).

Strings in the registry may refer to environment variables, following the shell's rule:

- ``${VAR}``: the value of ``VAR``; an unset ``VAR`` is an error that names it (set but empty gives "");
- ``${VAR:-default}``: the value of ``VAR`` when it is set and not empty, else ``default``;
- ``$$``: a literal ``$``. Any other ``$`` is kept as it is; a ``${`` that is not one of the forms
  above is an error.

Only the entry that is looked up is expanded, so a missing API setting of one model never stops
another. A value that is one whole ``${...}`` and expands to a YAML number or boolean becomes one
(``tensor_parallel_size: ${TP:-1}`` gives the integer 1). An ``openai`` entry may name the ``vllm``
entry whose model it reaches through ``vllm serve`` (``serves: qwen3-14b``, see :func:`served_spec`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from tefcore.errors import UnknownName

REGISTRY_PATH = Path(str(resources.files("tefcore.judges") / "models.yaml"))
"""The registry shipped with the package."""

BACKEND_CLASSES: dict[str, tuple[str, str]] = {
    "llama_cpp": ("tefcore.judges.local", "LocalBackend"),
    "vllm": ("tefcore.judges.vllm", "VLLMBackend"),
    "openai": ("tefcore.judges.openai", "OpenAIBackend"),
    "e5-zeroshot": ("tefcore.judges.e5", "E5ZeroShotBackend"),
    "e5-crossfit": ("tefcore.judges.e5_crossfit", "E5CrossFitBackend"),
}
"""Values of an entry's ``backend`` field -> (module, class) of the judge (:func:`tefcore.judges.backend_class`)."""

BACKENDS: tuple[str, ...] = tuple(BACKEND_CLASSES)
"""Values of an entry's ``backend`` field."""

_LOGPROB_BACKENDS: tuple[str, ...] = ("llama_cpp", "vllm", "openai")
"""Backends that read answer-token log-probabilities (:attr:`ModelSpec.reads_logprobs`)."""

__all__ = ["BACKEND_CLASSES", "BACKENDS", "REGISTRY_PATH", "ModelSpec", "expand", "expand_value", "is_gguf_path",
           "load_registry", "resolve_model", "served_spec"]

_META_KEYS = ("backend", "display_name", "description", "serves")
SERVE_DEFAULTS: dict[str, Any] = {"host": "127.0.0.1", "port": 8000}
"""Where ``tef reproduce`` starts ``vllm serve`` (the registry's ``*-serve`` entries' default URL)."""
_REFERENCE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}")
_WHOLE = re.compile(r"^\$\{[^}]*\}$")


@dataclass(frozen=True)
class ModelSpec:
    """One resolved registry entry.

    Attributes
    ----------
    name : str
        Registry name (also the cache directory name).
    backend : str
        One of :data:`BACKENDS`.
    options : dict
        Constructor keyword arguments, variables expanded.
    display_name : str
        Human-readable name.
    """

    name: str
    backend: str
    options: dict[str, Any] = field(default_factory=dict)
    display_name: str = ""

    @property
    def reads_logprobs(self) -> bool:
        """True when this judge reads answer-token log-probabilities (an LLM judge: it takes a ``reading``).

        Examples
        --------
        >>> ModelSpec("local", "llama_cpp").reads_logprobs, ModelSpec("e5-zeroshot", "e5-zeroshot").reads_logprobs
        (True, False)
        """
        return self.backend in _LOGPROB_BACKENDS

    def with_options(self, **options: Any) -> ModelSpec:
        """This entry with some constructor options replaced.

        ``reading`` applies only to judges that read log-probabilities (:attr:`reads_logprobs`): for
        another judge the default ``"summed"`` is dropped and any other reading is an error.

        Raises
        ------
        ValueError
            On a reading the judge cannot take.

        Examples
        --------
        >>> ModelSpec("e5-zeroshot", "e5-zeroshot").with_options(reading="summed").options
        {}
        >>> ModelSpec("local", "llama_cpp").with_options(reading="reference").options
        {'reading': 'reference'}
        """
        reading = options.pop("reading", None)
        if reading is not None and self.reads_logprobs:
            options["reading"] = reading
        elif reading not in (None, "summed"):
            raise ValueError(f"--reading applies to LLM judges; {self.name} is a {self.backend} judge")
        return ModelSpec(self.name, self.backend, {**self.options, **options}, self.display_name)


def expand(text: str, env: Mapping[str, str] | None = None) -> str:
    """Expand ``${VAR}``, ``${VAR:-default}`` and ``$$`` in one string (see the module notes).

    Parameters
    ----------
    text : str
        The string to expand.
    env : mapping, optional
        Variables (default: ``os.environ``).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        On an unset ``${VAR}`` (the message names ``VAR``) or a malformed ``${``.
    """
    env = os.environ if env is None else env

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, has_default, default = match.group(1), match.group(2), match.group(3)
        value = env.get(name)
        if has_default is not None:
            return value if value else default
        if value is None:
            raise ValueError(f"environment variable {name} is not set (needed by ${{{name}}}); "
                             f"set it or use ${{{name}:-default}}")
        return value

    if "${" in _REFERENCE.sub("\0", text):  # a ``${`` left outside the recognised forms
        raise ValueError(f"malformed variable reference in {text!r}: use ${{NAME}} or ${{NAME:-default}}")
    return _REFERENCE.sub(one, text)


def expand_value(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """Expand every string inside ``value`` (dicts and lists recursively); a whole ``${...}`` that reads
    as a number or boolean becomes one."""
    if isinstance(value, Mapping):
        return {k: expand_value(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_value(v, env) for v in value]
    if not isinstance(value, str) or "$" not in value:
        return value
    expanded = expand(value, env)
    if not _WHOLE.match(value.strip()):
        return expanded
    try:
        typed = yaml.safe_load(expanded)
    except yaml.YAMLError:
        return expanded
    return typed if isinstance(typed, (bool, int, float)) else expanded


@lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> dict[str, dict[str, Any]]:
    """Parse and check a registry file (cached per path and modification time)."""
    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the registry must be a mapping of model names to entries")
    for name, entry in data.items():
        if not isinstance(entry, dict) or entry.get("backend") not in BACKENDS:
            raise ValueError(f"{path}: entry {name!r} needs a backend, one of {BACKENDS}")
    return data


def load_registry(path: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """Return the raw (unexpanded) registry entries.

    Parameters
    ----------
    path : path-like, optional
        A registry file (default: :data:`REGISTRY_PATH`).
    """
    file = Path(path) if path is not None else REGISTRY_PATH
    if not file.is_file():
        raise FileNotFoundError(f"model registry {file} not found")
    return {k: dict(v) for k, v in _load(str(file), file.stat().st_mtime).items()}


def is_gguf_path(name: str) -> bool:
    """True when ``name`` names a ``.gguf`` file (it need not exist yet)."""
    return name.lower().endswith(".gguf")


def resolve_model(name: str, env: Mapping[str, str] | None = None,
                  path: str | os.PathLike[str] | None = None) -> ModelSpec:
    """Look a model up and expand its entry.

    Parameters
    ----------
    name : str
        A registry name, or a path to a ``.gguf`` file (run with the ``llama_cpp`` backend).
    env : mapping, optional
        Variables for the expansion (default: ``os.environ``).
    path : path-like, optional
        Registry file (default: :data:`REGISTRY_PATH`).

    Returns
    -------
    ModelSpec
        An entry with ``serves: NAME`` gets that ``vllm`` entry's served defaults first
        (:func:`served_spec`), then its own options.

    Raises
    ------
    ValueError
        On an unknown name (the message lists the known ones) or an unset variable.
    FileNotFoundError
        On a ``.gguf`` path that does not exist.
    """
    if is_gguf_path(name):  # a user's GGUF file, run by the local llama.cpp backend
        gguf = Path(name).expanduser()
        if not gguf.is_file():
            raise FileNotFoundError(f"GGUF model file {gguf} not found")
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", gguf.stem)
        return ModelSpec(stem, "llama_cpp", {"model_path": str(gguf.resolve())}, gguf.name)
    registry = load_registry(path)
    if name not in registry:
        raise UnknownName(f"unknown model {name!r}; known models: {', '.join(registry)} "
                         f"(or give a path to a .gguf file)")
    entry = registry[name]
    try:
        options = expand_value({k: v for k, v in entry.items() if k not in _META_KEYS}, env)
    except ValueError as exc:
        raise ValueError(f"model {name!r}: {exc}") from None
    if entry.get("serves"):
        options = {**served_spec(str(entry["serves"]), env=env, path=path).options, **options}
    return ModelSpec(name, entry["backend"], options, str(entry.get("display_name", name)))


def served_spec(name: str, base_url: str | None = None, env: Mapping[str, str] | None = None,
                path: str | os.PathLike[str] | None = None) -> ModelSpec:
    """The ``openai`` judge that reaches a ``vllm`` entry's model through ``vllm serve``.

    The served model name is the entry's model id (``tef reproduce`` serves it under that name), the
    server's hardware class is ``$VLLM_SERVER_HARDWARE`` when set, and the entry's ``chat_template_kwargs``
    go with every request, so that the server renders each prompt as the offline backend does (Qwen3
    with thinking disabled). The key is read from ``VLLM_API_KEY`` (any non-empty value for a server
    without authentication); the top-20 log-probabilities are read (protocol §5).

    Parameters
    ----------
    name : str
        A registry entry with ``backend: vllm``.
    base_url : str, optional
        The server's URL (default ``$VLLM_BASE_URL``, else :data:`SERVE_DEFAULTS`).
    env, path
        As for :func:`resolve_model`.

    Returns
    -------
    ModelSpec
        Named ``<name>-serve``.

    Raises
    ------
    ValueError
        When ``name`` is not a ``vllm`` entry.
    """
    spec = resolve_model(name, env, path)
    if spec.backend != "vllm":
        raise ValueError(f"model {name!r} is a {spec.backend} judge; only vllm entries are served by `vllm serve`")
    env = os.environ if env is None else env
    default_url = f"http://{SERVE_DEFAULTS['host']}:{SERVE_DEFAULTS['port']}/v1"
    options: dict[str, Any] = {
        "model": spec.options["model"], "base_url": base_url or env.get("VLLM_BASE_URL") or default_url,
        "api_key_env": "VLLM_API_KEY", "top_logprobs": 20, "seed": spec.options.get("seed", 0),
        "server": "vllm serve",
    }
    if env.get("VLLM_SERVER_HARDWARE"):  # set by `tef reproduce` for the server it starts (CPU or GPU)
        options["hardware"] = env["VLLM_SERVER_HARDWARE"]
    if spec.options.get("chat_template_kwargs"):
        options["chat_template_kwargs"] = dict(spec.options["chat_template_kwargs"])
    return ModelSpec(f"{name}-serve", "openai", options, f"{spec.display_name} behind `vllm serve`")


