"""tefbook.companion: what several chapters of the book share, one module per concept; no module knows a chapter.

:mod:`~tefbook.companion.runs` (the caches of several judges and prompts, loaded and grouped),
:mod:`~tefbook.companion.provenance` (a run's label read from its cache header), :mod:`~tefbook.companion.labels`
(names of rules, judges, languages, rows; the table of a chapter's caches), :mod:`~tefbook.companion.results`
(predictions, score tables and paired tests of the runs, beside the paper's numbers), :mod:`~tefbook.companion.calibration` (retempered
probabilities and the rules' response), :mod:`~tefbook.companion.tables` (numbers and tables as the book prints
them), :mod:`~tefbook.companion.figures` (figure set-up: offline plotly and altair), :mod:`~tefpaper.ledger` (links
to the claims ledger's rows, the rows a chapter examines) and
:mod:`~tefbook.companion.commands` (the GPU commands a page shows). It imports :mod:`tefcore` and
:mod:`tefbook`; neither imports it.
"""

import warnings

# A kernel without widgets makes tqdm warn once, at the first import of tefcore's progress bars (the
# extraction loop, the e5 judges), which a chapter's import cell would print; the bars print as text.
warnings.filterwarnings("ignore", message="IProgress not found")
