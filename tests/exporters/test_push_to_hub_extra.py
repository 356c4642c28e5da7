"""push_to_hub without huggingface_hub names the install command (runs whether or not it is installed)."""

from __future__ import annotations

import builtins

import pytest

from whileai.errors import MissingExtraError
from whileai.exporters import push_to_hub
from whileai.testing import rollout_table


def test_a_missing_extra_names_the_install_command(monkeypatch):
    real_import = builtins.__import__

    def no_hub(name, *args, **kwargs):
        if name.startswith("huggingface_hub"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_hub)
    with pytest.raises(MissingExtraError, match=r"pip install 'whileai\[hf\]'"):
        push_to_hub(rollout_table(2, 2), "me/rows", token="t")
