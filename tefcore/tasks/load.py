"""A task of one's own: a YAML file naming the data, the dimensions with their sides, and the prompt.

::

    name: my-study
    data: posts.csv            # .csv, .jsonl or .parquet, relative to the task file
    id: id                     # column names (these are the defaults)
    text: text
    language: en               # en or zh; without it, a `lang` column gives each row's language
    dimensions:                # one or more, each with two or more named sides and a description of each
      Housing:
        sides:
          supply: Build more homes; relax zoning.
          preservation: Protect neighbourhoods from densification.
    prompt: prompt.txt         # optional: {text} and any of {dimension} {sides} {letters}
    segmentation: reference    # or improved (protocol §3)

Gold labels are optional: in a CSV or Parquet file a column named like a dimension holds the gold
side's name for that row, or is empty; in a JSON-lines file a ``labels`` list of ``{"dimension",
"side"}`` objects does (as in MIND; labels of one dimension on two sides give that pair no gold, as
protocol §2 does).

:func:`load_task` reads and checks everything before anything is scored and raises one
:class:`TaskError` holding every problem found, one line each, naming the file, the line (YAML,
JSON lines) or the row (CSV, Parquet) and the key or column. Without a prompt file the paper's
original prompt is filled from the schema (:func:`tefcore.tasks.schema.task_template`). A prompt
file's trailing white space is cut, as the protocol's templates end without one.

A text is a string of at most :data:`MAX_TEXT_CHARS` (200,000) characters of valid Unicode; a number,
``true``, a list or binary data in the text column is refused, not scored as its printed form. Every CSV
row has as many fields as the header (a text holding a comma is quoted), and no dimension is named
``Average`` (:data:`RESERVED_DIMENSIONS`).

Examples
--------
>>> from tefcore.tasks import example_dir
>>> task = load_task(example_dir() / "task.yaml")
>>> task.name, [c.sides for c in task.dimensions], len(task.documents)
('my-study', [('supply', 'preservation'), ('car', 'transit', 'cycling')], 8)
>>> pair = task.pairs()[0]
>>> pair.dimension, pair.side, pair.choices.letters
('Housing', 'supply', ('A', 'B'))
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tefcore.errors import UnknownName
from tefcore.tasks.schema import (PLACEHOLDERS, Choices, EvaluationPair, Task, fill_prompt, placeholders,
                                  sides_by_dimension, task_template)
from tefcore.tasks.segment import LANGS, SEGMENTATION_RULES

__all__ = ["MAX_TEXT_CHARS", "RESERVED_DIMENSIONS", "Document",
           "TaskError", "TaskFile", "load_task", "summary"]

_KEYS: tuple[str, ...] = ("name", "data", "id", "text", "language", "dimensions", "prompt", "segmentation")
"""The keys of a task file."""
_DATA_FORMATS: tuple[str, ...] = (".csv", ".jsonl", ".parquet")
_LANG_COLUMN = "lang"
"""The column (or JSON field) of each row's language when the task sets no ``language``."""
_DEFAULT_PROMPT = "original"
"""The prompt name (the cache's ``<prompt>`` folder) of a task without a prompt file."""
MAX_TEXT_CHARS = 200_000
"""The longest text a row may hold, in characters (about 40,000 English words, a thousand times MIND's
mean post): a longer one is refused by ``tef validate`` and the loaders (a task's and MIND's), so that
one row cannot hold a judge or the memory for hours. Split a longer document into several rows."""
RESERVED_DIMENSIONS: tuple[str, ...] = ("Average",)
"""Names a dimension may not take: ``tef evaluate``'s tables give the mean over the dimensions its own row,
:data:`tefcore.evaluate.AVERAGE`."""


