"""The numeric floors pyproject.toml declares are the releases `make test-floor` installs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _floors() -> dict[str, str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    return dict(re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)"', block))


def _pins() -> dict[str, str]:
    line = next(x for x in (ROOT / "Makefile").read_text().splitlines() if x.startswith("FLOOR_PINS"))
    return dict(pin.split("==") for pin in line.split(":=", 1)[1].split())


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in version.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def test_floor_pins_are_the_declared_floors():
    floors, pins = _floors(), _pins()
    assert set(pins) == {"polars", "pyarrow", "numpy", "scipy"}
    for name, pin in pins.items():
        assert name in floors, f"{name} is pinned in FLOOR_PINS but has no floor in pyproject.toml"
        # the pin is the first release at or above the floor (a patch release of it)
        assert _release(pin)[:2] == _release(floors[name])[:2], (name, pin, floors[name])
