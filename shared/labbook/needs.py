"""A chapter cell that shows another library says what to install when that library is missing.

The student set (requirements-student.txt) leaves out transformers; the
chapters' stored outputs show what it does, and re-running such a cell stops
at once with the exact pip command instead of an import error further down.
"""
from __future__ import annotations

import importlib.util


def need(pin: str) -> None:
    """Raise ModuleNotFoundError naming `pip install <pin>` if the package of `pin` is not installed."""
    name = pin.split("==")[0]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(
            f"this cell shows what {name} does, and {name} is not installed (the student set leaves it out; "
            f"the outputs stored above were made with it). To run it: pip install {pin}", name=name)
