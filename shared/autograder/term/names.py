"""Names and ids read from zips, folders and CSV files, made safe where they enter the term.

Everything a student or an LMS export can put into a name passes through
here once, in the intake: the engine's cleaning (`sanitize.text`: terminal
escapes, controls, lone surrogates and bidirectional overrides become U+FFFD,
one line, a length cap), then invisible format characters (zero-width
spaces and joiners, the soft hyphen, the byte-order mark, word joiners:
Unicode's category Cf and a few invisible letters). A display name loses
them; an id keeps them visible as `<U+200B>`, so that `ali<U+200B>ce` can
never pass for `alice` nor silently become her. `skeleton` folds what only
looks different (case, compatibility forms, invisible characters, Cyrillic
and Greek letters drawn like Latin ones) so that look-alike ids can be flagged.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ..grader import sanitize

ID_CHARS = 200
NAME_CHARS = 200
SHOWN_CHARS = 300

# letters that are no format characters but draw nothing (Hangul fillers, the combining grapheme joiner)
_INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u3164\uffa0\u180e")


def _invisible(char: str) -> bool:
    return char in _INVISIBLE_LETTERS or (not char.isascii() and unicodedata.category(char) == "Cf")


def _clean(text, limit: int) -> str:
    return sanitize.text("" if text is None else str(text), limit, newlines=False)


def name(text, limit: int = NAME_CHARS) -> str:
    """A person's name for display: cleaned, invisible characters removed, spaces collapsed, NFC."""
    value = _clean(text, limit)
    if not value.isascii():
        value = unicodedata.normalize("NFC", "".join(c for c in value if not _invisible(c)))
    return " ".join(value.split())


def ident(text, limit: int = ID_CHARS) -> str:
    """An id (student id, LMS id, file stem): cleaned and stripped, invisible characters shown as <U+XXXX>."""
    value = _clean(text, limit)
    if not value.isascii():
        value = "".join(f"<U+{ord(c):04X}>" if _invisible(c) else c for c in value)
    return value.strip()


def shown(text, limit: int = SHOWN_CHARS) -> str:
    """A file or member name in a message, a summary line or a CSV cell: cleaned, invisible characters shown."""
    value = _clean(text, limit)
    if not value.isascii():
        value = "".join(f"<U+{ord(c):04X}>" if _invisible(c) else c for c in value)
    return value


def had_invisible(text) -> bool:
    return any(_invisible(c) for c in str(text or "") if not c.isascii())


# Letters of other scripts drawn like Latin ones (after casefolding), from Unicode's confusables list
# (TR39 confusables.txt): the ones a keyboard of those scripts types. Enough to catch a Cyrillic `а`
# in `аlice`; a full TR39 skeleton would also fold rarer symbols.
_CONFUSABLE = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "һ": "h", "ӏ": "l", "ɡ": "g", "ь": "b", "п": "n", "г": "r",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "ζ": "z", "μ": "u", "ω": "w", "ϲ": "c", "ϳ": "j",
    # digits and letters that pass for each other in most fonts
    "0": "o", "1": "l", "|": "l",
})


_SHOWN_MARK = re.compile(r"<U\+[0-9A-F]{4,6}>")


def skeleton(text: str) -> str:
    """What `text` looks like: NFKC, casefolded, invisible characters (and ident's marks of them) gone,
    confusable letters folded."""
    value = _SHOWN_MARK.sub("", str(text))
    value = unicodedata.normalize("NFKC", "".join(c for c in value if not _invisible(c)))
    value = value.casefold().translate(_CONFUSABLE)
    value = "".join(c for c in unicodedata.normalize("NFD", value) if unicodedata.category(c) != "Mn")
    return "".join(value.split())


def lookalikes(ids: Iterable[str]) -> dict[str, list[str]]:
    """id -> the other ids of the class that look the same (equal skeletons), for the ids that have any."""
    groups: dict[str, list[str]] = {}
    for value in dict.fromkeys(ids):
        groups.setdefault(skeleton(value), []).append(value)
    found: dict[str, list[str]] = {}
    for members in groups.values():
        if len(members) > 1:
            for value in members:
                found[value] = sorted(m for m in members if m != value)
    return found


def tokens(text: str) -> list[str]:
    """The words of a person's name for comparing: accents, case, punctuation and invisible characters dropped."""
    value = unicodedata.normalize("NFKD", "".join(c for c in str(text) if not _invisible(c)))
    value = "".join(c for c in value if unicodedata.category(c) != "Mn").casefold()
    words, current = [], []
    for char in value:
        if char.isalnum():
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


MAX_NAME_WORDS = 6  # word orders compared; a longer name is compared in its own order and reversed


def same_person(written: str, roster_name: str) -> bool:
    """Whether the name an LMS wrote into a file name is the roster's name for that person.

    The LMS writes the name in its own form: Moodle `First Last` with `_` made a space, Canvas
    `lastfirst` (its sortable name `Last, First` without anything but word characters, lowercased).
    So the words are compared without regard to accents, case or punctuation, in any order, and
    also run together (Canvas drops the spaces); a group's name before them (Moodle's team
    submissions) is allowed.
    """
    file_words, roster_words = tokens(written), tokens(roster_name)
    if not file_words or not roster_words:
        return not file_words and not roster_words
    if sorted(file_words) == sorted(roster_words):
        return True
    if file_words[-len(roster_words):] == roster_words:
        return True  # Moodle's team submissions write `<group>-<full name>`
    squeezed = "".join(file_words)
    if len(squeezed) != sum(len(w) for w in roster_words):
        return False
    if len(roster_words) > MAX_NAME_WORDS:
        return squeezed in ("".join(roster_words), "".join(reversed(roster_words)))
    from itertools import permutations

    return any("".join(order) == squeezed for order in permutations(roster_words))
