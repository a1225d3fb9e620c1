"""`python -m experiments NAME ...`: `aizone experiment NAME ...` without the aizone entry point."""

import sys

from .cli import main

sys.exit(main())
