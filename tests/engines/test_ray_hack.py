"""hack_scan on a Ray dataset against the local path on the same rows: the same report, number for number.

Runs under ``make test-ray`` (a local Ray with 2 CPUs, no other address); skips where the ``ray``
extra is not installed.
"""

from __future__ import annotations

import polars as pl
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'whileai[ray]'; make test-ray)")
pytest.importorskip("ray.data", reason="ray[data] is not installed (pip install 'whileai[ray]')")

import whileai as wai  # noqa: E402
import whileai.guard._hack as hk  # noqa: E402
from tests._same import same  # noqa: E402
from tests.engines.conftest import write_parts  # noqa: E402
from whileai import table  # noqa: E402
from whileai.errors import ArgumentError  # noqa: E402
from whileai.testing import rollout_table, word_table  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _planted(seed: int = 3) -> pl.DataFrame:
    """Conversations with tool calls, markers, a planted word shortcut, rows in no particular order."""
    df = rollout_table(40, 8, seed=seed, shortcut="zzq", shortcut_strength=0.9)
    outcome = r"resolved it\.|could not finish\."  # judge-readable outcome: only planted words track reward
    df = df.with_columns(
        pl.col("final_text").str.replace_all(outcome, "replied."),
        pl.col("messages").list.eval(pl.element().struct.with_fields(pl.field("content").str.replace_all(outcome, "replied."))),
    )
    return df.sample(fraction=1.0, shuffle=True, seed=seed)  # an ask's rows spread over every part


@pytest.fixture(scope="module")
def folders(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("hack")
    out = {}
    for name, df in [("planted", _planted()), ("words", word_table(20, 8, seed=4, shortcut=0.5))]:
        write_parts(df, root / name)
        out[name] = root / name
    return out


def _ds(folder):
    return ray.data.read_parquet(str(folder))


@pytest.mark.parametrize("name", ["planted", "words"])
def test_hack_scan_on_ray_matches_local(folders, name):
    opts = {"endorsed": ["marker:"], "n_perm": 40, "seed": 5}
    local = wai.hack_scan(table.frame(folders[name]), **opts)
    on_ray = wai.hack_scan(_ds(folders[name]), **opts)
    same(on_ray.model_dump(), local.model_dump())
    want = "contains:zzq" if name == "planted" else "contains:w00"
    assert on_ray.top_feature == want and on_ray.features[0].above_floor


def test_hack_scan_on_ray_matches_local_under_rays_default_shuffle(folders, monkeypatch):
    """The session runs the sort-based shuffle (fast on a 2-CPU Ray); the engine must also run under
    Ray's own default (hash-based, aggregator actors), which a user who sets nothing gets."""
    from ray.data.context import DEFAULT_SHUFFLE_STRATEGY

    monkeypatch.setattr(ray.data.DataContext.get_current(), "shuffle_strategy", DEFAULT_SHUFFLE_STRATEGY)
    opts = {"endorsed": ["marker:"], "n_perm": 40, "seed": 5}
    local = wai.hack_scan(table.frame(folders["words"]), **opts)
    same(wai.hack_scan(_ds(folders["words"]), **opts).model_dump(), local.model_dump())


def test_sampled_vocabulary_on_ray_matches_local(folders, monkeypatch):
    monkeypatch.setattr(hk, "HACK_VOCAB_SAMPLE_ROWS", 120)  # the driver's constant; the asks are picked by hash
    import whileai.guard._ray as gr

    monkeypatch.setattr(gr, "HACK_VOCAB_SAMPLE_ROWS", 120)
    local = wai.hack_scan(table.frame(folders["planted"]), n_perm=20)
    on_ray = wai.hack_scan(_ds(folders["planted"]), n_perm=20)
    same(on_ray.model_dump(), local.model_dump())


def test_user_features_run_in_the_workers(folders):
    feats = {"says_zzq": lambda row: "zzq" in (row.get("final_text") or "")}
    local = wai.hack_scan(table.frame(folders["planted"]), features=feats, auto=False, n_perm=20)
    on_ray = wai.hack_scan(_ds(folders["planted"]), features=feats, auto=False, n_perm=20)
    same(on_ray.model_dump(), local.model_dump())
    assert local.top_feature == "says_zzq"


def test_a_feature_that_raises_in_a_worker_names_the_feature(folders):
    def boom(row):
        raise ValueError("no")

    with pytest.raises(ArgumentError, match="feature 'boom' raised ValueError"):
        wai.hack_scan(_ds(folders["planted"]), features={"boom": boom}, n_perm=5)


def test_a_feature_ray_cannot_ship_is_refused_with_the_fix(folders):
    import threading

    lock = threading.Lock()

    def locked(row):
        with lock:
            return 1.0

    with pytest.raises(ArgumentError, match=r"features\['locked'\] must be a function Ray can ship"):
        wai.hack_scan(_ds(folders["planted"]), features={"locked": locked}, n_perm=5)


def test_ungraded_dataset_says_grade_first(tmp_path, local_ray):
    folder = tmp_path / "ungraded"
    folder.mkdir()
    rollout_table(5, 4, seed=1).drop("reward").write_parquet(folder / "part-000.parquet")
    r = wai.hack_scan(_ds(folder))
    assert r.n_rows == 20 and r.n_graded == 0 and "grade first" in r.warnings[0]


def test_cli_engine_ray(folders):
    import json

    from click.testing import CliRunner

    from whileai.cli.main import cli

    # the local run first: a message Ray's driver prints late lands on whatever sys.stdout is then,
    # and a local command's stdout is not kept from Ray (tests/cli/test_engine_stdout.py)
    local = CliRunner().invoke(cli, ["hack-scan", str(folders["words"]), "--json"])
    assert local.exit_code == 0, local.output
    res = CliRunner().invoke(cli, ["hack-scan", str(folders["words"]), "--engine", "ray", "--json"])
    assert res.exit_code == 0, res.output
    # stdout only: Ray's messages go to stderr while it runs
    assert json.loads(res.stdout)["features"] == json.loads(local.stdout)["features"]
