"""Execute the book's chapters with papermill and build the book with Jupyter Book.

One command builds the whole companion::

    python -m tefcore.book                 # every chapter, default parameters, HTML
    python -m tefcore.book --profile ci    # the CI parameters (e.g. a small `limit` in chapter 4)
    python -m tefcore.book --chapters 01 05 --pdf
    tef book --skip-execute                # rebuild the HTML from the executed notebooks

The scheme (documented for readers in ``book/running.md``):

1. every chapter of ``_toc.yml`` that lives in ``notebooks/`` (a jupytext percent ``.py`` or a
   MyST ``.md`` notebook) is read with jupytext and executed by papermill, with its default
   parameters and the overrides of the chosen profile, ``--param-overrides`` and ``-p``,
   into ``_build/executed/notebooks/NN_name.ipynb`` (the kernel's working directory is that
   folder, as it is for nbval, which re-executes these files in CI);
2. ``_config.yml``, a copy of ``_toc.yml`` reduced to the chosen chapters, ``book/`` and the
   executed notebooks are staged in ``_build/site_src/`` (no ``.py`` beside its ``.ipynb``,
   which Jupyter Book would reject as "multiple files found");
3. ``jupyter-book build _build/site_src --path-output . -W -n --keep-going`` renders the
   stored outputs (``execute_notebooks: "off"``) into ``_build/html``;
4. with ``--pdf``, the same tree is built as ``singlehtml`` and printed by headless Chromium
   to ``_build/pdf/tef-companion.pdf``.

Secrets: API keys reach the kernels only through the environment. A parameter whose name
looks like a key, token or secret is refused, and every executed notebook and every file of
the built HTML is searched for the values of the environment's secret-like variables; a hit
deletes the offending output and fails the build.
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import functools
import html
import http.server
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

__all__ = [
    "BookError",
    "Chapter",
    "PROFILES",
    "SecretLeakError",
    "build_book",
    "execute_chapter",
    "filter_toc",
    "find_secret_leaks",
    "is_secret_like",
    "main",
    "parameter_defaults",
    "parse_param",
    "print_pdf",
    "secret_values",
    "select_chapters",
    "toc_docnames",
]

#: Folder of the chapter sources, relative to the book root.
CHAPTER_DIR = "notebooks"
#: Suffixes of chapter sources, in the order they are looked for.
SOURCE_SUFFIXES = (".py", ".md")
#: Name of the PDF written by ``--pdf``.
PDF_NAME = "tef-companion.pdf"
#: Per-chapter parameter overrides of each named profile (chapter name -> parameters).
#: ``ci`` keeps the whole CI run (installs, execution, build, nbval, browser) under 25 min
#: on two cores.
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "default": {},
    "ci": {"04_extraction": {"limit": 8}, "08_efficiency": {"ttft_sample": 8}},
}
#: Environment variables the build sets for the kernels.
BUILD_ENV_FLAG = "TEF_BOOK_BUILD"
STATIC_FIGURES_ENV = "TEF_STATIC_FIGURES"
#: Secret values shorter than this are not searched for (too many false hits, e.g. "EMPTY").
MIN_SECRET_LENGTH = 8

_SECRET_SUBSTRINGS = (
    "secret",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "accesskey",
    "access_key",
    "privatekey",
    "private_key",
    "credential",
)
_SECRET_WORDS = frozenset({"key", "token", "pwd", "auth", "bearer", "passphrase"})
#: Environment variables whose names match but which hold no secret (paths, public ids).
_ENV_NOT_SECRET = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY", "GPG_KEY"})

log = logging.getLogger("tefcore.book")


class BookError(RuntimeError):
    """The book cannot be executed or built; the message says why and what to do."""


class SecretLeakError(BookError):
    """A secret from the environment was found in an executed notebook or a built page."""


@dataclass(frozen=True)
class Chapter:
    """One chapter of the table of contents.

    Attributes
    ----------
    docname : str
        Name in ``_toc.yml`` (``notebooks/05_main_results``).
    source : Path or None
        The jupytext source, or ``None`` when it does not exist (yet).
    """

    docname: str
    source: Path | None

    @property
    def name(self) -> str:
        """File stem, e.g. ``05_main_results``."""
        return Path(self.docname).name


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


# --------------------------------------------------------------------------- secrets


def _words(name: str) -> list[str]:
    """Split an identifier into lower-case words (snake, kebab and camel case)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def is_secret_like(name: str) -> bool:
    """Whether a parameter or variable name looks like it holds a credential.

    Names containing ``secret``, ``password``, ``api_key``/``apikey``, ``access_key``,
    ``private_key`` or ``credential``, or with a word ``key``, ``token``, ``pwd``, ``auth``,
    ``bearer`` or ``passphrase`` are secret-like. Plural counts such as ``max_tokens`` are not.

    Examples
    --------
    >>> is_secret_like("OPENAI_API_KEY"), is_secret_like("hf_token"), is_secret_like("max_tokens")
    (True, True, False)
    """
    lowered = name.lower()
    if any(part in lowered for part in _SECRET_SUBSTRINGS):
        return True
    return any(word in _SECRET_WORDS for word in _words(name))


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The values of the secret-like environment variables worth searching for.

    A variable counts when :func:`is_secret_like` or :func:`tefcore.redact.is_secret_name`
    (the rule the library's log redaction uses) says its name looks secret.

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
    from tefcore.redact import is_secret_name

    env = os.environ if env is None else env
    return {
        name: value
        for name, value in env.items()
        if name not in _ENV_NOT_SECRET
        and (is_secret_like(name) or is_secret_name(name))
        and len(value.strip()) >= MIN_SECRET_LENGTH
    }


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


def _raise_on_leaks(leaks: list[tuple[Path, str]], what: str, remove: Sequence[Path]) -> None:
    """Delete ``remove`` and raise :class:`SecretLeakError` when ``leaks`` is not empty."""
    if not leaks:
        return
    for path in remove:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    listed = "; ".join(f"{path} holds the value of ${name}" for path, name in leaks[:10])
    raise SecretLeakError(
        f"secret found in {what}: {listed}. The output was deleted. Never print, return or "
        "pass a credential as a parameter: read it from the environment inside tefcore."
    )


# --------------------------------------------------------------------------- toc


def find_root(start: Path | None = None) -> Path:
    """The book root: the first folder from ``start`` upwards holding ``_config.yml`` and
    ``_toc.yml``.

    Raises
    ------
    BookError
        When no such folder exists.
    """
    start = Path.cwd() if start is None else Path(start)
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / "_config.yml").is_file() and (folder / "_toc.yml").is_file():
            return folder
    raise BookError(
        f"no _config.yml and _toc.yml in {start} or above; run from the repository root or pass --root"
    )


