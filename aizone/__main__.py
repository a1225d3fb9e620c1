"""`python -m aizone ARGS`: the `aizone` command without its console script."""

import sys

from .cli import main

sys.exit(main())
