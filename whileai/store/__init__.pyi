# The public names of whileai.store, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from whileai.table import content_hash as content_hash
from whileai.table import tasks_hash as tasks_hash

from ._db import connect as connect
from ._db import resolve_path as resolve_path
from ._db import transaction as transaction
from ._describe import RolloutSummary as RolloutSummary
from ._describe import describe as describe
from ._migrations import utcnow as utcnow
from ._reports import DatasetDiff as DatasetDiff
from ._reports import DatasetInfo as DatasetInfo
from ._reports import EvalSetInfo as EvalSetInfo
from ._reports import Listing as Listing
from ._reports import RunDiff as RunDiff
from ._reports import RunInfo as RunInfo
from ._reports import SplitInfo as SplitInfo
from ._split import Split as Split
from ._split import split as split
from ._store import Purpose as Purpose
from ._store import Store as Store
from ._store import check_name as check_name
from ._store import fingerprint as fingerprint
from ._store import harness_fingerprint as harness_fingerprint
from ._store import open as open
