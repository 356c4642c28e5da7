"""Print how many docs blocks ran and which were skipped, and why (make docs-test)."""

from __future__ import annotations

#: The docs runner's helpers import the docs extra (markdown-it-py); `make test` collects modules for
#: doctests, so they are left out of collection and imported only by the docs run itself.
collect_ignore = ["blocks.py", "run_page.py"]


def pytest_terminal_summary(terminalreporter):
    import sys

    test_docs_run = sys.modules.get("tests.docs.test_docs_run")
    if test_docs_run is None:  # make test leaves the slow docs run out
        return
    counts = test_docs_run.COUNTS
    if counts["ran"] or counts["skipped"]:
        terminalreporter.write_line(f"docs blocks: {counts['ran']} ran, {counts['skipped']} skipped")
        for line in test_docs_run.SKIPPED:
            terminalreporter.write_line(f"  skipped {line}")
