"""Every printed sentence is one catalogue message with placeholders, never pieces put together.

Pieces read wrong in another word order: chapter 02 printed
`tr("ch02.allowed_count"), 10, tr("ch02.of"), 16`, which Hinglish reads as
"10 mein se 16", "16 out of 10". The test reads the code cells of every
chapter and lab source and every module of shared/ (as Python, with `ast`) and
fails on:

- a print() whose arguments hold two or more catalogue texts (`tr`, `trn`, `t`,
  `tn`, `text`, `i18n.t`...), counting f-strings, `+` and `.format(...)`;
- a catalogue text put into another one (`t("a", x=t("b"))`, `tr("a").format(x=tr("b"))`).

A print of labelled values (each text the label of the value after it, "no mask: 0.12, padding mask: 0.00") is
one line of a table, not a sentence: those are listed in LABELLED_VALUES, one by one, with the keys they print.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from labbook.catalogs import _code_of

ROOT = Path(__file__).resolve().parents[1]
LOOKUPS = {"tr", "trn", "t", "tn", "_t", "plural_text"}  # and i18n.text (not matplotlib's ax.text)

# Prints of labelled values, reviewed: (source, the literal keys the print holds). Each text names the value that
# follows it, so no word order joins two of them; anything else that prints two texts fails.
LABELLED_VALUES = {
    ("00_start_here.md", ("ch00.sample", "ch00.c01")),  # a label, then an example of a translated title
    ("01_why_mask.md", ("ch01.answer_swapped", "ch01.other_city")),
    ("05_padding.md", ("ch05.target_reads",)),  # a label, then one "target i reads [...]" message per target
    ("06_multi_head.md", ("ch06.col_cache_gb", "ch06.col_weights_gb", "ch06.setting")),  # a table's rows and columns
    ("11_masks_in_production.md", ("ch11.image_reads_ahead", "ch11.text_reads_ahead")),  # two labelled booleans  # label, then the swapped-in word
    ("01_why_mask.md", ("ch01.with_mask", "ch01.row_unchanged")),
    ("01_why_mask.md", ("ch01.without_mask", "ch01.largest_change")),
    ("02_causal_mask.md", ("ch02.row", "ch02.same_as_softmax", "ch02.blocked_exactly_zero")),
    ("02_causal_mask.md", ("ch02.add_before", "ch02.before", "ch02.after")),
    ("02_causal_mask.md", ("ch02.mul_after", "ch02.before", "ch02.after")),
    ("02_causal_mask.md", ("ch02.row", "ch02.allowed_scores", "ch02.weights", "ch02.same_as_softmax")),
    ("03_worked_example.md", ("ch03.query", "ch03.scores_word")),
    ("03_worked_example.md", ("ch03.rounded", "ch03.their_sum")),
    ("03_worked_example.md", ("ch03.mask_bytes", "ch03.score_bytes")),
    ("04_implementing_masks.md", ("ch04.row", "ch04.same_as_inf")),
    ("04_implementing_masks.md", ("ch04.query_reads", "ch04.query_reads")),  # two whole sentences, one per query
    ("05_padding.md", ("ch05.diff_alone", "ch05.no_mask", "ch05.with_mask")),
    ("05_padding.md", ("ch05.loss", "ch05.counted")),
    ("06_multi_head.md", ("ch06.leaks",)),  # a row label (a variable key), then the count and its label
    ("06_multi_head.md", ("ch06.fixed", "ch06.seq1_blocked")),
    ("07_testing_causality.md", ("ch07.last_only",)),
    ("07_testing_causality.md", ("ch07.leaks_found", "ch07.largest")),
    ("07_testing_causality.md", ("ch07.prefix_last", "ch07.prefix_all")),
    ("07_testing_causality.md", ("ch07.detached_leak", "ch07.col_perturbation", "ch07.col_prefix", "ch07.col_jacobian")),
    ("07_testing_causality.md", ("ch07.train_mode", "ch07.eval_mode")),
    ("07_testing_causality.md", ("ch07.expert_choice", "ch07.col_perturbation", "ch07.col_jacobian")),
    ("07_testing_causality.md", ("ch07.future_in_x", "ch07.target_ok")),
    ("07_testing_causality.md", ("ch07.prefix_all",)),
    ("08_common_mistakes.md", ("ch08.reference_vs_cache",)),
    ("09_beyond_the_triangle.md", ("ch09.flex_matches", "ch09.sparsity")),
    ("09_beyond_the_triangle.md", ("ch09.doc_moved",)),
    # chapter 11 belongs to another change of this round (its prints are rewritten there)
    ("11_masks_in_production.md", ("ch11.decode_row", "ch11.no_mask", "ch11.with_mask")),
    ("11_masks_in_production.md", ("ch11.next_position", "ch11.real_tokens", "ch11.cache_length")),
}


def _name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _is_lookup(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and node.args):
        return False
    func = node.func
    return _name(node) in LOOKUPS or (isinstance(func, ast.Attribute) and func.attr == "text"
                                      and isinstance(func.value, ast.Name) and func.value.id == "i18n")


def _lookups(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if _is_lookup(n)]


def _key(call: ast.Call) -> str | None:
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def assembled(code: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line, literal keys) of every print of two or more catalogue texts and every text put into another."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: dict[int, tuple[str, ...]] = {}  # by line: a print of a text put into another is one finding

    def add(line: int, keys: tuple[str, ...]) -> None:
        if len(keys) >= len(found.get(line, ())):
            found[line] = keys

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node) == "print":
            calls = [call for arg in node.args for call in _lookups(arg)]
            if len(calls) >= 2:
                add(node.lineno, tuple(k for k in map(_key, calls) if k))
        elif _is_lookup(node):
            inner = [call for part in node.args[1:] + [kw.value for kw in node.keywords] for call in _lookups(part)]
            if inner:
                add(node.lineno, tuple(k for k in map(_key, [node, *inner]) if k))
        elif isinstance(node, ast.Call) and _name(node) == "format" and isinstance(node.func, ast.Attribute) \
                and _is_lookup(node.func.value):
            inner = [call for part in node.args + [kw.value for kw in node.keywords] for call in _lookups(part)]
            if inner:
                add(node.lineno, tuple(k for k in map(_key, [node.func.value, *inner]) if k))
    return sorted(found.items())


def _without_magics(code: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines())


def sources() -> list[tuple[str, str]]:
    """(name, code) of every code cell of the English sources (the other languages' cells are the same: test_parity)
    and of every module of shared/."""
    found = []
    for path in sorted(ROOT.glob("sources/*/en/*.md")):
        # each cell padded to its place in the file, so that a finding's line is the source's line
        found += [(path.name, "\n" * (first - 1) + _without_magics(code))
                  for first, code in _code_of(path.read_text(encoding="utf-8"), True)]
    for path in sorted((ROOT / "shared").rglob("*.py")):
        found.append((path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")))
    return found


def test_every_printed_sentence_is_one_message():
    unlisted = [(name, line, keys) for name, code in sources() for line, keys in assembled(code)
                if (name, keys) not in LABELLED_VALUES]
    assert not unlisted, "a printed sentence put together from catalogue pieces (make it one message with " \
                         "placeholders):\n" + "\n".join(f"{name}:{line}: {keys}" for name, line, keys in unlisted)


def test_every_listed_print_of_labelled_values_still_exists():
    """A rewritten print leaves the list: an entry that matches nothing any more is removed, not kept as licence."""
    present = {(name, keys) for name, code in sources() for _, keys in assembled(code)}
    assert LABELLED_VALUES <= present, sorted(LABELLED_VALUES - present)


@pytest.mark.parametrize("code,keys", [
    # the planted example: chapter 02's old line, "10 mein se 16" in Hinglish
    ('print(tr("ch02.allowed_count"), int(allowed.sum()), tr("ch02.of"), T * T)', ("ch02.allowed_count", "ch02.of")),
    ('print(f"{tr(\'ch08.row_sums\')} ({tr(\'ch08.after\')}):", sums)', ("ch08.row_sums", "ch08.after")),
    ('note = t("term.report.forbidden", names=n, penalised=t("term.report.penalised"))',
     ("term.report.forbidden", "term.report.penalised")),
    ('print(tr("ch02.a").format(of=tr("ch02.of")))', ("ch02.a", "ch02.of")),
])
def test_a_sentence_put_together_from_pieces_is_caught(code, keys):
    assert [found for _, found in assembled(code)] == [keys]


@pytest.mark.parametrize("code", [
    'print(tr("ch02.allowed_of_total").format(allowed=10, total=16))',
    'print(tr("ch05.query_axis"), f"{x:.4f}")',  # one label, one value
    'print(f"{exercise.id:18}", trn("ch00.points_explained_in", 2).format(points=2, section="02 §0"))',
])
def test_one_message_with_placeholders_passes(code):
    assert assembled(code) == []
