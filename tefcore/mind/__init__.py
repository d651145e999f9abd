"""The MIND benchmark as the protocol defines it.

Rooms: :mod:`~tefcore.mind.schema` (dimensions, subcategories, positions, sides),
:mod:`~tefcore.mind.load` (validated records, the data directory, evaluation pairs),
:mod:`~tefcore.mind.prompts` (the verbatim prompts, and :func:`mind_task`: MIND as a
:class:`~tefcore.tasks.schema.Task`) and :mod:`~tefcore.mind.release` (download, data
card, the published counts of the full release). The embedded sample is :mod:`tefcore.mind.sample`.

Examples
--------
>>> from tefcore.mind import load_posts, evaluation_pairs, split_sentences
>>> pairs = evaluation_pairs(load_posts("en"))        # the embedded sample by default
>>> len(pairs)
605
>>> split_sentences("Taxes must fall. Markets work! Yes.", "en")
['Taxes must fall.', 'Markets work!']
"""

from __future__ import annotations

from tefcore.mind.load import (EvaluationPair, MindFormatError, Post, evaluation_pairs, load_posts, mind_pair,
                               resolve_data_dir)
from tefcore.mind.prompts import build_prompt, mind_task
from tefcore.mind.schema import DIMENSIONS, LANGS, SIDES, TABLE_ORDER
from tefcore.tasks.segment import split_sentences

__all__ = ["DIMENSIONS", "LANGS", "SIDES", "TABLE_ORDER", "EvaluationPair", "MindFormatError", "Post", "build_prompt",
           "evaluation_pairs", "load_posts", "mind_pair", "mind_task", "resolve_data_dir", "split_sentences"]