def load_toc(root: Path) -> dict[str, Any]:
    """Read ``_toc.yml`` of the book root."""
    path = root / "_toc.yml"
    try:
        toc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BookError(f"cannot read {path}: {exc}") from exc
    if not isinstance(toc, dict) or "root" not in toc:
        raise BookError(f"{path} is not a Jupyter Book table of contents (no 'root' key)")
    return toc


def toc_docnames(toc: Mapping[str, Any]) -> list[str]:
    """Every ``file`` of the table of contents, root first, in reading order."""
    names: list[str] = [str(toc["root"])]

    def walk(entries: Any) -> None:
        for entry in entries or []:
            if not isinstance(entry, Mapping):
                continue
            if "file" in entry:
                names.append(str(entry["file"]))
            for key in ("parts", "chapters", "sections"):
                walk(entry.get(key))

    for key in ("parts", "chapters", "sections"):
        walk(toc.get(key))
    return names


def _is_chapter(docname: str) -> bool:
    """Whether a toc entry is a notebook chapter (in :data:`CHAPTER_DIR`)."""
    return docname.startswith(f"{CHAPTER_DIR}/")


def filter_toc(toc: Mapping[str, Any], keep: set[str]) -> dict[str, Any]:
    """A copy of the table of contents without the chapters that are not in ``keep``.

    Pages outside :data:`CHAPTER_DIR` are always kept; parts left without chapters are
    dropped.

    Parameters
    ----------
    toc : mapping
        The parsed ``_toc.yml``.
    keep : set of str
        Docnames of the chapters to keep (``notebooks/01_derivation``).
    """

    def keep_entry(entry: Mapping[str, Any]) -> bool:
        name = entry.get("file")
        return name is None or not _is_chapter(str(name)) or str(name) in keep

    def walk(entries: Any) -> list[Any]:
        result = []
        for entry in entries or []:
            if not isinstance(entry, Mapping):
                result.append(entry)
                continue
            if not keep_entry(entry):
                continue
            new = dict(entry)
            for key in ("parts", "chapters", "sections"):
                if key in new:
                    new[key] = walk(new[key])
                    if not new[key]:
                        del new[key]
            if "file" not in new and not any(
                k in new for k in ("parts", "chapters", "sections", "url", "glob")
            ):
                continue
            result.append(new)
        return result

    out = dict(toc)
    for key in ("parts", "chapters", "sections"):
        if key in out:
            out[key] = walk(out[key])
            if not out[key]:
                del out[key]
    return out


