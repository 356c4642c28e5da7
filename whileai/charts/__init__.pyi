# The public names of whileai.charts, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._figures import cost_scatter as cost_scatter
from ._figures import curve as curve
from ._figures import difficulty_histogram as difficulty_histogram
from ._figures import feature_bars as feature_bars
from ._figures import forest as forest
from ._figures import histogram_counts as histogram_counts
from ._figures import interval_bars as interval_bars
from ._figures import judge_trust_chart as judge_trust_chart
from ._figures import train_curves as train_curves
from ._figures import version_scores as version_scores
from ._render import PLOTLY_JS_VERSION as PLOTLY_JS_VERSION
from ._render import check_figure as check_figure
from ._render import figure as figure
from ._render import html_page as html_page
from ._render import plotly_js_path as plotly_js_path
