"""The parameters of the book's chapters: the one reader of a parameters cell, the check a chapter runs
in its kernel, the defaults, the profiles and the overrides.

Each chapter has one code cell tagged ``parameters``; :func:`assigned_names` reads it (with :mod:`ast`)
for every purpose: the book build (:func:`parameter_defaults`), the plans of ``tef reproduce``
(:func:`declared_parameters`) and the chapter itself (:func:`check_parameters`, which refuses, inside the
kernel, a parameter that papermill injected but the chapter does not declare). :func:`chapter_parameters` merges the values
of a named profile (:data:`PROFILES`), ``--param-overrides`` (:func:`load_overrides`) and
``-p CHAPTER.NAME=VALUE`` (:func:`parse_param`), and :func:`set_parameters` writes them into that
cell, in place of the defaults: the executed chapter has one parameters cell, showing the values
it ran with. Parameters are written into the published notebook, so a name that looks like a
credential is refused wherever it comes from (:func:`check_parameter_name`).

Paths mean what the user typed: a value the user gives (``-p``, ``--param-overrides``) to a
parameter that names a file or folder (:func:`is_path_parameter`) is made absolute against the
working directory of the build command, before any kernel starts (kernels run elsewhere).
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from tefbook.errors import BookError
from tefbook.toc import Chapter, resolve_chapter
from tefcore.redact import is_secret_name

__all__ = [
    "INJECTED_MARKER",
    "BadParameter",
    "UnknownParameter",
    "assigned_names",
    "check_declared",
    "check_parameters",
    "check_value",
    "declared_in",
    "declared_parameters",
    "declared_types",
    "unknown_parameter_message",
    "unknown_parameters",
    "PATH_PARAMETERS",
    "PATH_SUFFIXES",
    "PROFILES",
    "chapter_parameters",
    "check_parameter_name",
    "is_path_parameter",
    "load_overrides",
    "parameter_defaults",
    "parse_param",
    "read_chapter",
    "resolve_user_paths",
    "set_parameters",
]

#: Per-chapter parameter overrides of each named profile (chapter name -> parameters).
#: ``ci`` keeps the whole CI run (installs, execution, build, nbval, browser) under 25 min
#: on two cores (chapter 4's default is already small: its live runs are one pair per LLM cache and
#: the smallest cell per e5 cache); it adds chapter 4's emulated machines (a few minutes), which the
#: default build leaves out so that a first build stays quick.
PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "default": {},
    "ci": {"08_efficiency": {"ttft_sample": 8}, "04_extraction": {"emulations": "all"}},
}

#: Parameters that name a file or folder although their name does not say so.
PATH_PARAMETERS: frozenset[str] = frozenset({"out"})
#: Name endings of parameters that name a file or folder (``data_dir``, ``cache_dir``, ``reference_caches``).
PATH_SUFFIXES: tuple[str, ...] = ("_dir", "_path", "_file", "cache", "caches")


# --------------------------------------------------------------------------- reading a parameters cell


INJECTED_MARKER = "# Parameters"
"""How the cell that papermill injects begins (``# Parameters`` followed by the assignments)."""


class UnknownParameter(ValueError):
    """A chapter was given a parameter its parameters cell does not declare."""


class BadParameter(BookError, ValueError):
    """A parameter's value is not of the type or in the range its parameters cell declares."""


_TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}
_BOUND = re.compile(r"\s*(>=|<=|>|<)\s*([-+]?[0-9_.]+(?:e[-+]?[0-9]+)?)\s*", re.I)
_COMPARE: dict[str, Any] = {">=": float.__ge__, "<=": float.__le__, ">": float.__gt__, "<": float.__lt__}


def declared_types(source: str) -> dict[str, str]:
    """The declarations of a parameters cell: each name annotated with a string such as ``"int >= 1"``.

    A declaration is a type (``int``, ``float``, ``bool``, ``str``) and, for numbers, bounds joined by
    commas (``"float > 0, <= 1"``). A chapter declares its parameters where it assigns them, e.g.
    ``n_boot: "int >= 1" = 1000``; the book build and the chapter's kernel both check the values given
    against them (:func:`check_value`).

    Examples
    --------
    >>> declared_types('n_boot: "int >= 1" = 1000  # replicates\\nseed: int = 0\\nmodels = "local"')
    {'n_boot': 'int >= 1'}
    """
    return {node.target.id: node.annotation.value for node in ast.parse(source).body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and isinstance(node.annotation, ast.Constant) and isinstance(node.annotation.value, str)}


