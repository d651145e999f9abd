"""The commands that reproduce a paper result for a model: extraction, ``vllm serve``, the result chapters.

A plan is a list of ordinary commands that can also be run by hand (:func:`plan` builds them,
:meth:`Plan.script` prints them as a shell script); ``tef reproduce`` (:mod:`tefbook.reproduce`) runs
them. The steps:
1. **extraction**: ``tef extract --model MODEL`` over every evaluation pair of the chosen data and
   languages, for each prompt variant, in the paper's setting (reference prompt rendering: the chat
   template's own default system turn kept; reference segmentation), with the reading named
   (``summed``, or the reference release's ``reference``), into ``<out>/<model>/<prompt>/<lang>.jsonl``,
   where the result chapters read their caches;
2. for a vLLM model, **``vllm serve``** in the background (chapter 8 times requests to it, as the paper
   did); ``tef reproduce`` waits until it answers, and stops it after step 3;
3. **the result chapters** 5-9 rebuilt with the model added: ``tef book --chapters 05 06 07 08 09 -p
   ...``; every parameter is generated from the chapter's own parameters cell (its judges plus this one).

The plan is checked before anything runs (:attr:`Plan.problems`): the model and the reading, the data
files, that each ``-p`` names a parameter the chapter declares (read from the chapter file with
:func:`tefbook.parameters.declared_parameters`, without the book tool), that every cache a
chapter will read for the model is a file the extraction writes, and that chapter 8 reads the same data
and the server the plan starts. A cache that already exists is resumed: when it was written under
another tensor-parallel size than the one this box would choose, the extraction command pins the
recorded size (its registry variable, e.g. ``QWEN3_14B_TP=2``) when the box has the GPUs for it, and the
plan refuses otherwise (tensor parallelism changes the floating-point sums: the numbers could differ).
``--dry-run`` prints the steps and the checks and loads no model.

:func:`command_for_chapter` gives the commands that add a model to one chapter, and
:func:`reproduce_command` the ``tef reproduce`` line itself: the chapters print these, so that every
command the book shows is generated here.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "RESULT_CHAPTERS",
    "Plan",
    "Step",
    "chapter_file",
    "command_for_chapter",
    "option_value",
    "plan",
    "reproduce_command",
]

RESULT_CHAPTERS: tuple[str, ...] = ("05", "06", "07", "08", "09")
"""The result chapters (main results, ablation, prompt robustness, efficiency, calibration)."""


# --------------------------------------------------------------------------------------------------
# steps and plans
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One command of a plan.

    Attributes
    ----------
    name : str
        ``"extract"``, ``"serve"`` or ``"book"``.
    argv : tuple of str
        The command as a user types it (``tef ...``, ``vllm serve ...``).
    env : tuple of (str, str)
        Variables set for the command only (printed before it).
    reads, writes : tuple of Path
        Files the step reads and writes (absolute): the checks link them.
    background : bool
        The command runs in the background while the next steps run (``vllm serve``).
    note : str
        One line on what the step does.
    """

    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    reads: tuple[Path, ...] = ()
    writes: tuple[Path, ...] = ()
    background: bool = False
    note: str = ""

    def parameters(self) -> dict[str, dict[str, Any]]:
        """The chapter parameters of a ``tef book`` step: ``{"05": {"models": ...}, ...}`` (values read back
        from their YAML text, as the book build reads them)."""
        out: dict[str, dict[str, Any]] = {}
        for flag, text in zip(self.argv, self.argv[1:]):
            if flag == "-p":
                target, _, raw = text.partition("=")
                chapter, _, name = target.partition(".")
                out.setdefault(chapter, {})[name] = yaml.safe_load(raw) if raw.strip() else ""
        return out

    def command(self, wrap: bool = False) -> str:
        """The command line, copy-pasteable into a POSIX shell (``wrap``: one ``-p`` per line)."""
        words = [f"{k}={shlex.quote(v)}" for k, v in self.env] + [shlex.quote(a) for a in self.argv]
        line = " ".join(words)
        if wrap:
            line = line.replace(" -p ", " \\\n    -p ")
        return line + (" &" if self.background else "")


