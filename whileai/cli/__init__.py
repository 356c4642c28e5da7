"""The ``wai`` command: one module per command, each a thin wrapper over one library call.

``whileai.cli.main:main`` is the entry point. Command modules import only click at module level,
so ``wai --help`` stays fast; the library (Polars, DuckDB...) loads when a command runs.
"""