def check_value(name: str, value: Any, declaration: str) -> Any:
    """Check one parameter's value against its declaration; return it (an integral float as an int).

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : object
        The value given.
    declaration : str
        Its declaration (:func:`declared_types`), e.g. ``"int >= 0"``.

    Returns
    -------
    object
        ``value``, or the int of an integral float (``1e9``) declared ``int``.

    Raises
    ------
    BadParameter
        One line naming the parameter, its declaration and the value given.

    Examples
    --------
    >>> check_value("n_boot", 1e9, "int >= 1")
    1000000000
    >>> check_value("n_boot", -1, "int >= 1")
    Traceback (most recent call last):
    ...
    tefbook.parameters.BadParameter: parameter 'n_boot' must be an int >= 1, got -1
    """
    kind, *bounds = declaration.split(",")
    kind, _, first = kind.strip().partition(" ")
    bounds = [first, *bounds] if first else bounds
    if kind not in _TYPES:
        raise BookError(f"parameter {name!r}: its declaration {declaration!r} names no type of "
                        f"{', '.join(_TYPES)}")
    wanted = _TYPES[kind]
    if wanted is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if wanted is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    ok = isinstance(value, wanted) and (wanted is bool or not isinstance(value, bool))
    for bound in bounds if ok and wanted in (int, float) else ():
        match = _BOUND.fullmatch(bound)
        if match is None:
            raise BookError(f"parameter {name!r}: cannot read the bound {bound.strip()!r} of {declaration!r}")
        ok = ok and _COMPARE[match[1]](float(value), float(match[2]))
    if not ok:
        article = "an" if kind == "int" else "a"
        raise BadParameter(f"parameter {name!r} must be {article} {declaration}, got {value!r}")
    return value


def declared_in(notebook: Any) -> dict[str, str]:
    """The declarations (:func:`declared_types`) of a notebook's ``parameters`` cell; empty without one."""
    cell = _parameters_cell(notebook)
    return declared_types(cell.source) if cell is not None else {}


def check_declared(values: Mapping[str, Any], declarations: Mapping[str, str]) -> dict[str, Any]:
    """Check every value that has a declaration (:func:`check_value`); return the values, integral floats as ints.

    Examples
    --------
    >>> check_declared({"seed": 3.0, "models": "local"}, {"seed": "int >= 0"})
    {'seed': 3, 'models': 'local'}
    """
    return {name: check_value(name, value, declarations[name]) if name in declarations else value
            for name, value in values.items()}


def assigned_names(source: str) -> dict[str, Any]:
    """Names assigned at the top level of a cell, with their literal values (else their source text).

    Parameters
    ----------
    source : str
        Python source of one cell.

    Returns
    -------
    dict
        Name -> value, in order of assignment.

    Raises
    ------
    SyntaxError
        When ``source`` is not valid Python.

    Examples
    --------
    >>> assigned_names('models = "local"  # judges\\nlimit: int = 12\\nout = base / "x"')
    {'models': 'local', 'limit': 12, 'out': 'base / "x"'}
    """
    tree = ast.parse(source)
    names: dict[str, Any] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            try:
                names[target.id] = None if value is None else ast.literal_eval(value)
            except ValueError:
                names[target.id] = ast.get_source_segment(source, value) if value is not None else None
    return names


