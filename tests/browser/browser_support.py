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
    """Why the browser tests cannot run here, or None."""
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return (f"BROWSER TESTS SKIPPED: no Chromium at {CHROMIUM}. Install it with `make system-deps` "
                "(as root: apt-get install chromium), or point LABBOOK_CHROMIUM to a Chromium binary.")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as error:
        return f"BROWSER TESTS SKIPPED: the playwright package is missing ({error}); run `make setup`."
    return None


def copy_into(tmp: Path, relative: str) -> Path:
    """Copy a committed file into the same relative place under tmp (so its language folder stays)."""
    target = tmp / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / relative, target)
    return target
