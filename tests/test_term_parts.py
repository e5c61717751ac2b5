"""End to end, on small batches: forbidden APIs (flagged, penalised only when asked), an odd nbgrader
timestamp, and hand-graded parts that count once the instructor's sheet comes back.

Each step calls the command line's main() in this process (what `python -m autograder` runs, with its exit
code and printed text); the real command is proven in test_term_terms.py. One job slot each: a second warm
worker costs more than it saves on two notebooks."""
import json
from pathlib import Path

import pytest
from corpus.cli_here import run_here
from corpus.notebooks import with_definition

from autograder.labs import get_lab

LAB01_FULL = get_lab("lab01").max_score

ROOT = Path(__file__).resolve().parents[1]

SDPA = '''def causal_attention(Q, K, V):
    T, d_k = Q.shape[-2], Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return F.scaled_dot_product_attention(Q, K, V, is_causal=True), weights
'''


@pytest.fixture
def run(capsys):
    """run(*args, check=True): `python -m autograder ARGS` through the command line's own main() here."""
    return lambda *args, check=True: run_here(capsys, *args, check=check)


def test_forbidden_api_is_flagged_and_penalised_only_when_asked(tmp_path, run):
    solution = json.loads((ROOT / "solutions/en/lab02_causal_attention.ipynb").read_text())
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "honest.ipynb").write_text(json.dumps(solution))
    (subs / "shortcut.ipynb").write_text(json.dumps(with_definition(solution, "causal_attention", SDPA)))
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nhonest\nshortcut\n")
    out = tmp_path / "out"
    first = run("grade", "lab02", subs, "--out", out, "--roster", roster, "--jobs", "1", "--quiet", "--seed", "4")
    assert "forbidden API: shortcut: causal_attention uses F.scaled_dot_product_attention" in first.stdout
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    full = rows["honest"]["score"]
    assert rows["honest"]["forbidden"] == {}
    assert rows["shortcut"]["forbidden"] == {"causal_attention": ["F.scaled_dot_product_attention"]}
    assert rows["shortcut"]["score"] == full  # flagged, not penalised
    run("report", out)
    assert "shortcut: causal_attention uses F.scaled_dot_product_attention (forbidden by the exercise)." \
        in (out / "report.html").read_text()

    run("grade", "lab02", subs, "--out", out, "--jobs", "2", "--quiet", "--seed", "4", "--penalise-forbidden")
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    assert rows["shortcut"]["exercises"]["causal_attention"]["points"] == 0
    assert rows["shortcut"]["score"] == full - 4  # causal_attention is worth 4 points in lab02
    assert rows["honest"]["score"] == full
    assert "0 points for it" in (out / "feedback" / "shortcut.md").read_text()
    run("grade", "lab02", subs, "--out", out, "--jobs", "2", "--quiet", "--seed", "4")  # the choice is kept
    assert json.loads((out / "grades.json").read_text())["policy"]["penalise_forbidden"] is True
    run("grade", "lab02", subs, "--out", out, "--jobs", "2", "--quiet", "--seed", "4", "--no-penalise-forbidden")
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    assert rows["shortcut"]["score"] == full