def toc_chapters(root: Path, toc: Mapping[str, Any]) -> list[Chapter]:
    """The notebook chapters of the toc, each with its source file when it exists."""
    chapters = []
    for docname in toc_docnames(toc):
        if not _is_chapter(docname):
            continue
        source = next(
            (
                root / f"{docname}{suffix}"
                for suffix in SOURCE_SUFFIXES
                if (root / f"{docname}{suffix}").is_file()
            ),
            None,
        )
        chapters.append(Chapter(docname, source))
    return chapters


def _matches(chapter: Chapter, selector: str) -> bool:
    """Whether ``selector`` (``01``, ``1``, ``01_derivation``, ``derivation``) names a chapter."""
    selector = selector.strip().removeprefix(f"{CHAPTER_DIR}/").removesuffix(".py").removesuffix(".md")
    name = chapter.name
    number, _, rest = name.partition("_")
    if selector in {name, rest}:
        return True
    return selector.isdigit() and number.isdigit() and int(selector) == int(number)


def resolve_chapter(chapters: Sequence[Chapter], selector: str) -> Chapter:
    """The one chapter a selector names.

    Raises
    ------
    BookError
        When the selector names no chapter of the toc, or several.
    """
    found = [c for c in chapters if _matches(c, selector)]
    if len(found) != 1:
        names = ", ".join(c.name for c in chapters)
        what = "no chapter" if not found else "several chapters"
        raise BookError(f"{selector!r} names {what} of _toc.yml; chapters are: {names}")
    return found[0]


def select_chapters(
    chapters: Sequence[Chapter], selectors: Sequence[str] | None
) -> tuple[list[Chapter], list[Chapter]]:
    """Choose the chapters to execute and build.

    Parameters
    ----------
    chapters : sequence of Chapter
        The toc's chapters (:func:`toc_chapters`).
    selectors : sequence of str or None
        ``None``: every chapter, each of which must have a source. ``["all"]``: every chapter
        that has a source. Otherwise the named chapters; those without a source are skipped.

    Returns
    -------
    (selected, skipped)
        Chapters to build, in toc order, and the requested ones skipped for lack of a source.

    Raises
    ------
    BookError
        When ``selectors`` is ``None`` and a chapter has no source, or a selector names none.
    """
    if selectors is None:
        missing = [c for c in chapters if c.source is None]
        if missing:
            names = ", ".join(f"{c.docname}.py" for c in missing)
            raise BookError(
                f"chapter sources missing: {names}. Build a subset with --chapters "
                "(e.g. --chapters all, or --chapters 01 05)"
            )
        return list(chapters), []
    if [s.lower() for s in selectors] == ["all"]:
        wanted = list(chapters)
    else:
        picked = {resolve_chapter(chapters, s).docname for s in selectors}
        wanted = [c for c in chapters if c.docname in picked]
    return [c for c in wanted if c.source], [c for c in wanted if not c.source]


# --------------------------------------------------------------------------- parameters