@dataclass(frozen=True)
class Plan:
    """The steps of ``tef reproduce`` for one model, with the checks' findings.

    Attributes
    ----------
    model : str
        The registry name.
    steps : tuple of Step
    notes : tuple of str
        What the reader should know (a chapter left out, a size pinned to resume).
    problems : tuple of str
        Why the plan cannot run as it is; empty when every check passed.
    root : Path
        The project folder the commands run in.
    checked : tuple of str
        Further checks that passed (the engine imported, and the platform it reports).
    """

    model: str
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)
    checked: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return not self.problems

    def step(self, name: str) -> Step:
        """The step called ``name``."""
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"the plan for {self.model} has no {name!r} step")

    def script(self) -> str:
        """The steps as a shell script: a comment per step, then its command."""
        lines = [f"# tef reproduce {self.model}: the steps, run from the project folder"]
        for number, step in enumerate(self.steps, start=1):
            lines += ["", f"# {number}. {step.note}", step.command(wrap=True)]
            if step.background and step.name == "serve":
                url = f"http://{option_value(step.argv, '--host')}:{option_value(step.argv, '--port')}/v1/models"
                lines += ["# wait until it answers", f"until python -c \"import urllib.request as u; "
                          f"u.urlopen('{url}')\" 2>/dev/null; do sleep 5; done"]
        if any(s.background for s in self.steps):
            lines += ["", "# stop the server when the chapters are built", "kill %1"]
        return "\n".join(lines)

    def report(self) -> str:
        """The script, the notes and the checks' verdict, as ``--dry-run`` prints them."""
        out = [f"project folder: {self.root}", "", self.script(), ""]
        out += [f"note: {n}" for n in self.notes]
        if self.problems:
            out += [f"problem: {p}" for p in self.problems]
        else:
            out.append("checks passed: every -p names a declared parameter, the data files exist, and every "
                       "cache the chapters read for this model is written by the extraction"
                       + "".join(f"; {c}" for c in self.checked))
        return "\n".join(out)


# --------------------------------------------------------------------------------------------------
# building a plan
# --------------------------------------------------------------------------------------------------
def option_value(argv: Sequence[str], flag: str) -> str:
    """The value that follows ``flag`` in a command line.

    Examples
    --------
    >>> option_value(["vllm", "serve", "m", "--port", "8000"], "--port")
    '8000'
    """
    return argv[list(argv).index(flag) + 1]


def chapter_file(number: str, root: Path) -> Path:
    """``notebooks/<number>_*.py`` of the project.

    Raises
    ------
    FileNotFoundError
        When no chapter or more than one has that number.
    """
    found = sorted((root / "notebooks").glob(f"{number}_*.py"))
    if len(found) != 1:
        hint = "" if (root / "_toc.yml").is_file() else (
            "; run it inside the companion's folder (the one with _toc.yml), or set $TEF_PROJECT_ROOT")
        raise FileNotFoundError(f"chapter {number}: expected one notebooks/{number}_*.py under {root}, "
                                f"found {len(found)}{hint}")
    return found[0]


def _shown(path: Path, root: Path) -> str:
    """A path as the commands print it: relative to the project folder when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _yaml(value: Any) -> str:
    """A ``-p`` value that reads back as ``value`` (``tef book`` reads it as YAML).

    Examples
    --------
    >>> print(_yaml("e5-crossfit,local"), _yaml(8), _yaml("8"), _yaml(" "))
    e5-crossfit,local 8 "8" " "
    """
    if isinstance(value, str):
        plain = "\n" not in value and value.strip() != ""  # blank text is read back as ""
        try:
            if plain and yaml.safe_load(value) == value:
                return value
        except yaml.YAMLError:
            pass
        return yaml.safe_dump(value, default_style='"', width=float("inf")).strip()  # double-quoted, escaped
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True).strip().removesuffix("...").strip()


def _add(names: Any, model: str) -> str:
    """A comma-separated list of judges with ``model`` appended (once)."""
    items = [n.strip() for n in str(names or "").split(",") if n.strip()]
    return ",".join(items if model in items else [*items, model])


def _ordered_langs(default: Any, langs: Sequence[str]) -> str:
    """The chosen languages in the chapter's own order (its default), the others after them."""
    order = [x.strip() for x in str(default or "").split(",") if x.strip()]
    return ",".join([x for x in order if x in langs] + [x for x in langs if x not in order])


