"""TEF on one's own corpus: a task file names the texts, the dimensions, their sides and the prompt.

Rooms: :mod:`~tefcore.tasks.schema` (the K sides of a dimension, their answer letters and the
prompt's slots) and :mod:`~tefcore.tasks.load` (the task file, its checks and its evaluation pairs).
MIND is one task among these (:class:`tefcore.mind.load.EvaluationPair`).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> folder = init_task(Path(tempfile.mkdtemp()) / "my-study")
>>> sorted(p.name for p in folder.iterdir())
['README.md', 'posts.csv', 'prompt.txt', 'task.yaml']
>>> load_task(folder / "task.yaml").name
'my-study'
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from tefcore.tasks.load import Document, TaskError, TaskFile, load_task, summary
from tefcore.tasks.schema import Choices, EvaluationPair, Task, fill_prompt

__all__ = ["Choices", "Document", "EvaluationPair", "Task", "TaskError", "TaskFile", "example_dir", "fill_prompt",
           "init_task", "load_task", "recorded_sides", "summary"]

_EXAMPLE_NAME = "my-study"
"""The example task's name; :func:`init_task` gives it the folder's name instead."""


def recorded_sides(provenance: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """The sides per dimension a task's cache records in its provenance; None for a MIND cache.

    Examples
    --------
    >>> recorded_sides({"task": "my-study", "sides": {"Tone": ["calm", "angry"]}}), recorded_sides({"lang": "en"})
    ({'Tone': ['calm', 'angry']}, None)
    """
    return dict(provenance["sides"]) if provenance.get("task") else None


def example_dir() -> Path:
    """The folder of the example task that ``tef init`` copies (package data)."""
    return Path(str(resources.files("tefcore.tasks") / "example"))


def init_task(folder: str | os.PathLike[str]) -> Path:
    """Write the example task (``task.yaml``, ``posts.csv``, ``prompt.txt``, ``README.md``) into ``folder``.

    The task is named after the folder. Nothing is overwritten: a folder that holds any of the four
    files is an error, and nothing is written then. All four files are written, or none: they are
    written into a hidden folder beside ``folder`` first, then moved in (a full disk or a read-only
    folder leaves nothing behind, so the same command runs again once the cause is gone).

    Returns
    -------
    Path
        The folder (absolute).

    Raises
    ------
    FileExistsError
        When one of the files exists already.
    OSError
        When the folder cannot be written (full disk, no permission, a file on the path), naming it;
        nothing is left behind then.
    """
    folder = Path(folder).expanduser().absolute()
    sources = sorted(p for p in example_dir().iterdir() if p.suffix in (".yaml", ".csv", ".txt", ".md"))
    taken = [p.name for p in sources if (folder / p.name).exists()]
    if taken:
        raise FileExistsError(f"{folder} already holds {', '.join(taken)}; choose a new folder for `tef init`")
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        if any(p.exists() and not p.is_dir() for p in (folder, *folder.parents)):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        folder.parent.mkdir(parents=True, exist_ok=True)
        stage = folder.parent / f".{folder.name}.{os.getpid()}.tef-init"
        stage.mkdir()  # with the folder's usual mode (a temporary folder's would be private)
        try:
            for source in sources:
                _write_example(source, stage / source.name, folder.name)
            _move_in(stage, folder, [p.name for p in sources])
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    except OSError as exc:
        for made in created:  # innermost first: the folders this call made, if still empty
            with contextlib.suppress(OSError):
                made.rmdir()
        raise OSError(exc.errno, exc.strerror or str(exc), str(folder)) from None
    return folder


def _write_example(source: Path, target: Path, name: str) -> None:
    """Copy one file of the example task, its name replaced by ``name`` in the YAML and Markdown."""
    if source.suffix in (".yaml", ".md"):
        target.write_text(source.read_text(encoding="utf-8").replace(_EXAMPLE_NAME, name), encoding="utf-8")
    else:
        shutil.copyfile(source, target)


def _move_in(stage: Path, folder: Path, names: list[str]) -> None:
    """Move the written files from ``stage`` into ``folder``: the whole folder when it is new, else file by file
    (each move undone if a later one fails)."""
    if not folder.exists():
        os.rename(stage, folder)
        return
    moved: list[str] = []
    try:
        for name in names:
            os.rename(stage / name, folder / name)
            moved.append(name)
    except OSError:
        for name in moved:
            with contextlib.suppress(OSError):
                os.rename(folder / name, stage / name)
        raise