class TaskError(ValueError):
    """A task that cannot be used; ``problems`` holds one line per problem (file, line or row, key or column)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        more = len(self.problems) - 1
        super().__init__(self.problems[0] + (f" (and {more} more problem{'s' * (more > 1)}: see `tef validate`)"
                                             if more else ""))


@dataclass(frozen=True)
class Document:
    """One row of a task's data: ``gold`` maps a dimension to its gold side (labelled dimensions only)."""

    id: str
    lang: str
    text: str
    gold: Mapping[str, str]


@dataclass(frozen=True)
class TaskFile(Task):
    """A task of one's own, loaded and checked (see the module notes); build it with :func:`load_task`."""

    path: Path
    name: str
    data: Path
    dimensions: tuple[Choices, ...]
    documents: tuple[Document, ...]
    template: str | None
    prompt_file: Path | None
    segmentation: str
    sha256: str
    """SHA-256 of what the task file and its prompt say (schema, prompt, columns, segmentation); the data
    enter a cache pair by pair, each record holding a hash of its text."""

    @property
    def prompt_name(self) -> str:
        """The cache's ``<prompt>`` folder: the prompt file's stem, else ``original``.

        Leading dots become underscores, so that a file named ``...txt`` (stem ``..``) or ``.hidden.txt``
        gives a folder of its own, not the parent folder or a hidden one.
        """
        if not self.prompt_file:
            return _DEFAULT_PROMPT
        stem = self.prompt_file.stem
        return "_" * (len(stem) - len(stem.lstrip("."))) + stem.lstrip(".")

    @property
    def languages(self) -> list[str]:
        """The languages of the documents, in :data:`~tefcore.mind.schema.LANGS` order."""
        return [lang for lang in LANGS if any(d.lang == lang for d in self.documents)]

    def choices(self, dimension: str, lang: str = "") -> Choices:
        """The sides of ``dimension`` (the same in every language); :class:`~tefcore.errors.UnknownName` (a
        KeyError and a ValueError) for a dimension the task does not have."""
        for c in self.dimensions:
            if c.dimension == dimension:
                return c
        raise UnknownName(f"task {self.name!r} has no dimension {dimension!r}")

    def template_for(self, lang: str) -> str:
        """The prompt template of ``lang``: the task's own, else the paper's original with the schema's slots."""
        return self.template if self.template is not None else task_template(lang)

    def prompt(self, text: str, dimension: str, lang: str) -> str:
        """The prompt of one text (a whole document or one sentence) on one dimension."""
        return fill_prompt(self.template_for(lang), text, self.choices(dimension), lang)

    def pairs(self, lang: str | None = None) -> list[EvaluationPair]:
        """Every (document, dimension), data order then dimension order; ``side`` is the gold side or None."""
        return [EvaluationPair(d.id, d.lang, c.dimension, d.gold.get(c.dimension), d.text, c)
                for d in self.documents if lang in (None, d.lang) for c in self.dimensions]

    def pairs_by_language(self, langs: list[str] | None = None) -> dict[str, list[EvaluationPair]]:
        """The pairs of each language (default: every language of the data); one without texts is an error."""
        absent = [lang for lang in langs or () if lang not in self.languages]
        if absent:
            raise ValueError(f"--lang {' '.join(absent)}: task {self.name!r} has no text in it "
                             f"(its languages: {', '.join(self.languages)})")
        return {lang: self.pairs(lang) for lang in langs or self.languages}

    def provenance(self, lang: str) -> dict[str, Any]:
        """What a cache of this task records beside the judge: the task, its hash, its sides and K."""
        return {"task": self.name, "task_sha256": self.sha256,
                "template_sha256": hashlib.sha256(self.template_for(lang).encode("utf-8")).hexdigest(),
                "dimensions": [c.dimension for c in self.dimensions],
                "sides": {c.dimension: list(c.sides) for c in self.dimensions},
                "letters": {c.dimension: list(c.letters) for c in self.dimensions},
                "K": {c.dimension: c.K for c in self.dimensions}}


# --- the task file --------------------------------------------------------------------------------
class _Problems(list[str]):
    def at(self, where: str, message: str) -> None:
        self.append(f"{where}: {message}")


