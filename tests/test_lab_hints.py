"""Each lab's hints speak the lab's language, and its code cells stay the same in every language.

A stub raises `NotImplementedError(lab.hint("causal_mask"))`: the hint is the message `<lab>.hint.<exercise>` of the
catalogue, in the notebook's language (Lab.hint). No code cell of a lab source carries a hint or a stub comment
in English prose (`# your student id`, `"Hint: ..."`), in any language; the student labs built from them neither.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from autograder import Lab, i18n
from autograder.grading import grade_lab
from autograder.labs import LAB_IDS, get_lab
from autograder.runtime import run_call
from labbook.catalogs import _code_of

ROOT = Path(__file__).resolve().parents[1]
LAB_SOURCES = sorted(ROOT.glob("sources/solutions/*/lab0*.md"))
STUB_HINT = re.compile(r'# STUB: raise NotImplementedError\(lab\.hint\("(\w+)"\)\)$')
# English words that only prose uses: a stub comment holding one of them is English text in every language
PROSE_WORDS = re.compile(r"\b(?:your|hint|decimals?|each|about|sums|the|and|with|then|of|e\.g)\b", re.I)
HINT_WORD = {"en": "Hint:", "es": "Pista:", "de": "Tipp:", "hi-Latn": "Hint:"}


def english_prose_in(code: str) -> list[str]:
    """The lines of a lab's code cell that carry a hint or a stub comment in English prose."""
    found = []
    for line in code.splitlines():
        if re.search(r"""["']Hint\b""", line):
            found.append(line)
        elif "# STUB:" in line and "#" in line.split("# STUB:", 1)[1]:
            comment = line.split("# STUB:", 1)[1].split("#", 1)[1]
            if PROSE_WORDS.search(comment):
                found.append(line)
    return found


def test_no_lab_code_cell_carries_english_prose():
    found = [(path.relative_to(ROOT).as_posix(), line.strip()) for path in LAB_SOURCES
             for _, code in _code_of(path.read_text(encoding="utf-8"), True) for line in english_prose_in(code)]
    assert not found, found


@pytest.mark.parametrize("line", [
    '    # STUB: raise NotImplementedError("Hint: it is the negation of allowed_mask(T)")',
    '# STUB: STUDENT_ID = ""  # your student id, e.g. "s1234567"',
    '# STUB: attention_weights = ...  # 3x3, 2 decimals, each row sums to about 1',
])
def test_english_prose_in_a_stub_is_caught(line):
    assert english_prose_in(line) == [line]


def test_code_like_stub_comments_pass():
    assert english_prose_in('# STUB: qk_scores = ...  # 3x3: [[s00, s01, s02], [s10, s11, s12], [s20, s21, s22]]') == []
    assert english_prose_in('# STUB: attention_weights = ...  # 3x3, round(x, 2), sum(row) ≈ 1') == []


def _hinted() -> list[tuple[str, str]]:
    """(lab, exercise) of every stub that raises a hint, read from the English sources."""
    found = []
    for path in sorted(ROOT.glob("sources/solutions/en/lab0*.md")):
        lab = path.name[:5]
        found += [(lab, match.group(1)) for line in path.read_text(encoding="utf-8").splitlines()
                  if (match := STUB_HINT.search(line.strip()))]
    return found


def test_every_function_stub_raises_its_own_hint():
    hinted = _hinted()
    assert len(hinted) == 18
    for lab, exercise in hinted:
        assert exercise in [e.id for e in get_lab(lab).exercises], (lab, exercise)
    for path in LAB_SOURCES:
        stubs = [line for line in path.read_text(encoding="utf-8").splitlines() if "# STUB: raise" in line]
        assert all(STUB_HINT.search(line.strip()) for line in stubs), path


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_lab_hint_answers_in_the_labs_language(lang):
    for lab, exercise in _hinted():
        hint = Lab(lab, lang=lang).hint(exercise)
        assert hint.startswith(HINT_WORD[lang]), (lab, exercise, lang, hint)
        if lang in ("es", "de"):
            assert hint != Lab(lab, lang="en").hint(exercise)


def test_a_stub_that_raises_its_hint_is_not_answered_yet():
    lab = Lab("lab01", lang="de")

    def causal_mask(T):
        raise NotImplementedError(lab.hint("causal_mask"))

    (result,) = grade_lab(get_lab("lab01"), lambda spec: run_call({"causal_mask": causal_mask}, spec),
                          only=["causal_mask"])
    assert result.status == "not_answered"


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_built_student_labs_raise_the_hint_and_carry_no_english_hint(lang):
    built = sorted((ROOT / "labs" / lang).glob("lab0*.ipynb"))
    assert len(built) == len(LAB_IDS)
    raised = 0
    for path in built:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert not re.search(r"""["']Hint\b|# your\b""", cell.source), (path.name, cell.source)
                raised += cell.source.count("raise NotImplementedError(lab.hint(")
    assert raised == len(_hinted())
