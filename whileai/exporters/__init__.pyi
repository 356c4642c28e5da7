# The public names of whileai.exporters, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._environment import export_environment as export_environment
from ._environment import load_environment as load_environment
from ._export import export_dataset as export_dataset
from ._export import loss_mask as loss_mask
from ._export import to_trl as to_trl
from ._export import tool_call_roundtrip as tool_call_roundtrip
from ._export import training_rows as training_rows
from ._export import trl_dataset as trl_dataset
from ._hub import HubPush as HubPush
from ._hub import push_to_hub as push_to_hub
from ._preference import export_preference as export_preference
from ._preference import preference_rows as preference_rows
from ._report import EnvironmentReport as EnvironmentReport
from ._report import ExportReport as ExportReport
from ._report import PreferenceExportReport as PreferenceExportReport
from ._report import ToolCallRoundtrip as ToolCallRoundtrip
