"""The labs of this release, read from data/labs.json (public cases and their recorded judgements)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


class UnknownLab(KeyError):
    pass


@lru_cache(maxsize=None)
def _all() -> dict:
    return json.loads((DATA / "labs.json").read_text(encoding="utf-8"))


LAB_IDS: tuple[str, ...] = tuple(sorted(_all()))


def get_lab(lab_id: str):
    from ..replay import ReplayLab  # here: replay imports this package's judging modules

    if lab_id not in _all():
        raise UnknownLab(lab_id)
    return ReplayLab.from_data(_all()[lab_id])