def read_chapter(source: Path) -> Any:
    """Read a jupytext chapter as an nbformat notebook, checking its kernelspec.

    Raises
    ------
    BookError
        When the file cannot be read or its jupytext header names no kernelspec.
    """
    import jupytext

    try:
        notebook = jupytext.read(source)
    except Exception as exc:  # jupytext raises several types for malformed headers
        raise BookError(f"{source}: jupytext cannot read it: {exc}") from exc
    kernelspec = notebook.metadata.get("kernelspec") or {}
    if not kernelspec.get("name"):
        raise BookError(
            f"{source}: its jupytext header has no kernelspec (papermill says 'No kernel name "
            "found'); add `kernelspec: {name: python3, display_name: Python 3, language: python}`"
        )
    return notebook


def _parameters_cell(notebook: Any) -> Any | None:
    """The first code cell tagged ``parameters``, if any."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            return cell
    return None


def parameter_defaults(notebook: Any) -> dict[str, Any]:
    """Names and default values assigned in a notebook's ``parameters`` cell.

    Values that are not Python literals are returned as their source text.

    Raises
    ------
    BookError
        When the notebook has no ``parameters`` cell or it is not valid Python.
    """
    cell = _parameters_cell(notebook)
    if cell is None:
        raise BookError("no code cell is tagged 'parameters' (# %% tags=[\"parameters\"])")
    try:
        tree = ast.parse(cell.source)
    except SyntaxError as exc:
        raise BookError(f"the parameters cell is not valid Python: {exc}") from exc
    defaults: dict[str, Any] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Name):
                if value is None:
                    defaults[target.id] = None
                    continue
                try:
                    defaults[target.id] = ast.literal_eval(value)
                except ValueError:
                    defaults[target.id] = ast.get_source_segment(cell.source, value)
    return defaults


def parse_param(text: str) -> tuple[str, str, Any]:
    """Parse ``CHAPTER.NAME=VALUE`` (the value is read as YAML: ``8``, ``[en, zh]``, ``null``).

    Returns
    -------
    (chapter selector, parameter name, value)

    Raises
    ------
    BookError
        On a malformed override or a secret-like parameter name.
    """
    match = re.fullmatch(r"\s*([^.=\s]+)\.([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)", text, flags=re.S)
    if not match:
        raise BookError(f"-p {text!r}: expected CHAPTER.NAME=VALUE, e.g. -p 04.limit=8")
    selector, name, raw = match.groups()
    _check_parameter_name(name, f"-p {selector}.{name}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise BookError(f"-p {text!r}: the value is not valid YAML: {exc}") from exc
    return selector, name, value


def _check_parameter_name(name: str, where: str) -> None:
    """Refuse a parameter whose name looks like a credential."""
    if is_secret_like(name):
        raise BookError(
            f"{where}: refusing parameter {name!r}: it looks like a key, token or secret. "
            "papermill writes parameters into the executed notebook, which is published; "
            "credentials come only from environment variables (e.g. OPENAI_API_KEY)"
        )


def load_overrides(text: str) -> dict[str, dict[str, Any]]:
    """Read ``--param-overrides``: a YAML/JSON file, or an inline YAML mapping.

    The mapping is ``{chapter: {name: value}}``; chapters are selectors as for ``--chapters``.
    """
    path = Path(text)
    try:
        raw = path.read_text(encoding="utf-8") if path.is_file() else text
        data = yaml.safe_load(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise BookError(f"--param-overrides {text!r}: cannot read it: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise BookError(
            f"--param-overrides {text!r}: expected a mapping chapter -> {{name: value}}, "
            "e.g. '{04_extraction: {limit: 8}}'"
        )
    for chapter, params in data.items():
        for name in params:
            _check_parameter_name(str(name), f"--param-overrides {chapter}")
    return {str(k): dict(v) for k, v in data.items()}


def chapter_parameters(
    chapters: Sequence[Chapter],
    selected: Sequence[Chapter],
    profile: str,
    overrides: Mapping[str, Mapping[str, Any]],
    params: Sequence[tuple[str, str, Any]],
) -> dict[str, dict[str, Any]]:
    """Merge the overrides of a profile, a file and ``-p`` into per-chapter parameters.

    Later sources win: profile, then ``--param-overrides``, then ``-p``. Overrides of
    chapters that are not selected are ignored.

    Raises
    ------
    BookError
        On an unknown profile or chapter, or a secret-like name.
    """
    if profile not in PROFILES:
        raise BookError(f"unknown profile {profile!r}; profiles are: {', '.join(PROFILES)}")
    merged: dict[str, dict[str, Any]] = {c.name: {} for c in selected}
    known = {c.name for c in chapters}
    layers: list[tuple[str, str, Any]] = [
        # a built-in profile may name chapters that this table of contents does not have
        (selector, name, value)
        for selector, values in PROFILES[profile].items() if selector in known
        for name, value in values.items()
    ]
    for selector, values in overrides.items():
        layers.extend((selector, name, value) for name, value in values.items())
    layers.extend(params)
    for selector, name, value in layers:
        _check_parameter_name(name, f"parameter of {selector}")
        chapter = resolve_chapter(chapters, selector)
        if chapter.name in merged:
            merged[chapter.name][name] = value
    return merged


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


def execute_chapter(
    chapter: Chapter,
    parameters: Mapping[str, Any],
    out_dir: Path,
    *,
    static_figures: bool = False,
    timeout: float | None = None,
) -> Path:
    """Execute one chapter with papermill.

    Parameters
    ----------
    chapter : Chapter
        The chapter; its source must exist.
    parameters : mapping
        Overrides of the defaults in its ``parameters`` cell (names must exist there).
    out_dir : Path
        Folder of the executed notebook; it is also the kernel's working directory.
    static_figures : bool
        Set ``TEF_STATIC_FIGURES=1`` for the kernel (static SVGs for print).
    timeout : float or None
        Per-cell time limit in seconds.

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
    import papermill
    from papermill.exceptions import PapermillExecutionError

    if chapter.source is None:
        raise BookError(f"{chapter.docname}: no source file")
    notebook = read_chapter(chapter.source)
    try:
        defaults = parameter_defaults(notebook)
    except BookError as exc:
        raise BookError(f"{chapter.source}: {exc}") from exc
    for name in defaults:
        _check_parameter_name(name, f"{chapter.source} (parameters cell)")
    unknown = sorted(set(parameters) - set(defaults))
    if unknown:
        raise BookError(
            f"{chapter.name} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters are: {', '.join(defaults) or 'none'}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    output = out_dir / f"{chapter.name}.ipynb"
    output.unlink(missing_ok=True)  # never leave an older success next to a new failure
    (out_dir.parent / "failed" / output.name).unlink(missing_ok=True)
    kernel = notebook.metadata["kernelspec"]["name"]
    env = {BUILD_ENV_FLAG: "1", STATIC_FIGURES_ENV: "1" if static_figures else None}
    with _environment(**env):
        try:
            papermill.execute_notebook(
                notebook,
                str(output),
                parameters=dict(parameters),
                kernel_name=kernel,
                cwd=str(out_dir),
                progress_bar=False,
                log_output=False,
                request_save_on_cell_execute=False,
                execution_timeout=timeout,
            )
        except PapermillExecutionError as exc:
            _raise_on_leaks(find_secret_leaks([output]), f"{output}", [output])
            # Keep the executed folder to notebooks that ran through (nbval checks all of it).
            failed = out_dir.parent / "failed" / output.name
            failed.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(output), failed)
            raise BookError(
                f"{chapter.source}: cell {exc.exec_count} raised {exc.ename}: {exc.evalue}. "
                f"The partly executed notebook is {failed}"
            ) from None
    _raise_on_leaks(find_secret_leaks([output]), f"{output}", [output])
    return output


