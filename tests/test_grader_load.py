"""One student cannot stop or slow the class: the grader does bounded work per byte a student sends.

A 2-slot batch of lab00 grades honest notebooks beside one whose every cell
writes a 31 MB line on the grader's socket. Before the channel skipped lines it
does not wait for (and capped the rest), the grader decoded each line, holding
the GIL for seconds and growing towards gigabytes; the honest students' cells,
done in time, were read after their wall-clock deadline: time-outs, with
feedback blaming them. Now they keep every point and no time-limit note,
the grader's own peak memory stays bounded, and time limits count CPU seconds.
"""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from corpus import attacks
from corpus.lab00 import answer_cells, answers, header, notebook

from autograder.labs import get_lab

ROOT = Path(__file__).resolve().parents[1]
LAB00_FULL = get_lab("lab00").max_score
FLOODED_CELLS = 12
HONEST = ("b_honest", "c_honest", "d_honest")
PEAK_MB = 700  # the grader's own resident memory, at most (it reached 1.7 GB); its workers are apart

# The grader's command line, reporting its own peak memory (RUSAGE_SELF: not the sandboxed workers)
MEASURED = ("import resource, runpy, sys\nsys.argv = ['autograder', *sys.argv[1:]]\ncode = 0\n"
            "try:\n    runpy.run_module('autograder', run_name='__main__', alter_sys=True)\n"
            "except SystemExit as end:\n    code = end.code\n"
            "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(code)\n")


def write(folder: Path, student: str, cells: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{student}.ipynb").write_text(json.dumps(notebook([header(student), *cells])))


@pytest.fixture(scope="module")
def flooded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("load")
    subs, out = folder / "subs", folder / "out"
    write(subs, "a_flooder", [attacks.channel_flood() for _ in range(FLOODED_CELLS)]
          + answer_cells(answers("a_flooder")))
    for student in HONEST:  # a second of work before their answers: the other slot is flooded meanwhile
        write(subs, student, [attacks.honest_work(), *attacks.guarded(answer_cells(answers(student)))])
    run = subprocess.run([sys.executable, "-c", MEASURED, "grade", "lab00", str(subs), "--out", str(out),
                          "--jobs", "2", "--seed", "5", "--timeout", "2", "--cell-timeout", "5", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout
    book = json.loads((out / "grades.json").read_text())
    records = [json.loads(p.read_text()) for p in (out / ".autograder" / "records").glob("*.json")]
    peak_kb = int(run.stderr.split("PEAK_KB")[1].split()[0])
    return {"entries": {e["student"]: e for e in book["submissions"]}, "peak_mb": peak_kb / 1024,
            "outputs": {r["student"]: r.get("output", "") for r in records}}


@pytest.mark.parametrize("student", HONEST)
def test_the_honest_neighbours_of_a_flood_keep_every_point(flooded, student):
    entry = flooded["entries"][student]
    assert (entry["status"], entry["score"]) == ("graded", LAB00_FULL), json.dumps(entry, indent=1)
    assert not entry["cells"], entry["cells"]  # no "did not finish within" note
    assert not any("time" in item["feedback"] for item in entry["exercises"].values()), entry


def test_the_flood_reached_the_grader_and_cost_its_author_nothing_else(flooded):
    assert flooded["outputs"]["a_flooder"].count("FLOODED") == FLOODED_CELLS, flooded["outputs"]["a_flooder"][:500]
    assert flooded["entries"]["a_flooder"]["score"] == LAB00_FULL  # lines nobody waits for are skipped


def test_the_graders_own_memory_stays_bounded(flooded):
    assert flooded["peak_mb"] < PEAK_MB, flooded["peak_mb"]


# ---------------------------------------------------------------- the clock itself, without a sandbox
class FakeChild:
    """A child that answers each call after burning `burn` CPU seconds; the grader only reads the answer
    after `stall` seconds (its process was busy elsewhere: another student's work, a machine under load)."""

    def __init__(self, slot: "FakeSlot"):
        self.slot, self.sent = slot, []

    def send(self, message, timeout=10.0):
        self.sent.append(message)

    def receive(self, deadline, on_line=None, accept=None, fatal=(), raw=()):
        last = self.sent[-1]
        if "cells" in last:
            return {"ready": True}
        self.slot.cpu += self.slot.burn
        time.sleep(self.slot.stall)
        return {"id": last["id"], "result": {"ok": 1.0}}

    def drain(self):
        pass

    def output_text(self):
        return ""

    def close(self):
        pass


class FakeSlot:
    """A zygote whose children's CPU time is what FakeChild says."""

    def __init__(self, stall: float, burn: float):
        self.stall, self.burn, self.cpu, self.child_cpu = stall, burn, 0.0, 0.0

    def spawn(self, env=None):
        return FakeChild(self)

    def child_cpu_now(self):
        return self.cpu

    def kill(self, child=None, died=False):
        return ""


def _call(stall: float, burn: float, limit: float = 1.0):
    from autograder.grader.engine import Clock, Session, TimeLimits
    from autograder.grader.submissions import Submission

    session = Session(FakeSlot(stall, burn), Submission("s", Path("s.ipynb")), TimeLimits(exercise=limit), {})
    try:
        return session.call({"kind": "value", "target": "x"}, Clock(limit))
    finally:
        session.close()


def test_a_stalled_grader_does_not_expire_a_students_time():
    """An answer read 1.5 s late, by a grader stalled elsewhere, counts: the child used no CPU for it."""
    output, failure = _call(stall=1.5, burn=0.1)
    assert failure is None and output == {"ok": 1.0}, output


def test_cpu_time_and_the_wall_backstop_still_end_a_call():
    output, failure = _call(stall=0.3, burn=1.5)  # the child's processes used 1.5 s of CPU
    assert failure == "timeout", output
    output, failure = _call(stall=3.5, burn=0.0)  # no answer within 2 x 1 s + 1 s: a child that sleeps
    assert failure == "timeout", output
