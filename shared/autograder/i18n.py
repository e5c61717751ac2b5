"""Languages of the book and the lookup of translated messages.

Code holds message keys only (`lab02.no_mask`, `ch03.scores`). The text of each
key lives in a gettext catalogue per package and language,
``<package>/locale/<lang>/LC_MESSAGES/<domain>.po``, kept with Babel
(``make catalogs``; see AUTHORING.md): the English catalogue holds the source
text, the others its translation. A message missing from a language falls back
to English, so a newly scaffolded language reads as English until translated.

The languages are listed in ``locale/languages.toml``, the one list that names
them; ``LANGS`` holds the complete ones (built, tested strictly),
``ALL_LANGS`` every listed one.
"""
from __future__ import annotations

import os
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import notebook_lang
from .plurals import plural_index

LOCALE = Path(__file__).parent / "locale"
LANGUAGES_FILE = LOCALE / "languages.toml"
DEFAULT_LANG = "en"
LANG_ENV = "LABBOOK_LANG"
# Set by the book's build: every key looked up is recorded, so that a notebook is
# re-executed when a message it shows changes (labbook.build).
TRACE_ENV = "LABBOOK_TRACE_MESSAGES"


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    complete: bool
    decimal_comma: bool


def read_languages(path: Path = LANGUAGES_FILE) -> tuple[Language, ...]:
    with open(path, "rb") as handle:
        entries = tomllib.load(handle).get("language", [])
    return tuple(Language(e["code"], e["name"], bool(e.get("complete", False)), bool(e.get("decimal_comma", False)))
                 for e in entries)


LANGUAGES: tuple[Language, ...] = read_languages()
ALL_LANGS: tuple[str, ...] = tuple(language.code for language in LANGUAGES)
LANGS: tuple[str, ...] = tuple(language.code for language in LANGUAGES if language.complete)
LANGUAGE_NAMES: dict[str, str] = {language.code: language.name for language in LANGUAGES}


def decimal_comma(lang: str) -> bool:
    """Whether `lang` writes 0,67 for 0.67 (the student release's i18n answers the same from its data)."""
    return any(language.code == lang and language.decimal_comma for language in LANGUAGES)

# Domain name -> the locale folder that holds its catalogues (each package adds its own).
DOMAINS: dict[str, Path] = {"autograder": LOCALE}
_LOADED: dict[tuple[str, str], dict[str, str]] = {}
# Plural messages (gettext's msgid_plural): key -> its forms, and the catalogue's rule picking one for a count.
_PLURALS: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {}
_RULES: dict[tuple[str, str], str] = {}
_USED: set[str] = set()


def N_(*keys: str) -> tuple[str, ...]:
    """Mark keys that code builds at run time (f"lab02.impl.{name}") so that `make catalogs` finds them."""
    return keys


def NP_(*keys: str) -> tuple[str, ...]:
    """Mark keys whose message has plural forms (gettext's ngettext: "1 point", "2 points"), read with `tn`.

    `make catalogs` gives them a plural entry (msgid_plural, one msgstr per form of the language).
    """
    return keys


def add_domain(name: str, locale_dir: Path) -> None:
    DOMAINS[name] = locale_dir


def po_path(domain: str, lang: str) -> Path:
    return DOMAINS[domain] / lang / "LC_MESSAGES" / f"{domain}.po"


def _messages(domain: str, lang: str) -> dict[str, str]:
    """The translated, non-fuzzy messages of one catalogue (an absent catalogue has none)."""
    if (domain, lang) not in _LOADED:
        from babel.messages.pofile import read_po

        found: dict[str, str] = {}
        plurals: dict[str, tuple[str, ...]] = {}
        path = po_path(domain, lang)
        if path.exists():
            with open(path, "rb") as handle:
                catalog = read_po(handle)
            for message in catalog:
                if not message.id or message.fuzzy:
                    continue
                if message.pluralizable:
                    forms = tuple(message.string)
                    if forms and all(forms):
                        plurals[message.id[0]] = forms
                        found[message.id[0]] = forms[-1]
                elif message.string:
                    found[message.id] = message.string
            _RULES[(domain, lang)] = catalog.plural_expr
        _LOADED[(domain, lang)] = found
        _PLURALS[(domain, lang)] = plurals
    return _LOADED[(domain, lang)]


