"""Which plural form of a message a count takes: one definition for the autograder and the student release
(both i18n modules import it; the release ships this file as it is)."""
from __future__ import annotations

import functools
import gettext


@functools.lru_cache(maxsize=None)
def _compiled_rule(rule: str):
    """gettext compiles a plural rule into Python code: once per rule, not at every message."""
    return gettext.c2py(rule)


def plural_index(rule: str, n: float) -> int:
    """The form a gettext plural rule (`(n != 1)`) picks for the count n; a count with a fraction uses the last."""
    if n != int(n):
        return -1
    return _compiled_rule(rule)(int(n))
