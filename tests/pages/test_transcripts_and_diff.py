"""A graded row's transcript on the rows page, and the version-against-version page."""

from __future__ import annotations

import warnings

import pytest

import whileai.platform as wp
from tests.pages.seed import AGENT, SCRIPT
from tests.pages.test_pages import HTML, _signed_in
from whileai.defaults import ROW_TEXT_MAX, TRANSCRIPT_MESSAGES_MAX


def test_rows_page_shows_the_conversation_folded_beside_the_why(seeded):
    store, tracked = seeded
    run_id = tracked.runs()[-1]
    rows = tracked.open(run_id).rows("refunds")
    assert rows[0].messages is not None and rows[0].messages[2].tool_calls[0].name == "lookup_order"
    assert rows[0].messages[2].tool_calls[0].arguments == '{"order": 1000}'  # a dict encoded as JSON text
    c, _, _ = _signed_in(store)
    with c:
        page = c.get(f"/runs/{run_id}/evals/refunds", headers=HTML).text
    table = page.split('id="rows-table"')[1].split("</table>")[0]
    first = table.split("<tr class=")[1]
    assert '<details class="transcript" id="rows-table-t1">' in first
    assert "conversation: 5 turn(s), 1 tool call(s)" in first
    for role in ("system", "user", "assistant", "tool"):
        assert f'<li class="turn {role}">' in first
    assert '<details class="tool-call"><summary>calls <code>lookup_order</code> (c0)</summary>' in first
    assert '<details class="tool-result"><summary>result of c0: 18 chars</summary>' in first
    assert "matched the order" in first  # the grader's why beside it
    assert SCRIPT not in page and "&lt;script&gt;window.__pwned" in first
    assert table.count('class="transcript"') == 3  # only the rows that carry one
    ids = [p.split('"')[0] for p in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids))


def test_a_transcript_keeps_the_text_caps():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = wp.Example(ok=True, messages=[{"role": "user", "content": "x" * 7877},
                                            {"role": "assistant", "content": None, "tool_calls": [
                                                {"id": "a", "function": {"name": "f", "arguments": "y" * 5000}}]}])
    assert len(row.messages[0].content) == ROW_TEXT_MAX and "[... " in row.messages[0].content
    assert len(row.messages[1].tool_calls[0].arguments) == ROW_TEXT_MAX and row.messages[1].content == ""
    assert sum("over the cap" in str(w.message) for w in caught) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        long = wp.Example(ok=False, messages=[{"role": "user", "content": str(i)} for i in range(200)])
    assert len(long.messages) == TRANSCRIPT_MESSAGES_MAX
    assert long.messages[0].content == "0" and long.messages[-1].content == "199"
    assert any("turns cut" in m.content for m in long.messages)
    with pytest.raises(ValueError, match="role"):
        wp.Example(ok=True, messages=[{"role": "robot", "content": "hi"}])


def test_diff_page_pairs_the_seeded_versions(seeded):
    store, tracked = seeded
    c, _, _ = _signed_in(store)
    with c:
        runs_page = c.get(f"/agents/{AGENT}", headers=HTML).text
        link = f"/agents/{AGENT}/diff?behavior=refunds&amp;a=base&amp;b=sft-v1"
        assert link in runs_page
        page = c.get(link.replace("&amp;", "&"), headers=HTML)
        missing = c.get(f"/agents/{AGENT}/diff?behavior=refunds&a=base", headers=HTML)
    assert page.status_code == 200
    d = tracked.diff("refunds", "base", "sft-v1")
    # seeded rows carry no task: they pair on the prompt; base passes the first 74, sft the first 90
    assert (d.n_paired, len(d.improved), len(d.regressed), len(d.same)) == (120, 16, 0, 104)
    assert d.delta == pytest.approx(100 * 16 / 120)
    html = page.text
    assert 'id="diff-summary"' in html and "16 improved, 0 regressed, 104 same" in html
    assert '<details id="improved" open>' in html and '<details id="same">' in html
    assert missing.status_code == 422 and "query parameter &#39;b&#39; is required" in missing.text