# --------------------------------------------------------------------------- staging and build


def _ignore_sources(folder: str, names: list[str]) -> set[str]:
    """shutil.copytree filter: no caches, no notebook sources (their executed copies go in)."""
    skip = {"__pycache__", ".ipynb_checkpoints"}
    return {n for n in names if n in skip or Path(n).suffix in {".py", ".ipynb", ".pyc", *SOURCE_SUFFIXES}}


def stage_tree(root: Path, stage: Path, toc: Mapping[str, Any], executed: Mapping[str, Path]) -> Path:
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

    Returns
    -------
    Path
        ``stage``.
    """
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    shutil.copy2(root / "_config.yml", stage / "_config.yml")
    (stage / "_toc.yml").write_text(
        "# Generated by tefcore.book from the root _toc.yml; do not edit.\n"
        + yaml.safe_dump(dict(toc), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    shutil.copytree(root / "book", stage / "book", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if (root / CHAPTER_DIR).is_dir():
        # Images and other files the chapters' Markdown refers to, never their sources.
        shutil.copytree(root / CHAPTER_DIR, stage / CHAPTER_DIR, ignore=_ignore_sources)
    for docname, path in executed.items():
        target = stage / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return stage


def _jupyter_book() -> list[str]:
    """The command that runs Jupyter Book with this interpreter's environment."""
    script = Path(sys.executable).with_name("jupyter-book")
    if script.is_file():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    raise BookError("jupyter-book is not installed (pip install -e '.[book]')")


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


