"""The sandbox against submissions that attack it: no student costs another anything, nothing outlives a child.

Four small batches of lab00 (the cheapest lab) through the command line, each
mixing attackers with honest notebooks, plus a clone of this tree under /tmp
with a space in its path grading lab02. Each test below fails when the
protection it names is removed (see the README's "Trust" section).
"""
import ctypes
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from corpus import attacks
from corpus.attacks import processes_named
from corpus.lab00 import answer_cells, answers, header, notebook

from autograder.labs import get_lab

LAB00_FULL = get_lab("lab00").max_score  # what an honest lab00 notebook earns
LAB02_FULL = get_lab("lab02").max_score

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "sb" + secrets.token_hex(6)  # the process name of the CPU burners
SHM_KEY = 0x5A000000 + secrets.randbelow(1 << 24)  # the System V key of the segment left behind
QUEUE = f"/{TOKEN}"
SEED = 70_000_000_000 + secrets.randbelow(10 ** 9)  # long enough never to appear by chance
MEMORY_MB = 512

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid-per-child sandbox needs root")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def grade(*args, env=None, cwd=ROOT, python=sys.executable, timeout=240):
    return subprocess.run([python, "-m", "autograder", "grade", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


def write(folder: Path, student: str, cells: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{student}.ipynb").write_text(json.dumps(notebook([header(student), *cells])))


def honest(student: str) -> list[str]:
    return answer_cells(answers(student))


def results(out: Path) -> tuple[dict, dict, dict]:
    """(gradebook, its entries by student, captured output by student)."""
    book = json.loads((out / "grades.json").read_text())
    records = [json.loads(p.read_text()) for p in (out / ".autograder" / "records").glob("*.json")]
    return book, {e["student"]: e for e in book["submissions"]}, {r["student"]: r.get("output", "") for r in records}


def cgroups_here() -> bool:
    from autograder.grader.sandbox import Cgroups

    return Cgroups.detect().usable


def host_segments(key: int) -> list[int]:
    """shmids of the host's System V segments with `key` (column 1 of /proc/sysvipc/shm)."""
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [int(row.split()[1]) for row in rows if int(row.split()[0]) == key]


def remove_segments(key: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for shmid in host_segments(key):
        libc.shmctl(shmid, 0, None)  # IPC_RMID
    libc.mq_unlink(QUEUE.encode())


# ---------------------------------------------------------------- 1. one CPU per slot
@pytest.fixture(scope="module")
def cpu_batch(tmp_path_factory):
    """A burner (24 orphaned processes x 2 GIL-free threads, then it hangs) beside honest neighbours, --jobs 2."""
    folder = tmp_path_factory.mktemp("cpu")
    subs = folder / "subs"
    burner = attacks.cpu_burner(TOKEN)
    write(subs, "a_burner", [burner, burner, *honest("a_burner")])
    for index in range(1, 5):
        student = f"h_{index}"
        write(subs, student, [attacks.honest_work(), *attacks.guarded(honest(student))])
    run = grade("lab00", subs, "--out", folder / "out", "--jobs", 2, "--seed", 5, "--timeout", 3,
                "--cell-timeout", 4, "--quiet")
    assert run.returncode == 0, run.stderr + run.stdout
    book, entries, _ = results(folder / "out")
    return {"run": run, "book": book, "entries": entries}


def test_a_cpu_burner_costs_its_neighbours_nothing(cpu_batch):
    if not cgroups_here():
        pytest.skip("without cgroups nothing bounds a submission's share of the machine")
    scores = {student: entry["score"] for student, entry in cpu_batch["entries"].items() if student != "a_burner"}
    assert scores == {f"h_{i}": 10 for i in range(1, 5)}, json.dumps(cpu_batch["entries"], indent=1)
    assert "cgroups (v" in cpu_batch["run"].stdout


def test_no_burner_survives(cpu_batch):
    assert cpu_batch["entries"]["a_burner"]["score"] == LAB00_FULL  # its own answers still count
    assert not processes_named(TOKEN)


# ---------------------------------------------------------------- 2, 3, 5. scratch space, IPC, the cell clock
@pytest.fixture(scope="module")
def serial_batch(tmp_path_factory):
    """One slot, in this order: IPC writer, IPC reader, scratch filler, its successor, the cell-clock forger."""
    folder = tmp_path_factory.mktemp("serial")
    subs = folder / "subs"
    write(subs, "a_ipc_writer", [attacks.ipc_writer(SHM_KEY, QUEUE, "answers of a"), *honest("a_ipc_writer")])
    write(subs, "b_ipc_reader", [attacks.ipc_reader(QUEUE), *honest("b_ipc_reader")])
    write(subs, "c_filler", [attacks.scratch_filler(3 * MEMORY_MB << 20), *honest("c_filler")])
    write(subs, "d_after_filler", [attacks.scratch_reader(), *honest("d_after_filler")])
    write(subs, "e_forger", [attacks.cell_clock_forger(), *honest("e_forger")])
    try:
        run = grade("lab00", subs, "--out", folder / "out", "--jobs", 1, "--seed", 5, "--timeout", 3,
                    "--cell-timeout", 2, "--submission-timeout", 8, "--memory-mb", MEMORY_MB, "--quiet")
        assert run.returncode == 0, run.stderr + run.stdout
        book, entries, outputs = results(folder / "out")
        yield {"run": run, "entries": entries, "outputs": outputs, "leftover": host_segments(SHM_KEY)}
    finally:
        remove_segments(SHM_KEY)


def test_scratch_space_is_bounded_by_the_memory_budget(serial_batch):
    output = serial_batch["outputs"]["c_filler"]
    written = [int(line.split()[1]) for line in output.splitlines() if line.startswith(("FILLING", "FILLED"))]
    assert written, output
    assert max(written) <= MEMORY_MB << 20, output
    after = serial_batch["entries"]["d_after_filler"]
    assert (after["status"], after["score"]) == ("graded", 10), json.dumps(after, indent=1)
    assert "LEFT 0" in serial_batch["outputs"]["d_after_filler"]


def test_ipc_objects_do_not_reach_the_next_student(serial_batch):
    assert "CREATED" in serial_batch["outputs"]["a_ipc_writer"]
    assert "SEGMENTS 0 QUEUE absent" in serial_batch["outputs"]["b_ipc_reader"], serial_batch["outputs"]["b_ipc_reader"]
    assert serial_batch["entries"]["b_ipc_reader"]["score"] == LAB00_FULL
    assert not serial_batch["leftover"]


@pytest.fixture(scope="module")
def planted_batch(tmp_path_factory):
    """One slot: a planter of 132 000 folders (seconds of work: its own cell limit), then a reader."""
    folder = tmp_path_factory.mktemp("planted")
    subs = folder / "subs"
    write(subs, "a_planter", [attacks.deep_planter(TOKEN), *honest("a_planter")])
    write(subs, "b_after_planter", [attacks.planted_reader(TOKEN), *honest("b_after_planter")])
    run = grade("lab00", subs, "--out", folder / "out", "--jobs", 1, "--seed", 5, "--cell-timeout", 20, "--quiet")
    assert run.returncode == 0, run.stderr + run.stdout
    book, entries, outputs = results(folder / "out")
    return {"run": run, "entries": entries, "outputs": outputs}


def test_the_next_student_starts_from_empty_scratch_folders(planted_batch):
    """132 000 folders the bounded wipe cannot all remove: each child gets new, empty tmpfs instead."""
    outputs = planted_batch["outputs"]
    assert "PLANTED" in outputs["a_planter"], outputs["a_planter"]
    assert "FOUND 0" in outputs["b_after_planter"], outputs["b_after_planter"]
    assert planted_batch["entries"]["b_after_planter"]["score"] == LAB00_FULL


def test_forged_cell_messages_do_not_stop_the_cell_clock(serial_batch):
    entry = serial_batch["entries"]["e_forger"]
    notes = [(cell["kind"], cell["text"]) for cell in entry["cells"]]
    assert any(kind == "timeout" for kind, _ in notes), notes
    assert entry["score"] == LAB00_FULL, json.dumps(entry, indent=1)


@needs_bwrap
@pytest.mark.skipif(not os.path.isdir("/sys/fs/cgroup"), reason="no cgroups")
def test_tmpfs_and_shared_memory_pages_are_charged_to_the_slot():
    from autograder.grader.sandbox import SandboxInfo, Slot, WorkerDir, decide_mode

    worker = WorkerDir()
    info = decide_mode(SandboxInfo("bwrap"), worker)
    if not info.cgroups.usable:
        worker.cleanup()
        pytest.skip(f"no cgroups: {info.cgroups.reason}")
    slot = Slot(0, worker, info)
    try:
        slot.start()
        before = slot.cgroup.memory_usage()
        child = slot.spawn()
        child.send({"cells": ["for path in ('/dev/shm/x', '/tmp/x'):\n    with open(path, 'wb') as f:\n"
                              "        f.write(bytes(24 << 20))\n"], "skip": []})
        messages = [child.receive(time.monotonic() + 30) for _ in range(2)]
        assert messages[-1] == {"ready": True}, messages
        assert slot.cgroup.memory_usage() - before > 40 << 20
        slot.kill(child)
        assert slot.cgroup.memory_usage() - before < 8 << 20  # the files went with the child
    finally:
        slot.stop()
        worker.cleanup()


# ---------------------------------------------------------------- 4. the fallback sandbox
@pytest.fixture(scope="module")
def fallback_batch(tmp_path_factory):
    """--sandbox fallback: links to a host folder, a reader of every command line, an IPC writer."""
    folder = tmp_path_factory.mktemp("fallback")
    host = folder / "host-dir"
    (host / "inner").mkdir(parents=True)
    (host / "keep.txt").write_text("instructor's file")
    os.chmod(host, 0o755)
    os.chmod(host / "inner", 0o750)
    subs, out = folder / "subs", folder / "out-fallback"
    write(subs, "a_links", [attacks.link_planter(str(host)), *honest("a_links")])
    write(subs, "b_cmdline", [attacks.cmdline_reader(str(SEED), str(folder)), *honest("b_cmdline")])
    write(subs, "c_ipc_writer", [attacks.ipc_writer(SHM_KEY + 1, QUEUE + "f", "answers of c"), *honest("c_ipc_writer")])
    write(subs, "d_ipc_reader", [attacks.ipc_reader(QUEUE + "f"), *honest("d_ipc_reader")])
    write(subs, "e_host_writer", [attacks.host_writer(TOKEN), *honest("e_host_writer")])
    write(subs, "f_after_writer", [attacks.planted_reader(TOKEN), *honest("f_after_writer")])
    try:
        run = grade("lab00", subs, "--out", out, "--jobs", 1, "--seed", SEED, "--sandbox", "fallback", "--quiet")
        assert run.returncode == 0, run.stderr + run.stdout
        book, entries, outputs = results(out)
        yield {"run": run, "entries": entries, "outputs": outputs, "host": host, "out": out,
               "leftover": host_segments(SHM_KEY + 1), "host_files": attacks.host_leftovers(TOKEN)}
    finally:
        remove_segments(SHM_KEY + 1)
        ctypes.CDLL(None).mq_unlink((QUEUE + "f").encode())
        for path in attacks.host_leftovers(TOKEN):
            Path(path).unlink(missing_ok=True)


@needs_root
def test_cleanup_never_follows_a_planted_link(fallback_batch):
    host = fallback_batch["host"]
    assert "PLANTED" in fallback_batch["outputs"]["a_links"], fallback_batch["outputs"]["a_links"]
    assert stat.S_IMODE(host.stat().st_mode) == 0o755
    assert stat.S_IMODE((host / "inner").stat().st_mode) == 0o750
    assert (host / "keep.txt").read_text() == "instructor's file"
    assert not list(Path("/tmp").glob("planted-*")), "the planted folder in /tmp was not wiped"
    assert all(e["score"] == LAB00_FULL for e in fallback_batch["entries"].values()), fallback_batch["entries"]


@needs_root
def test_no_command_line_shows_the_seed_or_the_gradebook(fallback_batch):
    output = fallback_batch["outputs"]["b_cmdline"]
    assert "CMDLINES" in output and "_worker" in output, "it did not even read the zygote's command line"
    # (no output in the messages: the machine's other command lines are none of this test's business)
    assert str(SEED) not in output, "the seed is on a command line"
    assert str(fallback_batch["out"]) not in output, "the gradebook is on a command line"


@needs_root
def test_fallback_ipc_objects_die_with_the_child(fallback_batch):
    assert "CREATED" in fallback_batch["outputs"]["c_ipc_writer"]
    assert "SEGMENTS 0 QUEUE absent" in fallback_batch["outputs"]["d_ipc_reader"]
    assert not fallback_batch["leftover"], "a System V segment outlived the batch on the host"


@needs_root
def test_fallback_children_leave_nothing_on_the_host(fallback_batch):
    """/run/lock, /var/tmp, /dev/mqueue...: the host is read-only to student code, its scratch folders new."""
    output = fallback_batch["outputs"]["e_host_writer"]
    assert "WROTE" in output and "/tmp" in output, output  # it could write its own scratch space
    assert not fallback_batch["host_files"], fallback_batch["host_files"]
    assert "FOUND 0" in fallback_batch["outputs"]["f_after_writer"], fallback_batch["outputs"]["f_after_writer"]
    assert fallback_batch["entries"]["f_after_writer"]["score"] == LAB00_FULL


# ---------------------------------------------------------------- 6. wherever the checkout lives
LAB02 = "lab02_causal_attention.ipynb"


@pytest.fixture(scope="module")
def clone_under_tmp(tmp_path_factory):
    """This tree cloned to /tmp/.../a b/main, its .venv a hard-link copy (the editable install is bypassed)."""
    base = Path(tempfile.mkdtemp(prefix="autograder-anywhere-", dir="/tmp"))
    clone = base / "a b" / "main"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    # the tree under test, with its uncommitted changes, not only its last commit
    shutil.copytree(ROOT / "shared", clone / "shared", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    copy = subprocess.run(["cp", "-al", str(ROOT / ".venv"), str(clone / ".venv")], capture_output=True, text=True)
    if copy.returncode:
        pytest.skip(f"no hard-link copy of the venv here: {copy.stderr.strip()}")
    yield clone
    shutil.rmtree(base, ignore_errors=True)


def test_grading_from_a_checkout_under_tmp_with_a_space(clone_under_tmp, tmp_path):
    clone = clone_under_tmp
    subs = tmp_path / "subs"
    subs.mkdir()
    for student in ("first", "second"):
        shutil.copyfile(ROOT / "solutions" / "en" / LAB02, subs / f"{student}.ipynb")
    env = {**os.environ, "PYTHONPATH": str(clone / "shared"), "LABBOOK_ROOT": str(clone)}
    run = grade("lab02", subs, "--out", tmp_path / "out", "--jobs", 1, "--seed", 5, "--quiet", env=env, cwd=clone,
                python=str(clone / ".venv" / "bin" / "python"))
    assert run.returncode == 0, run.stderr + run.stdout
    book, entries, outputs = results(tmp_path / "out")
    records = [p.read_text() for p in (tmp_path / "out" / ".autograder" / "records").glob("*.json")]
    assert len(records) == 2 and not any("ModuleNotFoundError" in r for r in records)
    assert {s: (e["score"], e["max_score"]) for s, e in entries.items()} == {"first": (LAB02_FULL, LAB02_FULL), "second": (LAB02_FULL, LAB02_FULL)}


def test_slot_cgroups_of_a_killed_grader_are_swept_by_the_next_batch():
    """kill -9 leaves a grader's empty slot cgroups behind; the next batch removes them."""
    from autograder.grader.sandbox import Cgroups

    cgroups = Cgroups.detect()
    if not cgroups.usable:
        pytest.skip(f"no usable cgroups here: {cgroups.reason}")
    dead = Path("/proc/sys/kernel/pid_max").read_text().strip()  # no process ever has this pid
    parent = next(iter(cgroups.parents.values()))
    stale = os.path.join(parent, f"autograder-{dead}-slot0-abcdef")
    os.mkdir(stale)
    try:
        assert cgroups.sweep_stale() >= 1
        assert not os.path.exists(stale)
    finally:
        if os.path.exists(stale):
            os.rmdir(stale)
