"""The check-only autograder of the causal-attention lab book (student release).

`Lab("lab02").check("causal_mask")` judges an exercise on its public cases,
from data computed when the instructor built this release: the cases' inputs,
the right outputs and the outputs of the classic slips, with the feedback each
one gets. No reference implementation, hidden case or seed is in here; the
instructor's grader (not part of this release) grades hidden cases.
"""
from .i18n import LANGS, current_lang
from .notebook import Lab

__all__ = ["Lab", "LANGS", "current_lang"]
