"""Autograder of the causal-attention lab book.

Students use `Lab` in their notebooks; instructors use `python -m autograder`.
Exercise definitions live in `autograder.labs.<lab id>` and serve both.
`Lab` is imported on first use, so that a chapter that only needs the
messages (`from autograder import i18n`) does not depend on the exercises.
"""
from .i18n import LANGS, current_lang

__all__ = ["Lab", "LANGS", "current_lang"]


def __getattr__(name: str):
    if name == "Lab":
        from .notebook import Lab

        return Lab
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
