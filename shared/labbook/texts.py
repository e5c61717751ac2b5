"""Text that readers see in outputs (figure titles, axis labels), per language.

Code cells are identical in every language; they ask `tr("ch03.scores")` and
get the text in the notebook's language (see autograder.i18n.current_lang). The
texts live in the `labbook` gettext catalogues in labbook/locale (see
labbook.catalogs and AUTHORING.md).
"""
from __future__ import annotations

from pathlib import Path

from autograder import i18n
from autograder.i18n import current_lang

i18n.add_domain("labbook", Path(__file__).parent / "locale")


def tr(key: str, lang: str | None = None) -> str:
    """The text `key` in the notebook's language (unformatted: placeholders stay for the caller)."""
    return i18n.text(key, lang or current_lang())


def trn(key: str, n: float, lang: str | None = None) -> str:
    """The text `key` in the form its plural rule gives for the count n ("1 point", "2 points"), unformatted.
    The key is listed with `NP_` (autograder.i18n) so that its catalogue entry has plural forms."""
    return i18n.plural_text(key, lang or current_lang(), n)


def texts_with_prefix(prefix: str, lang: str) -> dict[str, str]:
    """Every text whose key starts with `prefix`, keyed by the rest (the explorer's interface)."""
    return {key[len(prefix):]: tr(key, lang) for key in i18n.keys("labbook") if key.startswith(prefix)}


# The chapters' texts with plural forms (read with trn), listed for `make catalogs`.
i18n.NP_("ch00.points_explained_in")
