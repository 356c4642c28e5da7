"""The Ray engine's row outputs against the local path: decontaminate, select(mode="sft"), export.

Each call runs on one generated Parquet folder with both engines: the same counts, the same
report, the same row ids in the folder the workers wrote. Runs under ``make test-ray`` (a local
Ray with 2 CPUs, no other address); skips where the ``ray`` extra is not installed.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'whileai[ray]'; make test-ray)")
pytest.importorskip("ray.data", reason="ray[data] is not installed (pip install 'whileai[ray]')")

import whileai as wai  # noqa: E402
from tests._same import same  # noqa: E402
from tests.engines.conftest import PARTS, write_parts  # noqa: E402
from whileai import table  # noqa: E402
from whileai.errors import ArgumentError, TrainingSelectionError  # noqa: E402
from whileai.testing import rollout_table  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _words(rng: np.random.Generator, n: int) -> list[str]:
    vocab = [f"w{i}" for i in range(40)]
    return [str(w) for w in rng.choice(vocab, n)]


def _contaminated_rows(seed: int = 3) -> tuple[pl.DataFrame, list[dict[str, str]]]:
    """Training rows over 4 parts with every kind of hit, and the eval rows they are checked against.

    Eval texts share a template sentence (more eval texts than the rare-n-gram cut, so its
    n-grams are frequent); rows copy eval texts verbatim, nearly (one word changed at the end)
    or share only the template, and some share an eval task id.
    """
    rng = np.random.default_rng(seed)
    template = "please tell me about the state of my account and what happens next"
    evals = [{"task_id": f"ev-{i}", "prompt": f"{template} {' '.join(_words(rng, 14))}"} for i in range(60)]
    base = rollout_table(50, 4, seed=seed)
    prompts, tasks = [], []
    for i in range(base.height):
        kind = i % 7
        src = evals[int(rng.integers(0, len(evals)))]["prompt"]
        if kind == 0:
            prompts.append(src.upper())  # exact: case ignored
        elif kind == 1:
            prompts.append(" ".join(src.split()[:-1] + ["zzz"]))  # near: 27 of 28 words covered
        elif kind == 2:
            prompts.append(f"{template} {' '.join(_words(rng, 14))}")  # the template only: clean
        else:
            prompts.append(" ".join(_words(rng, 20)))
        tasks.append(f"ev-{i % 60}" if i % 23 == 5 else base["scenario_id"][i])
    rows = base.with_columns(pl.Series("prompt", prompts), pl.Series("scenario_id", tasks),
                             pl.Series("task_id", tasks))
    return rows, evals


@pytest.fixture(scope="module")
def folders(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("rows")
    dirty, evals = _contaminated_rows()
    sft = rollout_table(40, 6, seed=9, partial=True)
    out = {"evals": evals}
    for name, df in [("dirty", dirty), ("sft", sft), ("export", rollout_table(30, 4, seed=4))]:
        write_parts(df, root / name)
        out[name] = root / name
    return out


def _ds(folder, blocks=None):
    ds = ray.data.read_parquet(str(folder))
    return ds if blocks is None else ds.repartition(blocks)  # small files are read as one block


# ---- decontaminate -------------------------------------------------------------------------------


@pytest.mark.parametrize("fields", [("prompt",), ("prompt", "final_text")])
def test_decontaminate_matches_local(folders, tmp_path, fields):
    local_clean, local = wai.decontaminate(table.frame(folders["dirty"]), eval=folders["evals"], fields=fields)
    out = tmp_path / "clean"
    path, on_ray = wai.decontaminate(_ds(folders["dirty"], PARTS), eval=folders["evals"], fields=fields, out=out)
    assert path == str(out) and out.is_dir()
    assert local.n_same_task > 0 and local.n_exact > 0 and local.n_near > 0  # every rule is exercised
    written = table.frame(out)
    assert written["rollout_id"].to_list() == local_clean["rollout_id"].to_list()  # the same rows, in order
    a, b = on_ray.to_dict(), local.to_dict()
    a.pop("notes"), b.pop("notes")
    same(a, b)
    assert sorted(p.name for p in out.iterdir()) == [f"part-{i:05d}.parquet" for i in range(PARTS)]


def test_decontaminate_on_ray_examples_count_rows_from_the_start(folders, tmp_path):
    _, local = wai.decontaminate(table.frame(folders["dirty"]), eval=folders["evals"], examples=200)
    _, on_ray = wai.decontaminate(_ds(folders["dirty"], PARTS), eval=folders["evals"], examples=200, out=tmp_path / "c")
    assert len(local.examples) == local.n_contaminated and max(e["index"] for e in local.examples) > 150  # every part
    same(on_ray.examples, local.examples)


def test_decontaminate_on_ray_refuses_what_it_cannot_do(folders, tmp_path):
    with pytest.raises(ArgumentError, match="out must be a folder path"):
        wai.decontaminate(_ds(folders["dirty"]), eval=folders["evals"])
    with pytest.raises(ArgumentError, match="embedder must be left off for a Ray dataset"):
        wai.decontaminate(_ds(folders["dirty"]), eval=folders["evals"], out=tmp_path / "x",
                          embedder=lambda texts: [[1.0]] * len(texts))
    with pytest.raises(ArgumentError, match="fields must name text fields the training rows have"):
        wai.decontaminate(_ds(folders["dirty"]), eval=folders["evals"], out=tmp_path / "y", fields=("nope",))
    assert not (tmp_path / "y").exists()


# ---- select(mode="sft") --------------------------------------------------------------------------

_SFT_KEYS = ("n", "n_ungraded", "n_not_pass", "n_junk", "n_eligible", "n_selected", "prompts", "prompts_eligible",
             "completions_per_prompt_max", "completions_per_prompt_mean", "completions_per_prompt_median",
             "prompts_with_one_completion", "selection_effective", "reward_mean_eligible", "reward_mean_selected",
             "eval_sourced", "privileged_leaks_dropped", "privileged_leaks", "note", "target", "k", "selection")


@pytest.mark.parametrize("options", [{}, {"target": 25}, {"select": "top_k_overall", "k": 50},
                                     {"select": "random_per_prompt", "target": 30, "seed": 5},
                                     {"select": "random_k_overall", "k": 40}, {"min_reward": 0.5, "target": 12}])
def test_select_sft_writes_the_same_rows_as_local(folders, tmp_path, options):
    local = wai.select(table.frame(folders["sft"]), mode="sft", **options)
    out = tmp_path / "sft"
    on_ray = wai.select(_ds(folders["sft"], PARTS), mode="sft", out=out, **options)
    assert on_ray.path == str(out) and out.is_dir()
    assert sorted(table.frame(out)["rollout_id"].to_list()) == sorted(local.df["rollout_id"].to_list())
    same({k: on_ray.report[k] for k in _SFT_KEYS}, {k: local.report[k] for k in _SFT_KEYS})


def test_select_sft_ties_do_not_depend_on_row_order(folders):
    df = table.frame(folders["sft"])
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=1)
    for options in ({}, {"select": "random_k_overall", "k": 30}):
        a = wai.select(df, mode="sft", target=20, **options).df["rollout_id"].sort().to_list()
        b = wai.select(shuffled, mode="sft", target=20, **options).df["rollout_id"].sort().to_list()
        assert a == b


def test_select_sft_tie_break_is_a_fair_seeded_draw(folders):
    """Among tied completions each is picked about equally often over seeds (a chi-square check)."""
    from scipy import stats

    rows = [{"task_id": "t", "prompt": "same ask", "rollout_id": f"r{i}", "final_text": "done", "reward": 1.0}
            for i in range(4)]
    picks = [wai.select(rows, mode="sft", seed=s).df["rollout_id"][0] for s in range(400)]
    counts = [picks.count(f"r{i}") for i in range(4)]
    assert stats.chisquare(counts).pvalue > 0.001, counts


def test_select_sft_on_ray_raises_like_local(folders, tmp_path):
    with pytest.raises(TrainingSelectionError, match="min_reward must be met by at least one graded row"):
        wai.select(_ds(folders["sft"]), mode="sft", out=tmp_path / "x", min_reward=2.0)
    assert not (tmp_path / "x").exists()
    with pytest.raises(ArgumentError, match="out must be a folder path"):
        wai.select(_ds(folders["sft"]), mode="sft")
    with pytest.raises(ArgumentError, match="select must be"):
        wai.select(_ds(folders["sft"]), mode="sft", out=tmp_path / "y", select="best")
    with pytest.raises(ArgumentError, match="options must be those select"):
        wai.select(_ds(folders["sft"]), mode="sft", out=tmp_path / "y", band=(0.1, 0.9))


# ---- export --------------------------------------------------------------------------------------


def _lines(folder) -> list[dict]:
    parts = sorted(folder.glob("part-*.jsonl"))
    return [json.loads(line) for p in parts for line in p.read_text().splitlines() if line]


@pytest.mark.parametrize("options", [{}, {"format": "trl"}, {"unroll": True}, {"system_prompt": "Be brief."},
                                     {"format": "trl", "mask_mode": "final"}])
def test_export_writes_the_same_lines_as_local(folders, tmp_path, options):
    local_file = tmp_path / "local.jsonl"
    local = wai.export(table.frame(folders["export"]), local_file, **options)
    out = tmp_path / "exported"
    on_ray = wai.export(_ds(folders["export"], PARTS), out, **options)
    assert on_ray.path == str(out)
    assert len(list(out.glob("part-*.jsonl"))) > 1  # written from the workers, block by block
    expected = [json.loads(line) for line in local_file.read_text().splitlines()]
    assert _lines(out) == expected  # the same rows, in the same order, encoded alike
    a, b = on_ray.to_dict(), local.to_dict()
    a.pop("path"), b.pop("path")
    same(a, b)


def test_export_on_ray_refuses_a_broken_tool_call_and_leaves_nothing(tmp_path, local_ray):
    df = rollout_table(6, 2, seed=1)
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{bad"}}
    rows = [{"scenario_id": r["scenario_id"], "rollout_id": r["rollout_id"], "reward": r["reward"],
             "messages": [{"role": "user", "content": "find it"},
                          {"role": "assistant", "content": "", "tool_calls": [call] if i == 7 else []},
                          {"role": "assistant", "content": "done"}]} for i, r in enumerate(df.iter_rows(named=True))]
    (tmp_path / "src").mkdir()
    pl.DataFrame(rows).write_parquet(tmp_path / "src" / "rows.parquet")
    with pytest.raises(TrainingSelectionError, match=r"tool_call_roundtrip: 1 of 1 tool calls .*rows 7\)"):
        wai.export(_ds(tmp_path / "src", 3), tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ArgumentError, match="out must be a folder path"):
        wai.export(_ds(tmp_path / "src"))


# ---- the command line ----------------------------------------------------------------------------


def test_cli_engine_ray_for_decontaminate_select_sft_and_export(folders, tmp_path):
    from click.testing import CliRunner

    from whileai.cli.main import cli

    evals = tmp_path / "evals.jsonl"
    evals.write_text("".join(json.dumps(r) + "\n" for r in folders["evals"]))
    clean = tmp_path / "clean"
    out = CliRunner().invoke(cli, ["decontaminate", str(folders["dirty"]), "--eval", str(evals), "--engine", "ray",
                                   "-o", str(clean), "--json"])
    assert out.exit_code == 0, out.output
    local_clean, local = wai.decontaminate(table.frame(folders["dirty"]), eval=str(evals))
    assert json.loads(out.stdout)["n_contaminated"] == local.n_contaminated
    assert table.frame(clean)["rollout_id"].to_list() == local_clean["rollout_id"].to_list()
    kept = tmp_path / "kept"
    out = CliRunner().invoke(cli, ["select", str(folders["sft"]), "--mode", "sft", "--engine", "ray", "--target", "20",
                                   "-o", str(kept)])
    assert out.exit_code == 0, out.output
    assert sorted(table.frame(kept)["rollout_id"].to_list()) == \
        sorted(wai.select(table.frame(folders["sft"]), mode="sft", target=20).df["rollout_id"].to_list())
    exported = tmp_path / "train"
    out = CliRunner().invoke(cli, ["export", str(folders["export"]), "--engine", "ray", "-o", str(exported), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["n_written"] == wai.export(table.frame(folders["export"]), tmp_path / "t.jsonl").n_written
    assert len(_lines(exported)) == json.loads(out.stdout)["n_written"]


def test_select_sft_on_ray_drops_and_reports_privileged_leaks_like_local(tmp_path, local_ray):
    base = rollout_table(12, 4, seed=6, partial=False)
    key = "the refund code is ZX-4471-QQ"
    leak = [i % 9 == 4 for i in range(base.height)]
    rows = base.with_columns(
        pl.Series("reference", [key] * base.height),
        pl.Series("final_text", [f"done, {key}" if hit else text for hit, text in zip(leak, base["final_text"])]),
    ).drop("messages")
    write_parts(rows, tmp_path / "leaky")
    local = wai.select(table.frame(tmp_path / "leaky"), mode="sft")
    on_ray = wai.select(_ds(tmp_path / "leaky", PARTS), mode="sft", out=tmp_path / "out")
    assert local.report.privileged_leaks_dropped > 0
    same({k: on_ray.report[k] for k in _SFT_KEYS}, {k: local.report[k] for k in _SFT_KEYS})
    assert sorted(table.frame(tmp_path / "out")["rollout_id"].to_list()) == sorted(local.df["rollout_id"].to_list())
