"""Shared fixtures: the store points at a temporary folder in every test."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    monkeypatch.setenv("WAI_STORE", str(tmp_path / ".wai" / "store.duckdb"))
    yield
