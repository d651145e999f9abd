"""The book's repository: one setting, ``$TEF_REPOSITORY``, and everything that follows from it.

The address of the repository is never written into the project: a build reads it from the
environment variable :data:`REPOSITORY_ENV` (``owner/name`` of a GitHub repository), which the Pages
workflow sets to the repository it publishes (``github.repository``). Without it (a local build) the
book shows no repository link and no launch button, and no chapter names an address.

With it:

* every page's header links to the repository, and the introduction names it as a link (the
  substitution ``repository``) (:func:`config_overrides`, written into the staged ``_config.yml`` by
  :func:`apply_to_config`);
* the pages of *launchable* chapters get Binder and Colab buttons (the ``tef_launch`` extension keeps
  them to those pages). A chapter is launchable when its notebook metadata says ``tef_launch: true``:
  it needs nothing but ``tefcore`` and common packages, which it installs itself where they are
  missing. The buttons open ``notebooks/<chapter>.ipynb`` on the branch :data:`LAUNCH_BRANCH`, which
  the Pages workflow fills with those chapters as notebooks (:mod:`tefbook.launch`): Colab opens only
  ``.ipynb`` files, and executed notebooks are never committed to the main branch;
* a chapter that declares the parameter :data:`REPOSITORY_PARAMETER` runs with the address
  (:func:`repository_parameters`), so that its published notebook can install ``tefcore`` from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tefbook.errors import BookError

__all__ = [
    "BINDER_URL",
    "COLAB_URL",
    "LAUNCH_BRANCH",
    "LAUNCH_METADATA",
    "REPOSITORY_ENV",
    "REPOSITORY_PARAMETER",
    "apply_to_config",
    "config_overrides",
    "is_launchable",
    "repository_from_env",
    "repository_parameters",
    "repository_url",
]

REPOSITORY_ENV = "TEF_REPOSITORY"
"""The one setting: ``owner/name`` of the book's GitHub repository (unset: no links, no buttons)."""
REPOSITORY_PARAMETER = "repository"
"""A chapter parameter that receives the setting."""
LAUNCH_METADATA = "tef_launch"
"""Notebook metadata key that marks a chapter as launchable on Binder and Colab."""
LAUNCH_BRANCH = "launch"
"""The branch that holds the launchable chapters as notebooks (written by the Pages workflow)."""
BINDER_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"

_ADDRESS = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


def repository_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The setting ``$TEF_REPOSITORY``, checked, or ``None`` when unset or blank.

    Raises
    ------
    BookError
        When it is not ``owner/name`` (what ``github.repository`` holds).

    Examples
    --------
    >>> repository_from_env({"TEF_REPOSITORY": " octo/tef-companion "})
    'octo/tef-companion'
    >>> repository_from_env({}) is None
    True
    """
    value = (os.environ if environ is None else environ).get(REPOSITORY_ENV, "").strip()
    if not value:
        return None
    if not _ADDRESS.fullmatch(value) or value.endswith((".git", "/")) or ".." in value:
        raise BookError(
            f"${REPOSITORY_ENV} must be the GitHub repository as owner/name (e.g. octo/tef-companion), "
            f"got {value!r}; unset it for a book without repository links"
        )
    return value


def repository_url(repository: str) -> str:
    """The repository's web address.

    Examples
    --------
    >>> repository_url("octo/tef-companion")
    'https://github.com/octo/tef-companion'
    """
    return f"https://github.com/{repository}"


def config_overrides(repository: str) -> dict[str, Any]:
    """The ``_config.yml`` entries that a repository address switches on.

    Examples
    --------
    >>> config_overrides("octo/tef")["launch_buttons"]["colab_url"]
    'https://colab.research.google.com'
    >>> config_overrides("octo/tef")["parse"]["myst_substitutions"]["repository"]
    '[octo/tef](https://github.com/octo/tef)'
    """
    return {
        "repository": {"url": repository_url(repository), "branch": LAUNCH_BRANCH, "path_to_book": ""},
        "html": {"use_repository_button": True},
        "parse": {"myst_substitutions": {"repository": f"[{repository}]({repository_url(repository)})"}},
        "launch_buttons": {"binderhub_url": BINDER_URL, "colab_url": COLAB_URL,
                           "notebook_interface": "jupyterlab"},
    }


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def apply_to_config(config: Path, repository: str | None) -> None:
    """Write the overrides of :func:`config_overrides` into a (staged) ``_config.yml``; nothing when
    ``repository`` is ``None``."""
    if repository is None:
        return
    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    merged = _merge(data, config_overrides(repository))
    config.write_text(
        f"# Staged by tefbook with ${REPOSITORY_ENV}={repository}; do not edit.\n"
        + yaml.safe_dump(merged, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )


def is_launchable(notebook: Any) -> bool:
    """Whether a chapter's notebook metadata marks it launchable (``tef_launch: true``)."""
    return notebook.metadata.get(LAUNCH_METADATA) is True


def repository_parameters(declared: Mapping[str, Iterable[str]], parameters: Mapping[str, Mapping[str, Any]],
                          repository: str | None) -> dict[str, dict[str, Any]]:
    """Give the address to every chapter that declares :data:`REPOSITORY_PARAMETER`, unless the user
    set that parameter.

    Parameters
    ----------
    declared : mapping
        Chapter name -> the names of its parameters.
    parameters : mapping
        Chapter name -> the parameters it will run with.
    repository : str or None
        The setting (:func:`repository_from_env`).

    Examples
    --------
    >>> repository_parameters({"10_lab": ["seed", "repository"], "01": ["grid"]}, {"10_lab": {}, "01": {}},
    ...                       "octo/tef")
    {'10_lab': {'repository': 'octo/tef'}, '01': {}}
    """
    out = {name: dict(values) for name, values in parameters.items()}
    if repository is None:
        return out
    for name, values in out.items():
        if REPOSITORY_PARAMETER in declared.get(name, ()):
            values.setdefault(REPOSITORY_PARAMETER, repository)
    return out
