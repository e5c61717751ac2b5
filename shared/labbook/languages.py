"""Scaffold a new language of the book: `python -m labbook.languages new xx [--name NAME] [--decimal-comma]`.

`make new-language LANG=xx` runs it. It writes everything a language needs,
untranslated and marked so, and changes no Python file:

- an entry in shared/autograder/locale/languages.toml, with complete = false
  (an incomplete language is built nowhere and left out of the strict tests);
- its catalogues (shared/*/locale/xx/LC_MESSAGES/*.po): every message empty,
  each with the English text as a comment for the translator;
- sources/course/xx/ and sources/solutions/xx/: the English sources with the
  code cells as they are and every prose cell marked `<!-- TODO(translate) -->`;
- course/xx/glossary.md: the English glossary, every row marked TODO(translate).

`make translation-status` then shows what is left; when it shows 100 %, set
complete = true in languages.toml and run `make build`.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from autograder import i18n
from labbook import catalogs

ROOT = catalogs.ROOT
CODE = re.compile(r"^[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-[A-Z]{2})?$")
MARK = f"<!-- {catalogs.UNTRANSLATED} -->"


class ScaffoldError(Exception):
    pass


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def add_to_list(code: str, name: str, decimal_comma: bool, path: Path = i18n.LANGUAGES_FILE) -> None:
    entry = (f"\n[[language]]\ncode = {_toml_string(code)}\nname = {_toml_string(name)}\ncomplete = false\n"
             f"decimal_comma = {'true' if decimal_comma else 'false'}\n")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n") + "\n" + entry, encoding="utf-8")


def marked_source(english: Path) -> str:
    """The English MyST source with every prose cell marked for translation; code cells byte for byte.

    Works on the text, not through jupytext, so that every code block stays exactly as written."""
    lines = english.read_text(encoding="utf-8").splitlines(keepends=True)
    out, in_front, fence, at_cell_start = [], lines[:1] == ["---\n"], None, True
    for number, line in enumerate(lines):
        if in_front:
            out.append(line)
            in_front = not (number > 0 and line == "---\n")
            continue
        if fence is not None:
            out.append(line)
            if line.rstrip() == fence:
                # jupytext reads a fenced block in the prose as a cell of its own: the prose after it is a new cell
                fence, at_cell_start = None, True
            continue
        if line.startswith("```{code-cell}"):
            fence = "```"
            out.append(line)
            continue
        if line.strip() == "+++" or line.startswith("+++ "):
            at_cell_start = True
            out.append(line)
            continue
        if at_cell_start and line.strip():
            out.append(f"{MARK}\n")
            at_cell_start = False
        if line.startswith("```"):
            fence = line[:len(line) - len(line.lstrip("`"))]  # a fence inside prose: not a cell boundary
        out.append(line)
    return "".join(out)


def marked_glossary(text: str) -> str:
    """The English glossary with the first cell of every data row marked for translation."""
    rows = set(catalogs.glossary_rows(text))
    lines = []
    for line in text.splitlines():
        if line in rows:
            line = re.sub(r"^\|\s*", f"| {catalogs.UNTRANSLATED} ", line, count=1)
        lines.append(line)
    return "\n".join(lines) + "\n"


def scaffold(code: str, name: str, decimal_comma: bool = False, root: Path = ROOT) -> list[Path]:
    if not CODE.match(code):
        raise ScaffoldError(f"{code!r} is not a language code such as fr, pt-BR or hi-Latn")
    if code in i18n.ALL_LANGS:
        raise ScaffoldError(f"{code} is already in {i18n.LANGUAGES_FILE.relative_to(root)}")
    written = []
    for part in ("course", "solutions"):
        folder = root / "sources" / part / code
        if folder.exists():
            raise ScaffoldError(f"{folder.relative_to(root)} exists already")
    add_to_list(code, name, decimal_comma)
    written.append(i18n.LANGUAGES_FILE)
    written += catalogs.update(root, langs=(code,))
    for part in ("course", "solutions"):
        for english in sorted((root / "sources" / part / i18n.DEFAULT_LANG).glob("*.md")):
            target = root / "sources" / part / code / english.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(marked_source(english), encoding="utf-8")
            written.append(target)
    glossary = root / "course" / code / "glossary.md"
    glossary.parent.mkdir(parents=True, exist_ok=True)
    glossary.write_text(marked_glossary((root / "course" / i18n.DEFAULT_LANG / "glossary.md").read_text()), encoding="utf-8")
    written.append(glossary)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("new", help="scaffold a language")
    new.add_argument("code", help="the language's code, the name of its folders (fr, pt-BR, hi-Latn)")
    new.add_argument("--name", help="how the index names the language, in itself (default: from Babel, else the code)")
    new.add_argument("--decimal-comma", action="store_true", help="its prose writes 0,67")
    args = parser.parse_args(argv)
    locale = catalogs._locale(args.code)
    name = args.name or (locale.get_display_name(locale).capitalize() if locale else args.code)
    try:
        written = scaffold(args.code, name, args.decimal_comma)
    except ScaffoldError as error:
        print(f"new-language: {error}", file=sys.stderr)
        return 2
    print(f"{args.code} ({name}) scaffolded: {len(written)} files, nothing translated yet.")
    print("Next: translate them, watch `make translation-status`, then set complete = true in "
          f"{i18n.LANGUAGES_FILE.relative_to(ROOT)} and run `make build`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
