"""Text readers see in outputs (figure titles, axis labels), per language (the release's dumped catalogue)."""
from __future__ import annotations

from autograder import i18n
from autograder.i18n import current_lang


def tr(key: str, lang: str | None = None) -> str:
    """The text `key` in the notebook's language (unformatted: placeholders stay for the caller)."""
    return i18n.text(key, lang or current_lang())


def trn(key: str, n: float, lang: str | None = None) -> str:
    """The text `key` in the form its plural rule gives for the count n, unformatted."""
    return i18n.plural_text(key, lang or current_lang(), n)


def texts_with_prefix(prefix: str, lang: str) -> dict[str, str]:
    """Every text whose key starts with `prefix`, keyed by the rest (the explorer's interface)."""
    return {key[len(prefix):]: tr(key, lang) for key in i18n.keys("labbook") if key.startswith(prefix)}
