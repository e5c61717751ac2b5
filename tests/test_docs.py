"""The accessibility statement names tests and pictures that exist: a renamed test cannot leave it stale."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATEMENT = ROOT / "docs" / "accessibility" / "README.md"


def test_every_test_file_the_statement_names_exists():
    text = STATEMENT.read_text()
    named = set(re.findall(r"`((?:tests/)?(?:browser/)?test_[a-z0-9_]+\.py)`", text))
    assert len(named) >= 6, named
    missing = [name for name in named if not (ROOT / name).is_file() and not list((ROOT / "tests").rglob(name))]
    assert missing == []


def test_every_picture_of_the_statement_exists_and_has_a_text_alternative():
    text = STATEMENT.read_text()
    pictures = re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", text)
    assert len(pictures) == 2
    for alternative, path in pictures:
        assert len(alternative) > 40, path
        assert (STATEMENT.parent / path).is_file(), path