def declared_parameters(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parameters (names and default values) of a chapter file's ``parameters`` cell.

    Parameters
    ----------
    path : path-like
        A jupytext chapter (``notebooks/05_main_results.py``) or a notebook.

    Returns
    -------
    dict
        Name -> default value (literals), in the cell's order.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        When it has no code cell tagged ``parameters``.
    """
    import jupytext

    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"chapter {file} not found")
    notebook = jupytext.read(file)
    for cell in notebook.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            return assigned_names(cell.source)
    raise ValueError(f"{file}: no code cell is tagged 'parameters'")


def unknown_parameter_message(chapter: str, unknown: Sequence[str], declared: Sequence[str]) -> str:
    """The one message for a parameter a chapter does not have (the book build and the kernel say it alike).

    Examples
    --------
    >>> unknown_parameter_message("04_extraction", ["model"], ["models", "langs"])
    "04_extraction has no parameter 'model' (did you mean 'models'?); its parameters are: models, langs"
    """
    hints = [f"{name!r} (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(name, declared, 1))
             else repr(name) for name in unknown]
    return f"{chapter} has no parameter {', '.join(hints)}; its parameters are: {', '.join(declared) or 'none'}"


def unknown_parameters(history: Sequence[str]) -> tuple[list[str], list[str]]:
    """Compare the parameters papermill injected with those the chapter declares.

    Parameters
    ----------
    history : sequence of str
        The sources of the cells executed so far, in order (IPython's ``In``).

    Returns
    -------
    (list of str, list of str)
        The injected names the chapter does not declare, and the declared names. Both empty when
        nothing was injected (the chapter runs with its defaults).

    Examples
    --------
    >>> unknown_parameters(["", 'models = "local"\\nlimit = 12', '# Parameters\\nmodel = "x"\\n', "import os"])
    (['model'], ['models', 'limit'])
    """
    for at in range(len(history) - 1, 0, -1):
        if str(history[at]).lstrip().startswith(INJECTED_MARKER):
            injected = assigned_names(str(history[at]))
            declared = list(assigned_names(str(history[at - 1])))
            return [name for name in injected if name not in declared], declared
    return [], []


def _kernel_history() -> list[str]:
    """The executed cell sources of the running IPython kernel (empty outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()
    return list(shell.user_ns.get("In", [])) if shell is not None else []


def check_parameters(chapter: str = "this chapter", history: Sequence[str] | None = None,
                     namespace: Mapping[str, Any] | None = None) -> None:
    """Fail when the chapter was run with a parameter its ``parameters`` cell does not declare.

    Call it at the top of the chapter's first code cell after the parameters cell. It reads the cell
    that papermill injected (the executed cell that starts with :data:`INJECTED_MARKER`) and the
    cell before it (the chapter's own parameters), both with :mod:`ast`. When the kernel's namespace
    holds declarations (:func:`declared_types`: the parameters cell's annotations), each declared
    parameter's value is checked against its type and range too.

    Parameters
    ----------
    chapter : str
        The chapter's name, for the message (``"04_extraction"``).
    history : sequence of str, optional
        Executed cell sources (default: the kernel's ``In``).
    namespace : mapping, optional
        The chapter's variables and their ``__annotations__`` (default: the kernel's namespace).

    Raises
    ------
    UnknownParameter
        Naming the unknown parameter(s) and every declared one (:func:`unknown_parameter_message`).
    BadParameter
        Naming the chapter, the parameter, its declaration and the value (:func:`check_value`).

    Examples
    --------
    >>> check_parameters("ch", ["", "n = 1", "# Parameters\\nn = 2\\n"], {})  # a declared name: nothing happens
    >>> check_parameters("ch", [], {"__annotations__": {"n": "int >= 1"}, "n": 0})
    Traceback (most recent call last):
    ...
    tefbook.parameters.BadParameter: ch: parameter 'n' must be an int >= 1, got 0
    >>> check_parameters("ch", ["", "n = 1", "# Parameters\\nm = 2\\n"], {})
    Traceback (most recent call last):
    ...
    tefbook.parameters.UnknownParameter: ch has no parameter 'm'; its parameters are: n
    """
    unknown, declared = unknown_parameters(_kernel_history() if history is None else history)
    if unknown:
        raise UnknownParameter(unknown_parameter_message(chapter, unknown, declared))
    space = _kernel_namespace() if namespace is None else namespace
    declarations = {name: text for name, text in dict(space.get("__annotations__") or {}).items()
                    if isinstance(text, str) and name in space}
    try:
        check_declared({name: space[name] for name in declarations}, declarations)
    except BadParameter as exc:
        raise BadParameter(f"{chapter}: {exc}") from None


def _kernel_namespace() -> Mapping[str, Any]:
    """The running IPython kernel's namespace (empty outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


# --------------------------------------------------------------------------- chapters, profiles, overrides


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
        return assigned_names(cell.source)
    except SyntaxError as exc:
        raise BookError(f"the parameters cell is not valid Python: {exc}") from exc


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
    check_parameter_name(name, f"-p {selector}.{name}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise BookError(f"-p {text!r}: the value is not valid YAML: {exc}") from exc
    return selector, name, _number(value)


def _number(value: Any) -> Any:
    """A string that Python reads as a number (YAML 1.1 reads ``1e9`` as a string) as that number.

    Examples
    --------
    >>> _number("1e9"), _number("2_000"), _number("en"), _number("nan")
    (1000000000.0, 2000, 'en', 'nan')
    """
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?[0-9][0-9_]*(\.[0-9_]*)?(e[-+]?[0-9]+)?\s*", value, re.I):
        try:
            return ast.literal_eval(value.strip().lstrip("+"))
        except (ValueError, SyntaxError):
            return value
    return value


def check_parameter_name(name: str, where: str) -> None:
    """Refuse a parameter whose name looks like a credential.

    Parameters
    ----------
    name : str
        The parameter's name.
    where : str
        Where it comes from, for the message (``-p 04.api_key``).

    Raises
    ------
    BookError
        When :func:`tefcore.redact.is_secret_name` says the name looks like a credential.
    """
    if is_secret_name(name):
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
            check_parameter_name(str(name), f"--param-overrides {chapter}")
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
    chapters that are not selected are ignored. The user's values of path parameters are made
    absolute against the working directory (:func:`resolve_user_paths`).

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
        layers.extend((selector, name, value) for name, value in resolve_user_paths(values).items())
    layers.extend((selector, name, value) for selector, name, value in params
                  for value in resolve_user_paths({name: value}).values())
    for selector, name, value in layers:
        check_parameter_name(name, f"parameter of {selector}")
        chapter = resolve_chapter(chapters, selector)
        if chapter.name in merged:
            merged[chapter.name][name] = value
    return merged



# --------------------------------------------------------------------------- paths the user typed


def is_path_parameter(name: str) -> bool:
    """Whether a chapter parameter names a file or folder: listed in :data:`PATH_PARAMETERS`, or its
    name ends with one of :data:`PATH_SUFFIXES`.

    Examples
    --------
    >>> [is_path_parameter(n) for n in ("data_dir", "out", "reference_caches", "limit", "outline")]
    [True, True, True, False, False]
    """
    return name in PATH_PARAMETERS or name.endswith(PATH_SUFFIXES)


def resolve_user_paths(values: Mapping[str, Any], cwd: Path | None = None) -> dict[str, Any]:
    """Make the user's values of path parameters absolute against ``cwd`` (default: the working directory).

    A string value of a path parameter (:func:`is_path_parameter`) is expanded (``~``) and, when
    relative, joined to ``cwd``; ``None``, empty strings and other parameters are kept as they are.

    Examples
    --------
    >>> resolve_user_paths({"data_dir": "data/mind", "limit": 8, "out": None}, Path("/home/me/tef"))
    {'data_dir': '/home/me/tef/data/mind', 'limit': 8, 'out': None}
    """
    base = Path.cwd() if cwd is None else cwd
    return {name: os.fspath(base / Path(value).expanduser())
            if is_path_parameter(name) and isinstance(value, str) and value.strip() else value
            for name, value in values.items()}


# --------------------------------------------------------------------------- one parameters cell


def set_parameters(notebook: Any, values: Mapping[str, Any]) -> Any:
    """Write ``values`` into the notebook's ``parameters`` cell, in place of the defaults.

    Each assignment of an overridden name becomes ``name = <value>`` (its annotation and an
    end-of-line comment kept); the rest of the cell, comments included, is left as it is. The notebook is changed in place and
    returned. papermill would instead add a second cell after it, so that a reader sees two values
    for one parameter.

    Raises
    ------
    BookError
        When a value is not a Python literal, a name is not assigned in the cell, or it is assigned
        together with other names (``a = b = 1``); :class:`BadParameter` when a value is not of the type
        or in the range the cell declares (:func:`declared_types`).
    """
    cell = _parameters_cell(notebook)
    if cell is None:
        raise BookError("no code cell is tagged 'parameters' (# %% tags=[\"parameters\"])")
    values = check_declared(values, declared_types(cell.source))
    lines = cell.source.splitlines()
    statements = _assignments(cell.source)
    missing = sorted(set(values) - {name for name, _ in statements})
    if missing:
        raise BookError(f"the parameters cell assigns no {', '.join(missing)}")
    for name, node in reversed(statements):  # from the bottom, so that line numbers stay valid
        if name in values:
            comment = lines[node.end_lineno - 1][node.end_col_offset:]  # an end-of-line comment stays
            lines[node.lineno - 1:node.end_lineno] = [_assignment(name, node, values[name], cell.source) + comment]
    cell.source = "\n".join(lines)
    return notebook


def _assignments(source: str) -> list[tuple[str, ast.Assign | ast.AnnAssign]]:
    """``(name, statement)`` for each top-level assignment of a simple name, in source order."""
    found: list[tuple[str, ast.Assign | ast.AnnAssign]] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.append((node.target.id, node))
        elif isinstance(node, ast.Assign):
            found.extend((target.id, node) for target in node.targets if isinstance(target, ast.Name))
    return found


def _assignment(name: str, node: ast.Assign | ast.AnnAssign, value: Any, source: str) -> str:
    """The statement ``name[: annotation] = repr(value)``, checked to be a Python literal."""
    if isinstance(node, ast.Assign) and len(node.targets) > 1:
        raise BookError(f"parameter {name!r} is assigned together with other names; give it a line of its own")
    text = repr(value)
    try:
        if ast.literal_eval(text) != value:
            raise ValueError(text)
    except (ValueError, SyntaxError):
        raise BookError(f"parameter {name!r}: {value!r} is not a Python literal") from None
    annotation = ast.get_source_segment(source, node.annotation) if isinstance(node, ast.AnnAssign) else None
    return f"{name}: {annotation} = {text}" if annotation else f"{name} = {text}"
