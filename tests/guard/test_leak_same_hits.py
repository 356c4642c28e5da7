"""The leak check's prefilter and whitespace rule flag exactly the rows the plain rule flags.

The reference is the rule as written before the prefilter (``leaking_rows`` with every needle
kept and every run of whitespace replaced by ``\\s+``), run on seeded rows that quote their
privileged context in every way the rule reads: the reply, a tool call's name or arguments
(escaped quotes, non-ASCII, a slash), other case and whitespace, a quote the agent was shown
(not a leak), the whileai 0.131 ``privileged`` object, plain-text and JSON ``reference`` and
``rubric`` columns, and rows without a conversation.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from whileai import table
from whileai.guard import _leak

WORDS = ["refund", "order", "get_order", "truthfully", "do", "not", "invent", "a", "result", "café",
         'say "done"', "back\\slash", "a/b", "ORD-1000", "tool_outcome", "Reference:", "x"]


def _phrase(rng: np.random.Generator, n: int) -> str:
    return " ".join(str(w) for w in rng.choice(WORDS, size=n))


def _rows(seed: int, n: int = 300) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        secret = _phrase(rng, int(rng.integers(2, 7)))
        noisy = "".join(c.upper() if rng.random() < 0.3 else c for c in secret).replace(" ", rng.choice([" ", "  ", "\n", "\t "]))
        where = int(rng.integers(0, 6))
        reply = f"Here you go. {noisy}" if where == 0 else f"Here you go, {_phrase(rng, 4)}."
        args = {"order_id": f"ORD-{i}", "note": noisy if where == 1 else "n/a"}
        tool = "get_order" if where != 2 else secret.split(" ")[0]
        user = f"please {secret}" if where == 3 else "please help"
        row: dict = {"scenario_id": f"t{i % 40}", "rollout_index": i % 8, "prompt": user, "reward": 1.0}
        if where != 4:
            row["messages"] = [
                {"role": "user", "content": user},
                {"role": "assistant", "content": "", "tool_calls": [{"name": tool, "arguments": args}]},
                {"role": "tool", "name": tool, "content": json.dumps({"status": "ok"})},
                {"role": "assistant", "content": reply},
            ]
        else:
            row["final_text"] = reply
        kind = int(rng.integers(0, 3))
        if kind == 0:
            row["privileged"] = {"reference": secret, "hidden_state": {"fault": _phrase(rng, 3)}}
        elif kind == 1:
            row["reference"] = secret
        else:
            row["rubric"] = json.dumps({"criteria": [secret, _phrase(rng, 3)]})
        rows.append(row)
    return rows


def _reference(df: pl.DataFrame, min_len: int) -> tuple[int, pl.DataFrame]:
    """``leaking_rows`` as written before the prefilter: every needle, the ``\\s+`` rule."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_leak, "_candidates", lambda frame, needles: needles)
        m.setattr(_leak, "_norm", lambda e: e.str.replace_all(r"\s+", " ").str.strip_chars().str.to_lowercase())
        return _leak.leaking_rows(df, min_len=min_len)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("min_len", [4, 12])
def test_the_same_rows_are_flagged_as_by_the_plain_rule(seed, min_len):
    df = table.frame(_rows(seed))
    n, hits = _leak.leaking_rows(df, min_len=min_len)
    n_ref, ref = _reference(df, min_len)
    assert n == n_ref
    assert hits.height > 10 and hits.height < df.height  # the rows do hold leaks and non-leaks
    assert_frame_equal(hits, ref)


def test_the_whitespace_rule_is_the_plain_one():
    texts = pl.Series(["A  b\t\tc \u00a0d\n", "x y", " \t  lead", "\u01c4  \u03a3", "", "a\u2003\u2003b", "q \n r"])
    plain = pl.select(pl.lit(texts).str.replace_all(r"\s+", " ").str.strip_chars().str.to_lowercase()).to_series()
    assert pl.select(_leak._norm(pl.lit(texts))).to_series().to_list() == plain.to_list()
