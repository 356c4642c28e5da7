"""Exit statuses CI can tell apart (docs/cli.md, "Exit status")."""

from __future__ import annotations

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "EXIT_NOT_COMPARABLE", "EXIT_PASS", "EXIT_REFUSED"]

#: The check passed (or the command did what it was asked).
EXIT_PASS = 0
#: The check failed: a regression, a refused gate, an untrusted judge.
EXIT_REFUSED = 1
#: Usage or bad input (any WaiError), as argparse and click use for usage errors.
EXIT_BAD_INPUT = 2
#: Not comparable: the two sides of ``wai compare`` cannot be paired into a verdict.
EXIT_NOT_COMPARABLE = 3
#: An unexpected internal error (a bug).
EXIT_INTERNAL = 4
