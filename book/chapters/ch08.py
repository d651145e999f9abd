r"""What the fusion rules cost: queries, prompt tokens, time to first token, busy hours and money.

The paper's efficiency table (Table 2) compares Direct (one query per evaluation pair) with the
sentence-level methods (one query per sentence of the pair's post). Majority Vote, Soft Vote and TEF
send *identical* queries; they differ only in the arithmetic that fuses the answers, which this module
times too. Everything here is computed from the data at hand and from a model's own tokenizer:

* :func:`query_table` sizes the workload (one row per query with its prompt;
  :func:`tefcore.mind.release.post_table` gives the sentences per post);
* :func:`count_tokens` counts prompt tokens with any counter, for instance :func:`llama_token_counter`
  (the GGUF model's tokenizer and chat template) or :func:`hf_token_counter` (a vLLM model's), both
  rendering exactly what the judge evaluates (the reference rendering: a template's own default
  system turn is kept and counted); :func:`token_counter` picks the one of a registry model, and
  :func:`token_totals` sums them over the twelve (language × dimension) subsets;
* :func:`time_queries` (:func:`measure_latency`) times requests one after another on a backend, with
  the shared prompt prefix warm or cold, and :func:`time_fusion` times the fusion rules over every pair
  at once; :func:`method_costs` turns tokens and times into Table 2's rows;
* :func:`paper_workload` reads the paper's Table 2 against the size of the full release
  (:data:`tefcore.mind.release.FULL_RELEASE`, the published counts of protocol §2, also used by the data-card chapter) and
  derives the hourly GPU price the table implies.

For a query answered with a single token, the time to first token is essentially the whole request,
so a judge that serves requests one after another is busy for

.. math::

    \text{hours} = \frac{n_{\text{queries}} \cdot \overline{\text{TTFT}}}{3600\,\text{s}},
    \qquad \text{cost} = \text{hours} \times \text{price per hour}.
"""

from __future__ import annotations

import contextlib
import math
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

from tefcore.fusion import fuse_many
from tefcore.judges.base import ScoreRequest
from tefcore.mind.load import EvaluationPair
from tefcore.mind.release import FULL_RELEASE
from tefcore.mind.schema import TABLE_ORDER

__all__ = [
    "ESTIMATE_LABEL",
    "KINDS",
    "METHOD_LABELS",
    "Timing",
    "TokenCounter",
    "busy_hours",
    "count_tokens",
    "full_release_estimate",
    "full_release_queries",
    "fusion_markdown",
    "hf_token_counter",
    "judge_spec",
    "llama_token_counter",
    "measure_latency",
    "method_costs",
    "overhead_markdown",
    "paper_ratios",
    "paper_reading",
    "paper_table",
    "paper_workload",
    "placeholder_request",
    "prompt_overhead",
    "query_table",
    "reading_markdown",
    "requests_from",
    "sample_queries",
    "side_by_side",
    "summarise_latency",
    "time_fusion",
    "time_judge",
    "time_queries",
    "timing_sample",
    "token_counter",
    "token_figure",
    "token_ratio_markdown",
    "token_totals",
    "ttft_figure",
    "ttft_markdown",
]

KINDS: tuple[str, str] = ("direct", "sentence")
"""Query kinds: the whole post (Direct) or one sentence (MV, SV and TEF)."""

TokenCounter = Callable[[Sequence[str]], np.ndarray]
"""A function from prompts (as the protocol writes them) to their token counts as the model sees them."""

