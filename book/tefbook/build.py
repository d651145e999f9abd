"""Execute the book's chapters with papermill and build the book with Jupyter Book.

One command builds the whole companion::

    python -m tefbook                 # every chapter, default parameters, HTML
    python -m tefbook --profile ci    # the CI parameters (e.g. a small `limit` in chapter 4)
    python -m tefbook --chapters 01 05 --pdf
    tef book --skip-execute                # rebuild the HTML from the executed notebooks

The scheme (documented for readers in ``book/running.md``):

1. every chapter of ``_toc.yml`` that lives in ``notebooks/`` (a jupytext percent ``.py`` or a
   MyST ``.md`` notebook) is read with jupytext and executed by papermill, with its default
   parameters and the overrides of the chosen profile, ``--param-overrides`` and ``-p``,
   into ``_build/executed/notebooks/NN_name.ipynb`` (``--build-dir`` names another folder than
   ``_build``; the kernel's working directory is that
   folder, as it is for nbval, which re-executes these files in CI);
2. ``_config.yml``, a copy of ``_toc.yml`` reduced to the chosen chapters, ``book/`` and the
   executed notebooks are staged in ``_build/site_src/`` (no ``.py`` beside its ``.ipynb``,
   which Jupyter Book would reject as "multiple files found"), with the whole-book numbers of the
   equations of the chapters left out (:mod:`tefbook.equations`), which a chapter built alone may cite;
3. ``jupyter-book build _build/site_src --path-output . -W -n --keep-going`` renders the
   stored outputs (``execute_notebooks: "off"``) into ``_build/html``;
4. with ``--pdf``, the same tree is built as ``singlehtml`` and printed by headless Chromium
   to ``_build/pdf/tef-companion.pdf``.

Secrets: API keys reach the kernels only through the environment. A parameter whose name
looks like a key, token or secret is refused, and every executed notebook and every file of
the built HTML is searched for the values of the environment's secret-like variables; a hit
deletes the offending output and fails the build (:mod:`tefbook.leaks`).

This module executes, stages and builds, and holds the command line; it builds on
:mod:`tefbook.toc` (the table of contents, the choice of chapters), :mod:`tefbook.parameters`
(the chapters' parameters, profiles and overrides), :mod:`tefbook.leaks` (the secret guard),
:mod:`tefbook.chromium` (headless Chromium, for the PDF) and :mod:`tefbook.errors`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tefbook.chromium import print_pdf
from tefbook.equations import CONFIG_NAME as EQUATIONS_CONFIG
from tefbook.equations import absent_equations
from tefbook.errors import BookError
from tefbook.launch import write_student_editions
from tefbook.leaks import guard_outputs
from tefbook.parameters import (
    PROFILES,
    chapter_parameters,
    check_declared,
    check_parameter_name,
    declared_in,
    load_overrides,
    parameter_defaults,
    parse_param,
    read_chapter,
    set_parameters,
    unknown_parameter_message,
)
from tefbook.repository import apply_to_config, repository_from_env, repository_parameters
from tefbook.toc import (
    CHAPTER_DIR,
    PROJECT_ENV,
    SOURCE_SUFFIXES,
    Chapter,
    filter_toc,
    find_root,
    load_toc,
    select_chapters,
    toc_chapters,
)
from tefcore.mind.load import DATA_DIR_ENV

__all__ = [
    "BuildReport",
    "build_book",
    "build_pdf",
    "execute_chapter",
    "list_chapters",
    "main",
    "run_jupyter_book",
    "stage_tree",
    "user_path_environment",
]

#: Name of the PDF written by ``--pdf``.
PDF_NAME = "tef-companion.pdf"
#: Environment variables the build sets for the kernels.
BUILD_ENV_FLAG = "TEF_BOOK_BUILD"
STATIC_FIGURES_ENV = "TEF_STATIC_FIGURES"
#: Besides ``$MIND_DATA_DIR``, environment variables with these endings may hold a path the user typed.
PATH_ENV_SUFFIXES: tuple[str, ...] = ("_GGUF", "_PATH", "_DIR")

log = logging.getLogger("tefbook.build")


@dataclass
class BuildReport:
    """What a run did, written to ``_build/book-report.json``."""

    root: str
    chapters: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    execute_seconds: dict[str, float] = field(default_factory=dict)
    build_seconds: dict[str, float] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- execution


@contextlib.contextmanager
def _environment(**values: str | None) -> Iterator[None]:
    """Set (or, with ``None``, unset) environment variables for the duration of a block."""
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def user_path_environment(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> dict[str, str]:
    """The user's path variables made absolute against the build's working directory.

    Kernels run in ``_build/executed/notebooks``, so a relative ``MIND_DATA_DIR=data/mind`` would mean
    another folder there. :data:`DATA_DIR_ENV` is always made absolute; the variables of
    :data:`PATH_ENV_SUFFIXES` (e.g. ``TEF_LOCAL_GGUF``, ``QWEN25_7B_PATH``) only when the relative path
    exists, since their values may also be model names (``Qwen/Qwen2.5-7B-Instruct``).

    Returns
    -------
    dict
        Only the variables whose value changes.
    """
    environ = os.environ if environ is None else environ
    base = Path.cwd() if cwd is None else cwd
    changed = {}
    for name, value in environ.items():
        path = Path(value.strip()).expanduser() if value.strip() else None
        if path is None or path.is_absolute() or not (name == DATA_DIR_ENV or name.endswith(PATH_ENV_SUFFIXES)):
            continue
        if name == DATA_DIR_ENV or (base / path).exists():
            changed[name] = os.fspath(base / path)
    return changed


def _check_chapter_parameters(chapter: Chapter, notebook: Any, parameters: Mapping[str, Any]) -> None:
    """Refuse credential-like names in the parameters cell and names it does not have."""
    try:
        defaults = parameter_defaults(notebook)
    except BookError as exc:
        raise BookError(f"{chapter.source}: {exc}") from exc
    for name in defaults:
        check_parameter_name(name, f"{chapter.source} (parameters cell)")
    unknown = sorted(set(parameters) - set(defaults))
    if unknown:
        raise BookError(unknown_parameter_message(chapter.name, unknown, list(defaults)))
    try:  # each value of the type and in the range the cell declares
        check_declared(parameters, declared_in(notebook))
    except BookError as exc:
        raise BookError(f"{chapter.name}: {exc}") from None


def _kernel_manager_class(folder: Path) -> type:
    """A quiet kernel manager whose kernels talk over Unix domain sockets in ``folder``.

    The default TCP transport sends code and outputs unencrypted over the loopback, and ipykernel
    warns about it at every start; IPC sockets are files only this user can reach. jupyter_client
    also interrupts a kernel before shutting it down, which an idle kernel may log as an error
    ("KeyboardInterrupt caught in kernel"); once the chapter has run there is nothing to interrupt.
    """
    from jupyter_client.manager import KernelManager
    from traitlets import default

    class QuietIPCKernelManager(KernelManager):
        @default("transport")
        def _default_transport(self) -> str:
            return "ipc"

        @default("ip")
        def _default_ip(self) -> str:
            return os.fspath(folder / "kernel")

        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return QuietIPCKernelManager


def _quiet_engine() -> type:
    """papermill's nbclient engine with the quiet IPC kernel manager (:func:`_kernel_manager_class`)."""
    from papermill.engines import NBClientEngine

    class QuietEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
            if os.name != "posix":  # no Unix sockets: papermill's own TCP kernel
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
            with tempfile.TemporaryDirectory(prefix="tefbook-kernel-") as sockets:
                kwargs.setdefault("kernel_manager_class", _kernel_manager_class(Path(sockets)))
                return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    return QuietEngine


