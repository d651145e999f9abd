"""The lock the environment was installed from: ``requirements/cpu.lock``, its hash, and whether it holds.

``bash scripts/setup.sh`` installs every Python package of the CPU set-up from ``requirements/cpu.lock``
(pip-tools' hashed requirements format, written by ``make lock`` with uv), then ``tefcore`` and the book's
tools with ``--no-deps``. :func:`lock_record` names that file, its sha256 and whether the installed versions
are the locked ones; the book's front matter and the set-up's last line say it (cache headers record the lock's
sha256: :func:`tefcore.judges.machine.numeric_environment`). A wheel install has no lock beside the package and
gets the "unlocked" record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.metadata import distributions
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tefcore.judges.machine import LOCK_FILE, lock_path, lock_record

__all__ = ["MAX_DIFFERS", "Pin", "describe_lock", "lock_status", "read_lock"]

MAX_DIFFERS = 10
"""Most differences a record lists."""


@dataclass(frozen=True)
class Pin:
    """One locked package: canonical name, exact version, environment marker (or ``None``) and hashes."""

    name: str
    version: str
    marker: str | None
    hashes: tuple[str, ...]

    def applies(self) -> bool:
        """Whether this pin is for the running Python and platform (its marker holds here)."""
        return self.marker is None or Marker(self.marker).evaluate()


def read_lock(text: str, source: str = LOCK_FILE) -> list[Pin]:
    """The pins of a hashed requirements file.

    Parameters
    ----------
    text : str
        The file's text: ``name==version [; marker] \\`` lines, each followed by its ``--hash=`` lines.
    source : str
        The file's name in error messages.

    Raises
    ------
    ValueError
        One line, naming the line, when a requirement is not pinned with ``==`` or does not parse.

    Examples
    --------
    >>> pins = read_lock("numpy==2.2.6 ; python_full_version < '3.11' \\\\\\n    --hash=sha256:ab\\n")
    >>> pins[0].name, pins[0].version, pins[0].marker, pins[0].hashes
    ('numpy', '2.2.6', 'python_full_version < "3.11"', ('sha256:ab',))
    >>> read_lock("numpy>=2\\n")
    Traceback (most recent call last):
    ...
    ValueError: requirements/cpu.lock line 1: not pinned with ==: numpy>=2
    """
    pins: list[Pin] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip().rstrip("\\").strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line[0].isspace() and stripped.startswith("--hash="):
            if not pins:
                raise ValueError(f"{source} line {number}: a hash before any requirement")
            last = pins[-1]
            pins[-1] = Pin(last.name, last.version, last.marker, (*last.hashes, stripped.removeprefix("--hash=")))
            continue
        try:
            requirement = Requirement(stripped)
        except InvalidRequirement as error:
            raise ValueError(f"{source} line {number}: not a requirement ({error}): {stripped}") from None
        specifiers = list(requirement.specifier)
        if requirement.url or len(specifiers) != 1 or specifiers[0].operator != "==":
            raise ValueError(f"{source} line {number}: not pinned with ==: {stripped}")
        marker = str(requirement.marker) if requirement.marker else None
        pins.append(Pin(canonicalize_name(requirement.name), specifiers[0].version, marker, ()))
    return pins


def lock_status(root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The lock this environment was installed from, its sha256, and whether the installed versions match it.

    Parameters
    ----------
    root : path, optional
        The repository root that holds :data:`LOCK_FILE`; by default the folder above the ``tefcore``
        package (an editable install from the repository; a wheel install has no lock there).

    Returns
    -------
    dict
        ``file`` (:data:`LOCK_FILE`, or ``None`` without a lock), ``sha256`` (hex of the file, or ``None``),
        ``matches_installed`` (every pin for this Python and platform is the installed version; ``False``
        without a lock) and ``differs`` (at most :data:`MAX_DIFFERS` lines "name installed X, locked Y").

    Raises
    ------
    ValueError
        One line, when the lock holds a line that is not a pinned requirement (:func:`read_lock`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> root = Path(tempfile.mkdtemp())
    >>> lock_status(root)
    {'file': None, 'sha256': None, 'matches_installed': False, 'differs': []}
    >>> (root / "requirements").mkdir()
    >>> _ = (root / LOCK_FILE).write_text("numpy==0.0.1 \\\\\\n    --hash=sha256:00\\nno-such-package==1.0\\n")
    >>> record = lock_status(root)
    >>> record["sha256"][:12], record["matches_installed"]
    ('bd45199a6561', False)
    >>> record["differs"]
    ['numpy installed ..., locked 0.0.1', 'no-such-package not installed, locked 1.0']
    """
    found = lock_record(root)  # the file and its sha256, as cache headers record them
    if found is None:
        return {"file": None, "sha256": None, "matches_installed": False, "differs": []}
    data = lock_path(root).read_bytes()
    installed = {canonicalize_name(dist.metadata["Name"]): dist.version for dist in distributions()
                 if dist.metadata["Name"]}
    differs = []
    for pin in read_lock(data.decode("utf-8"), LOCK_FILE):
        if not pin.applies():
            continue
        have = installed.get(pin.name)
        if have is None:
            differs.append(f"{pin.name} not installed, locked {pin.version}")
        elif Version(have) != Version(pin.version):
            differs.append(f"{pin.name} installed {have}, locked {pin.version}")
    return {**found, "matches_installed": not differs, "differs": differs[:MAX_DIFFERS]}


def describe_lock(record: dict[str, Any]) -> str:
    """One line for a :func:`lock_status`: the lock's name and short hash, and whether it holds here.

    Examples
    --------
    >>> describe_lock({"file": "requirements/cpu.lock", "sha256": "abc123def4567890", "matches_installed": True,
    ...                "differs": []})
    'requirements/cpu.lock (sha256 abc123def456), installed versions match'
    >>> describe_lock({"file": "requirements/cpu.lock", "sha256": "abc123def4567890", "matches_installed": False,
    ...                "differs": ["numpy installed 2.5.5, locked 2.4.6"]})
    'requirements/cpu.lock (sha256 abc123def456), installed versions differ: numpy installed 2.5.5, locked 2.4.6'
    >>> describe_lock({"file": None, "sha256": None, "matches_installed": False, "differs": []})
    'no lock (an install without requirements/cpu.lock beside tefcore)'
    """
    if record["file"] is None:
        return f"no lock (an install without {LOCK_FILE} beside tefcore)"
    name = f"{record['file']} (sha256 {record['sha256'][:12]})"
    if record["matches_installed"]:
        return f"{name}, installed versions match"
    return f"{name}, installed versions differ: " + "; ".join(record["differs"])
