"""Render every report figure in docs/notebook.md to a PNG with headless Chromium.

The pages load the vendored plotly.js-basic (whileai/charts/static/plotly-basic.min.js), the same
bundle the Runs page serves, so the PNGs are what a reader of the page sees.

Run: python docs/render_figures.py   (needs Debian's chromium: apt-get install -y chromium)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.charts.reports import build  # noqa: E402
from whileai.charts import html_page  # noqa: E402

OUT = ROOT / "docs" / "img"


def main() -> int:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium not found: apt-get update && apt-get install -y chromium", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, report in build().items():
            spec = report.figure_spec()
            page = Path(tmp) / f"{name}.html"
            page.write_text(html_page([spec]), encoding="utf-8")
            width = int(spec["layout"]["width"]) + 16
            height = int(spec["layout"]["height"]) + 16
            target = OUT / f"figure-{name.replace('_', '-')}.png"
            subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--allow-file-access-from-files", "--virtual-time-budget=5000",
                            f"--screenshot={target}", f"--window-size={width},{height}", page.as_uri()],
                           check=True, capture_output=True, timeout=120)
            print(f"{target.relative_to(ROOT)}  {target.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