def __getattr__(name: str) -> Any:
    """``tefbook.build.PapermillEngine``: the engine ``papermill --engine tefbook`` runs (an entry point of
    the book's distribution), built on first use so that importing this module needs no papermill."""
    if name == "PapermillEngine":
        return _quiet_engine()
    raise AttributeError(name)


def _run_papermill(notebook: Any, output: Path, kernel: str, cwd: Path, timeout: float | None) -> None:
    """Execute with papermill over a private IPC kernel (TCP where Unix sockets do not exist)."""
    import papermill

    options: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tefbook-kernel-") as sockets:
        if os.name == "posix":
            options["kernel_manager_class"] = _kernel_manager_class(Path(sockets))
        papermill.execute_notebook(
            notebook,
            str(output),
            kernel_name=kernel,
            cwd=str(cwd),
            progress_bar=False,
            log_output=False,
            request_save_on_cell_execute=False,
            execution_timeout=timeout,
            **options,
        )


def execute_chapter(
    chapter: Chapter,
    parameters: Mapping[str, Any],
    out_dir: Path,
    *,
    static_figures: bool = False,
    timeout: float | None = None,
    project_root: Path | None = None,
) -> Path:
    """Execute one chapter with papermill.

    Parameters
    ----------
    chapter : Chapter
        The chapter; its source must exist.
    parameters : mapping
        Overrides of the defaults in its ``parameters`` cell (names must exist there); they are
        written into that cell (:func:`tefbook.parameters.set_parameters`).
    out_dir : Path
        Folder of the executed notebook; it is also the kernel's working directory.
    static_figures : bool
        Set ``TEF_STATIC_FIGURES=1`` for the kernel (static SVGs for print).
    timeout : float or None
        Per-cell time limit in seconds.
    project_root : Path, optional
        The book's root, passed to the kernel as ``$TEF_PROJECT_ROOT`` so that a chapter's relative
        paths (``cache_dir="data/caches"``) mean the project's folders; default the folder above the
        chapter's ``notebooks/``. The user's path variables (``$MIND_DATA_DIR``) reach the kernel
        absolute (:func:`user_path_environment`).

    Returns
    -------
    Path
        ``out_dir / f"{chapter.name}.ipynb"``.

    Raises
    ------
    BookError
        On a missing kernelspec, parameters cell or parameter name, or a failing cell
        (the partly executed notebook is moved to ``out_dir/../failed/`` for inspection,
        so that ``out_dir`` only ever holds notebooks that ran through).
    SecretLeakError
        When the executed notebook holds the value of a secret-like environment variable.
    """
    from papermill.exceptions import PapermillExecutionError

    if chapter.source is None:
        raise BookError(f"{chapter.docname}: no source file")
    notebook = read_chapter(chapter.source)
    _check_chapter_parameters(chapter, notebook, parameters)
    set_parameters(notebook, parameters)
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / f"{chapter.name}.ipynb"
    output.unlink(missing_ok=True)  # never leave an older success next to a new failure
    failed = out_dir.parent / "failed" / output.name
    failed.unlink(missing_ok=True)
    root = (project_root or chapter.source.parent.parent).resolve()
    env = {BUILD_ENV_FLAG: "1", STATIC_FIGURES_ENV: "1" if static_figures else None, PROJECT_ENV: str(root),
           **user_path_environment()}
    with _environment(**env):
        try:
            _run_papermill(notebook, output, notebook.metadata["kernelspec"]["name"], out_dir, timeout)
        except PapermillExecutionError as exc:
            guard_outputs([output], f"{output}")
            # Keep the executed folder to notebooks that ran through (nbval checks all of it).
            failed.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(output), failed)
            raise BookError(
                f"{chapter.source}: cell {exc.exec_count} raised {exc.ename}: {exc.evalue}. "
                f"The partly executed notebook is {failed}"
            ) from None
    guard_outputs([output], f"{output}")
    return output


