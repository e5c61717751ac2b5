"""`make new-language LANG=xx`: everything a language needs, untranslated and marked, and no Python file touched."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]


def digests(root: Path, pattern: str) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob(pattern) if "__pycache__" not in p.parts}


def python(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root / "shared"), "LABBOOK_ROOT": str(root)}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def french(tmp_path_factory):
    root = tmp_path_factory.mktemp("book")
    for name in ("shared", "sources"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for lang in ("en", "es", "de", "hi-Latn"):
        (root / "course" / lang).mkdir(parents=True)
        shutil.copy2(ROOT / "course" / lang / "glossary.md", root / "course" / lang / "glossary.md")
    before = digests(root, "*.py")
    scaffold = python(root, "-m", "labbook.languages", "new", "fr", "--name", "Français")
    status = python(root, "-m", "labbook.catalogs", "status")
    check = python(root, "-m", "labbook.catalogs", "check")
    listed = python(root, "-c", "from autograder import i18n; from labbook.notebooks import targets; import json; "
                                "print(json.dumps([i18n.LANGS, i18n.ALL_LANGS, sorted({t.lang for t in targets()})]))")
    return {"root": root, "before": before, "scaffold": scaffold, "status": status, "check": check,
            "listed": json.loads(listed.stdout) if listed.returncode == 0 else listed.stderr}


def test_it_changes_no_python_file(french):
    assert french["scaffold"].returncode == 0, french["scaffold"].stderr
    assert digests(french["root"], "*.py") == french["before"]


def test_status_shows_french_at_zero_and_the_others_complete(french):
    lines = {line.split()[0]: line for line in french["status"].stdout.splitlines()[1:]}
    assert lines["fr"].split()[1] == "no" and lines["fr"].count(" 0.0 %") == 3, lines["fr"]
    for lang in ("en", "es", "de", "hi-Latn"):
        assert lines[lang].split()[1] == "yes" and lines[lang].count("100.0 %") == 3, lines[lang]


def test_the_new_language_is_listed_but_not_built_nor_checked(french):
    complete, listed, built = french["listed"]
    assert "fr" in listed and "fr" not in complete and "fr" not in built
    assert french["check"].returncode == 0, french["check"].stdout


def test_its_sources_have_the_english_code_and_marked_prose(french):
    root = french["root"]
    for part in ("course", "solutions"):
        for english in sorted((root / "sources" / part / "en").glob("*.md")):
            ours = jupytext.read(root / "sources" / part / "fr" / english.name, fmt="md:myst")
            theirs = jupytext.read(english, fmt="md:myst")
            assert [c.source for c in ours.cells if c.cell_type == "code"] == \
                   [c.source for c in theirs.cells if c.cell_type == "code"], english.name
            prose = [c.source for c in ours.cells if c.cell_type == "markdown"]
            assert prose and all(s.startswith("<!-- TODO(translate) -->") for s in prose), english.name


def test_its_catalogues_hold_every_message_untranslated_with_the_english_beside(french):
    from babel.messages.pofile import read_po

    path = french["root"] / "shared/autograder/locale/fr/LC_MESSAGES/autograder.po"
    with open(path, "rb") as handle:
        catalog = [m for m in read_po(handle) if m.id]
    from labbook.catalogs import strings_of

    # every form empty, a plural message's too (one msgstr[n] per plural form of French)
    assert len(catalog) > 100 and all(not any(strings_of(m)) for m in catalog)
    assert any(m.pluralizable for m in catalog)
    passed = next(m for m in catalog if m.id == "common.passed")
    assert passed.auto_comments == ["en: ✅ {name}: correct."]


def test_a_second_scaffold_of_the_same_language_is_refused(french):
    again = python(french["root"], "-m", "labbook.languages", "new", "fr")
    assert again.returncode == 2 and "already" in again.stderr


def test_a_malformed_code_is_refused(french):
    bad = python(french["root"], "-m", "labbook.languages", "new", "C.UTF-8")
    assert bad.returncode == 2 and "not a language code" in bad.stderr
