"""Rows of a fluent data object by position: an int gives a row dict, a slice a list of them."""

from __future__ import annotations


def test_fluent_rows_index_by_int_and_slice():
    """data[:3] raised TypeError ('>=' between slice and int); a slice gives a list of row dicts."""
    import pytest

    import whileai as wai

    @wai.tool
    def get_order(order_id: str) -> dict:
        """Look up an order by id."""

    data = wai.simulate(wai.seeded_agent([get_order]), tools=[get_order], system_prompt="x", simulator=False,
                        budget=8, repeats=2, progress=False)
    head = data[:3]
    assert isinstance(head, list) and [r["rollout_id"] for r in head] == [data[i]["rollout_id"] for i in range(3)]
    assert [r["rollout_id"] for r in data[::3]] == [data[i]["rollout_id"] for i in range(0, len(data), 3)]
    assert data[-1]["rollout_id"] == data[len(data) - 1]["rollout_id"] and data[5:2] == []
    with pytest.raises(IndexError):
        data[-len(data) - 1]
    with pytest.raises(TypeError, match="by position"):
        data["reward"]
