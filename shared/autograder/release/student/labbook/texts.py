"""Text readers see in outputs (figure titles, axis labels), per language (dumped at release time)."""
from __future__ import annotations

import json
from pathlib import Path

from autograder.i18n import current_lang

TEXTS: dict[str, dict[str, str]] = json.loads(
    (Path(__file__).parent / "data" / "texts.json").read_text(encoding="utf-8"))


def tr(key: str, lang: str | None = None) -> str:
    """The text `key` in the notebook's language."""
    return TEXTS[key][lang or current_lang()]
