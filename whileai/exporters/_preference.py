"""``export_preference``: preference pairs for DPO-style trainers (OpenAI, TRL, Fireworks shapes)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from whileai import table
from whileai._checks import check_choice
from whileai.defaults import EXPORT_EXAMPLES, PARQUET_SUFFIXES, SCHEMA_VERSION
from whileai.errors import EmptyInputError, SchemaError, TrainingSelectionError
from whileai.exporters._encode import (
    Encoding,
    field_piece,
    json_arguments,
    message_json,
    valid_object,
)
from whileai.exporters._output import is_parquet, writing
from whileai.exporters._report import PreferenceExportReport, ToolCallRoundtrip
from whileai.exporters._tools import resolve_tools
from whileai.stats import length_confound
from whileai.table import IntoRows, meta_of, open_binary
from whileai.table import normalize as nz
from whileai.table.schema import MESSAGE, TOOL_CALL

__all__ = ["export_preference", "preference_rows"]

PREFERENCE_FORMATS: tuple[str, ...] = ("openai", "trl", "fireworks")
_MESSAGES = pl.List(MESSAGE)
_SIDES = ("chosen", "rejected")


def _pairs_frame(pairs: Any) -> pl.DataFrame:
    """Pairs as a DataFrame with ``chosen``/``rejected`` as message lists."""
    df = getattr(pairs, "df", None)
    if not isinstance(df, pl.DataFrame):
        if isinstance(pairs, pl.DataFrame):
            df = pairs
        elif isinstance(pairs, (str, os.PathLike)):
            from whileai.table import read_jsonl_rows

            path = Path(pairs)
            if path.name.lower().endswith(PARQUET_SUFFIXES):
                df = pl.read_parquet(path)
            else:
                with open(path, encoding="utf-8") as handle:
                    df = _from_dicts(read_jsonl_rows(handle, f"file {str(path)!r}"))
        elif isinstance(pairs, Mapping):
            raise SchemaError("pairs must be a list of pair dicts, a DataFrame or a PreferencePairs object, got one dict. "
                              "Wrap it in a list.")
        else:
            df = _from_dicts(list(pairs))
    if df.height == 0:
        raise EmptyInputError("pairs holds no pairs. Build them with build_preference_pairs(rows) first.")
    missing = [c for c in _SIDES if c not in df.columns]
    if missing:
        raise SchemaError(
            f"pairs must have columns chosen and rejected (message lists), got {', '.join(df.columns[:12])}. "
            "Pass the output of build_preference_pairs.", column=missing[0],
        )
    fixes = []
    for side in _SIDES:
        if df.schema[side] != _MESSAGES:
            values = [nz.normalize_messages(_side_messages(v)) for v in df[side].to_list()]
            fixes.append(pl.Series(side, values, dtype=_MESSAGES))
    return df.with_columns(fixes) if fixes else df


def _side_messages(value: Any) -> Any:
    if isinstance(value, str):
        decoded = nz.loads_or_raw(value)
        return decoded if isinstance(decoded, list) else [{"role": "assistant", "content": value}]
    return value


def _from_dicts(rows: list[Any]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame()
    out: dict[str, list[Any]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise SchemaError(f"pair {i} is a {type(row).__name__}, not a dict. Pass one dict per pair.", row=i)
        for key in row:
            out.setdefault(key, [None] * i)
        for key, values in out.items():
            values.append(row.get(key))
    series = []
    for key, values in out.items():
        if key in _SIDES:
            series.append(pl.Series(key, [nz.normalize_messages(_side_messages(v)) for v in values], dtype=_MESSAGES))
        else:
            try:
                series.append(pl.Series(key, values, strict=False))
            except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):  # mixed or nested values
                series.append(pl.Series(key, [None if v is None else nz.dumps(v) for v in values], dtype=pl.String))
    return pl.DataFrame(series)


def _flat_side(df: pl.DataFrame, side: str) -> pl.DataFrame:
    """One row per message of one side, with the ask and system prompt put first where missing."""
    msgs = pl.col(side)
    first = msgs.list.first().struct.field("role").fill_null("")
    base = df.select(
        "_p", "_sys", "_ask", msgs.alias("messages"),
        (pl.col("_ask").is_not_null() & ~msgs.list.eval(pl.element().struct.field("role") == "user").list.any()
         .fill_null(False)).alias("_need_user"),
        (pl.col("_sys").is_not_null() & (first != "system")).alias("_need_sys"),
    )
    flat = (
        base.select("_p", "messages", pl.int_ranges(0, pl.col("messages").list.len(), dtype=pl.Int64).alias("_pos"))
        .explode(["messages", "_pos"]).filter(pl.col("_pos").is_not_null()).unnest("messages")
    )
    extra = []
    for flag, role, content, pos in (("_need_sys", "system", "_sys", -2), ("_need_user", "user", "_ask", -1)):
        extra.append(base.filter(pl.col(flag)).select(
            "_p", pl.lit(role).alias("role"), pl.col(content).alias("content"), pl.lit(None, pl.String).alias("name"),
            pl.lit(None, pl.String).alias("tool_call_id"), pl.lit([], pl.List(TOOL_CALL)).alias("tool_calls"),
            pl.lit(None, pl.String).alias("extra"), pl.lit(pos, pl.Int64).alias("_pos"),
        ))
    flat = pl.concat([flat.select(extra[0].columns), *extra], how="vertical").sort(["_p", "_pos"])
    return flat.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over("_p").alias("_i"))


def _build(df: pl.DataFrame, fmt: str, *, drop_ties: bool, sys_prompt: str | None, tools_json: str | None,
           counts: dict[str, Any]) -> pl.DataFrame:
    """One JSON line per written pair (column ``line``); fills ``counts``."""
    cols = set(df.columns)
    ask = pl.col("prompt").cast(pl.String) if "prompt" in cols and df.schema["prompt"] == pl.String else pl.lit(None, pl.String)
    sys_expr = (pl.lit(sys_prompt, pl.String) if sys_prompt is not None
                else pl.col("system_prompt").cast(pl.String) if "system_prompt" in cols else pl.lit(None, pl.String))
    tools_expr = (pl.lit(tools_json, pl.String) if tools_json is not None
                  else pl.col("tools").cast(pl.String) if "tools" in cols and df.schema["tools"] == pl.String
                  else pl.lit(None, pl.String))
    reward = {s: pl.col(f"{s}_reward").cast(pl.Float64) if f"{s}_reward" in cols else pl.lit(None, pl.Float64)
              for s in _SIDES}
    margin = pl.col("margin").cast(pl.Float64) if "margin" in cols else reward["chosen"] - reward["rejected"]
    key = pl.col("task_key").cast(pl.String) if "task_key" in cols else (
        pl.col("scenario_id").cast(pl.String) if "scenario_id" in cols else pl.lit(None, pl.String))
    df = df.select(pl.int_range(pl.len(), dtype=pl.Int64).alias("_p"), "chosen", "rejected", ask.alias("_ask"),
                   sys_expr.alias("_sys"), tools_expr.alias("_tools"), reward["chosen"].alias("chosen_reward"),
                   reward["rejected"].alias("rejected_reward"), margin.alias("margin"), key.alias("task_key"))
    counts["n"] = df.height
    if drop_ties:
        ties = (pl.col("margin").is_not_null() & (pl.col("margin") == 0))
        counts["ties"] = int(df.select(ties.sum()).item())
        df = df.filter(~ties)
    encoding: Encoding = "dict" if fmt == "trl" else "json_string"
    flats = {s: _flat_side(df, s) for s in _SIDES}
    for s in _SIDES:
        flats[s] = flats[s].with_columns(
            message_json(encoding).alias("_m"),
            pl.col("tool_calls").list.len().fill_null(0).cast(pl.Int64).alias("_calls"),
            pl.col("tool_calls").list.eval((~valid_object(pl.element().struct.field("arguments").fill_null("{}")))
                                           .cast(pl.Int64)).list.sum().fill_null(0).alias("_bad"),
        )
    # where the sides first differ: compare message by message (role, content, name, ids, calls)
    same = ["role", "content", "name", "tool_call_id", "tool_calls"]
    c, r = flats["chosen"], flats["rejected"]
    both = c.select("_p", "_i", *same).join(r.select("_p", "_i", *same), on=["_p", "_i"], how="inner", suffix="_r")
    eq = pl.all_horizontal([pl.col(f).eq_missing(pl.col(f"{f}_r")) for f in same])
    lens = {s: flats[s].group_by("_p").agg(pl.len().cast(pl.Int64).alias(f"_len_{s}")) for s in _SIDES}
    diverge = both.filter(~eq).group_by("_p").agg(pl.col("_i").min().alias("_d"))
    info = (df.select("_p").join(lens["chosen"], on="_p", how="left").join(lens["rejected"], on="_p", how="left")
            .join(diverge, on="_p", how="left")
            .with_columns(pl.coalesce("_d", pl.min_horizontal("_len_chosen", "_len_rejected")).alias("_d")))
    role_at = {s: flats[s].join(info.select("_p", "_d"), on="_p").filter(pl.col("_i") == pl.col("_d"))
               .select("_p", pl.col("role").alias(f"_role_{s}")) for s in _SIDES}
    info = info.join(role_at["chosen"], on="_p", how="left").join(role_at["rejected"], on="_p", how="left")
    identical = (pl.col("_d") >= pl.col("_len_chosen")) & (pl.col("_d") >= pl.col("_len_rejected"))
    counts["identical"] = int(info.select(identical.sum()).item())
    info = info.filter(~identical)
    first_asst = c.filter(pl.col("role") == "assistant").group_by("_p").agg(pl.col("_i").min().alias("_fa"))
    info = info.join(first_asst, on="_p", how="left")
    one_turn = fmt != "openai"
    if one_turn:
        contrast = (pl.col("_role_chosen") == "assistant") & (pl.col("_role_rejected") == "assistant")
        counts["no_one_turn_contrast"] = int(info.select((~contrast.fill_null(False)).sum()).item())
        info = info.filter(contrast.fill_null(False))
        cut = (pl.col("_len_chosen") > pl.col("_d") + 1) | (pl.col("_len_rejected") > pl.col("_d") + 1)
        counts["turns_cut"] = int(info.select(cut.sum()).item())
    counts["first_turn_identical"] = int(info.select((pl.col("_fa") < pl.col("_d")).sum()).item())
    df = df.join(info.select("_p", "_d"), on="_p", how="inner", maintain_order="left")
    counts["pairs"] = df.height
    counts["chosen_longer"] = int(df.select((table.pair_length_delta() > 0).sum()).item())

    def joined(flat: pl.DataFrame, cond: pl.Expr, name: str) -> pl.DataFrame:
        return (flat.join(df.select("_p", "_d"), on="_p", how="inner").filter(cond)
                .group_by("_p", maintain_order=True).agg(pl.col("_m").str.join(",").alias(name),
                                                         pl.col("_calls").sum().alias(f"_calls_{name}"),
                                                         pl.col("_bad").sum().alias(f"_bad_{name}")))

    d, i = pl.col("_d"), pl.col("_i")
    if one_turn:
        parts = {"_prefix": joined(c, i < d, "_prefix"), "_chosen": joined(c, i == d, "_chosen"),
                 "_rejected": joined(r, i == d, "_rejected")}
    else:
        parts = {"_chosen": joined(c, pl.lit(True), "_chosen"), "_rejected": joined(r, pl.lit(True), "_rejected")}
    for part in parts.values():
        df = df.join(part, on="_p", how="left", maintain_order="left")
    names = list(parts)
    calls = sum((df[f"_calls_{n}"].fill_null(0).sum() for n in names), 0)
    bad = sum((df[f"_bad_{n}"].fill_null(0).sum() for n in names), 0)
    bad_rows = df.filter(pl.any_horizontal([pl.col(f"_bad_{n}").fill_null(0) > 0 for n in names]))["_p"]
    counts.update(calls=int(calls), bad=int(bad), bad_rows=[int(x) for x in bad_rows.head(EXPORT_EXAMPLES).to_list()])
    counts["margin_sum"] = float(df["margin"].fill_nan(None).sum() or 0.0)
    counts["margin_n"] = int(df["margin"].fill_nan(None).count())
    return df.select(pl.concat_str(_line(fmt)).alias("line"))


def _line(fmt: str) -> list[pl.Expr]:
    empty = pl.lit("")
    if fmt == "fireworks":
        head = [pl.lit('{"input":{"messages":['), pl.col("_prefix").fill_null(empty), pl.lit("]"),
                field_piece("tools", pl.col("_tools"), raw=True), pl.lit('},"preferred_output":['), pl.col("_chosen"),
                pl.lit('],"non_preferred_output":['), pl.col("_rejected"), pl.lit("]")]
    elif fmt == "trl":
        head = [pl.lit('{"prompt":['), pl.col("_prefix").fill_null(empty), pl.lit('],"chosen":['), pl.col("_chosen"),
                pl.lit('],"rejected":['), pl.col("_rejected"), pl.lit("]"), field_piece("tools", pl.col("_tools")),
                field_piece("prompt_text", pl.col("_ask"))]
    else:
        head = [pl.lit("{"), field_piece("prompt", pl.col("_ask").fill_null(empty), first=True),
                pl.lit(',"chosen":['), pl.col("_chosen"), pl.lit('],"rejected":['), pl.col("_rejected"), pl.lit("]"),
                field_piece("tools", pl.col("_tools"), raw=True)]
    tail = [field_piece(n, pl.col(n).fill_nan(None)) for n in ("chosen_reward", "rejected_reward", "margin")]
    tail += [field_piece("task_key", pl.col("task_key")), pl.lit(f',"schema_version":{json.dumps(SCHEMA_VERSION)}'),
             pl.lit("}")]
    return head + tail


def _run(pairs: Any, fmt: str, *, drop_ties: bool, validate: bool, system_prompt: str | None, tools: Any
         ) -> tuple[pl.DataFrame, PreferenceExportReport]:
    check_choice("format", fmt, PREFERENCE_FORMATS)
    meta = meta_of(pairs)
    df = _pairs_frame(pairs)
    sys_prompt = system_prompt if system_prompt is not None else meta.get("system_prompt")
    tools_json = resolve_tools(tools if tools is not None else meta.get("tools"))
    counts: dict[str, Any] = {}
    lines = _build(df, fmt, drop_ties=drop_ties, sys_prompt=sys_prompt, tools_json=tools_json, counts=counts)
    encoding = "dict" if fmt == "trl" else "json_string"
    roundtrip = ToolCallRoundtrip(checked=counts["calls"], invalid=counts["bad"], rows=counts["bad_rows"],
                                  encoding=encoding, checked_for="chosen, rejected and shared prompt turns")
    dropped = {k: counts[k] for k in ("ties", "identical", "no_one_turn_contrast") if counts.get(k)}
    pairs_n = counts["pairs"]
    report = PreferenceExportReport(
        n_rows=counts["n"], pairs=pairs_n, format=fmt, trl_turns_cut=counts.get("turns_cut", 0), dropped=dropped,
        tool_call_roundtrip=roundtrip, first_turn_identical=counts["first_turn_identical"],
        chosen_longer_frac=counts["chosen_longer"] / pairs_n if pairs_n else float("nan"),
        mean_margin=counts["margin_sum"] / counts["margin_n"] if counts["margin_n"] else float("nan"),
    )
    if pairs_n == 0:
        raise TrainingSelectionError(
            f"pairs must leave at least one pair to write, got none of {counts['n']} ({dropped or 'all dropped'}). "
            "Check that chosen and rejected differ at an agent turn.", reason="no_pairs", counts=dropped,
        )
    if validate and counts["bad"]:
        raise TrainingSelectionError(
            f"tool_call_roundtrip: {counts['bad']} of {counts['calls']} tool calls in the pairs have arguments that do "
            "not parse as a JSON object. Drop or repair those pairs, or pass validate=False.",
            reason="tool_call_roundtrip", rows=counts["bad_rows"],
        )
    if counts.get("turns_cut"):
        report.warnings.append(
            f"{counts['turns_cut']} of {pairs_n} pairs lost the turns after the one where the sides diverge "
            "(trl_turns_cut): a one-turn preference scores only that turn.")
    if dropped.get("no_one_turn_contrast"):
        report.warnings.append(
            f"{dropped['no_one_turn_contrast']} pairs first differ at a turn that is not the agent's (a tool result or a "
            "user turn), so they have no one-turn contrast and were left out.")
    if length_confound(counts["chosen_longer"], pairs_n):
        report.warnings.append(
            f"the chosen side is the longer one in {report.chosen_longer_frac:.0%} of pairs; DPO learns length faster "
            "than behaviour, so length-match the pairs (build_preference_pairs does) before training.")
    return lines, report


def preference_rows(pairs: IntoRows, /, *, format: Literal["openai", "trl", "fireworks"] = "openai",
                    drop_ties: bool = True, validate: bool = True, system_prompt: str | None = None,
                    tools: Any = None) -> list[dict[str, Any]]:
    """The rows ``export_preference`` would write, as a list of dicts (no file)."""
    lines, _ = _run(pairs, format, drop_ties=drop_ties, validate=validate, system_prompt=system_prompt, tools=tools)
    return [json.loads(line) for line in lines["line"].to_list()]


def export_preference(
    pairs: IntoRows,
    output: str | os.PathLike[str],
    /,
    *,
    format: Literal["openai", "trl", "fireworks"] = "openai",
    drop_ties: bool = True,
    validate: bool = True,
    system_prompt: str | None = None,
    tools: Any = None,
) -> PreferenceExportReport:
    """Write preference pairs for a DPO-style trainer, atomically, to JSONL or Parquet.

    ``format="openai"``: the ask as ``prompt`` and each side's whole conversation (system prompt
    first) as ``chosen``/``rejected``. ``format="trl"``: the one-turn preference TRL's
    ``DPOTrainer`` trains as it should (docs/export.md, "Preference pairs"): ``prompt`` is the prefix
    both sides share (tool turns and later asks included) and ``chosen``/``rejected`` are each the
    one assistant turn where the sides diverge, because DPO masks the prompt and scores every
    completion token (Lambert 2025, chapter Direct Alignment); later turns are cut and the pairs
    that lost some are counted as ``trl_turns_cut``; tool-call arguments are objects.
    ``format="fireworks"``: the same one-turn split as ``input.messages`` plus
    ``preferred_output``/``non_preferred_output``.

    Args:
        pairs: A ``PreferencePairs`` object (``.df``), a DataFrame, a list of pair dicts or a
            JSONL path, with ``chosen``/``rejected`` message lists and optionally ``prompt``,
            ``task_key``, ``chosen_reward``, ``rejected_reward``, ``margin``.
        output: The ``.jsonl`` (or ``.jsonl.gz``) file to write, or ``.parquet`` (tool-call
            arguments as Arrow's JSON type, which ``datasets`` reads back as dicts).
        format: ``"openai"``, ``"trl"`` or ``"fireworks"``.
        drop_ties: Leave out pairs whose margin is 0.
        validate: Refuse pairs whose tool-call arguments do not parse as a JSON object.
        system_prompt: Put first on both sides; default the pairs' meta or ``system_prompt`` column.
        tools: Tool schemas; default the pairs' meta or ``tools`` column.

    Returns:
        A :class:`PreferenceExportReport` (pairs, trl_turns_cut, dropped, tool_call_roundtrip,
        chosen_longer_frac, first_turn_identical, mean_margin, warnings, path).

    Raises:
        ArgumentError: A format outside the allowed values.
        EmptyInputError: No pairs.
        TrainingSelectionError: No pair left to write, or broken tool calls with ``validate=True``.
        InputFileError: The output cannot be written (nothing is left behind).
    """
    check_choice("format", format, PREFERENCE_FORMATS)
    target = Path(output)
    parquet = is_parquet(target)
    lines, report = _run(pairs, format, drop_ties=drop_ties, validate=validate, system_prompt=system_prompt, tools=tools)
    if parquet:
        with writing(target) as tmp:
            pq.write_table(_parquet_table(lines), tmp, compression="zstd")
    else:
        with writing(target) as tmp, open_binary(tmp, target) as handle:
            lines.write_csv(handle, include_header=False, quote_style="never")
    report.path = str(target)
    return report


def _parquet_table(lines: pl.DataFrame) -> pa.Table:
    """The pairs as an Arrow table, tool-call arguments as Arrow's JSON type (as TRL Parquet rows are).

    Each call's arguments stay one JSON value: decoding them into Arrow structs would merge the
    argument keys of different tools into one struct (the ``Dataset.from_list`` problem,
    docs/export.md), and ``datasets`` reads the JSON type back as dicts. Pairs number one per
    task at most, so the lines are decoded in Python.
    """
    rows = [_encode_arguments(json.loads(line)) for line in lines.to_series(0).to_list()]
    return json_arguments(pa.Table.from_pylist(rows), ("prompt", "chosen", "rejected", "input", "preferred_output",
                                                        "non_preferred_output"))


def _encode_arguments(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) if k == "arguments"
                else _encode_arguments(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode_arguments(v) for v in value]
    return value
