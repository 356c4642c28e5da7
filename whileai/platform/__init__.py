"""Tracked runs, scores, verdicts and the brief: ``import whileai.platform as wp``.

``wp.track(agent, store=PATH)`` writes straight into the local DuckDB store; with ``base_url=``
(or after ``wai login``) the same calls go to a ``wai server``. The rules (verdict, brief, eval
checks, dashboard) are pure functions in ``whileai.platform._rules``, shared by the client, the
server and the pages. See docs/platform.md.

    >>> import whileai.platform as wp
    >>> tracked = wp.track({"name": "refunds", "model": "gpt-4.1"}, store="store.duckdb")  # doctest: +SKIP
    >>> run = tracked.run("sft-v1")                                                        # doctest: +SKIP
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
