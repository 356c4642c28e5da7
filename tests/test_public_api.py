"""The one public door: wai.__all__ is sorted, complete and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import whileai as wai


def test_all_is_sorted_and_unique():
    assert list(wai.__all__) == sorted(set(wai.__all__))


@pytest.mark.parametrize("name", wai.__all__)
def test_every_public_name_resolves(name):
    assert getattr(wai, name) is not None


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        wai.nope  # noqa: B018


def test_import_is_light():
    code = "import sys, whileai; print(','.join(m for m in ('duckdb', 'httpx', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
