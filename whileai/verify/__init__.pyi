# The public names of whileai.verify, one line each and nowhere else. At run time __init__.py
# hands this file to whileai/_lazy.py, which imports a name's module on its first use; type
# checkers and editors read it for the types.

from ._base import ExactMatch as ExactMatch
from ._base import Verifier as Verifier
from ._base import candidate_text as candidate_text
from ._base import normalize_text as normalize_text
from ._base import reference_value as reference_value
from ._code import CodeExec as CodeExec
from ._code import extract_code as extract_code
from ._math import MathEqual as MathEqual
from ._math import MathValue as MathValue
from ._math import extract_answer as extract_answer
from ._math import math_value as math_value
