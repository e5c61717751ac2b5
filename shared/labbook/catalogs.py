"""The message catalogues, kept with Babel: `python -m labbook.catalogs update|check|status`.

    update   extract the keys the code uses (shared/**.py and the code cells of
             sources/*/en/*.md) into a template per domain, then bring every
             language's catalogue in line with it (`make catalogs`)
    check    every complete language has every message, none fuzzy, with the
             English placeholders; no catalogue holds a key the code no longer uses
    status   per language, the share of messages, prose cells and glossary rows
             translated (`make translation-status`)

Code holds keys only; a key is a string literal of the form `<section>.<name>`
with a section below (`lab02.no_mask`, `ch03.scores`). Keys that code builds at
run time are listed with `i18n.N_(...)` next to the code that builds them.
Domains: `autograder` (checks, diagnoses, the grader) in
shared/autograder/locale, `labbook` (chapter output, the explorer, the HTML
edition) in shared/labbook/locale. The English catalogue holds the source text;
in the others each message carries it as a comment (`#. en: ...`) for the
translator.
"""
from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from babel.core import Locale, UnknownLocaleError
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from autograder import i18n

ROOT = Path(__file__).resolve().parents[2]
LABBOOK_LOCALE = Path(__file__).parent / "locale"
DOMAIN_DIRS = {"autograder": i18n.LOCALE, "labbook": LABBOOK_LOCALE}
LABBOOK_SECTIONS = re.compile(r"^(?:ch\d\d|explorer|axis|html|book|fig)$")
# A file name such as "explorer.js", or BeautifulSoup's "html.parser", has the form of a key but is none.
KEY = re.compile(r"^(?!.*\.(?:css|js|html|ipynb|md|py|png|svg|json|po|pot)$)(?!html\.parser$)(?:common|diagnosis|grader|term|release|lab\d\d|ch\d\d|explorer|axis|html|book|fig)"
                 r"\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$")
SCANNED = [("shared/**.py", "labbook.catalogs:extract_keys"),
           ("sources/course/en/*.md", "labbook.catalogs:extract_keys"),
           ("sources/solutions/en/*.md", "labbook.catalogs:extract_keys")]
UNTRANSLATED = "TODO(translate)"
# Catalogue headers carry no dates that change: git keeps the history, and an
# unchanged catalogue must be rewritten byte for byte.
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROJECT = "causal-attention-labbook"


def domain_of(key: str) -> str:
    return "labbook" if LABBOOK_SECTIONS.match(key.split(".")[0]) else "autograder"


# ---------------------------------------------------------------- extraction
def _code_of(text: str, markdown: bool) -> list[tuple[int, str]]:
    """(first line number, code) blocks: the whole file, or a MyST source's code cells."""
    if not markdown:
        return [(1, text)]
    blocks, lines, start = [], text.splitlines(), None
    for number, line in enumerate(lines, 1):
        if start is None and line.startswith("```{code-cell}"):
            start = number + 1
        elif start is not None and line.startswith("```"):
            blocks.append((start, "\n".join(lines[start - 1:number - 1])))
            start = None
    return blocks


def keys_in(text: str, markdown: bool = False) -> list[tuple[int, str]]:
    """(line, key) for every string literal in the code that has the form of a message key."""
    found = []
    for first, code in _code_of(text, markdown):
        # MyST cells may hold magics and `!` lines: tokenize still reads their strings.
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue
        for token in tokens:
            if token.type != tokenize.STRING:
                continue
            try:  # an f-string's literals count too: f"{tr('ch09.full_word')} x{n}"
                tree = ast.parse(token.string, mode="eval")
            except SyntaxError:
                continue
            # the literal parts of an f-string ("ch00.c" in f"ch00.c{n}") are no keys
            parts = {id(value) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for value in node.values}
            for node in ast.walk(tree):
                if id(node) not in parts and isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.match(node.value):
                    found.append((first + token.start[0] - 1, node.value))
    return found


def plural_keys_in(text: str, markdown: bool = False) -> set[str]:
    """The keys listed in `NP_(...)` calls: messages with plural forms."""
    found = set()
    for _first, code in _code_of(text, markdown):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "NP_":
                found |= {arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                          and KEY.match(arg.value)}
    return found


def extract_keys(fileobj, keywords, comment_tags, options):
    """Babel extraction method (see SCANNED): message keys in Python files and MyST code cells; a key listed
    with NP_ is a plural message (as ngettext's: msgid and msgid_plural, here both the key)."""
    text = fileobj.read().decode("utf-8")
    markdown = getattr(fileobj, "name", "").endswith(".md")
    plural = plural_keys_in(text, markdown)
    for line, key in keys_in(text, markdown):
        if key in plural:
            yield line, "ngettext", (key, key), []
        else:
            yield line, None, key, []


