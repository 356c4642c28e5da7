"""LeakReport.leaked and the selectors' LeakCheck.leaked are lists of typed rows (LeakedRow) that dump the dicts' JSON.

The literals are what ``leak_report`` and ``privileged_leaks`` wrote for these rows before the
entries were typed (pinned by running that code): same keys, same order, same values.
"""

from __future__ import annotations

import json

from tests.guard.test_leak import ROWS
from whileai import table
from whileai.guard import LeakedRow, LeakReport, leak_report
from whileai.selection._scans import LeakCheck, privileged_leaks

BARE = [{"prompt": "p", "final_text": "As noted: THE ENTITY DOES NOT EXIST here.", "reference": "the entity does not exist"}]

OLD_REPORT = {"rows": "{\"warnings\":[\"2 replies quote their own privileged context; the export scrubs the key, not the reply. Drop the rows in leaked (by index) before training.\"],\"n_rows\":4,\"n_checked\":3,\"n_leaked\":2,\"rate\":0.6666666666666666,\"checked\":true,\"leaked\":[{\"index\":0,\"scenario_id\":\"s1\",\"rollout_index\":0,\"field\":\"reference\",\"needle\":\"the entity does not exist\"},{\"index\":2,\"scenario_id\":\"s2\",\"rollout_index\":0,\"field\":\"world_state\",\"needle\":\"entity missing\"}],\"summary\":\"checked 3 of 4 rows: 2 quoted privileged context (67%)\"}",
              "bare": "{\"warnings\":[\"1 replies quote their own privileged context; the export scrubs the key, not the reply. Drop the rows in leaked (by index) before training.\"],\"n_rows\":1,\"n_checked\":1,\"n_leaked\":1,\"rate\":1.0,\"checked\":true,\"leaked\":[{\"index\":0,\"scenario_id\":null,\"rollout_index\":null,\"field\":\"reference\",\"needle\":\"the entity does not exist\"}],\"summary\":\"checked 1 of 1 rows: 1 quoted privileged context (100%)\"}"}
OLD_CHECK = {"rows": "{\"checked\":true,\"n_checked\":3,\"n_dropped\":2,\"leaked\":[{\"index\":0,\"scenario_id\":\"s1\",\"rollout_index\":0,\"field\":\"reference\",\"needle\":\"the entity does not exist\"},{\"index\":2,\"scenario_id\":\"s2\",\"rollout_index\":0,\"field\":\"world_state\",\"needle\":\"entity missing\"}]}",
             "bare": "{\"checked\":true,\"n_checked\":1,\"n_dropped\":1,\"leaked\":[{\"index\":0,\"scenario_id\":null,\"rollout_index\":null,\"field\":\"reference\",\"needle\":\"the entity does not exist\"}]}"}


def test_the_entries_are_typed_and_dump_what_the_dicts_were():
    for name, rows in (("rows", ROWS), ("bare", BARE)):
        report = leak_report(rows)
        assert report.leaked and all(isinstance(x, LeakedRow) for x in report.leaked)
        assert report.model_dump_json() == OLD_REPORT[name]
        assert json.loads(report.to_json()) == json.loads(OLD_REPORT[name])
        _, check = privileged_leaks(table.frame(rows, allow_empty=True), [])
        assert all(isinstance(x, LeakedRow) for x in check.leaked)
        assert check.model_dump_json() == OLD_CHECK[name]


def test_stored_reports_load_and_old_reads_read():
    for name in ("rows", "bare"):
        back = LeakReport.model_validate_json(OLD_REPORT[name])
        assert back.model_dump_json() == OLD_REPORT[name]
        assert LeakCheck.model_validate_json(OLD_CHECK[name]).model_dump_json() == OLD_CHECK[name]
    report = leak_report(ROWS)
    first = report.leaked[0]
    assert first["index"] == first.index == 0 and first.get("scenario_id") == "s1" and "needle" in first
    assert first == json.loads(OLD_REPORT["rows"])["leaked"][0]
    assert "  s1 r0: reference = 'the entity does not exist'" in str(report)
    assert "  row 0: reference = 'the entity does not exist'" in str(leak_report(BARE))
