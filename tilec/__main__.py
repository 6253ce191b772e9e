"""`python -m tilec`: the tilec command line (see tilec.cli)."""
import sys

from .cli import main

sys.exit(main())
