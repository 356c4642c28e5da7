"""The long views' positions (``_pos`` per message, ``_call`` per tool call) against Polars' window."""

from __future__ import annotations

import polars as pl

from whileai.guard._views import calls_long, messages_long
from whileai.testing import rollout_table


def test_positions_match_the_window_over_rows():
    df = rollout_table(30, 4, seed=3)
    df = pl.concat([df.select("messages"), pl.DataFrame({"messages": [None, []]}, schema={"messages": df.schema["messages"]})])
    msgs = messages_long(df)
    ref = msgs.with_columns(pl.int_range(pl.len(), dtype=pl.UInt32).over("_row").alias("ref"))
    assert msgs.height > df.height and ref["_pos"].to_list() == ref["ref"].to_list()
    calls = calls_long(msgs)
    ref = calls.with_columns(pl.int_range(pl.len(), dtype=pl.UInt32).over("_row").alias("ref"))
    assert calls.height > 0 and ref["_call"].to_list() == ref["ref"].to_list()
    assert messages_long(df.head(0)).height == 0 and calls_long(messages_long(df.head(0))).height == 0