@dataclass
class _Context:
    """What the builders of the steps share."""

    spec: Any
    prompts: list[str]
    langs: list[str]
    data_dir: Path
    out: Path
    reading: str
    root: Path
    serve_url: str | None
    limit: int | None = None
    engine: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def main_prompt(self) -> str:
        return "original" if "original" in self.prompts else self.prompts[0]

    @property
    def is_llm(self) -> bool:
        return bool(self.spec.reads_logprobs)


def _cache_files(ctx: _Context, out: Path, prompts: Sequence[str], reading: str) -> list[Path]:
    from tefcore.extraction.cache import cache_path

    return [cache_path(out, ctx.spec.name, p, lang, "reference", reading).resolve()
            for p in prompts for lang in ctx.langs]


def _extract_step(ctx: _Context, exact_labels: str | None) -> Step:
    """``tef extract`` with the paper's setting, the data directory and the reading named."""
    from tefcore.mind.load import mind_filename

    argv = ("tef", "extract", "--model", ctx.spec.name, "--lang", *ctx.langs, "--prompt", *ctx.prompts,
            "--data-dir", _shown(ctx.data_dir, ctx.root), "--out", _shown(ctx.out, ctx.root),
            "--reading", ctx.reading, *(("--limit", str(ctx.limit)) if ctx.limit else ()))
    env = dict(_resume_pins(ctx))
    if exact_labels is not None:
        env.update(_variable_for(ctx, "exact_labels", exact_labels))
    reads = tuple((ctx.data_dir / mind_filename(lang)).resolve() for lang in ctx.langs)
    writes = tuple(_cache_files(ctx, ctx.out, ctx.prompts, ctx.reading))
    scope = f"the first {ctx.limit} pairs" if ctx.limit else "every pair"
    note = (f"extraction: {scope} of {', '.join(ctx.langs)} in {_shown(ctx.data_dir, ctx.root)}, prompts "
            f"{', '.join(ctx.prompts)}, reading {ctx.reading}, reference rendering -> "
            f"{_shown(ctx.out, ctx.root)}/{ctx.spec.name}/<prompt>/{_cache_name(ctx.reading)}")
    return Step("extract", argv, tuple(sorted(env.items())), reads, writes, note=note)


def _cache_name(reading: str) -> str:
    """The file name a reading's cache takes, with ``<lang>`` for the language.

    >>> _cache_name("summed"), _cache_name("reference")
    ('<lang>.jsonl', '<lang>.reading-reference.jsonl')
    """
    from tefcore.extraction.cache import cache_path

    return cache_path(".", "m", "p", "<lang>", reading=reading).name


def _variable_for(ctx: _Context, option: str, value: str) -> dict[str, str]:
    """``{VAR: value}`` for the registry variable of an option, or a problem when it has none."""
    from tefbook.serve import option_variable

    name = option_variable(ctx.spec.name, option)
    if name is None:
        ctx.problems.append(f"{ctx.spec.name}: its registry entry has no variable for {option}; "
                            f"set {option} in tefcore/judges/models.yaml")
        return {}
    return {name: value}


def _recorded_tensor_parallel(files: Sequence[Path]) -> dict[Path, int]:
    """The tensor-parallel size recorded in the header of each existing cache file."""
    found: dict[Path, int] = {}
    for file in files:
        if not file.is_file():
            continue
        with open(file, encoding="utf-8") as handle:
            try:
                header = json.loads(handle.readline())
            except ValueError:
                continue
        prov = header.get("provenance", {}) if isinstance(header, dict) else {}
        size = prov.get("tensor_parallel_size") or (prov.get("engine") or {}).get("tensor_parallel_size")
        if isinstance(size, int):
            found[file] = size
    return found


