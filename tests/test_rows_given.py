"""'Rows given' has one name, ``n_rows``; reports stored under the old ``n`` still load and read (issue 41)."""

from __future__ import annotations

import json

import pytest

from whileai.exporters._report import ExportReport, PreferenceExportReport
from whileai.guard import dedupe_groups, length_report, refusal_report
from whileai.guard._decontam import ContaminationReport
from whileai.guard._hygiene import DedupeReport, LengthReport
from whileai.guard._style import RefusalReport, StyleReport
from whileai.guard._trace import TraceFlagReport
from whileai.testing import rollout_table

# what these reports serialised to before the rename (captured from the code before it, rollout_table(4, 2, seed=0))
OLD_DEDUPE = {"warnings": [], "n": 8, "n_kept": 8, "n_dropped": 0, "groups_affected": 0, "duplicate_rate": 0.0,
              "conflicting_rewards": 0}
OLD_LENGTH = {"warnings": [], "n": 8, "median_chars": 269.5, "max_chars": 606, "n_truncated": 0, "n_groups_multi": 4,
              "n_groups_wide_spread": 0, "max_spread": 4.0}
OLD_REFUSAL = {"warnings": ["the refusal rate is the same (0%) on every row, so it has no interval."], "n": 8,
               "n_refused": 0, "refusal_rate": 0.0, "ci95": None, "answered_rate": 1.0, "top_phrases": [], "examples": []}

RENAMED = [ExportReport, PreferenceExportReport, ContaminationReport, DedupeReport, LengthReport, StyleReport,
           RefusalReport, TraceFlagReport]


def renamed(old: dict) -> dict:
    """The old dict with ``n`` renamed ``n_rows`` in its place (key order kept)."""
    return {("n_rows" if k == "n" else k): v for k, v in old.items()}


@pytest.mark.parametrize(("make", "old"), [
    (lambda df: dedupe_groups(df).report, OLD_DEDUPE),
    (length_report, OLD_LENGTH),
    (refusal_report, OLD_REFUSAL),
])
def test_the_report_writes_n_rows_where_it_wrote_n(make, old):
    report = make(rollout_table(4, 2, seed=0))
    assert report.to_dict() == renamed(old)
    assert list(report.to_dict()) == list(renamed(old))  # the key keeps its place
    assert json.loads(report.model_dump_json()) == renamed(old)


@pytest.mark.parametrize(("model", "old"), [(DedupeReport, OLD_DEDUPE), (LengthReport, OLD_LENGTH),
                                             (RefusalReport, OLD_REFUSAL)])
def test_a_report_stored_with_n_loads_and_reads_under_both_names(model, old):
    report = model.model_validate(old)
    assert report.n_rows == 8 and report.n == 8 and report["n"] == 8 and report["n_rows"] == 8
    assert "n" in report and "n" not in report.keys()
    assert report.to_dict() == renamed(old)
    again = model.model_validate_json(json.dumps(old))
    assert again == report


@pytest.mark.parametrize("model", RENAMED)
def test_every_renamed_report_takes_either_name(model):
    assert model(n_rows=5).n == 5
    assert model.model_validate({"n": 7}).n_rows == 7
    assert model.model_validate({"n_rows": 9})["n"] == 9
    dumped = model(n_rows=3).to_dict()
    assert dumped["n_rows"] == 3 and "n" not in dumped
    with pytest.raises(KeyError):
        model()["not_a_field"]