# --------------------------------------------------------------------------- staging and build


def _ignore_sources(folder: str, names: list[str]) -> set[str]:
    """shutil.copytree filter: no caches, no notebook sources (their executed copies go in)."""
    skip = {"__pycache__", ".ipynb_checkpoints"}
    return {n for n in names if n in skip or Path(n).suffix in {".py", ".ipynb", ".pyc", *SOURCE_SUFFIXES}}


def stage_tree(root: Path, stage: Path, toc: Mapping[str, Any], executed: Mapping[str, Path],
               repository: str | None = None, equations: Mapping[str, str] | None = None) -> Path:
    """Lay out the tree that Jupyter Book builds.

    Parameters
    ----------
    root : Path
        Book root (with ``_config.yml``, ``_toc.yml`` and ``book/``).
    stage : Path
        Folder to (re)create, e.g. ``_build/site_src``.
    toc : mapping
        The table of contents to write (already filtered).
    executed : mapping
        Chapter docname -> executed ``.ipynb``.
    repository : str, optional
        The book's repository (``owner/name``, :mod:`tefbook.repository`): its link and launch buttons
        are written into the staged ``_config.yml``.
    equations : mapping, optional
        Label -> whole-book number of the equations of the chapters left out
        (:func:`tefbook.equations.absent_equations`), written into the staged ``_config.yml`` for the
        extension ``tef_equations``, which renders their citations.

    Returns
    -------
    Path
        ``stage``.
    """
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    shutil.copy2(root / "_config.yml", stage / "_config.yml")
    apply_to_config(stage / "_config.yml", repository)
    if equations:
        _add_sphinx_config(stage / "_config.yml", {EQUATIONS_CONFIG: dict(equations)})
    (stage / "_toc.yml").write_text(
        "# Generated by tefbook.build from the root _toc.yml; do not edit.\n"
        + yaml.safe_dump(dict(toc), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    # the pages of book/, not its Python packages (the book tools and the chapter support)
    shutil.copytree(root / "book", stage / "book", ignore=shutil.ignore_patterns(
        "__pycache__", "*.pyc", "*.egg-info", "pyproject.toml", "tefbook", "build"))
    if (root / CHAPTER_DIR).is_dir():
        # Images and other files the chapters' Markdown refers to, never their sources.
        shutil.copytree(root / CHAPTER_DIR, stage / CHAPTER_DIR, ignore=_ignore_sources)
    for docname, path in executed.items():
        target = stage / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    # the student edition of a launchable chapter (the lab), beside its page, which links it for download
    write_student_editions(root, stage, list(executed), repository or "", toc)
    return stage


def _add_sphinx_config(config: Path, values: Mapping[str, Any]) -> None:
    """Add values to ``sphinx.config`` of a staged ``_config.yml``."""
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    data.setdefault("sphinx", {}).setdefault("config", {}).update(values)
    config.write_text("# Staged by tefbook; do not edit.\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
                      encoding="utf-8")


def _jupyter_book() -> list[str]:
    """The command that runs Jupyter Book with this interpreter's environment."""
    script = Path(sys.executable).with_name("jupyter-book")
    if script.is_file():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    raise BookError("jupyter-book is not installed (pip install -e ./book)")


def run_jupyter_book(stage: Path, output_root: Path, builder: str = "html", *, strict: bool = True) -> Path:
    """Build the staged tree.

    Parameters
    ----------
    stage : Path
        Staged source tree.
    output_root : Path
        ``--path-output``: the output lands in ``output_root/_build/<builder>``.
    builder : str
        ``html`` or ``singlehtml``.
    strict : bool
        Warnings are errors (``-W -n --keep-going``).

    Returns
    -------
    Path
        The output folder.
    """
    command = [*_jupyter_book(), "build", str(stage), "--path-output", str(output_root), "--builder", builder]
    if strict:
        command += ["-W", "-n", "--keep-going"]
    log.info("running %s", " ".join(command))
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        raise BookError(
            f"jupyter-book build ({builder}) failed with exit code {result.returncode}; "
            "the warnings above say where (warnings are errors)"
        )
    return output_root / "_build" / builder


def _built(stage: Path, build_dir: Path, builder: str, strict: bool) -> Path:
    """Run Jupyter Book into ``build_dir/jupyter-book`` and move its output to ``build_dir/<builder>``."""
    target = build_dir / builder
    if target.exists():  # stale pages of an earlier (larger) selection must not be published or tested
        shutil.rmtree(target)
    shutil.move(str(run_jupyter_book(stage, build_dir / "jupyter-book", builder, strict=strict)), target)
    return target


def build_pdf(stage: Path, build_dir: Path, root_docname: str, *, strict: bool = True) -> Path:
    """Build the single-page HTML of the staged tree into ``build_dir/singlehtml`` and print it to
    ``build_dir/pdf/tef-companion.pdf``.

    The root page lives in ``book/``; Jupyter Book's ``index.html`` only redirects to it, and
    printing it from its own folder breaks the relative ``_static`` links, so the page is
    copied to ``index.html`` first (its links are written relative to the output root).
    """
    single = _built(stage, build_dir, "singlehtml", strict)
    page = single / f"{root_docname}.html"
    if not page.is_file():
        raise BookError(f"singlehtml build has no {page}")
    shutil.copy2(page, single / "index.html")
    pdf = print_pdf(single, "index.html", build_dir / "pdf" / PDF_NAME)
    guard_outputs([single, pdf], "the PDF build")
    return pdf


# --------------------------------------------------------------------------- driver


def build_book(
    root: Path,
    *,
    selectors: Sequence[str] | None = None,
    skip_execute: bool = False,
    pdf: bool = False,
    html: bool = True,
    profile: str = "default",
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    params: Sequence[tuple[str, str, Any]] = (),
    strict: bool = True,
    timeout: float | None = None,
    static_figures: bool | None = None,
    build_dir: Path | None = None,
) -> BuildReport:
    """Execute the chosen chapters and build the book (the work of :func:`main`).

    Parameters
    ----------
    root : Path
        Book root.
    selectors : sequence of str or None
        Chapters to build (see :func:`tefbook.toc.select_chapters`).
    skip_execute : bool
        Reuse ``_build/executed/notebooks/*.ipynb`` instead of executing.
    pdf : bool
        Also build the PDF (executes with static figures unless ``static_figures=False``).
    html : bool
        Build the HTML (``False``: execute only).
    profile, overrides, params
        Parameter overrides, merged by :func:`tefbook.parameters.chapter_parameters`.
    strict : bool
        Warnings are errors in the Sphinx builds.
    timeout : float or None
        Per-cell time limit of papermill.
    static_figures : bool or None
        Store static SVGs next to interactive figures; ``None`` means "when ``pdf``".
    build_dir : Path, optional
        Folder of everything a build writes: ``executed/notebooks``, ``site_src``, ``html``, ``pdf`` and
        ``book-report.json`` (default ``root/_build``; ``make test`` uses ``_build/ci``, so that it never
        replaces the book that ``tef book`` built).

    Returns
    -------
    BuildReport
        Chapters, parameters, timings and output paths (also written as JSON).
    """
    root = root.resolve()
    out = (build_dir if build_dir is not None else root / "_build").resolve()
    toc = load_toc(root)
    chapters = toc_chapters(root, toc)
    selected, skipped = select_chapters(chapters, selectors)
    for chapter in skipped:
        log.warning("skipping %s: no %s.py or .md", chapter.name, chapter.docname)
    report = BuildReport(
        root=str(root),
        chapters=[c.name for c in selected],
        skipped=[c.name for c in skipped],
        parameters=chapter_parameters(chapters, selected, profile, overrides or {}, params),
    )
    repository = repository_from_env()  # the book's repository: links, launch buttons, the lab's install
    declared = {c.name: list(parameter_defaults(read_chapter(c.source))) for c in selected if c.source}
    report.parameters = repository_parameters(declared, report.parameters, repository)
    if not skip_execute:  # every -p name is checked before the first chapter runs
        for chapter in selected:
            _check_chapter_parameters(chapter, read_chapter(chapter.source), report.parameters[chapter.name])
    static = pdf if static_figures is None else static_figures
    executed = _executed_chapters(root, out, selected, report, skip_execute, static, timeout)
    stage = out / "site_src"
    if html or pdf:
        # a chapter may cite the equations of a chapter left out (the lab cites chapter 1's)
        stage_tree(root, stage, filter_toc(toc, set(executed)), executed, repository,
                   absent_equations(root, toc, executed))
        report.outputs["staged"] = str(stage)
    if html:
        _build_html(out, stage, report, strict)
    if pdf:
        _build_pdf(out, stage, str(toc["root"]), report, strict)
    _write_report(out, report)
    return report


def _executed_chapters(root: Path, out: Path, selected: Sequence[Chapter], report: BuildReport, skip_execute: bool,
                       static: bool, timeout: float | None) -> dict[str, Path]:
    """Execute the selected chapters (or check their earlier executions); docname -> executed notebook."""
    executed_dir = out / "executed" / CHAPTER_DIR
    executed: dict[str, Path] = {}
    for index, chapter in enumerate(selected, start=1):
        target = executed_dir / f"{chapter.name}.ipynb"
        if skip_execute:
            if not target.is_file():
                raise BookError(f"--skip-execute: {target} does not exist; execute it first")
            guard_outputs([target], str(target))
        else:
            _execute_one(root, executed_dir, chapter, f"[{index}/{len(selected)}]", report, static, timeout)
        executed[chapter.docname] = target
    report.outputs["executed"] = str(executed_dir)
    return executed


def _execute_one(root: Path, executed_dir: Path, chapter: Chapter, step: str, report: BuildReport, static: bool,
                 timeout: float | None) -> None:
    """Execute one chapter with its parameters, logging and recording the time it took."""
    parameters = report.parameters[chapter.name]
    shown = ", ".join(f"{k}={v!r}" for k, v in parameters.items())
    log.info("%s executing %s%s", step, chapter.name, f" ({shown})" if shown else "")
    started = time.perf_counter()
    execute_chapter(chapter, parameters, executed_dir, static_figures=static, timeout=timeout, project_root=root)
    report.execute_seconds[chapter.name] = round(time.perf_counter() - started, 2)
    log.info("%s %s executed in %.1f s", step, chapter.name, report.execute_seconds[chapter.name])


def _build_html(out: Path, stage: Path, report: BuildReport, strict: bool) -> None:
    """Build ``out/html`` from the staged tree (stale pages of an earlier build removed first)."""
    started = time.perf_counter()
    html_dir = _built(stage, out, "html", strict)
    report.build_seconds["html"] = round(time.perf_counter() - started, 2)
    (html_dir / ".nojekyll").touch()
    guard_outputs([html_dir], f"the built book {html_dir}")
    report.outputs["html"] = str(html_dir)
    log.info("HTML built in %.1f s: %s", report.build_seconds["html"], html_dir / "index.html")


def _build_pdf(out: Path, stage: Path, root_docname: str, report: BuildReport, strict: bool) -> None:
    """Build ``out/pdf/tef-companion.pdf`` (see :func:`build_pdf`)."""
    started = time.perf_counter()
    pdf_path = build_pdf(stage, out, root_docname, strict=strict)
    report.build_seconds["pdf"] = round(time.perf_counter() - started, 2)
    report.outputs["pdf"] = str(pdf_path)
    log.info("PDF built in %.1f s: %s", report.build_seconds["pdf"], pdf_path)


def _write_report(build_dir: Path, report: BuildReport) -> None:
    """Write ``book-report.json`` into the build folder."""
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "book-report.json").write_text(json.dumps(report.__dict__, indent=2, default=str))


def list_chapters(root: Path) -> str:
    """A table of the toc's chapters, their sources and default parameters."""
    lines = []
    for chapter in toc_chapters(root, load_toc(root)):
        if chapter.source is None:
            lines.append(f"{chapter.name:24s} (missing: {chapter.docname}.py)")
            continue
        try:
            defaults = parameter_defaults(read_chapter(chapter.source))
            shown = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
        except BookError as exc:
            shown = f"ERROR: {exc}"
        lines.append(f"{chapter.name:24s} {chapter.source.relative_to(root)}  {shown}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m tefbook`` and ``tef book``."""
    parser = argparse.ArgumentParser(
        prog="tef book",
        description=textwrap.fill(
            "Execute the chapters with papermill and build the book with Jupyter Book, warnings as "
            "errors. Reads the chapters (notebooks/*.py), the pages (book/), the MIND data ($MIND_DATA_DIR, "
            "else the embedded sample data/mind) and the committed caches (data/caches). Writes the "
            "executed chapters to _build/executed/notebooks, the HTML book to _build/html (with --pdf "
            "also _build/pdf/tef-companion.pdf) and a summary to _build/book-report.json. Paths given "
            "in -p, --param-overrides or $MIND_DATA_DIR mean what they mean in the working directory. "
            "With $TEF_REPOSITORY=owner/name every page links to that GitHub repository and the teaching "
            "lab gets Binder and Colab buttons; without it the book names no repository."
        ),
        epilog="example:\n  MIND_DATA_DIR=data/mind tef book --chapters 03 -p 03.data_dir=data/mind",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--chapters",
        nargs="*",
        metavar="CHAPTER",
        help="chapters to build: numbers (01), names (01_derivation, derivation) or 'all' "
        "(every chapter that exists); missing sources are skipped. Default: every chapter "
        "of _toc.yml, all of which must exist. No value: only the pages of book/",
    )
    parser.add_argument("--skip-execute", action="store_true", help="reuse _build/executed/notebooks/*.ipynb")
    parser.add_argument("--execute-only", action="store_true", help="execute the chapters, build nothing")
    parser.add_argument(
        "--pdf",
        action="store_true",
        help="also print the book to _build/pdf/tef-companion.pdf with headless Chromium "
        "(chapters are executed with static figure fallbacks)",
    )
    parser.add_argument(
        "--profile",
        default="default",
        choices=sorted(PROFILES),
        help="named parameter overrides (ci: a smaller live-timing sample for chapter 8)",
    )
    parser.add_argument(
        "--param-overrides",
        metavar="FILE_OR_YAML",
        help="YAML file or inline mapping {chapter: {name: value}}, e.g. '{04: {limit: 20}}'",
    )
    parser.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="CHAPTER.NAME=VALUE",
        help="one parameter override (value read as YAML), e.g. -p 04.limit=8; repeatable",
    )
    parser.add_argument(
        "--static-figures",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="store static SVGs beside interactive figures (default: with --pdf)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="per-cell time limit in seconds")
    parser.add_argument(
        "--build-dir",
        type=Path,
        default=None,
        help="folder for the executed chapters, the HTML, the PDF and the report (default: _build under the "
        "book root; make test uses _build/ci and leaves the book of tef book in place)",
    )
    parser.add_argument("--no-strict", action="store_true", help="do not turn Sphinx warnings into errors")
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="book root (default: the folder with _config.yml at or above the cwd)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the chapters, their sources and parameters, and exit"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the book command; returns the process exit code (0 on success)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="tef book: %(message)s")
    logging.getLogger("papermill").setLevel(logging.WARNING)
    try:
        root = find_root(args.root)
        if args.list:
            print(list_chapters(root))
            return 0
        params = [parse_param(text) for text in args.param]
        overrides = load_overrides(args.param_overrides) if args.param_overrides else {}
        if args.skip_execute and args.execute_only:
            raise BookError("--skip-execute and --execute-only together do nothing")
        build_book(
            root,
            selectors=args.chapters,
            skip_execute=args.skip_execute,
            pdf=args.pdf,
            html=not args.execute_only,
            profile=args.profile,
            overrides=overrides,
            params=params,
            strict=not args.no_strict,
            timeout=args.timeout,
            static_figures=args.static_figures,
            build_dir=args.build_dir.absolute() if args.build_dir is not None else None,
        )
    except BookError as exc:
        print(f"tef book: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
