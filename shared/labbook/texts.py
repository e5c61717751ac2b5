"""Text that readers see in outputs (figure titles, axis labels), per language.

Code cells are identical in every language; they ask `tr("key")` and get the
text in the notebook's language (see autograder.i18n.current_lang). Common
keys live here; each chapter keeps its own keys (prefixed `chNN.`) in
`labbook/text_chNN.py` as a dict `TEXTS`, merged below.
tests/test_i18n.py checks that every key exists in all four languages.
"""
from __future__ import annotations

import importlib
import pkgutil

import labbook
from autograder.i18n import current_lang

TEXTS: dict[str, dict[str, str]] = {
    "query": {"en": "query i", "es": "query i", "de": "Query i", "hi-Latn": "query i"},
    "key": {"en": "key j", "es": "key j", "de": "Key j", "hi-Latn": "key j"},
    "feature": {"en": "feature", "es": "componente", "de": "Merkmal", "hi-Latn": "feature"},
    "token": {"en": "token", "es": "token", "de": "Token", "hi-Latn": "token"},
}


for _module in pkgutil.iter_modules(labbook.__path__):
    if _module.name.startswith("text_ch"):
        for _key, _value in importlib.import_module(f"labbook.{_module.name}").TEXTS.items():
            assert _key not in TEXTS, f"text key defined twice: {_key}"
            TEXTS[_key] = _value


def tr(key: str, lang: str | None = None) -> str:
    """The text `key` in the notebook's language."""
    return TEXTS[key][lang or current_lang()]
