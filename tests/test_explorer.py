"""The explorer's reference rules for chapter 11's masks: packed documents and attention sinks.

Each expected grid is written out by hand, one string per query row ("1" may
read, "." blocked), so that the test does not repeat the rule it checks.
"""
import pytest

from labbook.explorer import Settings, cell_state, explorer, grid, has_target, worked_example


def allowed(s: Settings) -> list[str]:
    return ["".join("1" if c["allowed"] else "." for c in row) for row in grid(s)]


def reasons(s: Settings) -> list[list[str]]:
    return [[c["reason"] for c in row] for row in grid(s)]


def test_documents_make_a_block_diagonal_causal_mask():
    s = Settings(T=8, padding=(0, 0), documents=(3, 2, 3))
    assert allowed(s) == [
        "1.......",
        "11......",
        "111.....",
        "...1....",
        "...11...",
        ".....1..",
        ".....11.",
        ".....111",
    ]


def test_the_boundary_between_two_documents():
    s = Settings(T=8, padding=(0, 0), documents=(3, 2, 3))
    # query 3 is the first token of document 1: keys 0..2 belong to document 0
    assert [cell_state(s, 3, j)["reason"] for j in range(8)] == [
        "document", "document", "document", "", "future", "future", "future", "future"]
    # query 2 is the last token of document 0: its next key is in the future, not "document"
    assert [cell_state(s, 2, j)["reason"] for j in range(4)] == ["", "", "", "future"]
    assert s.starts == [3, 5]
    assert [s.doc(j) for j in range(8)] == [0, 0, 0, 1, 1, 2, 2, 2]


def test_the_last_query_of_a_document_has_no_target():
    s = Settings(T=8, padding=(0, 0), documents=(3, 2, 3))
    assert [has_target(s, i) for i in range(8)] == [True, True, False, True, False, True, True, False]
    padded = Settings(T=6, padding=(0, 2), sequence=1, documents=(2, 4))
    assert [has_target(padded, i) for i in range(6)] == [True, False, True, False, False, False]


def test_documents_without_the_causal_mask_block_other_documents_only():
    s = Settings(T=5, padding=(0, 0), causal=False, documents=(2, 3))
    assert allowed(s) == [
        "11...",
        "11...",
        "..111",
        "..111",
        "..111",
    ]
    # keys later in the same document leak; those of the next document stay blocked
    assert cell_state(s, 0, 1) == {"allowed": True, "reason": "", "leak": "target"}
    assert cell_state(s, 1, 2) == {"allowed": False, "reason": "document", "leak": ""}


def test_one_document_or_none_is_the_causal_mask():
    causal = ["1....", "11...", "111..", "1111.", "11111"]
    assert allowed(Settings(T=5, padding=(0, 0))) == causal
    assert allowed(Settings(T=5, padding=(0, 0), documents=(5,))) == causal


def test_sinks_with_a_window():
    s = Settings(T=8, padding=(0, 0), window=3, sinks=1)
    assert allowed(s) == [
        "1.......",
        "11......",
        "111.....",
        "1111....",
        "1.111...",
        "1..111..",
        "1...111.",
        "1....111",
    ]
    # key 0 is a sink only where the window alone would block it
    assert [row[0] for row in reasons(s)] == ["", "", "", "sink", "sink", "sink", "sink", "sink"]
    assert reasons(s)[7] == ["sink", "window", "window", "window", "window", "", "", ""]


def test_two_sinks_match_chapter_11s_rule():
    # chapter 11 §3: T, W, n_sink = 10, 3, 2; a sink inside the window is not counted twice
    s = Settings(T=10, padding=(0, 0), window=3, sinks=2)
    assert [row.count("1") for row in allowed(s)] == [1, 2, 3, 4, 5, 5, 5, 5, 5, 5]
    assert allowed(s)[9] == "11.....111"


def test_zero_sinks_is_the_plain_window():
    with_zero = Settings(T=6, padding=(0, 0), window=2, sinks=0)
    assert allowed(with_zero) == ["1.....", "11....", ".11...", "..11..", "...11.", "....11"]
    assert "sink" not in {r for row in reasons(with_zero) for r in row}


def test_sinks_without_a_window_change_nothing():
    s = Settings(T=6, padding=(0, 0), sinks=3)
    assert grid(s) == grid(Settings(T=6, padding=(0, 0)))


def test_sinks_do_not_cross_a_document_boundary():
    s = Settings(T=6, padding=(0, 0), window=2, sinks=1, documents=(3, 3))
    assert allowed(s) == ["1.....", "11....", "111...", "...1..", "...11.", "....11"]
    assert cell_state(s, 2, 0)["reason"] == "sink"
    assert cell_state(s, 5, 0)["reason"] == "document"


def test_sinks_with_the_kv_cache_are_absolute_positions():
    s = Settings(T=8, padding=(0, 0), window=2, sinks=1, offset=5)
    assert allowed(s) == ["1...11..", "1....11.", "1.....11"]


def test_padding_still_wins():
    s = Settings(T=6, padding=(0, 2), sequence=1, documents=(3, 3))
    assert [c["reason"] for c in grid(s)[4]] == ["document", "document", "document", "", "pad", "pad"]


def test_the_worked_example_keeps_the_documents_of_its_three_positions():
    # documents (1, 2, 5): the worked example's tokens 0 | 1 2
    ex = worked_example(Settings(T=8, padding=(0, 0), documents=(1, 2, 5)))
    assert [[st["allowed"] for st in row] for row in ex["states"]] == [
        [True, False, False], [False, True, False], [False, True, True]]
    assert ex["weights"][0] == [1.0, 0.0, 0.0]
    assert ex["weights"][1] == [0.0, 1.0, 0.0]
    # a sink with a window of one key: the last row reads key 0 and itself
    ex = worked_example(Settings(T=6, padding=(0, 0), window=1, sinks=1))
    assert [[st["allowed"] for st in row] for row in ex["states"]] == [
        [True, False, False], [True, True, False], [True, False, True]]


@pytest.mark.parametrize("documents", [(3, 2), (3, 0, 5), (9,)])
def test_documents_must_cover_the_row(documents):
    with pytest.raises(ValueError, match="documents"):
        explorer(T=8, documents=documents, lang="en")


def test_the_static_view_and_the_text_show_the_new_reasons():
    widget = explorer(T=8, window=3, sinks=1, documents=(4, 4), lang="en")
    page = widget._repr_html_()
    static = page[page.index('<div class="lbx-static">'):page.index('<div class="lbx-app"')]
    assert 'data-reason="document"' in static and 'data-reason="sink"' in static
    assert static.count('data-doc-start="true"') == 1 + 1 + 8  # its header, its row, its column
    text = repr(widget).splitlines()
    assert text[4] == "q3  ◆ ✓ ✓ ✓ · · · ·"
    assert text[5] == "q4  ≠ ≠ ≠ ≠ ✓ · · ·"