def _shown(path: Path) -> str:
    """A path relative to the working directory when it lies inside it."""
    here = Path.cwd()
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)


def _mapping(node: yaml.Node, where: str, problems: _Problems,
             lines: dict[str, int] | None = None) -> dict[str, yaml.Node]:
    """A YAML mapping's entries by key (keys as strings; ``lines`` gets each key's line); a duplicate key or
    a non-mapping is a problem."""
    if not isinstance(node, yaml.MappingNode):
        problems.at(f"{where}, line {node.start_mark.line + 1}", "expected a mapping of `key: value` entries")
        return {}
    out: dict[str, yaml.Node] = {}
    for key, value in node.value:
        name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
        if not name.strip():
            problems.at(f"{where}, line {key.start_mark.line + 1}", "an empty or non-text key")
        elif name in out:
            problems.at(f"{where}, line {key.start_mark.line + 1}", f"{name!r} is given twice")
        else:
            out[name] = value
            if lines is not None:
                lines[name] = key.start_mark.line + 1
    return out


def _text(node: yaml.Node | None, where: str, what: str, problems: _Problems) -> str | None:
    """A non-empty scalar as a string, else a problem."""
    if node is None:
        return None
    if isinstance(node, yaml.ScalarNode) and str(node.value).strip() and node.tag != "tag:yaml.org,2002:null":
        return str(node.value).strip()
    problems.at(f"{where}, line {node.start_mark.line + 1}", f"{what} must be a non-empty text")
    return None