def templates(root: Path = ROOT) -> dict[str, Catalog]:
    """One template per domain, with the keys the code uses and where."""
    result = {domain: _new_catalog(domain, None) for domain in DOMAIN_DIRS}
    found = list(extract_from_dir(str(root), SCANNED))
    plural = {key[0] for _f, _l, key, _c, _x in found if isinstance(key, tuple)}
    for filename, _line, key, _comments, _context in found:
        key = key[0] if isinstance(key, tuple) else key
        catalog = result[domain_of(key)]
        message = catalog.get(key)
        if message is None:
            catalog.add((key, key) if key in plural else key, locations=[(filename, None)])
        elif (filename, None) not in message.locations:
            message.locations.append((filename, None))
    return result


def key_of(message) -> str:
    """A message's key: its msgid, the singular one of a plural message."""
    return message.id[0] if isinstance(message.id, (tuple, list)) else message.id


def strings_of(message) -> tuple[str, ...]:
    """A message's text, every form of a plural message."""
    return tuple(message.string) if isinstance(message.string, (tuple, list)) else (message.string,)


# ---------------------------------------------------------------- catalogues
def _locale(code: str) -> Locale | None:
    try:
        return Locale.parse(code.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return None


def _new_catalog(domain: str, lang: str | None) -> Catalog:
    catalog = Catalog(locale=_locale(lang) if lang else None, domain=domain, project=PROJECT, version="1",
                      copyright_holder="the lab book's authors", msgid_bugs_address="",
                      creation_date=EPOCH, revision_date=EPOCH, fuzzy=False,
                      last_translator="the lab book's authors", language_team=lang or "")
    if lang and catalog.locale is None:
        catalog.locale_identifier = lang  # a language Babel does not know still names itself
    return catalog


def po_path(domain: str, lang: str, locale_dir: Path | None = None) -> Path:
    return (locale_dir or DOMAIN_DIRS[domain]) / lang / "LC_MESSAGES" / f"{domain}.po"


def read_catalog(path: Path) -> Catalog | None:
    if not path.exists():
        return None
    with open(path, "rb") as handle:
        return read_po(handle)


def write_catalog(path: Path, catalog: Catalog) -> bool:
    """Write a .po file; True if its bytes changed."""
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=100, sort_output=True, include_lineno=False, ignore_obsolete=True)
    data = buffer.getvalue()
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def aligned(template: Catalog, domain: str, lang: str, existing: Catalog | None, english: Catalog | None) -> Catalog:
    """The catalogue of `lang` with exactly the template's keys, its translations kept."""
    catalog = _new_catalog(domain, lang)
    for entry in template:
        if not entry.id:
            continue
        key = key_of(entry)
        old = existing.get(key) if existing is not None else None
        source = english.get(key) if english is not None else None
        source_text = "\n".join(strings_of(source)) if source is not None else ""
        old_text = "\n".join(strings_of(old)) if old is not None else ""
        flags = {"python-brace-format"} if i18n.placeholders(source_text or old_text) else set()
        if old is not None and old.fuzzy:
            flags.add("fuzzy")
        comments = [] if lang == i18n.DEFAULT_LANG or not source_text else \
            [f"en: {line}" for line in source_text.splitlines() or [""]]
        string = old.string if old is not None else ""
        if entry.pluralizable:  # one form per plural form of the language; a singular text fills none
            forms = list(strings_of(old)) if old is not None and old.pluralizable else []
            string = tuple((forms + [""] * catalog.num_plurals)[:catalog.num_plurals])
        elif old is not None and old.pluralizable:
            string = ""
        message = catalog.add(entry.id, string=string, locations=entry.locations, auto_comments=comments)
        # Babel derives python-brace-format from the msgid, which is a key here: set it from the English text,
        # so that translators' tools (Poedit, msgfmt --check) compare the placeholders.
        message.flags |= flags
    return catalog


def update(root: Path = ROOT, langs: tuple[str, ...] | None = None) -> list[Path]:
    """`make catalogs`: templates from the code, every language's catalogue aligned. Returns changed files."""
    changed = []
    for domain, template in templates(root).items():
        locale_dir = DOMAIN_DIRS[domain]
        if write_catalog(locale_dir / f"{domain}.pot", template):
            changed.append(locale_dir / f"{domain}.pot")
        english = read_catalog(po_path(domain, i18n.DEFAULT_LANG))
        for lang in langs or i18n.ALL_LANGS:
            path = po_path(domain, lang)
            catalog = aligned(template, domain, lang, read_catalog(path), english)
            if write_catalog(path, catalog):
                changed.append(path)
            if lang == i18n.DEFAULT_LANG:
                english = catalog
    return changed


# ---------------------------------------------------------------- checks and status
@dataclass(frozen=True)
class Problem:
    path: Path
    key: str
    what: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}: {self.key}: {self.what}"