def test_an_odd_nbgrader_timestamp_is_a_note_and_on_time(tmp_path, run):
    notebook = (ROOT / "solutions/en/lab01_masks.ipynb").read_text()
    for student, stamp in (("ann", "2026-12-12 10:00:00.000001 UTC"), ("bob", "Tuesday, about noon")):
        folder = tmp_path / "submitted" / student / "lab01"
        folder.mkdir(parents=True)
        (folder / "lab01_masks.ipynb").write_text(notebook)
        (folder / "timestamp.txt").write_text(stamp)
    out = tmp_path / "out"
    run("grade", "lab01", tmp_path / "submitted", "--out", out, "--layout", "nbgrader", "--due",
        "2026-12-10T23:59:00+01:00", "--late-per-day", "10", "--jobs", "1", "--quiet", "--seed", "4")
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    assert (rows["ann"]["late"], rows["ann"]["late_days"], rows["ann"]["score"]) == (True, 2, LAB01_FULL * 0.8)
    assert (rows["bob"]["late"], rows["bob"]["score"]) == (False, LAB01_FULL)
    assert rows["bob"]["notes"] == ["The hand-in time could not be read, so this submission counts as on time."]

    # bad input on a rerun: a clear message naming the line, and the gradebook as it was
    before = {name: (out / name).read_bytes() for name in ("grades.json", "grades.csv")}
    bad = tmp_path / "overrides.csv"
    bad.write_text("student,exercise,points,reason\nbob,late_days,1,was late\nzed,causal_mask,1,typo\n")
    again = run("grade", "lab01", tmp_path / "submitted", "--out", out, "--overrides", bad, "--seed", "4",
                "--quiet", check=False)
    assert again.returncode == 2 and f"overrides {bad} line 3: unknown student 'zed'" in again.stderr
    unknown = run("grade", "lab01", tmp_path / "submitted", "--out", out, "--regrade", "zed", "--seed", "4",
                  "--quiet", check=False)
    assert unknown.returncode == 2 and "--regrade zed: no submission of that student" in unknown.stderr
    assert {name: (out / name).read_bytes() for name in before} == before
    good = tmp_path / "good.csv"
    good.write_text("student,exercise,points,reason\nbob,late_days,1,was late\n")
    run("grade", "lab01", tmp_path / "submitted", "--out", out, "--overrides", good, "--seed", "4", "--quiet")
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    assert (rows["bob"]["late_days"], rows["bob"]["score"], rows["ann"]["score"]) == (1, 9.0, 8.0)


def test_hand_graded_parts_count_once_the_sheet_is_filled_in(tmp_path, run, monkeypatch):
    def grade_with_part(args):
        # no lab of the book has a written answer yet: lab01 gets one part, for these gradings only
        with monkeypatch.context() as patch:
            patch.setattr(get_lab("lab01"), "hand_graded", {"why_two_conventions": 2.0})
            run(*args)

    notebook = json.loads((ROOT / "solutions/en/lab01_masks.ipynb").read_text())
    notebook["cells"].append({"cell_type": "markdown", "metadata": {"tags": ["hand-graded"],
                              "labbook": {"part": "why_two_conventions"}},
                              "source": "SDPA reads True as allowed, MHA as blocked."})
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.ipynb").write_text(json.dumps(notebook))
    (subs / "bob.ipynb").write_text(json.dumps(notebook).replace("SDPA reads", "I think SDPA reads"))
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nann\nbob\ncat\n")
    out = tmp_path / "out"
    args = ["grade", "lab01", str(subs), "--out", str(out), "--roster", str(roster), "--jobs", "1", "--quiet",
            "--seed", "4"]
    grade_with_part(args)
    sheet = (out / "hand-graded.csv").read_text().splitlines()
    assert sheet == ["student,exercise,points,reason,max_points,text",
                     "ann,why_two_conventions,,hand-graded,2,\"SDPA reads True as allowed, MHA as blocked.\"",
                     "bob,why_two_conventions,,hand-graded,2,\"I think SDPA reads True as allowed, MHA as blocked.\""]
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    assert rows["ann"]["max_score"] == LAB01_FULL + 2 and rows["ann"]["score"] == LAB01_FULL  # not graded yet: 0 of 2
    filled = tmp_path / "filled.csv"
    filled.write_text("\n".join([sheet[0], sheet[1].replace(",,hand", ",2,hand"),
                                 sheet[2].replace(",,hand", ",1.5,hand")]) + "\n")
    grade_with_part(args + ["--overrides", str(filled)])
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["submissions"]}
    assert (rows["ann"]["score"], rows["bob"]["score"], rows["cat"]["status"]) == (12, 11.5, "missing")
    with open(out / "grades.csv") as stream:
        header = stream.readline().strip().split(",")
    assert "why_two_conventions" in header
    run("report", out)
    assert "why_two_conventions: 2 of 2 answers graded" in (out / "report.html").read_text()