# --------------------------------------------------------------------------- PDF


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that does not log every request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return


@contextlib.contextmanager
def serve_directory(folder: Path) -> Iterator[str]:
    """Serve a folder over HTTP on 127.0.0.1 (a free port) and yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def find_chromium() -> str:
    """Path of a Chromium binary: ``$TEF_CHROMIUM``, else ``chromium`` on PATH (Debian).

    Raises
    ------
    BookError
        When none is found.
    """
    candidates = [os.environ.get("TEF_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]
    for candidate in candidates:
        if candidate and (found := shutil.which(candidate)):
            return found
    raise BookError("Chromium not found: apt-get install chromium, or set TEF_CHROMIUM")


def chromium_flags(user_data_dir: Path) -> list[str]:
    """Headless Chromium flags that keep it quiet and off the network's background services."""
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--hide-scrollbars",
        "--mute-audio",
        f"--user-data-dir={user_data_dir}",
    ]


def print_pdf(html_dir: Path, page: str, pdf_path: Path, *, budget_ms: int = 60000) -> Path:
    """Print one page of a built HTML folder to PDF with headless Chromium.

    Parameters
    ----------
    html_dir : Path
        Folder to serve (a ``singlehtml`` build).
    page : str
        Page to print, relative to ``html_dir``.
    pdf_path : Path
        Output file.
    budget_ms : int
        Virtual time Chromium gives the page's scripts (MathJax, plotly, vega) before printing.
    """
    chromium = find_chromium()
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    pdf_path.unlink(missing_ok=True)
    profile = pdf_path.parent / ".chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    with serve_directory(html_dir) as base:
        command = [
            chromium,
            *chromium_flags(profile),
            "--no-pdf-header-footer",
            "--run-all-compositor-stages-before-draw",
            f"--virtual-time-budget={budget_ms}",
            f"--print-to-pdf={pdf_path}",
            f"{base}/{page}",
        ]
        result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    shutil.rmtree(profile, ignore_errors=True)
    if result.returncode != 0 or not pdf_path.is_file() or pdf_path.stat().st_size == 0:
        raise BookError(f"Chromium could not print {page}: {result.stderr.strip()[-2000:]}")
    return pdf_path