def _resume_pins(ctx: _Context) -> dict[str, str]:
    """Pin the tensor-parallel size of caches that already exist, when this box can resume them."""
    from tefcore.judges.vllm_engine import TP_AUTO, visible_gpus

    if ctx.spec.backend != "vllm":
        return {}
    recorded = _recorded_tensor_parallel(_cache_files(ctx, ctx.out, ctx.prompts, ctx.reading))
    sizes = sorted(set(recorded.values()))
    if not sizes:
        return {}
    if len(sizes) > 1:
        ctx.problems.append(f"the existing caches of {ctx.spec.name} were written under different "
                            f"tensor-parallel sizes {sizes}; move them away or choose another --out")
        return {}
    size, wanted, visible = sizes[0], ctx.spec.options.get("tensor_parallel_size", 1), visible_gpus()
    reason = ("tensor parallelism splits every matrix product over the GPUs and changes the order of the "
              "floating-point sums, so the numbers could differ")
    if wanted != TP_AUTO and wanted != size:
        ctx.problems.append(f"the existing caches of {ctx.spec.name} were written with tensor_parallel_size={size} "
                            f"and the registry now gives {wanted}: {reason}; set it back to {size} or use "
                            "another --out")
        return {}
    if wanted != TP_AUTO:
        return {}
    if visible and size > visible:
        ctx.problems.append(f"the existing caches of {ctx.spec.name} were written with tensor_parallel_size={size}, "
                            f"and this box shows {visible} GPU(s): they cannot be resumed here ({reason}); "
                            "use another --out")
        return {}
    ctx.notes.append(f"existing caches of {ctx.spec.name} were written with tensor_parallel_size={size}: "
                     "the extraction pins it to resume them")
    return _variable_for(ctx, "tensor_parallel_size", str(size))


def _serve_step(ctx: _Context, port: int) -> Step:
    """``vllm serve`` of the model, with the offline backend's settings."""
    from tefbook.serve import serve_command, serve_environment
    from tefcore.judges.vllm_engine import TP_AUTO, attention_heads, choose_tensor_parallel, visible_gpus

    size = ctx.spec.options.get("tensor_parallel_size", 1)
    if size == TP_AUTO:
        visible = max(visible_gpus(), 1)
        size = choose_tensor_parallel(visible, attention_heads(str(ctx.spec.options["model"])) if visible > 1 else None)
    distribution = (ctx.engine or {}).get("distribution")
    argv = tuple(serve_command(ctx.spec, int(size), port=port, distribution=distribution))
    note = (f"vllm serve in the background for chapter 8's timings (tef reproduce waits for "
            f"{ctx.serve_url}/models, and stops the server after the chapters)")
    return Step("serve", argv, tuple(sorted(serve_environment(ctx.spec).items())), background=True, note=note)