def _compose(path: Path, problems: _Problems) -> yaml.Node | None:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.at(_shown(path), f"cannot read the task file ({_reason(exc)})")
        return None
    try:
        node = yaml.compose(source, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        problems.at(f"{_shown(path)}{line}", f"not valid YAML ({getattr(exc, 'problem', None) or exc})")
        return None
    if node is None:
        problems.at(_shown(path), "empty task file")
    return node


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else " ".join(str(exc).split())


def _dimensions(node: yaml.Node | None, where: str, problems: _Problems) -> list[Choices]:
    if node is None:
        problems.at(where, "no `dimensions:`; a task needs one or more")
        return []
    found = []
    for name, dim in _mapping(node, where, problems).items():
        line = f"{where}, line {dim.start_mark.line + 1}"
        entries = _mapping(dim, where, problems)
        for key in sorted(set(entries) - {"sides"}):
            problems.at(line, f"dimension {name!r}: unknown key {key!r} (a dimension has `sides:`)")
        sides = _mapping(entries["sides"], where, problems) if "sides" in entries else {}
        descriptions = [_text(text, where, f"the description of side {side!r} of {name!r}", problems)
                        for side, text in sides.items()]
        try:
            choices = Choices(name, tuple(sides), tuple(d or "" for d in descriptions))
        except ValueError as err:  # the number of sides
            problems.at(line, str(err))
        else:
            if all(descriptions):
                found.append(choices)
    if not found and not problems:
        problems.at(where, "`dimensions:` lists no dimension")
    return found


def _template(node: yaml.Node | None, folder: Path, where: str,
              problems: _Problems) -> tuple[str | None, Path | None]:
    name = _text(node, where, "prompt", problems)
    if name is None:
        return None, None
    path = (folder / name).resolve()
    try:
        template = path.read_text(encoding="utf-8").rstrip()
    except (OSError, UnicodeDecodeError) as exc:
        problems.at(_shown(path), f"cannot read the prompt file ({_reason(exc)})")
        return None, None
    slots = placeholders(template)
    if "text" not in slots:
        problems.at(_shown(path), "the prompt has no {text} placeholder (where the document or sentence goes)")
    unknown = sorted(set(slots) - set(PLACEHOLDERS))
    if unknown:
        problems.at(_shown(path), f"unknown placeholder(s) {', '.join('{' + s + '}' for s in unknown)}; "
                    f"a prompt may use {', '.join('{' + s + '}' for s in PLACEHOLDERS)}")
    return template, path


# --- the data -------------------------------------------------------------------------------------
_Row = tuple[str, Mapping[str, Any]]
"""Where a row is (``row 3`` or ``line 3``) and its fields."""


def _rows(path: Path, problems: _Problems) -> tuple[list[_Row], list[str]] | None:
    """The data's rows and columns, or None (a problem) when the file cannot be read."""
    import pandas as pd

    if path.suffix not in _DATA_FORMATS:
        problems.at(_shown(path), f"unknown data format {path.suffix!r}; use {', '.join(_DATA_FORMATS)}")
        return None
    try:
        if path.suffix == ".jsonl":
            return _jsonl_rows(path, problems)
        if path.suffix == ".csv":
            return _csv_rows(path, problems)
        frame = pd.read_parquet(path)
    except Exception as exc:  # pandas and pyarrow raise many types for an unreadable file
        problems.at(_shown(path), f"cannot read the data ({_reason(exc)})")
        return None
    frame.columns = [str(c) for c in frame.columns]
    return [(f"row {i + 1}", row) for i, row in enumerate(frame.to_dict("records"))], list(frame.columns)


def _csv_rows(path: Path, problems: _Problems) -> tuple[list[_Row], list[str]] | None:
    """A CSV file's rows by its header; a row with more or fewer fields than the header is a problem (an
    unquoted comma in a text would shift every field after it into the wrong column). Blank lines are skipped."""
    limit = csv.field_size_limit(max(csv.field_size_limit(), path.stat().st_size + 1))  # a field as long as the file
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            records = [fields for fields in csv.reader(handle) if fields]
    finally:
        csv.field_size_limit(limit)
    if not records:
        problems.at(_shown(path), "no header line (the first line names the columns)")
        return None
    header, rows = records[0], []
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        problems.at(f"{_shown(path)}, header", f"column(s) {', '.join(map(repr, twice))} named twice")
        return None
    for number, fields in enumerate(records[1:], start=1):
        if len(fields) == len(header):
            rows.append((f"row {number}", dict(zip(header, fields))))
        else:
            problems.at(f"{_shown(path)}, row {number}", f"{len(fields)} fields where the header has {len(header)} "
                        "(quote a field that holds a comma)")
    return (rows, header) if len(rows) == len(records) - 1 else None


def _jsonl_rows(path: Path, problems: _Problems) -> tuple[list[_Row], list[str]] | None:
    rows: list[_Row] = []
    columns: dict[str, None] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            problems.at(f"{_shown(path)}, line {number}", f"not valid JSON ({exc})")
            continue
        if not isinstance(record, dict):
            problems.at(f"{_shown(path)}, line {number}", "a line must hold one JSON object")
            continue
        rows.append((f"line {number}", record))
        columns.update(dict.fromkeys(record))
    return rows, list(columns)


def _value(value: Any) -> str:
    """A cell as text: empty for a missing value (NaN, None), else the value's text."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return value if isinstance(value, str) else str(value)


def _is_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (JSON's ``\\ud800`` escapes decode to a lone surrogate, which cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_KINDS = {"bytes": "binary data", "ndarray": "a list", "list": "a list", "dict": "an object", "bool": "true or false"}


def _check_text(raw: Any, text: str, where: str, problems: _Problems) -> None:
    """Check the text of one row (``raw`` as read, ``text`` as a string): a value that is not a string (a
    number, true or false, a list, binary data) would be scored as its printed form; a lone surrogate cannot
    be written; and a text may hold at most :data:`MAX_TEXT_CHARS` characters."""
    if text and not isinstance(raw, str):
        kind = _KINDS.get(type(raw).__name__, f"a number ({text})" if isinstance(raw, int | float) else
                          type(raw).__name__)
        problems.at(where, f"the text is {kind}, not a string")
    elif not _is_unicode(text):
        problems.at(where, "the text holds a lone surrogate (not valid Unicode)")
    elif len(text) > MAX_TEXT_CHARS:
        problems.at(where, f"a text of {len(text):,} characters; the bound is {MAX_TEXT_CHARS:,} "
                    "(split it into several rows)")


def _gold(fields: Mapping[str, Any], dims: Mapping[str, Choices], place: str,
          problems: _Problems) -> dict[str, str]:
    """The gold sides of one row: columns named like a dimension, or a JSON ``labels`` list."""
    if "labels" not in fields:
        given = {name: _value(fields[name]).strip() for name in dims if name in fields}
        labels = [(name, side, f"column {name!r}") for name, side in given.items() if side]
    else:
        raw = fields["labels"]
        items = raw if isinstance(raw, list) else [raw]
        labels = [(i.get("dimension"), i.get("side"), "field 'labels'") if isinstance(i, dict) else (None, None, "")
                  for i in items]
    valid = []
    for name, side, where in labels:
        if not isinstance(name, str) or not isinstance(side, str):
            problems.at(f"{place}, field 'labels'", "each label must be an object with a `dimension` and a `side`")
        elif name not in dims:
            problems.at(f"{place}, {where}", f"unknown dimension {name!r}; the task has {', '.join(dims)}")
        elif side not in dims[name].sides:
            problems.at(f"{place}, {where}", f"gold side {side!r} is not a side of {name!r} "
                        f"({', '.join(dims[name].sides)})")
        else:
            valid.append((name, side))
    return {name: sides.pop() for name, sides in sides_by_dimension(valid).items() if len(sides) == 1}


def _documents(rows: list[_Row], columns: list[str], data: Path, settings: Mapping[str, Any],
               dims: Mapping[str, Choices], problems: _Problems) -> list[Document]:
    file = _shown(data)
    id_col, text_col, language = settings["id"], settings["text"], settings["language"]
    needed = [c for c in (id_col, text_col) + (() if language else (_LANG_COLUMN,)) if c not in columns]
    for column in needed:
        hint = ("set `language:` in the task" if column == _LANG_COLUMN
                else f"set `{'id' if column == id_col else 'text'}:`")
        problems.at(file, f"no column {column!r} (columns: {', '.join(columns) or 'none'}); {hint}")
    if needed:
        return []
    if not rows:
        problems.at(file, "no rows")
    documents, first = [], {}
    for place, fields in rows:
        where = f"{file}, {place}"
        doc_id, text = _value(fields.get(id_col)).strip(), _value(fields.get(text_col))
        lang = language or _value(fields.get(_LANG_COLUMN)).strip()
        _check_text(fields.get(text_col), text, f"{where}, column {text_col!r}", problems)
        if not _is_unicode(doc_id):
            problems.at(f"{where}, column {id_col!r}", "the id holds a lone surrogate (not valid Unicode)")
        if not doc_id:
            problems.at(f"{where}, column {id_col!r}", "empty id")
        elif doc_id in first:
            problems.at(f"{where}, column {id_col!r}", f"duplicate id {doc_id!r} (first on {first[doc_id]})")
        first.setdefault(doc_id, place)
        if not text.strip():
            problems.at(f"{where}, column {text_col!r}", "empty text")
        if lang not in LANGS:
            problems.at(f"{where}, column {_LANG_COLUMN!r}", f"unknown language {lang!r}; use one of {', '.join(LANGS)}")
        documents.append(Document(doc_id, lang, text, _gold(fields, dims, where, problems)))
    return documents


# --- the whole task -------------------------------------------------------------------------------
def _settings(top: Mapping[str, yaml.Node], where: str, problems: _Problems) -> dict[str, Any]:
    """Name, data, columns, language and segmentation, with their defaults."""
    defaults = {"name": None, "data": None, "id": "id", "text": "text", "language": None, "segmentation": "reference"}
    out: dict[str, Any] = {key: _text(top.get(key), where, key, problems) or default
                           for key, default in defaults.items()}
    for key in ("name", "data"):
        if key not in top:
            problems.at(where, f"no `{key}:` (see `tef init` for an example task)")
    for key, allowed in (("language", LANGS), ("segmentation", SEGMENTATION_RULES)):
        if out[key] is not None and out[key] not in allowed:
            line = top[key].start_mark.line + 1
            problems.at(f"{where}, line {line}", f"unknown {key} {out[key]!r}; use one of {', '.join(allowed)}")
    if out["id"] == out["text"]:
        problems.at(where, f"`id:` and `text:` name the same column {out['id']!r}")
    return out


def load_task(path: str | os.PathLike[str]) -> TaskFile:
    """Read and check a task file, its prompt and its data (see the module notes).

    Parameters
    ----------
    path : path-like
        The task's YAML file; ``data`` and ``prompt`` are read relative to its folder.

    Returns
    -------
    TaskFile

    Raises
    ------
    TaskError
        With every problem found, one line each (``problems``); its message is the first, and how many more.
    """
    path = Path(path).expanduser().absolute()
    problems = _Problems()
    where = _shown(path)
    node = _compose(path, problems)
    if node is None:
        raise TaskError(problems)
    lines: dict[str, int] = {}
    top = _mapping(node, where, problems, lines)
    for key in sorted(set(top) - set(_KEYS)):
        problems.at(f"{where}, line {lines[key]}", f"unknown key {key!r}; a task has {', '.join(_KEYS)}")
    settings = _settings(top, where, problems)
    dims = _dimensions(top.get("dimensions"), where, problems)
    template, prompt_file = _template(top.get("prompt"), path.parent, where, problems)
    names = {c.dimension for c in dims}
    for column in sorted(names & {settings["id"], settings["text"], _LANG_COLUMN}):
        problems.at(where, f"dimension {column!r} has the name of the id, text or lang column")
    for name in sorted(names & set(RESERVED_DIMENSIONS)):
        problems.at(where, f"dimension {name!r} is a reserved name (`tef evaluate` gives the mean over the "
                    "dimensions that row); rename it")
    if problems or settings["data"] is None:
        raise TaskError(problems)
    data = (path.parent / settings["data"]).resolve()
    found = _rows(data, problems)
    documents = _documents(*found, data, settings, {c.dimension: c for c in dims}, problems) if found else []
    if problems:
        raise TaskError(problems)
    meaning = {key: settings[key] for key in ("name", "id", "text", "language", "segmentation")}
    meaning.update(dimensions=[[c.dimension, list(zip(c.sides, c.descriptions, c.letters))] for c in dims],
                   prompt=template)
    digest = hashlib.sha256(json.dumps(meaning, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
    return TaskFile(path, settings["name"], data, tuple(dims), tuple(documents), template, prompt_file,
                settings["segmentation"], digest)


def summary(task: TaskFile) -> Iterator[str]:
    """What ``tef validate`` prints: rows, languages, dimensions with their sides, gold per dimension, prompt."""
    langs = ", ".join(f"{lang} {sum(d.lang == lang for d in task.documents)}" for lang in task.languages)
    yield f"{_shown(task.path)}: task {task.name!r} (sha256 {task.sha256[:12]})"
    yield f"  data: {_shown(task.data)}, {len(task.documents)} rows ({langs})"
    for c in task.dimensions:
        gold = [d.gold[c.dimension] for d in task.documents if c.dimension in d.gold]
        counts = ", ".join(f"{side} {gold.count(side)}" for side in c.sides)
        yield (f"  {c.dimension} (K = {c.K}): {', '.join(f'{x} [{y}]' for x, y in zip(c.sides, c.letters))}; "
               f"gold on {len(gold)} rows" + (f" ({counts})" if gold else ""))
    prompt = _shown(task.prompt_file) if task.prompt_file else "the paper's original, filled from the sides"
    yield f"  prompt: {prompt}; caches in <out>/<model>/{task.prompt_name}/"
    yield f"  segmentation: {task.segmentation}"