def _plural_forms(domain: str, lang: str) -> dict[str, tuple[str, ...]]:
    _messages(domain, lang)
    return _PLURALS[(domain, lang)]


def _find(key: str, lang: str) -> str | None:
    for domain in DOMAINS:
        found = _messages(domain, lang).get(key)
        if found is not None:
            return found
    return None


def has(key: str) -> bool:
    return _find(key, DEFAULT_LANG) is not None


def text(key: str, lang: str) -> str:
    """The template of `key` in `lang`, unformatted; English where `lang` lacks it."""
    if os.environ.get(TRACE_ENV):
        _USED.add(key)
    found = _find(key, lang) if lang != DEFAULT_LANG else None
    if found is None:
        found = _find(key, DEFAULT_LANG)
    if found is None:
        raise KeyError(f"no message {key!r} in the English catalogues ({', '.join(DOMAINS)})")
    return found


def t(key: str, lang: str, **params) -> str:
    """The message `key` in `lang`, formatted with `params`."""
    return text(key, lang).format(**params)


def plural_text(key: str, lang: str, n: float) -> str:
    """The template of the plural message `key` in `lang` in its form for the count n (gettext's ngettext)."""
    text(key, lang)  # records the key, and names it if no catalogue has it
    for code in ((lang, DEFAULT_LANG) if lang != DEFAULT_LANG else (DEFAULT_LANG,)):
        for domain in DOMAINS:
            forms = _plural_forms(domain, code).get(key)
            if forms:
                return forms[plural_index(_RULES[(domain, code)], n)]
    raise KeyError(f"the message {key!r} has no plural forms (list it with NP_ and run `make catalogs`)")


def tn(key: str, lang: str, n: float, **params) -> str:
    """The plural message `key` in `lang` in its form for the count n, formatted with `params`."""
    return plural_text(key, lang, n).format(**params)


def plural_forms(key: str, lang: str) -> tuple[str, ...] | None:
    """Every form of a plural message in `lang` (None: not a plural message there)."""
    for domain in DOMAINS:
        forms = _plural_forms(domain, lang).get(key)
        if forms:
            return forms
    return None


def plural_rule(lang: str) -> str:
    """The gettext plural rule of `lang`'s catalogues (the first domain's)."""
    for domain in DOMAINS:
        _messages(domain, lang)
        if (domain, lang) in _RULES:
            return _RULES[(domain, lang)]
    return "(n != 1)"


def used_keys() -> list[str]:
    """Keys looked up in this process (only while TRACE_ENV is set)."""
    return sorted(_USED)


def keys(domain: str | None = None) -> list[str]:
    domains = [domain] if domain else list(DOMAINS)
    return sorted({key for name in domains for key in _messages(name, DEFAULT_LANG)})


def catalogue() -> dict[str, dict[str, str]]:
    """{key: {lang: template}} over every domain and listed language (translated messages only)."""
    result: dict[str, dict[str, str]] = {}
    for domain in DOMAINS:
        for lang in ALL_LANGS:
            plurals = _plural_forms(domain, lang)
            for key, template in _messages(domain, lang).items():
                # a plural message: every form, one a line, so that checks of the texts read them all
                result.setdefault(key, {})[lang] = "\n".join(plurals[key]) if key in plurals else template
    return result


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def normalise_lang(lang: str | None) -> str:
    return notebook_lang.normalise(lang, ALL_LANGS, DEFAULT_LANG)


def current_lang(cwd: Path | None = None) -> str:
    """The language of the running notebook.

    LABBOOK_LANG overrides (the grader sets it); else the `lang` in the running
    notebook's own metadata, found through what the front-end tells the kernel
    (see notebook_lang); else the folder it runs in (``labs/es``...), as
    nbclient and nbval start the kernel there; else English.
    """
    return notebook_lang.running_lang(ALL_LANGS, LANG_ENV, DEFAULT_LANG, cwd)
