"""Shared by the browser tests: where Chromium is, how it is launched, small helpers."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = os.environ.get("LABBOOK_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Generous: on 2 shared cores the other tests execute notebooks at the same time.
TIMEOUT_MS = 120_000


def chromium_problem() -> str | None:
    """Why the browser tests cannot run here (the machine has no Chromium), or None.

    Only a missing browser is a reason to skip: playwright is one of the project's pinned requirements, so
    its absence, like a Chromium that is there but does not start, is a broken setup and fails the tests.
    """
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return (f"BROWSER TESTS SKIPPED: no Chromium at {CHROMIUM}. Install it with `make system-deps` "
                "(as root: apt-get install chromium), or point LABBOOK_CHROMIUM to a Chromium binary.")
    return None


def copy_into(tmp: Path, relative: str) -> Path:
    """Copy a committed file into the same relative place under tmp (so its language folder stays)."""
    target = tmp / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / relative, target)
    return target