# --------------------------------------------------------------------------------------------------
# the workload: posts, sentences, queries
# --------------------------------------------------------------------------------------------------
def query_table(pairs: Sequence[EvaluationPair], variant: str = "original", rule: str = "reference") -> pd.DataFrame:
    """Every query the methods send for the given evaluation pairs.

    The queries are those of the extraction loop (:func:`tefcore.judges.run.build_requests`): the
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
    from tefcore.judges.run import build_requests

    rows = [(i, pair.post_id, pair.lang, pair.dimension, pair.side, r.kind, r.text, r.prompt)
            for i, pair in enumerate(pairs) for r in build_requests(pair, variant, rule)]
    return pd.DataFrame(rows, columns=["pair", "post_id", "lang", "dimension", "side", "kind", "text",
                                       "prompt"])


def requests_from(queries: pd.DataFrame) -> list[ScoreRequest]:
    """Turn rows of :func:`query_table` into :class:`~tefcore.judges.base.ScoreRequest` objects."""
    return [ScoreRequest(prompt=r.prompt, text=r.text, lang=r.lang, dimension=r.dimension,
                         post_id=r.post_id, kind=r.kind)
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


# --------------------------------------------------------------------------------------------------
# tokens
# --------------------------------------------------------------------------------------------------
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
    :class:`tefcore.judges.local.ChatTemplate` (one user turn, generation prompt, the template's
    default system turn kept unless ``keep_default_system=False``) and tokenised with special tokens
    parsed and no extra BOS: the token sequence :class:`~tefcore.judges.local.LocalBackend` evaluates.

    Parameters
    ----------
    model_path : str or Path, optional
        The GGUF file; default the embedded SmolLM2 (:func:`tefcore.judges.local.default_model_path`).
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

    from tefcore.judges.local import ChatTemplate, resolve_model_path

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


def token_totals(queries: pd.DataFrame) -> pd.DataFrame:
    """Queries and prompt tokens per (language × dimension) subset and kind, with a total row.

    Parameters
    ----------
    queries : pandas.DataFrame
        :func:`query_table` with a ``tokens`` column (:func:`count_tokens`).

    Returns
    -------
    pandas.DataFrame
        One row per subset (languages in order of appearance, dimensions in table order) and a last
        ``("all", "Total")`` row: ``lang, dimension, pairs, direct_queries, sentence_queries,
        direct_tokens, sentence_tokens, token_ratio`` (sentence / direct).
    """
    if "tokens" not in queries.columns:
        raise ValueError("queries lack a 'tokens' column: call count_tokens first")
    g = queries.groupby(["lang", "dimension", "kind"], sort=False)
    wide = pd.DataFrame({"queries": g.size(), "tokens": g["tokens"].sum()}).unstack("kind", fill_value=0)
    out = pd.DataFrame({
        "direct_queries": wide[("queries", "direct")], "sentence_queries": wide[("queries", "sentence")],
        "direct_tokens": wide[("tokens", "direct")], "sentence_tokens": wide[("tokens", "sentence")],
    }).reset_index()
    out.insert(2, "pairs", out["direct_queries"])
    langs = list(pd.unique(queries["lang"]))
    out["_l"] = out["lang"].map({lang: i for i, lang in enumerate(langs)})
    out["_d"] = out["dimension"].map({d: i for i, d in enumerate(TABLE_ORDER)})
    out = out.sort_values(["_l", "_d"]).drop(columns=["_l", "_d"]).reset_index(drop=True)
    total = out.drop(columns=["lang", "dimension"]).sum().to_dict()
    out = pd.concat([out, pd.DataFrame([{"lang": "all", "dimension": "Total", **total}])], ignore_index=True)
    int_cols = ["pairs", "direct_queries", "sentence_queries", "direct_tokens", "sentence_tokens"]
    out[int_cols] = out[int_cols].astype(np.int64)
    out["token_ratio"] = out["sentence_tokens"] / out["direct_tokens"]
    return out


# --------------------------------------------------------------------------------------------------
# time
# --------------------------------------------------------------------------------------------------
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
    return ScoreRequest(prompt, text, request.lang, request.dimension, request.post_id, request.kind)


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


def summarise_latency(timed: pd.DataFrame, by: Sequence[str] = ("kind",)) -> pd.DataFrame:
    """Mean, median and 90th percentile of the time to first token, in milliseconds, per group.

    Parameters
    ----------
    timed : pandas.DataFrame
        Rows with a ``seconds`` column (:func:`time_queries`); NaN times are left out.
    by : sequence of str
        Grouping columns.
    """
    ms = timed.assign(ms=timed["seconds"].astype(float) * 1e3).dropna(subset=["ms"])
    g = ms.groupby(list(by), sort=False)["ms"]
    out = pd.DataFrame({"n": g.size(), "mean_ms": g.mean(), "median_ms": g.median(),
                        "p90_ms": g.quantile(0.9)})
    return out.reset_index()


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


def busy_hours(n_queries: float, mean_seconds: float) -> float:
    """Hours a judge is busy serving ``n_queries`` one after another at ``mean_seconds`` each."""
    return float(n_queries) * float(mean_seconds) / 3600.0


# --------------------------------------------------------------------------------------------------
# the paper's Table 2 against the size of the full release
# --------------------------------------------------------------------------------------------------
def paper_workload(table2: pd.DataFrame, direct_queries: float, sentence_queries: float) -> pd.DataFrame:
    r"""Read Table 2 per query and derive the hourly price it implies.

    Assuming the GPU served the queries one after another and each lasted about its time to first
    token (one answer token), the busy time is :math:`n \cdot \overline{\text{TTFT}}` and

    .. math:: \text{price per hour} = \frac{\text{cost}}{n\,\overline{\text{TTFT}} / 3600\,\text{s}} .

    Parameters
    ----------
    table2 : pandas.DataFrame
        :func:`tefcore.paper.tables.load_table` ``("table2")``: ``model, method, quantity, unit, value``.
    direct_queries : float
        Direct queries of the twelve subsets (one per evaluation pair).
    sentence_queries : float
        Sentence-level queries (one per sentence of each pair's post), shared by voting and TEF.

    Returns
    -------
    pandas.DataFrame
        Per (model, method): ``queries, tokens_m, ttft_ms, cost_usd, tokens_per_query, busy_hours,
        implied_usd_per_hour``.
    """
    if direct_queries <= 0 or sentence_queries <= 0:
        raise ValueError("direct_queries and sentence_queries must be positive")
    wide = table2.pivot_table(index=["model", "method"], columns="quantity", values="value",
                              aggfunc="first", sort=False)
    missing = [q for q in ("tokens", "ttft", "cost") if q not in wide.columns]
    if missing:
        raise ValueError(f"table2 lacks quantity rows {missing}")
    out = wide.reset_index()[["model", "method"]].copy()
    out["queries"] = np.where(out["method"] == "direct", float(direct_queries), float(sentence_queries))
    out["tokens_m"] = wide["tokens"].to_numpy()
    out["ttft_ms"] = wide["ttft"].to_numpy()
    out["cost_usd"] = wide["cost"].to_numpy()
    out["tokens_per_query"] = out["tokens_m"] * 1e6 / out["queries"]
    out["busy_hours"] = out["queries"] * out["ttft_ms"] / 1e3 / 3600.0
    out["implied_usd_per_hour"] = out["cost_usd"] / out["busy_hours"]
    return out


def full_release_estimate(queries: pd.DataFrame) -> pd.DataFrame:
    """Scale the prompt tokens of the data at hand to the size of the full release.

    Tokens per query are measured per language and kind on the data at hand; the full release has
    ``pairs`` Direct queries and about ``pairs × mean_sentences`` sentence queries per language
    (:data:`FULL_RELEASE`; the per-post mean stands in for the per-pair mean, which the release's
    published figures do not give).

    Parameters
    ----------
    queries : pandas.DataFrame
        :func:`query_table` with a ``tokens`` column.

    Returns
    -------
    pandas.DataFrame
        ``lang, kind, tokens_per_query, full_queries, full_tokens_m`` and a total row per kind
        (``lang="all"``).
    """
    if "tokens" not in queries.columns:
        raise ValueError("queries lack a 'tokens' column: call count_tokens first")
    per = queries.groupby(["lang", "kind"], sort=False)["tokens"].mean().rename("tokens_per_query").reset_index()
    unknown = sorted(set(per["lang"]) - set(FULL_RELEASE))
    if unknown:
        raise ValueError(f"no full-release counts for language(s) {unknown}")
    pairs = per["lang"].map(lambda lang: FULL_RELEASE[lang]["pairs"])
    sentences = per["lang"].map(lambda lang: FULL_RELEASE[lang]["pairs"] * FULL_RELEASE[lang]["mean_sentences"])
    per["full_queries"] = np.where(per["kind"] == "direct", pairs, sentences)
    per["full_tokens_m"] = per["tokens_per_query"] * per["full_queries"] / 1e6
    total = per.groupby("kind", sort=False)[["full_queries", "full_tokens_m"]].sum().reset_index()
    total["tokens_per_query"] = total["full_tokens_m"] * 1e6 / total["full_queries"]
    total["lang"] = "all"
    out = pd.concat([per, total[per.columns]], ignore_index=True)
    order = {"direct": 0, "sentence": 1}
    out["_k"] = out["kind"].map(order)
    out["_l"] = (out["lang"] == "all").astype(int)
    return out.sort_values(["_l", "_k"], kind="stable").drop(columns=["_k", "_l"]).reset_index(drop=True)


def method_costs(direct_queries: int, sentence_queries: int, direct_tokens: int, sentence_tokens: int,
                 direct_ms: float, sentence_ms: float, fusion_seconds: Mapping[str, float],
                 price_per_hour: float, concurrency: int = 1) -> pd.DataFrame:
    r"""Table 2's quantities for our run: tokens, mean time to first token, busy hours and cost.

    Direct sends one query per pair; Voting (MV and SV) and TEF send the same sentence queries, so
    they share tokens and time to first token; the fusion itself adds ``fusion_seconds[rule]`` (for
    all pairs at once) to the busy time of each sentence-level method.

    .. math:: \text{hours} = \frac{n \cdot \overline{\text{TTFT}} / c + t_{\text{fusion}}}{3600\,\text{s}},
              \qquad \text{cost} = \text{hours} \times \text{price per hour}

    with :math:`c` the number of requests the judge serves at once (``concurrency``).

    Parameters
    ----------
    direct_queries, sentence_queries : int
        Number of queries of each kind.
    direct_tokens, sentence_tokens : int
        Their prompt tokens.
    direct_ms, sentence_ms : float
        Mean time to first token per query of each kind, in milliseconds.
    fusion_seconds : mapping of str to float
        Fusion time of all pairs per rule (keys ``majority_vote``, ``soft_vote``, ``tef``).
    price_per_hour : float
        Price of one hour of the machine.
    concurrency : int
        Requests served at the same time, each at the measured time to first token (e.g. the local
        backend's independent single-thread workers); 1 reads the times as one request after another.

    Returns
    -------
    pandas.DataFrame
        Rows ``direct``, ``voting`` (the slower of MV and SV fusion), ``tef``; columns ``queries,
        tokens_m, ttft_ms, fusion_ms, busy_hours, cost``.
    """
    if price_per_hour < 0 or not math.isfinite(price_per_hour):
        raise ValueError(f"price_per_hour must be a non-negative number, got {price_per_hour!r}")
    if int(concurrency) != concurrency or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    voting = max(fusion_seconds.get("majority_vote", 0.0), fusion_seconds.get("soft_vote", 0.0))
    rows = [("direct", direct_queries, direct_tokens, direct_ms, 0.0),
            ("voting", sentence_queries, sentence_tokens, sentence_ms, voting),
            ("tef", sentence_queries, sentence_tokens, sentence_ms, fusion_seconds.get("tef", 0.0))]
    out = pd.DataFrame(rows, columns=["method", "queries", "tokens", "ttft_ms", "fusion_s"])
    out["tokens_m"] = out["tokens"] / 1e6
    out["fusion_ms"] = out["fusion_s"] * 1e3
    out["busy_hours"] = (out["queries"] * out["ttft_ms"] / 1e3 / int(concurrency) + out["fusion_s"]) / 3600.0
    out["cost"] = out["busy_hours"] * price_per_hour
    return out[["method", "queries", "tokens_m", "ttft_ms", "fusion_ms", "busy_hours", "cost"]]


# --------------------------------------------------------------------------------------------------
# the chapter's tables: the paper's rows, the book's reading of them, our rows
# --------------------------------------------------------------------------------------------------
METHOD_LABELS: dict[str, str] = {"direct": "Direct", "voting": "Voting (MV, SV)", "tef": "TEF"}
"""How the efficiency tables name the methods (MV and SV send the same queries: one row, "Voting")."""

ESTIMATE_LABEL = "book's estimate from the paper's Table 2"
"""Label of the rows the book derives from the paper's Table 2 (never the paper's own numbers)."""


def _paper_source(model: str) -> str:
    from companion.provenance import PAPER_LABEL
    from tefcore.paper.tables import MODEL_LABELS

    return f"{PAPER_LABEL}: {MODEL_LABELS.get(model, model)}"


def paper_table(table2: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 2 as published: tokens (M), TTFT (ms) and cost ($) per model and method.

    Returns
    -------
    pandas.DataFrame
        Index ``(source, method)`` with ``source`` ``"paper: <model>"``; only the paper's numbers.

    Examples
    --------
    >>> from tefcore.paper.tables import load_table
    >>> float(paper_table(load_table("table2")).loc[("paper: Qwen2.5-7B", "TEF"), "TTFT (ms)"])
    15.8
    """
    wide = table2.pivot_table(index=["model", "method"], columns="quantity", values="value", aggfunc="first",
                              sort=False)[["tokens", "ttft", "cost"]].reset_index()
    wide["source"] = wide["model"].map(_paper_source)
    wide["method"] = wide["method"].map(METHOD_LABELS)
    wide = wide.set_index(["source", "method"])[["tokens", "ttft", "cost"]]
    wide.columns = ["tokens (M)", "TTFT (ms)", "cost ($)"]
    wide.columns.name = None
    return wide


def paper_ratios(table2: pd.DataFrame) -> pd.DataFrame:
    """The ratios the paper's efficiency paragraph rests on, recomputed from its Table 2, one row per model.

    Columns: whether TEF and voting have the same token count, voting's tokens and the cost of voting and
    of TEF over Direct's, and TEF's TTFT minus voting's (ms)
    (:func:`tefcore.paper.tables.efficiency_summary` under readable names).

    Examples
    --------
    >>> from tefcore.paper.tables import load_table
    >>> paper_ratios(load_table("table2")).loc["Qwen2.5-7B", "TTFT: TEF − voting (ms)"].round(1)
    np.float64(1.4)
    """
    from tefcore.paper.tables import MODEL_LABELS, efficiency_summary

    out = efficiency_summary(table2).rename(index=MODEL_LABELS)
    out = out.rename(columns={"tokens_equal": "same tokens (TEF, voting)", "token_ratio": "tokens: voting / Direct",
                              "cost_ratio_voting": "cost: voting / Direct", "cost_ratio_tef": "cost: TEF / Direct",
                              "ttft_tef_minus_voting": "TTFT: TEF − voting (ms)"})
    out.index.name = "paper's Table 2"
    return out


def full_release_queries() -> tuple[int, float]:
    """Queries of the full release (protocol §2): Direct, one per evaluation pair; sentence-level, about
    pairs × mean sentences per post under the reference rule, summed over both languages.

    Examples
    --------
    >>> direct, sentence = full_release_queries()
    >>> direct, round(sentence)
    (14951, 71922)
    """
    direct = sum(int(FULL_RELEASE[lang]["pairs"]) for lang in ("zh", "en"))
    sentence = sum(FULL_RELEASE[lang]["pairs"] * FULL_RELEASE[lang]["mean_sentences"] for lang in ("zh", "en"))
    return direct, float(sentence)


def paper_reading(workload: pd.DataFrame) -> pd.DataFrame:
    """The book's reading of Table 2 (:func:`paper_workload`): queries of the full release, tokens per
    query, busy hours and the hourly price the cost implies, in rows labelled :data:`ESTIMATE_LABEL`.

    Returns
    -------
    pandas.DataFrame
        Index ``(source, method)``; columns ``queries``, ``tokens per query``, ``busy hours``, ``$ per hour``.
    """
    from tefcore.paper.tables import MODEL_LABELS

    out = workload.assign(source=f"{ESTIMATE_LABEL}: " + workload["model"].map(MODEL_LABELS),
                          method=workload["method"].map(METHOD_LABELS))
    out = out.set_index(["source", "method"])[["queries", "tokens_per_query", "busy_hours", "implied_usd_per_hour"]]
    out.columns = ["queries", "tokens per query", "busy hours", "$ per hour"]
    out.columns.name = None
    return out


def reading_markdown(workload: pd.DataFrame) -> str:
    """What the reading of Table 2 gives, per model, in words: tokens per query and the implied price.

    Examples
    --------
    >>> from tefcore.paper.tables import load_table
    >>> text = reading_markdown(paper_workload(load_table("table2"), *full_release_queries()))
    >>> "Qwen2.5-7B: 33.4 per Direct query and 37.5 per sentence query" in text
    True
    """
    from tefcore.paper.tables import MODEL_LABELS

    per = workload.pivot_table(index="model", columns="method", values="tokens_per_query", sort=False)
    tokens = "; ".join(f"{MODEL_LABELS.get(m, m)}: {r['direct']:.1f} per Direct query and {r['voting']:.1f} per "
                       "sentence query" for m, r in per.iterrows())
    price = workload["implied_usd_per_hour"]
    return (f"Tokens per query, from the token totals: {tokens}. The implied price is "
            f"${price.median():.2f} per GPU-hour (median of the {len(price)} rows; range "
            f"{price.min():.2f}–{price.max():.2f}).")


def side_by_side(table2: pd.DataFrame, ours: pd.DataFrame, label: str) -> pd.DataFrame:
    """The paper's rows of Table 2 beside our measured rows, each labelled with its source.

    The paper's rows hold only what the paper printed (tokens, TTFT, cost); the queries and busy hours it
    does not print stay empty there. Our rows hold :func:`method_costs`; Direct has no fusion step, so its
    fusion time is empty too.

    Parameters
    ----------
    table2 : pandas.DataFrame
        The paper's Table 2 (tidy).
    ours : pandas.DataFrame
        :func:`method_costs` of our run.
    label : str
        The label of our rows (:func:`companion.provenance.run_label`).

    Returns
    -------
    pandas.DataFrame
        Index ``(source, method)``; columns ``queries, tokens (M), TTFT (ms), fusion (ms), busy hours, cost ($)``.
    """
    paper = paper_table(table2)
    mine = ours.assign(source=label, method=ours["method"].map(METHOD_LABELS)).set_index(["source", "method"])
    mine = mine.rename(columns={"tokens_m": "tokens (M)", "ttft_ms": "TTFT (ms)", "fusion_ms": "fusion (ms)",
                                "busy_hours": "busy hours", "cost": "cost ($)"})
    columns = ["queries", "tokens (M)", "TTFT (ms)", "fusion (ms)", "busy hours", "cost ($)"]
    out = pd.concat([paper, mine]).reindex(columns=columns)
    out["queries"] = out["queries"].astype(float)
    out.loc[out.index.get_level_values("method") == METHOD_LABELS["direct"], "fusion (ms)"] = np.nan
    return out


# --------------------------------------------------------------------------------------------------
# the judge: its tokenizer, its prompt overhead, its time to first token
# --------------------------------------------------------------------------------------------------
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


def prompt_overhead(spec: Any, langs: Sequence[str], variant: str = "original", dimension: str = "Economy") -> pd.DataFrame:
    """Tokens of the prompt around a one-letter text, and how many of them the template's default system
    turn takes (0 for a template without one).

    Returns
    -------
    pandas.DataFrame
        Index: languages; columns ``prompt tokens`` (as the judge reads the prompt) and ``system turn``.
    """
    from dataclasses import replace

    from tefcore.mind.prompts import build_prompt

    prompts = [build_prompt("x", dimension, lang, variant) for lang in langs]
    full = token_counter(spec)(prompts)
    bare = token_counter(replace(spec, options={**spec.options, "keep_default_system": False}))(prompts)
    return pd.DataFrame({"prompt tokens": full, "system turn": full - bare}, index=list(langs))


def overhead_markdown(overhead: pd.DataFrame, spec: Any) -> str:
    """The prompt overhead in words (:func:`prompt_overhead`)."""
    from companion.labels import LANG_LABELS

    parts = ", ".join(f"{LANG_LABELS.get(lang, lang)} {int(r['prompt tokens'])} tokens" for lang, r in overhead.iterrows())
    system = overhead["system turn"]
    turn = ("the template adds no system turn of its own" if not system.any() else
            f"of which the template's own default system turn takes {int(system.max())}; the reference rendering "
            "keeps it, so every count here includes it")
    return f"With {spec.display_name or spec.name}'s tokenizer, the prompt around a one-letter text (Economy) is {parts}: {turn}."


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
    from tefcore.judges import make_backend

    if spec.backend == "openai":
        judge = make_backend(spec)
        ordered = sample.sort_values(["lang", "dimension"], kind="stable").reset_index(drop=True)
        seconds = np.asarray(judge.measure_ttft(requests_from(ordered)), dtype=float)
        return Timing(ordered.assign(seconds=seconds, mode="streaming"),
                      f"streaming requests to {spec.options.get('base_url')}", dict(judge.provenance()), 1)
    if spec.backend != "llama_cpp":
        raise ValueError(f"set endpoint= to time {spec.name!r} (e.g. the URL of `vllm serve`)")
    bad = [m for m in modes if m not in ("warm", "cold")]
    if bad or not modes:
        raise ValueError(f"ttft_modes takes 'warm' and/or 'cold', got {list(modes)!r}")
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


def ttft_markdown(timing: Timing) -> str:
    """The measured times to first token in words: per kind, and per language (in the mode of the costs)."""
    from companion.labels import LANG_LABELS

    timed = timing.timed[timing.timed["mode"] == timing.mode]
    kind = timed.groupby("kind")["seconds"].mean() * 1e3
    lang = timed.groupby("lang")["seconds"].mean() * 1e3
    langs = ", ".join(f"{LANG_LABELS.get(x, x)} {v:.1f} ms" for x, v in lang.items())
    return (f"Here ({timing.mode}), a Direct request takes {kind.get('direct', np.nan):.1f} ms on average and a "
            f"sentence request {kind.get('sentence', np.nan):.1f} ms; per language: {langs}.")


def fusion_markdown(fusion: pd.DataFrame, timing: Timing) -> str:
    """The fusion time (:func:`time_fusion`) against the time of one query, in words."""
    ms = dict(zip(fusion["rule"], fusion["seconds"] * 1e3))
    per_query = float(timing.mean_ms().mean())
    votes = max(ms.get("majority_vote", 0.0), ms.get("soft_vote", 0.0))
    return (f"Fusing all {int(fusion['documents'].iloc[0]):,} pairs ({int(fusion['sentences'].iloc[0]):,} sentences) "
            f"at once takes {ms.get('tef', np.nan):.3f} ms for TEF and {votes:.3f} ms for the slower vote, "
            f"{ms.get('tef', np.nan) / per_query:.2e} times the mean time of a single query here ({per_query:.1f} ms).")


def token_ratio_markdown(estimate: pd.DataFrame, table2: pd.DataFrame, name: str) -> str:
    """Sentence-level over Direct tokens: ours (:func:`full_release_estimate`) beside the paper's per model."""
    from tefcore.paper.tables import MODEL_LABELS, efficiency_summary

    ours = estimate[estimate["lang"] == "all"].set_index("kind")["full_tokens_m"]
    paper = efficiency_summary(table2)["token_ratio"]
    return (f"Sentence-level over Direct tokens: ours {ours['sentence'] / ours['direct']:.2f} ({name}); the paper's "
            + ", ".join(f"{MODEL_LABELS.get(m, m)} {r:.2f}" for m, r in paper.items()) + ".")


def _time_local(spec: Any, sample: pd.DataFrame, mode: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Time the sample on a fresh in-process judge in one mode; the judge is freed on return."""
    from tefcore.judges import make_backend

    judge = make_backend(spec, reuse_prefix=mode == "warm")
    timed = time_queries(lambda r: judge.score([r]), sample, warm_prefix=mode == "warm").assign(mode=mode)
    return timed, dict(judge.provenance())


# --------------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------------
_KIND_COLORS = {"direct": "#4e79a7", "sentence": "#f28e2b"}


def token_figure(totals: pd.DataFrame, tokenizer: str) -> Any:
    """Grouped bars of the prompt tokens of each (language × dimension) subset, Direct beside sentence-level."""
    import plotly.graph_objects as go

    sub = totals[totals["dimension"] != "Total"]
    labels = sub["lang"] + " · " + sub["dimension"]
    fig = go.Figure()
    for kind, name in (("direct", "Direct"), ("sentence", "sentence-level (MV, SV, TEF)")):
        fig.add_bar(x=labels, y=sub[f"{kind}_tokens"] / 1e3, name=name, marker_color=_KIND_COLORS[kind],
                    customdata=sub[f"{kind}_queries"],
                    hovertemplate="%{x}<br>%{y:.1f}k tokens in %{customdata} queries<extra></extra>")
    fig.update_layout(title=f"Prompt tokens per subset ({tokenizer} tokenizer)", barmode="group",
                      yaxis_title="prompt tokens (thousands)", height=420, legend={"orientation": "h", "y": -0.35})
    return fig


def ttft_figure(timed: pd.DataFrame) -> Any:
    """Box plots of the time to first token per kind, language and mode (log scale)."""
    import plotly.graph_objects as go

    from companion.labels import LANG_LABELS

    fig = go.Figure()
    for (mode, kind, lang), g in timed.groupby(["mode", "kind", "lang"], sort=True):
        fig.add_box(y=g["seconds"] * 1e3, name=f"{kind} · {LANG_LABELS.get(lang, lang)} · {mode}", boxmean=True,
                    marker_color=_KIND_COLORS[kind])
    fig.update_layout(title="Time to first token per request (ours, this machine)", yaxis_title="ms",
                      yaxis_type="log", height=420, showlegend=False)
    return fig
