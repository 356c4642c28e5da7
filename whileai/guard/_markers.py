"""Marker columns a guard stamps, read back as a frame, and the graded rows its statistics count."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import polars as pl

from whileai import table
from whileai.report import NanFloat, Part

__all__ = ["MarkerShare", "graded_mask", "marker_frame", "stamp_markers"]


class MarkerShare(Part):
    """A marker over the rows: the share of rows clean (at 1.0), with its interval over tasks."""

    clean: NanFloat = math.nan
    """Share of rows where the marker is 1.0 (NaN when no row carries it)."""
    ci95: tuple[float, float] | None = None
    """Its 95% interval over tasks (cluster-robust; None when the share is constant)."""


def stamp_markers(df: pl.DataFrame, new: Mapping[str, pl.Expr]) -> pl.DataFrame:
    """Merge marker columns into the ``markers`` struct, keeping every marker already there.

    A row whose struct was null gets a struct with the new markers (the old fields null).
    """
    fields: list[pl.Expr] = []
    if "markers" in df.columns and isinstance(df.schema["markers"], pl.Struct):
        for f in df.schema["markers"].fields:
            if f.name not in new:
                fields.append(pl.col("markers").struct.field(f.name).cast(pl.Float64).alias(f.name))
    for name, expr in new.items():
        fields.append(expr.cast(pl.Float64).alias(name))
    return df.with_columns(pl.struct(fields).alias("markers"))


def marker_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The markers struct unnested to one Float64 column per marker (empty frame when none)."""
    names = table.markers_of(df)
    if not names:
        return pl.DataFrame()
    return df.select([pl.col("markers").struct.field(n).cast(pl.Float64).alias(n) for n in names])


def graded_mask(df: pl.DataFrame) -> np.ndarray:
    """Boolean mask of rows with a finite numeric reward."""
    if "reward" not in df.columns:
        return np.zeros(df.height, dtype=bool)
    r = df["reward"].cast(pl.Float64).to_numpy()
    return np.isfinite(r)