def problems(lang: str, domain: str, template: Catalog, locale_dir: Path | None = None) -> list[Problem]:
    """Missing, fuzzy, placeholder-mismatched and orphan messages of one catalogue."""
    path = po_path(domain, lang, locale_dir)
    catalog = read_catalog(path)
    english = read_catalog(po_path(domain, i18n.DEFAULT_LANG, locale_dir))
    if catalog is None:
        return [Problem(path, "*", "no catalogue")]
    found = []
    entries = {key_of(entry): entry for entry in template if entry.id}
    for key in sorted(entries):
        message = catalog.get(key)
        if message is None or not all(strings_of(message)):
            found.append(Problem(path, key, "missing"))
            continue
        if entries[key].pluralizable != message.pluralizable:
            found.append(Problem(path, key, "plural forms expected (run `make catalogs`)" if entries[key].pluralizable
                                 else "no plural forms expected (run `make catalogs`)"))
            continue
        if message.fuzzy:
            found.append(Problem(path, key, "fuzzy"))
        source = english.get(key) if english is not None else None
        if source is None or not all(strings_of(source)):
            continue
        english_names = set().union(*map(i18n.placeholders, strings_of(source)))
        names = set().union(*map(i18n.placeholders, strings_of(message)))
        # a plural form may leave out the count ("one point"), but no form may name what English does not
        if names != english_names or any(not i18n.placeholders(form) <= english_names for form in strings_of(message)):
            found.append(Problem(path, key, f"placeholders {sorted(names)}, English has {sorted(english_names)}"))
    for message in catalog:
        if message.id and key_of(message) not in entries:
            found.append(Problem(path, key_of(message), "not used by the code (run `make catalogs`)"))
    return found


def share(done: int, total: int) -> float:
    return 100.0 if total == 0 else 100.0 * done / total


def catalog_counts(lang: str) -> tuple[int, int]:
    done = total = 0
    for domain in DOMAIN_DIRS:
        template = read_catalog(DOMAIN_DIRS[domain] / f"{domain}.pot")
        catalog = read_catalog(po_path(domain, lang))
        for entry in template or []:
            if entry.id:
                total += 1
                message = catalog.get(key_of(entry)) if catalog is not None else None
                done += bool(message is not None and all(strings_of(message)) and not message.fuzzy)
    return done, total


def prose_counts(lang: str, root: Path = ROOT) -> tuple[int, int]:
    """Markdown cells of the language's sources, and those not marked untranslated."""
    import jupytext

    done = total = 0
    for part in ("course", "solutions"):
        for english in sorted((root / "sources" / part / i18n.DEFAULT_LANG).glob("*.md")):
            path = root / "sources" / part / lang / english.name
            count = sum(cell.cell_type == "markdown" for cell in jupytext.read(english, fmt="md:myst").cells)
            total += count
            if path.exists():
                cells = [c for c in jupytext.read(path, fmt="md:myst").cells if c.cell_type == "markdown"]
                done += min(count, sum(UNTRANSLATED not in cell.source for cell in cells))
    return done, total


def glossary_rows(text: str) -> list[str]:
    """The data rows of the glossary's tables (not headers, not separators)."""
    rows = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        rows += [line for line in lines[2:] if not re.fullmatch(r"\|[\s|:-]*", line)]
    return rows


def glossary_counts(lang: str, root: Path = ROOT) -> tuple[int, int]:
    total = len(glossary_rows((root / "course" / i18n.DEFAULT_LANG / "glossary.md").read_text()))
    path = root / "course" / lang / "glossary.md"
    rows = glossary_rows(path.read_text()) if path.exists() else []
    return min(total, sum(UNTRANSLATED not in row for row in rows)), total


def status_lines(root: Path = ROOT) -> list[str]:
    lines = [f"{'language':<10} {'complete':<9} {'messages':>16} {'prose cells':>16} {'glossary rows':>16}"]
    for language in i18n.LANGUAGES:
        parts = [catalog_counts(language.code), prose_counts(language.code, root), glossary_counts(language.code, root)]
        cells = [f"{share(*p):5.1f} % {p[0]:>4}/{p[1]:<4}" for p in parts]
        lines.append(f"{language.code:<10} {'yes' if language.complete else 'no':<9} " + " ".join(f"{c:>16}" for c in cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("update", "check", "status"))
    args = parser.parse_args(argv)
    if args.command == "update":
        changed = update()
        print("\n".join(f"updated {p.relative_to(ROOT)}" for p in changed) or "catalogues up to date")
        return 0
    if args.command == "status":
        print("\n".join(status_lines()))
        return 0
    found = []
    for domain, template in templates().items():
        for lang in i18n.LANGS:
            found += problems(lang, domain, template)
    print("\n".join(map(str, found)) or "every complete language has every message")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
