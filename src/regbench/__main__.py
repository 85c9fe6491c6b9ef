"""``python -m regbench``: the ``regbench`` command, for an environment whose scripts are not on
``PATH`` (a virtual environment that is not activated)."""

import sys

from .cli.main import main

sys.exit(main())
