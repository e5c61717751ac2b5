"""Languages of the book and the lookup of translated messages.

Every message a student or instructor reads is a key with one template per
language. Catalogues are plain dicts ``{key: {lang: template}}``, registered by
the module that owns them (common messages here, exercise diagnoses in their
lab's module); ``tests/test_i18n.py`` fails when a language is missing or the
placeholders differ between languages.
"""
from __future__ import annotations

import os
import string
from pathlib import Path

LANGS: tuple[str, ...] = ("en", "es", "de", "hi-Latn")
DEFAULT_LANG = "en"
LANG_ENV = "LABBOOK_LANG"

_CATALOGUE: dict[str, dict[str, str]] = {}


def register(messages: dict[str, dict[str, str]]) -> None:
    """Add a catalogue; a key may be registered only once."""
    for key, templates in messages.items():
        if key in _CATALOGUE and _CATALOGUE[key] != templates:
            raise ValueError(f"message key registered twice: {key}")
        _CATALOGUE[key] = templates


def catalogue() -> dict[str, dict[str, str]]:
    return dict(_CATALOGUE)


def has(key: str) -> bool:
    return key in _CATALOGUE


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def t(key: str, lang: str, **params) -> str:
    """The message `key` in `lang`, formatted with `params`."""
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


# ---------------------------------------------------------------- the running notebook's language
def current_lang(cwd: Path | None = None) -> str:
    """The language of the running notebook.

    LABBOOK_LANG overrides (the grader sets it); else the `lang` in the running
    notebook's own metadata, found through what the front-end tells the kernel
    (see notebook_lang); else the folder it runs in (``labs/es``...), as
    nbclient and nbval start the kernel there; else English.
    """
    if os.environ.get(LANG_ENV):
        return normalise_lang(os.environ[LANG_ENV])
    from .notebook_lang import metadata_lang

    own = metadata_lang(cwd)
    if own:
        return normalise_lang(own)
    folder = (cwd or Path.cwd()).name
    return folder if folder in LANGS else DEFAULT_LANG
