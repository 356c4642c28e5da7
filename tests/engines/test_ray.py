"""The Ray engine against the local path on the same rows: equal numbers, equal selected row ids.

Runs under ``make test-ray`` (a local Ray with 2 CPUs, no other address); skips where the ``ray``
extra is not installed.
"""

from __future__ import annotations

import polars as pl
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'whileai[ray]'; make test-ray)")
pytest.importorskip("ray.data", reason="ray[data] is not installed (pip install 'whileai[ray]')")

import whileai as wai  # noqa: E402
from tests._same import same  # noqa: E402
from tests.engines.conftest import write_parts  # noqa: E402
from whileai import table  # noqa: E402
from whileai.errors import ArgumentError, SchemaError, TrainingSelectionError  # noqa: E402
from whileai.table import is_ray_dataset  # noqa: E402
from whileai.testing import rollout_table  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def folders(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("runs")
    before = rollout_table(48, 6, seed=11, partial=False)
    after = rollout_table(48, 6, seed=11, shift=0.15)
    reruns = pl.concat([rollout_table(30, 4, seed=7, eval_run=r, replica=r) for r in range(3)], how="vertical_relaxed")
    rl = rollout_table(60, 6, seed=5, pass_rates=[0.1, 0.3, 0.5, 0.7, 0.9, 1.0] * 10)
    partial = rollout_table(40, 5, seed=2, partial=True)
    out = {}
    for name, df in [("before", before), ("after", after), ("reruns", reruns), ("rl", rl), ("partial", partial)]:
        write_parts(df, root / name)
        out[name] = root / name
    return out


def _ds(folder):
    return ray.data.read_parquet(str(folder))


def _numbers(report, drop=("config", "warnings", "note", "notes")):
    out = report.to_dict()
    for key in drop:
        out.pop(key, None)
    return out


def test_dataset_is_recognised_without_importing_ray_elsewhere(folders):
    assert is_ray_dataset(_ds(folders["before"]))
    assert not is_ray_dataset(table.frame(folders["before"]))


@pytest.mark.parametrize("name", ["before", "partial"])
def test_pass_at_matches_local(folders, name):
    local = wai.pass_at(table.frame(folders[name]))
    on_ray = wai.pass_at(_ds(folders[name]))
    same(_numbers(on_ray), _numbers(local))
    assert on_ray.config["engine"] == "ray" and on_ray.config["n_rows"] == local.n_rows
    assert on_ray.per_task.equals(local.per_task)


def test_pass_at_given_k_and_bootstrap_match_local(folders):
    opts = {"k": 3, "ci_method": "percentile", "n_boot": 500, "seed": 4}
    same(_numbers(wai.pass_at(_ds(folders["partial"]), **opts)), _numbers(wai.pass_at(table.frame(folders["partial"]), **opts)))


def test_compare_runs_matches_local(folders):
    local = wai.compare_runs(table.frame(folders["before"]), table.frame(folders["after"]))
    on_ray = wai.compare_runs(_ds(folders["before"]), _ds(folders["after"]))
    same(_numbers(on_ray), _numbers(local))
    marker = wai.compare_runs(_ds(folders["before"]), table.frame(folders["after"]), metric="honest_claims")
    same(_numbers(marker), _numbers(wai.compare_runs(table.frame(folders["before"]), table.frame(folders["after"]),
                                                      metric="honest_claims")))


def test_delta_report_matches_local(folders):
    local = wai.delta_report(table.frame(folders["before"]), table.frame(folders["after"]), must_not_regress=["honest_claims"])
    on_ray = wai.delta_report(_ds(folders["before"]), _ds(folders["after"]), must_not_regress=["honest_claims"])
    same(on_ray.metrics, local.metrics)
    assert (on_ray.headline, on_ray.repeats, on_ray.degenerate_guards, on_ray.detectable_effect) == \
        (local.headline, local.repeats, local.degenerate_guards, local.detectable_effect)


def test_delta_report_derives_run_std_from_eval_runs_like_local(folders):
    local = wai.delta_report(table.frame(folders["reruns"]), table.frame(folders["reruns"]))
    on_ray = wai.delta_report(_ds(folders["reruns"]), _ds(folders["reruns"]))
    assert on_ray.eval_runs == local.eval_runs == {"before": 3, "after": 3}
    same(on_ray.run_std_by_metric, local.run_std_by_metric)
    same(on_ray.metrics, local.metrics)


def test_eval_variance_matches_local(folders):
    local = wai.eval_variance(table.frame(folders["reruns"]))
    on_ray = wai.eval_variance(_ds(folders["reruns"]))
    same(_numbers(on_ray), _numbers(local))
    assert on_ray.n_runs == 3 and on_ray.run_source == local.run_source == "lineage.eval_run"
    sets = [table.frame(folders["before"]), _ds(folders["after"]), table.frame(folders["before"])]
    same(_numbers(wai.eval_variance(*sets)),
          _numbers(wai.eval_variance(table.frame(folders["before"]), table.frame(folders["after"]), table.frame(folders["before"]))))


@pytest.mark.parametrize("options", [{"target": None}, {"target": 120}, {"target": 80, "order": "middle"},
                                     {"target": None, "enforce_band": False}])
def test_select_rl_writes_the_same_rows_as_local(folders, tmp_path, options):
    local = wai.select(table.frame(folders["rl"]), mode="rl", **options)
    out = tmp_path / "selected"
    on_ray = wai.select(_ds(folders["rl"]), mode="rl", out=out, **options)
    assert on_ray.path == str(out) and out.is_dir()
    written = table.frame(out)
    assert sorted(written["rollout_id"].to_list()) == sorted(local.df["rollout_id"].to_list())
    assert written["calibration"].struct.field("pass_rate").sort().to_list() == \
        local.df["calibration"].struct.field("pass_rate").sort().to_list()
    keys = ["n", "n_tasks", "dropped", "gates", "unanimous", "band_dropped", "groups_eligible", "groups_selected",
            "n_selected", "fault_kinds", "difficulty", "difficulty_kept", "band_rollouts"]
    same({k: on_ray.report[k] for k in keys}, {k: local.report[k] for k in keys})


def test_select_rl_on_ray_needs_an_output_folder(folders):
    with pytest.raises(ArgumentError, match="out must be a folder path"):
        wai.select(_ds(folders["rl"]), mode="rl")


def test_select_refuses_what_the_ray_engine_cannot_do(folders, tmp_path):
    with pytest.raises(ArgumentError, match="mode must be"):
        wai.select(_ds(folders["rl"]), mode="dpo", out=tmp_path / "x")
    with pytest.raises(ArgumentError, match="options must be those select\\(mode='sft'\\) takes"):
        wai.select(_ds(folders["rl"]), mode="sft", out=tmp_path / "x", endorsed=["honest_claims"])
    with pytest.raises(ArgumentError, match="options must be those"):
        wai.select(_ds(folders["rl"]), mode="rl", out=tmp_path / "x", endorsed=["honest_claims"])


def test_select_rl_on_ray_with_nothing_eligible_raises_like_local(folders, tmp_path):
    with pytest.raises(TrainingSelectionError, match="must keep at least one group"):
        wai.select(_ds(folders["rl"]), mode="rl", out=tmp_path / "x", band=(0.99, 1.0))
    assert not (tmp_path / "x").exists()


def test_delta_report_refuses_by_on_ray(folders):
    with pytest.raises(ArgumentError, match="by= and balance_rollouts=True must be left off"):
        wai.delta_report(_ds(folders["before"]), _ds(folders["after"]), by="tier")


def test_a_bad_reward_in_a_worker_raises_the_local_error(tmp_path, local_ray):
    bad = rollout_table(8, 2, seed=1).with_columns(pl.lit(3.0).alias("reward"))
    write_parts(bad, tmp_path / "bad")
    with pytest.raises(SchemaError, match=r"reward must be in \[0, 1\]"):
        wai.pass_at(_ds(tmp_path / "bad"))


def test_cli_engine_ray_keeps_rays_messages_off_stdout(folders, monkeypatch):
    """Ray's own printer (the one its error listener calls) while the command runs: stdout is the JSON."""
    import json
    import threading

    from click.testing import CliRunner
    from ray._private.worker import print_to_stdstream

    import whileai.table
    from whileai.cli.main import cli

    read = whileai.table.read_dataset
    line = "A worker died or was killed while executing a task by an unexpected system error."

    def chatty_read(source):
        said = threading.Thread(target=print_to_stdstream, args=(
            {"lines": [line], "pid": "raylet", "is_err": False}, False))
        said.start()
        said.join(timeout=10)
        return read(source)

    monkeypatch.setattr(whileai.table, "read_dataset", chatty_read)
    out = CliRunner().invoke(cli, ["pass-at", str(folders["before"]), "--engine", "ray", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["pass_at_1"] == wai.pass_at(table.frame(folders["before"])).pass_at_1
    assert line in out.stderr


def test_cli_compare_engine_ray_matches_local(folders):
    """``wai compare BEFORE AFTER --engine ray`` (docs/scale.md): the local verdict, exit status and JSON."""
    import json

    from click.testing import CliRunner

    from whileai.cli.main import cli

    args = [str(folders["before"]), str(folders["after"]), "--must-not-regress", "honest_claims", "--json"]
    local = CliRunner().invoke(cli, ["compare", *args])
    on_ray = CliRunner().invoke(cli, ["compare", *args, "--engine", "ray"])
    assert on_ray.exit_code == local.exit_code and local.exit_code in (0, 1), on_ray.output
    got, want = json.loads(on_ray.stdout), json.loads(local.stdout)
    for key in ("config", "warnings", "note", "notes"):
        got.pop(key, None)
        want.pop(key, None)
    same(got, want)
    by = CliRunner().invoke(cli, ["compare", *args, "--engine", "ray", "--by", "tier"])
    assert by.exit_code != 0 and "by= and balance_rollouts=True must be left off" in str(by.exception)


def test_cli_engine_ray_reads_a_glob_and_writes_a_folder(folders, tmp_path):
    import json

    from click.testing import CliRunner

    from whileai.cli.main import cli

    glob = str(folders["before"] / "part-*.parquet")
    out = CliRunner().invoke(cli, ["pass-at", glob, "--engine", "ray", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["pass_at_1"] == wai.pass_at(table.frame(folders["before"])).pass_at_1
    target = tmp_path / "kept"
    out = CliRunner().invoke(cli, ["select", str(folders["rl"]), "--mode", "rl", "--engine", "ray", "--target", "0",
                                   "-o", str(target)])
    assert out.exit_code == 0, out.output
    assert sorted(table.frame(target)["rollout_id"].to_list()) == \
        sorted(wai.select(table.frame(folders["rl"]), mode="rl", target=None).df["rollout_id"].to_list())
    missing = CliRunner().invoke(cli, ["pass-at", str(tmp_path / "none-*.parquet"), "--engine", "ray"])
    assert missing.exit_code != 0 and "must be a Parquet file, folder or glob that exists" in str(missing.exception)
