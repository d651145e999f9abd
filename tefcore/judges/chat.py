"""A model's chat template, rendered the way the reference does: one user turn and the generation prompt.

The Jinja2 source (a GGUF's ``tokenizer.chat_template`` or a tokenizer's) is compiled as transformers
compiles it. A default system turn that the template inserts is found with sentinel messages and kept (the
reference rendering of protocol §4) or removed. The embedded and the vLLM judges render through
:class:`ChatTemplate`, so both see the same text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["ChatTemplate"]

_SENTINEL_USER = "\x00TEF-USER-SENTINEL\x00"
_SENTINEL_SYSTEM = "\x00TEF-SYSTEM-SENTINEL\x00"


def _jinja_template(source: str) -> Any:
    """Compile a chat template the way transformers does (sandboxed, trimmed blocks)."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(source)


def _strip_default_system(render: Callable[[list[dict[str, str]]], str]) -> tuple[str, str] | None:
    """Find a default system turn that the template inserts; return (inserted prefix, clean prefix).

    Sentinel messages show the system turn's opening and closing; a user-only rendering framed by them
    holds an inserted turn. The clean prefix keeps what precedes the system header (e.g. BOS) and the
    user header (the system header with the role renamed).
    """
    user_only = render([{"role": "user", "content": _SENTINEL_USER}])
    try:
        with_system = render([{"role": "system", "content": _SENTINEL_SYSTEM},
                              {"role": "user", "content": _SENTINEL_USER}])
    except Exception:  # templates that refuse a system role insert none either
        return None
    pre_u = user_only.split(_SENTINEL_USER, 1)[0]
    pre_s = with_system.split(_SENTINEL_USER, 1)[0]
    if _SENTINEL_SYSTEM not in pre_s:
        return None
    opening, closing = pre_s.split(_SENTINEL_SYSTEM, 1)
    role = opening.find("system")
    inserted = (role >= 0 and pre_u.startswith(opening) and pre_u.endswith(closing)
                and len(pre_u) >= len(opening) + len(closing))
    if not inserted:
        return None
    for start in range(role + 1):  # the longest user header first
        at = closing.rfind(opening[start:role] + "user")
        if at >= 0:
            return pre_u, opening[:start] + closing[at:]
    raise ValueError("this chat template inserts a default system prompt that tefcore cannot remove; "
                     "pass keep_default_system=True to keep it")


def _inserts_default_system(render: Callable[[list[dict[str, str]]], str]) -> bool:
    """True when the template adds a system turn of its own to a user-only conversation."""
    try:
        return _strip_default_system(render) is not None
    except ValueError:  # inserted, though not removable
        return True


class ChatTemplate:
    """Render a prompt as a single user turn of a model's chat template (generation prompt added).

    Parameters
    ----------
    source : str
        The Jinja2 chat template.
    bos_token, eos_token : str
        Texts of the special tokens the template may print.
    keep_default_system : bool
        Keep a default system turn that the template inserts (default, the reference rendering of
        protocol §4); ``False`` removes it.
    template_kwargs : mapping, optional
        Extra template variables (e.g. ``{"enable_thinking": False}`` for Qwen3).

    Attributes
    ----------
    system_prompt : str
        What the model sees as system prompt, in words (recorded in the provenance).
    """

    def __init__(self, source: str, bos_token: str = "", eos_token: str = "",
                 keep_default_system: bool = True, template_kwargs: Mapping[str, Any] | None = None) -> None:
        self.source = source
        self._template = _jinja_template(source)
        self._vars = {"bos_token": bos_token, "eos_token": eos_token, **dict(template_kwargs or {})}
        inserted = _inserts_default_system(self._messages)
        self._swap = _strip_default_system(self._messages) if inserted and not keep_default_system else None
        self.system_prompt = "none"
        if inserted:
            self.system_prompt = ("template default (reference rendering)" if keep_default_system
                                  else "none (template default removed)")

    def provenance(self) -> dict[str, str]:
        """The template's SHA-256 and :attr:`system_prompt`, as every judge that renders records them."""
        return {"chat_template_sha256": hashlib.sha256(self.source.encode("utf-8")).hexdigest(),
                "system_prompt": self.system_prompt}

    def _messages(self, messages: list[dict[str, str]]) -> str:
        return self._template.render(messages=messages, add_generation_prompt=True, **self._vars)

    def render(self, prompt: str) -> str:
        """The full text the model sees for one user prompt."""
        text = self._messages([{"role": "user", "content": prompt}])
        if self._swap is None:
            return text
        inserted, clean = self._swap
        if not text.startswith(inserted):
            raise ValueError("the chat template's output depends on the prompt before the prompt itself; "
                             "cannot remove its default system turn (use keep_default_system=True)")
        return clean + text[len(inserted):]
