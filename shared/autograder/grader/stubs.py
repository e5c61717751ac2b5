"""Stand-ins for the project's packages inside the grading sandbox.

Students' notebooks start with `from autograder import Lab` and may import
`labbook` helpers or `autograder.i18n`. Inside the sandbox there is no real
`autograder` (its exercise definitions hold the reference implementations) and
no `labbook`: these stubs make such imports succeed and every check do nothing,
so that the notebook runs and only its definitions matter. Anything else asked
of them is an inert object.
"""
from __future__ import annotations

from pathlib import Path

from ..i18n import LANGS

_PERMISSIVE = '''
import importlib.abc
import importlib.machinery
import sys
import types


class Anything:
    """An inert value: callable, with every attribute, empty when iterated."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __len__(self):
        return 0

    def __repr__(self):
        return ""

    __str__ = __repr__

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


ANYTHING = Anything()


def module_getattr(name):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return ANYTHING


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = module_getattr
        return module

    def exec_module(self, module):
        pass


class StubFinder(importlib.abc.MetaPathFinder):
    """Serves every `autograder.*` and `labbook.*` module as an inert stub."""

    ROOTS = ("autograder", "labbook")

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.split(".")[0]
        if root in self.ROOTS and fullname not in self.ROOTS:
            return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)
        return None


if not any(isinstance(finder, StubFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, StubFinder())
'''

_AUTOGRADER = '''"""Stub of the autograder inside the grading sandbox: checks do nothing here."""
import os

from _stubs_permissive import ANYTHING, module_getattr as __getattr__  # noqa: F401

LANGS = @LANGS@
__path__ = []


def current_lang(*args, **kwargs):
    return os.environ.get("LABBOOK_LANG", "en")


class Lab:
    """The notebook's `lab` object: here every method does nothing."""

    def __init__(self, lab_id="", lang=None, *args, **kwargs):
        self.lab_id = lab_id
        self.lang = lang or current_lang()

    def check(self, *args, **kwargs):
        return None

    def hand_in(self, *args, **kwargs):
        return None

    def show_problem(self, *args, **kwargs):
        return None

    def results(self, *args, **kwargs):
        return []

    def hint(self, *args, **kwargs):
        return ""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return ANYTHING
'''

_LABBOOK = '''"""Stub of the course helpers inside the grading sandbox: displays do nothing here."""
from _stubs_permissive import module_getattr as __getattr__  # noqa: F401

__path__ = []
'''

FILES = {
    "_stubs_permissive.py": _PERMISSIVE,
    "autograder/__init__.py": _AUTOGRADER.replace("@LANGS@", repr(LANGS)),
    "labbook/__init__.py": _LABBOOK,
}


def write_stubs(directory: Path) -> None:
    for relative, text in FILES.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
