# The public names of whileai.measure, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._compare import Comparison as Comparison
from ._compare import compare_runs as compare_runs
from ._delta import DeltaReport as DeltaReport
from ._delta_report import delta_report as delta_report
from ._delta_text import format_delta_report as format_delta_report
from ._failures import FailureGroup as FailureGroup
from ._failures import FailureTable as FailureTable
from ._failures import failure_table as failure_table
from ._holdout import HoldoutSizeReport as HoldoutSizeReport
from ._holdout import detectable_effect as detectable_effect
from ._holdout import holdout_size as holdout_size
from ._holdout_block import HOLDOUT_KEYS as HOLDOUT_KEYS
from ._holdout_block import holdout_block as holdout_block
from ._passat import PassAt as PassAt
from ._passat import pass_at as pass_at
from ._passat import pass_at_numbers as pass_at_numbers
from ._rows import check_reward_range as check_reward_range
from ._rows import nan_as_ungraded as nan_as_ungraded
from ._rows import nan_rewards_unset as nan_rewards_unset
from ._selfcheck import SelfCheckReport as SelfCheckReport
from ._selfcheck import self_check as self_check
from ._summary import MarkerSummary as MarkerSummary
from ._summary import MetricSummary as MetricSummary
from ._summary import marker_summary as marker_summary
from ._summary import metric_summary as metric_summary
from ._tasks import group_stats as group_stats
from ._tasks import task_stats as task_stats
from ._variance import EvalVarianceReport as EvalVarianceReport
from ._variance import eval_variance as eval_variance
from ._variance import noise_band as noise_band
