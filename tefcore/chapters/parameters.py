"""The parameters a chapter declares, and a check that catches a misspelt one however the chapter runs.

A chapter's parameters are the assignments of its code cell tagged ``parameters``. papermill replaces
them with a cell of its own, inserted right after that cell, whose source starts with
:data:`INJECTED_MARKER`; a name it is given that the chapter does not declare is only a warning
("Passed unknown parameter"), and the chapter silently runs with its defaults. The book build refuses
such a name before it starts papermill; :func:`check_parameters`, called at the top of each chapter's
first cell after its parameters, refuses it inside the kernel, so that ``papermill`` run by hand
fails in the same way, with the same message (:func:`unknown_parameter_message`).

:func:`declared_parameters` reads the parameters cell of a chapter file (jupytext and :mod:`ast`, no
kernel), for the checks of :mod:`tefcore.chapters.commands`.
"""

from __future__ import annotations

import ast
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "INJECTED_MARKER",
    "UnknownParameter",
    "assigned_names",
    "check_parameters",
    "declared_parameters",
    "unknown_parameter_message",
    "unknown_parameters",
]

INJECTED_MARKER = "# Parameters"
"""How the cell that papermill injects begins (``# Parameters`` followed by the assignments)."""


class UnknownParameter(ValueError):
    """A chapter was given a parameter its parameters cell does not declare."""


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


def check_parameters(chapter: str = "this chapter", history: Sequence[str] | None = None) -> None:
    """Fail when the chapter was run with a parameter its ``parameters`` cell does not declare.

    Call it at the top of the chapter's first code cell after the parameters cell. It reads the cell
    that papermill injected (the executed cell that starts with :data:`INJECTED_MARKER`) and the
    cell before it (the chapter's own parameters), both with :mod:`ast`.

    Parameters
    ----------
    chapter : str
        The chapter's name, for the message (``"04_extraction"``).
    history : sequence of str, optional
        Executed cell sources (default: the kernel's ``In``).

    Raises
    ------
    UnknownParameter
        Naming the unknown parameter(s) and every declared one (:func:`unknown_parameter_message`).

    Examples
    --------
    >>> check_parameters("ch", ["", "n = 1", "# Parameters\\nn = 2\\n"])  # a declared name: nothing happens
    >>> check_parameters("ch", ["", "n = 1", "# Parameters\\nm = 2\\n"])
    Traceback (most recent call last):
    ...
    tefcore.chapters.parameters.UnknownParameter: ch has no parameter 'm'; its parameters are: n
    """
    unknown, declared = unknown_parameters(_kernel_history() if history is None else history)
    if unknown:
        raise UnknownParameter(unknown_parameter_message(chapter, unknown, declared))
