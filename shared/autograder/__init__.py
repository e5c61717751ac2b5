"""Autograder of the causal-attention lab book.

Students use `Lab` in their notebooks; instructors use `python -m autograder`.
Exercise definitions live in `autograder.labs.<lab id>` and serve both.
"""
from .i18n import LANGS, current_lang
from .notebook import Lab

__all__ = ["Lab", "LANGS", "current_lang"]
