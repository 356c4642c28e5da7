"""The package version, in one place below every layer (the door, the CLI and exports read it)."""

__version__ = "0.1.0"
