"""chapters: what one chapter of the book uses, a module per chapter (``chNN``), kept beside companion.

:mod:`~chapters.theory` is the support of the teaching chapters (1, 2 and 10); :mod:`~chapters.prose`
holds the sentences that some chapters still compose in code, until their Markdown says them with glued
numbers. No chapter's module imports another chapter's.
"""