def _chapter_parameters(ctx: _Context, declared: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that add the model to one chapter, from the names it declares."""
    wanted: dict[str, Any] = {}
    served = str(ctx.spec.options.get("model", ""))
    rules: dict[str, Any] = {
        "models": lambda: _add(declared["models"], ctx.spec.name),
        "llm_models": lambda: _add(declared["llm_models"], ctx.spec.name) if ctx.is_llm else None,
        "model": lambda: ctx.spec.name,
        "example_judge": lambda: ctx.spec.name,  # chapter 5 works its example on the model's own cache
        "example_lang": lambda: declared["example_lang"] if declared["example_lang"] in ctx.langs else ctx.langs[0],
        "prompt": lambda: ctx.main_prompt,
        "prompts": lambda: ",".join(ctx.prompts),
        "langs": lambda: _ordered_langs(declared["langs"], ctx.langs),
        "cache_dir": lambda: _shown(ctx.out, ctx.root),
        "data_dir": lambda: _shown(ctx.data_dir, ctx.root),
        "reading": lambda: ctx.reading,
        "endpoint": lambda: ctx.serve_url,
        "live_timing": lambda: True,  # chapter 8 times the model (its default reads a committed record)
        "endpoint_model": lambda: served if ctx.serve_url else None,
    }
    for name in declared:  # a rule that gives None leaves the chapter's default
        if name in rules and (value := rules[name]()) is not None:
            wanted[name] = value
    return wanted


def _chapter_reads(ctx: _Context, params: Mapping[str, Any]) -> list[Path]:
    """The caches (or data files) a chapter will read for the model, with the parameters given."""
    from tefcore.mind.load import mind_filename

    if "cache_dir" in params:
        prompts = [params["prompt"]] if "prompt" in params else []
        if "prompts" in params:
            prompts = list(dict.fromkeys([*prompts, *str(params["prompts"]).split(",")]))
        reading = params.get("reading", "summed")
        cache_dir = (ctx.root / params["cache_dir"]) if not Path(params["cache_dir"]).is_absolute() \
            else Path(params["cache_dir"])
        return _cache_files(ctx, cache_dir, prompts, reading)
    if "data_dir" in params:
        data = Path(params["data_dir"])
        data = data if data.is_absolute() else ctx.root / data
        return [(data / mind_filename(lang)).resolve() for lang in ctx.langs]
    return []


def _book_step(ctx: _Context, chapters: Sequence[str], extract: Step) -> Step:
    """``tef book`` of the chosen chapters with the model added, checked against the chapters' cells."""
    from tefbook.parameters import declared_parameters, unknown_parameter_message

    argv: list[str] = ["tef", "book", "--chapters", *chapters]
    reads: list[Path] = []
    for number in chapters:
        path = chapter_file(number, ctx.root)
        declared = declared_parameters(path)
        params = _chapter_parameters(ctx, declared)
        unread = ctx.reading != "summed" and "cache_dir" in declared and "reading" not in declared
        if unread:
            ctx.problems.append(f"chapter {number} ({path.name}) has no `reading` parameter: it reads only "
                                f"<lang>.jsonl, the summed reading, while --reading {ctx.reading} writes "
                                f"<lang>.reading-{ctx.reading}.jsonl")
        unknown = [n for n in params if n not in declared]
        if unknown:
            ctx.problems.append(unknown_parameter_message(path.stem, unknown, list(declared)))
        own = _chapter_reads(ctx, params)
        missing = [f for f in own if f not in set(extract.writes) | set(extract.reads)]
        if missing and not unread:
            ctx.problems += [f"chapter {number} would read {_shown(f, ctx.root)}, which no step writes"
                             for f in missing]
        reads += own
        argv += [a for name, value in params.items() for a in ("-p", f"{number}.{name}={_yaml(value)}")]
    build_dir = Path("_build") / "reproduce" / ctx.spec.name  # its own folder: the book's _build/html stays whole
    argv += ["--build-dir", build_dir.as_posix()]
    note = (f"the result chapters {', '.join(chapters)} with {ctx.spec.name} added, built into "
            f"{build_dir.as_posix()}/html (the book's _build/html is left as it is)")
    env: dict[str, str] = {}
    if ctx.serve_url and not os.environ.get("VLLM_API_KEY"):
        env["VLLM_API_KEY"] = "none"  # the server the plan starts has no authentication; chapter 8's client needs a value
    hardware = (ctx.engine or {}).get("class")
    if ctx.serve_url and hardware in ("CPU", "GPU"):
        env["VLLM_SERVER_HARDWARE"] = hardware
    return Step("book", tuple(argv), tuple(sorted(env.items())), reads=tuple(dict.fromkeys(reads)),
                writes=((ctx.root / build_dir / "html").resolve(),), note=note)


def _check_engine(ctx: _Context) -> str | None:
    """vLLM imports here (in a fresh interpreter), and which platform it reports; a problem otherwise."""
    from tefbook.serve import probe_engine
    from tefcore.judges.vllm_engine import MissingVLLM

    try:
        ctx.engine = probe_engine()
    except MissingVLLM as exc:
        ctx.problems.append(f"{exc}: step 1 would stop at once; install it (pip install 'tefcore[vllm]' on a GPU "
                            "box, bash scripts/setup-vllm.sh for vLLM's CPU build)")
        return None
    engine = ctx.engine
    said = (f"vLLM {engine['version']} ({engine['distribution'] or 'distribution unknown'}) imports here: "
            f"platform {engine['platform']} ({engine['class']})")
    ctx.notes.append(said)
    return said


def _check_model_folder(ctx: _Context) -> None:
    """A vLLM model given as a local path must exist (a Hugging Face id is fetched by vLLM itself)."""
    model = str(ctx.spec.options.get("model", ""))
    if ctx.spec.backend == "vllm" and model.startswith(("/", "./", "../", "~")) and not Path(model).expanduser().exists():
        ctx.problems.append(f"model folder {model} not found ({ctx.spec.name}'s registry entry; for "
                            "smollm2-vllm, bash scripts/setup-vllm.sh writes it and prints SMOLLM2_HF_PATH)")


def _select_chapters(ctx: _Context, chapters: Sequence[str]) -> list[str]:
    """The chapters that can show the model (chapter 8 times local LLMs: not an API or embedding judge)."""
    chosen = []
    for number in chapters:
        if number not in RESULT_CHAPTERS:
            raise ValueError(f"chapter {number!r} is not a result chapter; choose among {', '.join(RESULT_CHAPTERS)}")
        if number == "08" and ctx.spec.backend not in ("vllm", "llama_cpp"):
            ctx.notes.append(f"chapter 08 is left out: it counts tokens with the judge's own tokenizer and times "
                             f"the judge itself, which {ctx.spec.name} ({ctx.spec.backend} backend) does not allow")
            continue
        chosen.append(number)
    return chosen


def _check_inputs(ctx: _Context) -> None:
    """The data files exist and the cache folder can be written."""
    from tefcore.mind.load import mind_filename

    for lang in ctx.langs:
        file = ctx.data_dir / mind_filename(lang)
        if not file.is_file():
            ctx.problems.append(f"no {mind_filename(lang)} in {ctx.data_dir} (--data-dir; `tef download` fetches "
                                "the full release)")
    existing = next((p for p in (ctx.out, *ctx.out.parents) if p.exists()), None)
    if existing is None or not os.access(existing, os.W_OK):
        ctx.problems.append(f"cannot write the caches under {ctx.out} (--out)")


def plan(model: str, prompts: Sequence[str] = ("original",), langs: Sequence[str] = ("en", "zh"), *,
         data_dir: str | os.PathLike[str] | None = None, reading: str = "summed",
         out: str | os.PathLike[str] = "data/caches", chapters: Sequence[str] = RESULT_CHAPTERS,
         exact_labels: str | None = None, port: int = 8000, root: str | os.PathLike[str] | None = None,
         limit: int | None = None, check_engine: bool = False) -> Plan:
    """The steps that add ``model`` to the result chapters, checked (see the module notes).

    Parameters
    ----------
    model : str
        A registry name (``qwen2.5-7b``, ``deepseek-v3.2``, ``local``, ...) or a ``.gguf`` path.
    prompts : sequence of str
        Prompt variants to extract (protocol §4); chapters 5, 6, 8 and 9 show ``original`` when it is
        among them, chapter 7 all of them.
    langs : sequence of str
        Languages.
    data_dir : path-like, optional
        The MIND folder (default: ``$MIND_DATA_DIR``, else the embedded sample), named in the commands;
        a relative path is read from ``root``, as ``out`` is.
    reading : {"summed", "reference"}
        How P(change) is read (:mod:`tefcore.judges.labels`).
    out : path-like
        Cache root (the chapters' ``cache_dir``), relative to ``root`` unless absolute.
    chapters : sequence of str
        Result chapters to rebuild (numbers).
    exact_labels : {"auto", "always", "never"}, optional
        vLLM's read of the answer position (:mod:`tefcore.judges.vllm`); default the registry's.
    port : int
        Port of ``vllm serve``.
    root : path-like, optional
        The project folder (default: :func:`tefbook.toc.project_root`).
    limit : int, optional
        Only the first ``limit`` pairs per language (``tef extract --limit``); None: every pair.
    check_engine : bool
        For a vLLM model, import vLLM in a fresh interpreter (:func:`tefbook.serve.probe_engine`):
        a failed import is a problem, and the platform it reports picks the server's launcher and the
        hardware class recorded for it (``tef reproduce`` checks; the commands the chapters print do not).

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        On an unknown model, prompt variant, language, reading or chapter (nothing to plan).
    """
    from tefbook.toc import project_root
    from tefcore.judges.registry import SERVE_DEFAULTS, resolve_model
    from tefcore.judges.vllm import EXACT_MODES
    from tefcore.judges.vllm_engine import visible_gpus
    from tefcore.mind.load import resolve_data_dir
    from tefcore.mind.prompts import VARIANTS
    from tefcore.mind.schema import LANGS

    spec = resolve_model(model)
    _check_choices("prompt variant", prompts, VARIANTS)
    _check_choices("language", langs, LANGS)
    _check_choices("reading", [reading], ("summed", "reference"))
    if exact_labels is not None:
        _check_choices("exact_labels", [exact_labels], EXACT_MODES)
        if spec.backend != "vllm":
            raise ValueError(f"--exact-labels applies to vllm judges; {spec.name} is a {spec.backend} judge")
    spec.with_options(reading=reading)  # refuses a reading the judge cannot take
    base = Path(root) if root is not None else project_root()
    serve_url = (f"http://{SERVE_DEFAULTS['host']}:{port}/v1"
                 if spec.backend == "vllm" and "08" in chapters else None)
    out_dir = Path(out) if Path(out).is_absolute() else base / out
    if data_dir is not None and str(data_dir) and not Path(data_dir).expanduser().is_absolute():
        data_dir = base / data_dir
    if limit is not None and limit < 0:
        raise ValueError(f"--limit must be >= 0, got {limit}")
    ctx = _Context(spec, list(dict.fromkeys(prompts)), list(dict.fromkeys(langs)), resolve_data_dir(data_dir),
                   out_dir.resolve(), reading, base.resolve(), serve_url, limit or None)
    _check_inputs(ctx)
    _check_model_folder(ctx)
    checked = _check_engine(ctx) if check_engine and spec.backend == "vllm" else None
    if spec.backend == "vllm" and not visible_gpus() and (ctx.engine or {}).get("class") != "CPU":
        ctx.notes.append("no GPU is visible here: the commands are for a box with one (a tensor-parallel size "
                         "of `auto` is shown for one GPU and chosen from the visible GPUs when the step runs)")
    extract = _extract_step(ctx, exact_labels)
    steps = [extract]
    chosen = _select_chapters(ctx, chapters)
    if ctx.serve_url:
        steps.append(_serve_step(ctx, port))
    if chosen:
        steps.append(_book_step(ctx, chosen, extract))
    return Plan(spec.name, tuple(steps), tuple(ctx.notes), tuple(dict.fromkeys(ctx.problems)), ctx.root,
                (checked,) if checked else ())


def _check_choices(what: str, values: Sequence[str], allowed: Sequence[str]) -> None:
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise ValueError(f"unknown {what}(s) {bad or '(none given)'}; choose among {', '.join(allowed)}")


def reproduce_command(model: str, prompts: Sequence[str] = ("original",), langs: Sequence[str] = ("en", "zh"),
                      *, data_dir: str | None = None, reading: str = "summed",
                      chapters: Sequence[str] | None = None) -> str:
    """The ``tef reproduce`` line for a model (what a chapter prints).

    Examples
    --------
    >>> reproduce_command("qwen2.5-7b", ("original", "verbose", "minimal"))
    'tef reproduce qwen2.5-7b --prompts original,verbose,minimal --langs en,zh --reading summed'
    """
    argv = ["tef", "reproduce", model, "--prompts", ",".join(prompts), "--langs", ",".join(langs)]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    argv += ["--reading", reading]
    if chapters:
        argv += ["--chapters", ",".join(chapters)]
    return shlex.join(argv)


def command_for_chapter(chapter: str, model: str = "qwen2.5-7b", prompts: Sequence[str] | None = None,
                        **options: Any) -> str:
    """The commands that add ``model`` to one result chapter on a GPU box (or with an API key).

    Parameters
    ----------
    chapter : str
        The chapter's number (``"05"``).
    model : str
        A registry name.
    prompts : sequence of str, optional
        Prompt variants (default: ``original``; chapter 7 all three).
    **options
        Passed to :func:`plan` (``langs``, ``data_dir``, ``reading``, ``out``).

    Returns
    -------
    str
        ``tef reproduce MODEL ... --chapters NN``, then the commands it runs.
    """
    variants = tuple(prompts) if prompts else (("original", "verbose", "minimal") if chapter == "07" else ("original",))
    planned = plan(model, variants, chapters=(chapter,), **options)
    line = reproduce_command(model, variants, tuple(options.get("langs", ("en", "zh"))),
                             data_dir=options.get("data_dir"), reading=options.get("reading", "summed"),
                             chapters=(chapter,))
    return f"{line}\n\n# which runs:\n{planned.script()}"


