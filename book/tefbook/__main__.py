"""``python -m tefbook``: execute the chapters and build the book; ``python -m tefbook reproduce ...``: the
plan of ``tef reproduce``. ``tef book`` and ``tef reproduce`` run these in a subprocess."""

import sys

if sys.argv[1:2] == ["reproduce"]:
    from tefbook.reproduce import main

    sys.exit(main(sys.argv[2:]))

from tefbook.build import main  # noqa: E402

sys.exit(main())
