"""Languages and messages of the student release: the catalogues dumped at release time (data/messages.json).

The same interface as the full autograder's i18n (t, text, has, keys,
current_lang...), read from one JSON file instead of gettext catalogues, so
the release needs no Babel.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import notebook_lang
from .plurals import plural_index

_DATA = json.loads((Path(__file__).parent / "data" / "messages.json").read_text(encoding="utf-8"))
LANGS: tuple[str, ...] = tuple(_DATA["langs"])
ALL_LANGS: tuple[str, ...] = tuple(_DATA["all_langs"])
LANGUAGE_NAMES: dict[str, str] = dict(_DATA["names"])
DEFAULT_LANG = "en"
LANG_ENV = "LABBOOK_LANG"
_DOMAINS: dict[str, dict[str, dict[str, str]]] = _DATA["domains"]
_DECIMAL_COMMA: frozenset[str] = frozenset(_DATA["decimal_comma"])
# Plural messages: key -> {lang: [forms]}, and each language's gettext rule that picks a form for a count.
_PLURALS: dict[str, dict[str, list[str]]] = _DATA.get("plurals", {})
_RULES: dict[str, str] = _DATA.get("plural_rules", {})


def decimal_comma(lang: str) -> bool:
    """Whether `lang` writes 0,67 for 0.67 (figure descriptions, labbook/describe.py)."""
    return lang in _DECIMAL_COMMA


def N_(*keys: str) -> tuple[str, ...]:
    return keys


def NP_(*keys: str) -> tuple[str, ...]:
    return keys


def _templates(key: str) -> dict[str, str] | None:
    for messages in _DOMAINS.values():
        if key in messages:
            return messages[key]
    return None


def has(key: str) -> bool:
    return _templates(key) is not None


def text(key: str, lang: str) -> str:
    templates = _templates(key)
    if templates is None:
        raise KeyError(f"no message {key!r} in this release")
    return templates.get(lang) or templates[DEFAULT_LANG]


def t(key: str, lang: str, **params) -> str:
    return text(key, lang).format(**params)


def plural_text(key: str, lang: str, n: float) -> str:
    forms = _PLURALS.get(key, {})
    code = lang if forms.get(lang) else DEFAULT_LANG
    if not forms.get(code):
        raise KeyError(f"no plural message {key!r} in this release")
    return forms[code][plural_index(_RULES.get(code, "(n != 1)"), n)]


def tn(key: str, lang: str, n: float, **params) -> str:
    return plural_text(key, lang, n).format(**params)


def keys(domain: str | None = None) -> list[str]:
    domains = [domain] if domain else list(_DOMAINS)
    return sorted({key for name in domains for key in _DOMAINS.get(name, {})})


def catalogue() -> dict[str, dict[str, str]]:
    return {key: dict(templates) for messages in _DOMAINS.values() for key, templates in messages.items()}


def normalise_lang(lang: str | None) -> str:
    return notebook_lang.normalise(lang, ALL_LANGS, DEFAULT_LANG)


def current_lang(cwd: Path | None = None) -> str:
    """LABBOOK_LANG, else the running notebook's own metadata, else its folder, else English."""
    return notebook_lang.running_lang(ALL_LANGS, LANG_ENV, DEFAULT_LANG, cwd)
