"""Print how many docs blocks ran and which were skipped, and why (make docs-test)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter):
    from tests.docs import test_docs_run

    counts = test_docs_run.COUNTS
    if counts["ran"] or counts["skipped"]:
        terminalreporter.write_line(f"docs blocks: {counts['ran']} ran, {counts['skipped']} skipped")
        for line in test_docs_run.SKIPPED:
            terminalreporter.write_line(f"  skipped {line}")
