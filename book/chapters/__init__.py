"""chapters: what one chapter of the book uses, a module per chapter (``chNN``), kept beside companion.

:mod:`~chapters.theory` is the support of the teaching chapters (1, 2 and 10); ``ch03`` to ``ch09`` hold
their chapter's figures and table layouts (the chapters compute their numbers in their own cells, and
write their prose in Markdown). No chapter's module imports another chapter's.
"""
