"""`python -m tilec.opt`: the same command as `python -m tilec opt` (`tilec.cli.opt`), kept
for the reproducers and FileCheck tests that name it."""
import sys

from .cli.opt import main  # noqa: F401

if __name__ == "__main__":
    sys.exit(main())
