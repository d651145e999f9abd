"""``python -m tefbook``: execute the chapters and build the book."""

import sys

from tefbook.build import main

sys.exit(main())
