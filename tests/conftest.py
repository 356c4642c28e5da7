"""Shared fixtures: the store points at a temporary folder in every test."""

from __future__ import annotations

import pytest

#: tests/data/<tool>/ holds the scripts that wrote the real tool outputs; they need those tools.
collect_ignore_glob = ["data/*"]


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    monkeypatch.setenv("WAI_STORE", str(tmp_path / ".wai" / "store.duckdb"))
    yield
