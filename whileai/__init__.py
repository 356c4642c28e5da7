"""whileai: post-training for language-model agents that call tools.

``import whileai as wai``. Simulate the situations an agent meets against a world that fails on
purpose, grade every rollout, measure pass rates with honest intervals, select the rows that
carry training signal, guard against contamination and reward hacking, export for a trainer, and
prove the gain on a held-out set. Offline, no account, no key.

Names resolve lazily (PEP 562), so ``import whileai`` stays fast and never touches the network;
duckdb, httpx and scipy load only when a call that needs them runs. The names are listed once,
in ``__init__.pyi`` beside this file: type checkers read it, so ``wai.pass_at`` has its real
signature there, and ``whileai._lazy.attach_stub`` reads it at run time.
"""

from whileai._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
