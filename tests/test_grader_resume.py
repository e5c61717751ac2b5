"""Kill -9 the grader in the middle of a batch, run the same command again: every submission exactly once."""
import json
import os
import signal
import subprocess
import tempfile
import sys
import time
from pathlib import Path

from corpus.lab00 import answer_cells, answers, header, notebook

from autograder.labs import get_lab

LAB00_FULL = get_lab("lab00").max_score  # what an honest lab00 notebook earns

ROOT = Path(__file__).resolve().parents[1]
N = 10


def command(subs: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", "lab00", str(subs), "--out", str(out),
            "--jobs", "1", "--seed", "99"]


def make_batch(folder: Path) -> None:
    folder.mkdir(parents=True)
    for n in range(N):
        student = f"student{n:02d}"
        values = answers(student)
        if n % 3 == 0:
            values["qk_scores"] = [[0.0] * 3] * 3  # some wrong answers, so scores differ
        cells = ["import time\ntime.sleep(0.3)\n", *answer_cells(values)]
        (folder / f"{student}.ipynb").write_text(json.dumps(notebook([header(student), *cells])))


def zygotes_of(out: Path) -> list[int]:
    """Processes whose stderr is one of this batch's worker logs (the zygotes and bwrap)."""
    logs = {str(p) for p in (out / ".autograder" / "logs").glob("*.log")}
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/fd/2") in logs:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def test_kill_and_resume(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    make_batch(subs)
    records = out / ".autograder" / "records"
    grader = subprocess.Popen(command(subs, out), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if records.exists() and len(list(records.glob("*.json"))) >= 3:
            break
        if grader.poll() is not None:
            break
        time.sleep(0.02)
    assert grader.poll() is None, "the batch ended before it could be killed: " + grader.stderr.read().decode()
    # while it runs, nobody may sweep its worker dir; once it is dead, any grader may (one in a parallel test too)
    left = list(Path(tempfile.gettempdir()).glob(f"autograder-worker-{grader.pid}-*"))
    assert left, "a running grader's worker dir is named after its pid"
    os.kill(grader.pid, signal.SIGKILL)
    grader.wait()
    grader.stdout.close()
    grader.stderr.close()
    done_before = len(list(records.glob("*.json")))
    assert 3 <= done_before < N
    assert not list(records.glob(".*.tmp")), "a half-written record was left behind"
    assert not (out / "grades.json").exists()

    deadline = time.monotonic() + 10
    while zygotes_of(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not zygotes_of(out), "the warm workers outlived the killed grader"

    again = subprocess.run(command(subs, out), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert not [p for p in left if p.exists()], "the next grader should remove the killed one's worker dir"
    assert f"{done_before} submissions taken from earlier records; {N - done_before} graded now." in again.stdout

    book = json.loads((out / "grades.json").read_text())
    students = [entry["student"] for entry in book["submissions"]]
    assert students == [f"student{n:02d}" for n in range(N)]
    assert all(entry["status"] == "graded" for entry in book["submissions"])
    assert [entry["score"] for entry in book["submissions"]] == [8 if n % 3 == 0 else 10 for n in range(N)]
    assert len(list(records.glob("*.json"))) == N
    csv_rows = (out / "grades.csv").read_text().splitlines()
    assert len(csv_rows) == N + 1

    third = subprocess.run(command(subs, out), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert f"{N} submissions taken from earlier records; 0 graded now." in third.stdout
    assert json.loads((out / "grades.json").read_text())["submissions"] == book["submissions"]

    # a student hands in again: only that file is graded again, and it replaces the old entry
    fixed = ["import time\ntime.sleep(0.3)\n", *answer_cells(answers("student00"))]
    (subs / "student00.ipynb").write_text(json.dumps(notebook([header("student00"), *fixed])))
    fourth = subprocess.run(command(subs, out), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert f"{N - 1} submissions taken from earlier records; 1 graded now." in fourth.stdout
    book = json.loads((out / "grades.json").read_text())
    assert [entry["student"] for entry in book["submissions"]] == students
    assert book["submissions"][0]["score"] == LAB00_FULL


def test_only_dead_graders_worker_dirs_are_swept(tmp_path):
    from autograder.grader.sandbox import sweep_stale_worker_dirs

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"autograder-worker-{gone.pid}-abc123"
    (dead / "autograder").mkdir(parents=True)
    (dead / "autograder" / "x.py").write_text("")
    alive = tmp_path / f"autograder-worker-{os.getpid()}-def456"
    alive.mkdir()
    elsewhere = tmp_path / "keep"
    elsewhere.mkdir()
    link = tmp_path / f"autograder-worker-{gone.pid}-link00"
    link.symlink_to(elsewhere)
    foreign = tmp_path / "autograder-worker-notapid"
    foreign.mkdir()
    assert sweep_stale_worker_dirs(str(tmp_path)) == 1
    assert not dead.exists()
    assert alive.is_dir() and elsewhere.is_dir() and link.is_symlink() and foreign.is_dir()
