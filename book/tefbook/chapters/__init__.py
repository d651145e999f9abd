"""tefbook.chapters: what one chapter of the book uses, a module per chapter (``chNN``), beside tefbook.companion.

:mod:`~tefbook.chapters.theory` is the support of the teaching chapters (1, 2 and 10); ``ch03`` to ``ch09`` hold
their chapter's figures and table layouts (the chapters compute their numbers in their own cells, and
write their prose in Markdown). No chapter's module imports another chapter's.
"""

import warnings

# A kernel without widgets makes tqdm warn once, at the first import of tefcore's progress bars (the
# extraction loop, the e5 judges), which a chapter's import cell would print; the bars print as text.
warnings.filterwarnings("ignore", message="IProgress not found")
