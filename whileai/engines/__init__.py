"""Engines: where a step's rows are read and its per-task partial sums computed.

Every measure, select and guard step reads a Polars frame by default (the local engine). A
``ray.data.Dataset`` passed as the rows takes the Ray engine (:mod:`whileai.engines.ray`, the
``ray`` extra): per-task partial sums in ``map_batches`` over Arrow batches, merged by a Ray Data
group-by on the task key, then the same kernel the local path calls (``docs/scale.md``). Nothing
here imports ray: :func:`is_ray_dataset` looks at the object's type only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_ray_dataset"]


def is_ray_dataset(obj: Any) -> bool:
    """True when ``obj`` is a ``ray.data.Dataset`` (checked by type name, without importing ray).

    Examples:
        >>> is_ray_dataset([{"task_id": "a", "reward": 1.0}])
        False
    """
    return any(cls.__name__ in ("Dataset", "MaterializedDataset") and cls.__module__.startswith("ray.data")
               for cls in type(obj).__mro__)
