"""Run one page's blocks top to bottom in the current folder, as a reader pastes them.

``python run_page.py blocks.json``: Python blocks share one namespace (one interpreter session),
terminal blocks run under ``bash -euo pipefail`` with this interpreter's ``bin/`` first on PATH (so
``wai`` and ``python`` are the ones under test). Prints ``ran N`` at the end; exits 1 on the first
block that raises or exits non-zero, naming its page and line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    blocks = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    namespace: dict[str, object] = {"__name__": "__main__"}
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    ran = 0
    for block in blocks:
        where = f"{block['page']}:{block['line']}"
        print(f"--- {where} ({block['lang']})", flush=True)
        if block["lang"] == "python":
            try:
                exec(compile(block["code"], where, "exec"), namespace)  # noqa: S102 - the page's own code
            except BaseException:
                traceback.print_exc()
                print(f"FAILED {where}", flush=True)
                return 1
        else:
            proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block["code"]], env=env)
            if proc.returncode != 0:
                print(f"FAILED {where}: exit status {proc.returncode}", flush=True)
                return 1
        sys.stdout.flush()
        ran += 1
    print(f"ran {ran}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
