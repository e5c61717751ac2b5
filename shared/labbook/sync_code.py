"""Copy the code cells of the English source into the other languages' sources.

Code cells are identical in every language (tests/test_parity.py); prose is
written per language. After changing code in `sources/<part>/en/<name>.md`, run

    python -m labbook.sync_code [NAME ...]

to put the same code blocks, in order, into es, de and hi-Latn; their prose is
left as it is. It refuses when a language has a different number of code cells.
"""
from __future__ import annotations

import re
import sys

from autograder.i18n import LANGS
from labbook.notebooks import ROOT

BLOCK = re.compile(r"^```\{code-cell\}[^\n]*\n.*?^```[ \t]*$", re.S | re.M)


def sync(name_filter: list[str]) -> list[str]:
    changed = []
    for part in ("course", "solutions"):
        for english in sorted((ROOT / "sources" / part / "en").glob("*.md")):
            if name_filter and not any(n in english.stem for n in name_filter):
                continue
            blocks = BLOCK.findall(english.read_text(encoding="utf-8"))
            for lang in LANGS:
                other = ROOT / "sources" / part / lang / english.name
                if lang == "en" or not other.exists():
                    continue
                text = other.read_text(encoding="utf-8")
                theirs = BLOCK.findall(text)
                if len(theirs) != len(blocks):
                    raise SystemExit(f"{other}: {len(theirs)} code cells, en has {len(blocks)}; align them by hand")
                replacements = iter(blocks)
                new = BLOCK.sub(lambda _: next(replacements), text)
                if new != text:
                    other.write_text(new, encoding="utf-8")
                    changed.append(str(other.relative_to(ROOT)))
    return changed


if __name__ == "__main__":
    for path in sync(sys.argv[1:]):
        print("updated", path)