def build_pdf(stage: Path, output_root: Path, root_docname: str, *, strict: bool = True) -> Path:
    """Build the single-page HTML of the staged tree and print it to PDF.

    The root page lives in ``book/``; Jupyter Book's ``index.html`` only redirects to it, and
    printing it from its own folder breaks the relative ``_static`` links, so the page is
    copied to ``index.html`` first (its links are written relative to the output root).
    """
    single = run_jupyter_book(stage, output_root, "singlehtml", strict=strict)
    page = single / f"{root_docname}.html"
    if not page.is_file():
        raise BookError(f"singlehtml build has no {page}")
    shutil.copy2(page, single / "index.html")
    pdf = print_pdf(single, "index.html", output_root / "_build" / "pdf" / PDF_NAME)
    _raise_on_leaks(find_secret_leaks([single, pdf]), "the PDF build", [single, pdf])
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
) -> BuildReport:
    """Execute the chosen chapters and build the book (the work of :func:`main`).

    Parameters
    ----------
    root : Path
        Book root.
    selectors : sequence of str or None
        Chapters to build (see :func:`select_chapters`).
    skip_execute : bool
        Reuse ``_build/executed/notebooks/*.ipynb`` instead of executing.
    pdf : bool
        Also build the PDF (executes with static figures unless ``static_figures=False``).
    html : bool
        Build the HTML (``False``: execute only).
    profile, overrides, params
        Parameter overrides, merged by :func:`chapter_parameters`.
    strict : bool
        Warnings are errors in the Sphinx builds.
    timeout : float or None
        Per-cell time limit of papermill.
    static_figures : bool or None
        Store static SVGs next to interactive figures; ``None`` means "when ``pdf``".

    Returns
    -------
    BuildReport
        Chapters, parameters, timings and output paths (also written as JSON).
    """
    root = root.resolve()
    build_dir = root / "_build"
    executed_dir = build_dir / "executed" / CHAPTER_DIR
    stage = build_dir / "site_src"
    toc = load_toc(root)
    chapters = toc_chapters(root, toc)
    selected, skipped = select_chapters(chapters, selectors)
    for chapter in skipped:
        log.warning("skipping %s: no %s.py or .md", chapter.name, chapter.docname)
    parameters = chapter_parameters(chapters, selected, profile, overrides or {}, params)
    report = BuildReport(
        root=str(root),
        chapters=[c.name for c in selected],
        skipped=[c.name for c in skipped],
        parameters=parameters,
    )
    static = pdf if static_figures is None else static_figures

    executed: dict[str, Path] = {}
    for index, chapter in enumerate(selected, start=1):
        target = executed_dir / f"{chapter.name}.ipynb"
        if skip_execute:
            if not target.is_file():
                raise BookError(f"--skip-execute: {target} does not exist; execute it first")
            _raise_on_leaks(find_secret_leaks([target]), str(target), [target])
        else:
            shown = ", ".join(f"{k}={v!r}" for k, v in parameters[chapter.name].items())
            log.info(
                "[%d/%d] executing %s%s", index, len(selected), chapter.name, f" ({shown})" if shown else ""
            )
            started = time.perf_counter()
            execute_chapter(
                chapter, parameters[chapter.name], executed_dir, static_figures=static, timeout=timeout
            )
            report.execute_seconds[chapter.name] = round(time.perf_counter() - started, 2)
            log.info(
                "[%d/%d] %s executed in %.1f s",
                index,
                len(selected),
                chapter.name,
                report.execute_seconds[chapter.name],
            )
        executed[chapter.docname] = target
    report.outputs["executed"] = str(executed_dir)

    if html or pdf:
        stage_tree(root, stage, filter_toc(toc, set(executed)), executed)
        report.outputs["staged"] = str(stage)
    if html:
        html_dir = build_dir / "html"
        if html_dir.exists():
            # Stale pages of an earlier (larger) selection must not be published or tested.
            shutil.rmtree(html_dir)
        started = time.perf_counter()
        run_jupyter_book(stage, root, "html", strict=strict)
        report.build_seconds["html"] = round(time.perf_counter() - started, 2)
        (html_dir / ".nojekyll").touch()
        _raise_on_leaks(find_secret_leaks([html_dir]), f"the built book {html_dir}", [html_dir])
        report.outputs["html"] = str(html_dir)
        log.info("HTML built in %.1f s: %s", report.build_seconds["html"], html_dir / "index.html")
    if pdf:
        single = build_dir / "singlehtml"
        if single.exists():
            shutil.rmtree(single)
        started = time.perf_counter()
        pdf_path = build_pdf(stage, root, str(toc["root"]), strict=strict)
        report.build_seconds["pdf"] = round(time.perf_counter() - started, 2)
        report.outputs["pdf"] = str(pdf_path)
        log.info("PDF built in %.1f s: %s", report.build_seconds["pdf"], pdf_path)
    build_dir.mkdir(exist_ok=True)
    (build_dir / "book-report.json").write_text(json.dumps(report.__dict__, indent=2, default=str))
    return report


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
    """The command-line interface of ``python -m tefcore.book`` and ``tef book``."""
    parser = argparse.ArgumentParser(
        prog="tef book",
        description=(
            "Execute the chapters (notebooks/*.py) with papermill and build the book with "
            "Jupyter Book, warnings as errors. Output: _build/html (and _build/pdf)."
        ),
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
        help="named parameter overrides (ci: small chapter 4)",
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
        )
    except BookError as exc:
        print(f"tef book: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
