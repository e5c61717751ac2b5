"""What a term keeps between runs, in DIR/.autograder/term/, and what changed in it.

Kept: the roster (a copy, with its format and where it came from), the layout,
the late policy, `--penalise-forbidden`, `--lms-timezone`, every overrides file
(copies, accumulated: a later `--overrides` adds or updates one, only
`--drop-overrides` removes one), the submission-times file, the files handed in
outside the LMS (copies) and `--extra` folders, the seed's fingerprint (never
the seed), the sources of the last run, and per student what the analysis
found (students.json, which the class report reads). Every change to a kept
setting is said in the run's summary; nothing is dropped silently.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import files

STATE_DIR = ".autograder"
TERM_DIR = "term"
SETTINGS = "settings.json"
VERSION = 2


def state_dir(out: Path) -> Path:
    return out / STATE_DIR / TERM_DIR


def is_term(out: Path) -> bool:
    """Whether DIR was graded as a term before (then every later run of it is one)."""
    return (state_dir(out) / SETTINGS).is_file()


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def load(out: Path) -> dict:
    """The kept settings, in this version's shape whatever version wrote them ({} for a new term)."""
    settings = _read_json(state_dir(out) / SETTINGS)
    if not isinstance(settings, dict):
        return {}
    if settings.get("version") != VERSION:  # version 1: roster a bool, overrides a list of copies' names
        settings = dict(settings)
        settings["roster"] = {"file": "roster.csv", "from": "roster.csv", "format": None, "count": None} \
            if settings.get("roster") is True else None
        # where they came from was not kept: a run that gives --overrides replaces them, as that version did
        settings["overrides"] = [{"file": name, "from": name, "name": name, "lines": None, "legacy": True}
                                 for name in settings.get("overrides", []) if isinstance(name, str)]
        book = _read_json(out / "grades.json")
        if isinstance(book, dict) and book.get("seed_fingerprint"):
            settings["seed_fingerprint"] = book["seed_fingerprint"]
            settings["seed_source"] = book.get("seed_source")
        settings["version"] = VERSION
    for key in ("overrides", "extra_files", "extra_folders", "sources"):
        if not isinstance(settings.get(key), list):
            settings[key] = []
    return settings


def save(out: Path, settings: dict) -> None:
    files.write_private(files.private_dir(state_dir(out)) / SETTINGS, json.dumps(settings, indent=1, ensure_ascii=False))


def keep_copy(out: Path, name: str, data: bytes) -> str:
    """A copy of an instructor's file (roster, overrides, times) or a student's (an emailed notebook) in the state."""
    target = files.private_dir(state_dir(out)) / name
    files.write_private(target, data)
    return name


def remove(out: Path, name: str) -> None:
    try:
        (state_dir(out) / name).unlink()
    except OSError:
        pass


def load_analysis(out: Path) -> dict:
    """student -> what the analysis kept (the class report reads it)."""
    found = _read_json(state_dir(out) / "students.json")
    return found if isinstance(found, dict) else {}


def save_analysis(out: Path, metas: dict) -> None:
    files.write_private(files.private_dir(state_dir(out)) / "students.json", json.dumps(metas, ensure_ascii=False))
