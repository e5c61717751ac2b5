"""Languages and messages of the student release: the catalogue dumped at release time (data/messages.json)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from .notebook_lang import metadata_lang

_DATA = json.loads((Path(__file__).parent / "data" / "messages.json").read_text(encoding="utf-8"))
LANGS: tuple[str, ...] = tuple(_DATA["langs"])
DEFAULT_LANG = "en"
LANG_ENV = "LABBOOK_LANG"
_CATALOGUE: dict[str, dict[str, str]] = _DATA["messages"]


def catalogue() -> dict[str, dict[str, str]]:
    return dict(_CATALOGUE)


def has(key: str) -> bool:
    return key in _CATALOGUE


def t(key: str, lang: str, **params) -> str:
    templates = _CATALOGUE[key]
    template = templates.get(lang) or templates[DEFAULT_LANG]
    return template.format(**params)


def normalise_lang(lang: str | None) -> str:
    if not lang:
        return DEFAULT_LANG
    for known in LANGS:
        if lang.lower() == known.lower():
            return known
    if lang.lower().startswith("hi"):
        return "hi-Latn"
    return lang.split("-")[0].lower() if lang.split("-")[0].lower() in LANGS else DEFAULT_LANG


def current_lang(cwd: Path | None = None) -> str:
    """LABBOOK_LANG, else the running notebook's own metadata, else its folder, else English."""
    if os.environ.get(LANG_ENV):
        return normalise_lang(os.environ[LANG_ENV])
    own = metadata_lang(cwd)
    if own:
        return normalise_lang(own)
    folder = (cwd or Path.cwd()).name
    return folder if folder in LANGS else DEFAULT_LANG
