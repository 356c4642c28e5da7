"""Read Hugging Face ``datasets`` saved to disk: a ``save_to_disk`` folder, a ``DatasetDict``, an ``.arrow`` file.

``Dataset.save_to_disk(folder)`` writes the rows as Arrow IPC *stream* files
(``data-00000-of-00001.arrow``...) beside ``state.json`` (which lists them under
``_data_files``) and ``dataset_info.json``; ``DatasetDict.save_to_disk`` writes
``dataset_dict.json`` (``{"splits": [...]}``) and one such folder per split
(``datasets/arrow_dataset.py`` and ``dataset_dict.py``, ``save_to_disk``). The cache files
``load_dataset`` keeps are Arrow stream files too. Arrow is the rollout table's own format, so
each file is read with pyarrow (``pyarrow.ipc.open_stream``, else ``open_file`` for the IPC file
format) and handed to Polars without a copy; ``datasets`` itself is not needed. The splits of a
``DatasetDict`` are stacked, each row's split kept in a ``split`` column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from whileai.errors import InputFileError, SchemaError

__all__ = ["is_saved_dataset", "read_arrow_file", "read_saved"]

#: The files ``save_to_disk`` writes beside the Arrow files of one dataset, and of a DatasetDict.
STATE_FILE = "state.json"
DICT_FILE = "dataset_dict.json"


def is_saved_dataset(folder: Path) -> bool:
    """Whether ``folder`` is a ``Dataset`` or ``DatasetDict`` that ``save_to_disk`` wrote."""
    return (folder / STATE_FILE).is_file() or (folder / DICT_FILE).is_file()


def read_arrow_file(path: Path) -> Any:
    """One ``.arrow`` file as a ``pyarrow.Table``: the IPC stream format ``datasets`` writes, or the IPC file format.

    Raises:
        SchemaError: The file is neither (with what it starts with and what to pass instead).
    """
    import pyarrow as pa
    import pyarrow.ipc as ipc

    errors = []
    for opener in (ipc.open_stream, ipc.open_file):
        try:
            with pa.memory_map(str(path)) as source:
                return opener(source).read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            errors.append(str(exc))
    with open(path, "rb") as handle:
        head = handle.read(8)
    raise SchemaError(
        f"file {str(path)!r} must be an Arrow IPC stream or file (what Hugging Face datasets' save_to_disk writes), "
        f"got one that starts with {head!r} ({errors[0]}). Pass the .arrow file of a saved dataset, or its folder.",
        path=str(path))


def _split_files(folder: Path) -> list[Path]:
    """The Arrow files of one saved ``Dataset``, in the order ``state.json`` lists them."""
    listed: list[Path] = []
    try:
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
        listed = [folder / str(f["filename"]) for f in state.get("_data_files") or [] if isinstance(f, dict)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        listed = []
    files = listed or sorted(folder.glob("*.arrow"))
    missing = [str(f) for f in files if not f.is_file()]
    if missing or not files:
        raise InputFileError(
            f"folder {str(folder)!r} must hold the Arrow files its {STATE_FILE} lists (a Hugging Face save_to_disk "
            f"folder), got {'none' if not files else 'no file at ' + ', '.join(missing[:3])}. Save the dataset "
            "again with Dataset.save_to_disk, or pass its .arrow files.", path=str(folder))
    return files


def read_saved(folder: Path) -> Any:
    """A ``save_to_disk`` folder as one ``pyarrow.Table``; a ``DatasetDict``'s splits stacked with a ``split`` column.

    Raises:
        InputFileError: A listed Arrow file or split folder is missing.
        SchemaError: An Arrow file cannot be read, or the splits' columns cannot be stacked.
    """
    import pyarrow as pa

    if not (folder / DICT_FILE).is_file():
        return _concat([read_arrow_file(f) for f in _split_files(folder)], folder)
    try:
        splits = json.loads((folder / DICT_FILE).read_text(encoding="utf-8")).get("splits") or []
    except (OSError, ValueError, AttributeError) as exc:
        raise SchemaError(f"file {str(folder / DICT_FILE)!r} must be the JSON DatasetDict.save_to_disk writes "
                          f"({{\"splits\": [...]}}), got text that is not ({exc}). Save the dataset again.",
                          path=str(folder / DICT_FILE)) from exc
    tables = []
    for split in splits:
        if not (folder / str(split)).is_dir():
            raise InputFileError(f"folder {str(folder)!r} must hold a folder for each split its {DICT_FILE} lists, "
                                 f"got none for {split!r}. Save the DatasetDict again, or pass one split's folder.",
                                 path=str(folder))
        table = _concat([read_arrow_file(f) for f in _split_files(folder / str(split))], folder / str(split))
        tables.append(table.append_column("split", pa.array([str(split)] * table.num_rows, pa.string())))
    if not tables:
        raise InputFileError(f"folder {str(folder)!r} is a DatasetDict with no splits. Save one with rows.",
                             path=str(folder))
    return _concat(tables, folder)


def _concat(tables: list[Any], where: Path) -> Any:
    import pyarrow as pa

    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"folder {str(where)!r}: its Arrow files (or splits) must have columns that stack, got "
                          f"{exc}. Pass one split's folder.", path=str(where)) from exc
