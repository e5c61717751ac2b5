"""A batch: discover, skip what earlier runs recorded, grade the rest on N warm slots, write the gradebook."""
from __future__ import annotations

import hashlib
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .. import i18n
from ..labs import LAB_IDS, UnknownLab, get_lab
from . import gradebook
from .engine import TimeLimits, grade_submission
from .sandbox import (Limits, SandboxError, SandboxInfo, Slot, WorkerDir, decide_mode, modules_to_preimport,
                      scrub_cmdline)
from .submissions import MAX_BYTES, Discovery, Submission, UsageError, discover, read

SEED_ENV = "AUTOGRADER_SEED"
# A student who learns one hidden input can try seeds 0, 1, 2... until one rebuilds it: sha256 and a numpy
# generator per try, about a million tries a second in optimised code on one core. Below 2^40 (13 digits)
# every seed falls within two weeks of one core, a day of a class's laptops: too few values to hide in.
SEED_SAFE = 1 << 40
PREIMPORT_CELL_CHARS = 20_000


@dataclass
class Seed:
    value: int
    source: str  # "--seed" | "AUTOGRADER_SEED" | "default"

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(f"autograder-seed:{self.value}".encode()).hexdigest()[:12]


def resolve_seed(lab: str, given: str | None, environ=os.environ) -> Seed:
    """--seed, else $AUTOGRADER_SEED, else a default fixed per lab (predictable: a warning says so)."""
    for raw, source in ((given, "--seed"), (environ.get(SEED_ENV), SEED_ENV)):
        if raw is None or raw == "":
            continue
        try:
            return Seed(int(str(raw).strip(), 0), source)
        except ValueError:
            raise UsageError(f"{source} must be an integer, not {raw!r}") from None
    digest = hashlib.sha256(f"autograder-default-seed:{lab}".encode()).digest()
    return Seed(int.from_bytes(digest[:6], "big"), "default")


@dataclass
class Options:
    lab: str
    paths: list[str]
    out: Path
    jobs: int | None = None
    lang: str | None = None
    seed: str | None = None
    sandbox: str = "auto"  # auto | bwrap | fallback
    limits: TimeLimits = field(default_factory=TimeLimits)
    memory_mb: int = 2048
    max_bytes: int = MAX_BYTES
    regrade: bool = False
    # grade these students again, reuse every other record (--regrade STUDENT)
    regrade_students: frozenset[str] = frozenset()
    # already discovered submissions (a caller that knows its students); None: discover(paths)
    submissions: list[Submission] | None = None
    write_gradebook: bool = True  # False: the caller writes its own from the result's records
    follow_symlinks: bool = False  # else a link handed in is an invalid row (reason `symlink`)
    reveal_hidden: bool = False  # feedback names hidden inputs (after the deadline)
    book_url: str | None = None  # where the HTML edition is published: feedback links its chapters there
    progress: TextIO | None = None  # default: stderr
    quiet: bool = False


@dataclass
class BatchResult:
    book: dict
    records: list[dict]
    reused: int
    graded_now: int
    sandbox: SandboxInfo | None
    seed: Seed
    notes: list[str]
    elapsed: float
    startup: float = 0.0
    startup_cpu: float = 0.0  # CPU seconds the warm workers spent starting (importing torch...)
    sandbox_cpu: float = 0.0  # CPU seconds of the warm workers and all their children, start-up included

    def summary(self) -> str:
        return summary_text(self)


class Progress:
    """A bar with rate and ETA on stderr; plain lines every few seconds when stderr is not a terminal."""

    def __init__(self, total: int, stream: TextIO, label: str):
        self.total, self.stream, self.label = total, stream, label
        self.done = 0
        self.started = time.monotonic()
        self.last_line = 0.0
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if self.tty or now - self.last_line >= 2.0 or self.done == self.total:
            self.last_line = now
            self.show()

    def show(self) -> None:
        if self.total <= 0:
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 30
        filled = int(width * self.done / self.total)
        bar = "#" * filled + "." * (width - filled)
        text = (f"{self.label} [{bar}] {self.done}/{self.total} {100 * self.done / self.total:3.0f}% "
                f"{rate:5.1f}/s ETA {int(eta) // 60}:{int(eta) % 60:02d}")
        if self.tty:
            self.stream.write("\r" + text + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _hidden_paths(options: Options) -> list[Path]:
    """What the fallback sandbox covers: the project, the gradebook, the submissions."""
    from .. import __file__ as package_file

    package_root = Path(package_file).resolve().parent.parent  # .../shared
    hidden = [package_root]
    project = package_root.parent
    if any((project / marker).exists() for marker in (".git", "solutions", "pyproject.toml")):
        hidden.append(project)
    hidden.append(options.out.resolve())
    for raw in options.paths:
        path = Path(raw).resolve()
        hidden.append(path if path.is_dir() else path.parent)
    return hidden


def run_batch(options: Options) -> BatchResult:
    started = time.monotonic()
    try:
        spec = get_lab(options.lab)
    except UnknownLab:
        raise UsageError(f"unknown lab {options.lab!r}; labs: {', '.join(LAB_IDS)}") from None
    if options.lang and options.lang.lower() not in [lang.lower() for lang in (*i18n.LANGS, "hi")]:
        raise UsageError(f"unknown language {options.lang!r}; languages: {', '.join(i18n.LANGS)}")
    seed = resolve_seed(spec.id, options.seed)
    if not options.paths:
        raise UsageError("no PATH given")
    if options.submissions is not None:
        discovery = Discovery(list(options.submissions))
    else:
        discovery = discover(options.paths, spec.id)
        if not discovery.submissions:
            raise UsageError("no *.ipynb submissions found in " + ", ".join(map(str, options.paths)))
    named = {submission.student for submission in discovery.submissions}
    strangers = sorted(options.regrade_students - named)
    if strangers:
        raise UsageError(f"--regrade {strangers[0]}: no submission of that student in "
                         + ", ".join(map(str, options.paths)))
    out = options.out
    gradebook.prepare(out)
    progress_stream = options.progress if options.progress is not None else sys.stderr

    records: dict[str, dict] = {}
    todo: list[tuple[Submission, str]] = []
    for submission in discovery.submissions:
        # one read gives the digest (the record's key) and what is graded: the same bytes
        read(submission, options.max_bytes, options.follow_symlinks)
        key = gradebook.record_key(spec.id, submission.student, submission.digest, seed.fingerprint)
        again = options.regrade or submission.student in options.regrade_students
        record = None if again else gradebook.load_record(out, key)
        if record is not None:
            records[submission.student] = record
            submission.cells = []  # not needed again
        else:
            todo.append((submission, key))
    reused = len(records)

    progress = Progress(len(discovery.submissions), progress_stream, f"grading {spec.id}")
    progress.done = reused
    runnable: list[tuple[Submission, str]] = []
    for submission, key in todo:
        if submission.invalid:
            record = gradebook.invalid_record(spec, submission, key, seed.source)
        elif submission.lab is not None and submission.lab != spec.id:
            record = gradebook.wrong_lab_record(spec, submission, key, seed.source)
        else:
            runnable.append((submission, key))
            continue
        gradebook.save_record(out, key, record)
        records[submission.student] = record
        progress.advance()

    info: SandboxInfo | None = None
    startup, startup_cpu, sandbox_cpu = 0.0, 0.0, 0.0
    if runnable:
        # Student code could read `--seed N --out DIR` in our /proc/PID/cmdline (the fallback shares /proc).
        scrub_cmdline()
        info, startup, startup_cpu, sandbox_cpu = _grade_all(spec, runnable, options, seed, records, progress)
    # A run that names fewer files than the last one (one student regraded) keeps the others' rows.
    kept = gradebook.kept_records(out, spec.id, set(records))
    records.update(kept)
    gradebook.save_index(out, spec.id, records)
    meta = {
        "seed_source": seed.source,
        "seed_fingerprint": seed.fingerprint,
        "sandbox": info.to_plain() if info else None,
    }
    if options.write_gradebook:
        book = gradebook.write_gradebook(out, spec, list(records.values()), options.lang, meta,
                                         reveal_hidden=options.reveal_hidden, book_url=options.book_url)
    else:
        book = {"lab": spec.id, "max_score": spec.max_score, **meta,
                "submissions": [gradebook.submission_entry(r, options.lang, options.reveal_hidden)
                                for r in sorted(records.values(), key=lambda r: r["student"])]}
    return BatchResult(book, list(records.values()), reused, len(todo), info, seed, discovery.notes,
                       time.monotonic() - started, startup, startup_cpu, sandbox_cpu)


def _warm_judges() -> None:
    """Import torch here while the workers start: judging students' tests re-runs trusted functions."""
    try:
        import torch

        torch.set_num_threads(1)  # tiny functions: a thread pool costs more than it saves
    except Exception:  # judging imports it again and reports what fails
        pass


def _grade_all(spec, runnable, options: Options, seed: Seed, records: dict, progress: Progress):
    if spec.id in ("lab02", "lab03"):
        threading.Thread(target=_warm_judges, daemon=True).start()
    worker = WorkerDir()
    info = SandboxInfo(options.sandbox)
    jobs = max(1, min(options.jobs or _cpu_count(), len(runnable)))
    limits = Limits(memory_bytes=options.memory_mb << 20,
                    cpu_seconds=int(options.limits.submission) + 30)
    work: queue.Queue = queue.Queue()
    for item in runnable:
        work.put(item)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()
    startup_times: list[float] = []
    startup_cpu: list[float] = []
    sandbox_cpu: list[float] = []
    try:
        decide_mode(info, worker)
        hidden = _hidden_paths(options)
        log_dir = gradebook.private_dir(options.out / gradebook.STATE_DIR / "logs")
        # ast.parse runs here, in the grader: only cells of a sensible size are looked at
        preimport = modules_to_preimport([[cell for cell in submission.cells if len(cell) <= PREIMPORT_CELL_CHARS]
                                          for submission, _ in runnable])

        def run_slot(index: int) -> None:
            slot = Slot(index, worker, info, log_dir=log_dir, limits=limits, hide=hidden, preimport=preimport)
            try:
                begun = time.monotonic()
                slot.start()
                startup_times.append(time.monotonic() - begun)
                startup_cpu.append(float(slot.ready_info.get("cpu", 0.0)))
                while not stop.is_set():
                    try:
                        submission, key = work.get_nowait()
                    except queue.Empty:
                        return
                    done.put(_grade_one(spec, submission, key, slot, seed, options, info))
            except BaseException as error:  # a slot that cannot work: report and let the others go on
                done.put(error)
            finally:
                slot.stop()
                sandbox_cpu.append(slot.total_cpu)

        threads = [threading.Thread(target=run_slot, args=(i,), daemon=True) for i in range(jobs)]
        for thread in threads:
            thread.start()
        remaining = len(runnable)
        failures: list[BaseException] = []
        while remaining > 0:
            try:
                item = done.get(timeout=0.5)
            except queue.Empty:
                if not any(thread.is_alive() for thread in threads):
                    break
                continue
            if isinstance(item, BaseException):
                failures.append(item)
                continue
            submission, key, record = item
            gradebook.save_record(options.out, key, record)
            records[submission.student] = record
            remaining -= 1
            progress.advance()
        for thread in threads:
            thread.join(timeout=30)
        if remaining > 0:
            detail = "; ".join(str(f) for f in failures) or "the job slots stopped"
            raise SandboxError(f"{remaining} submissions could not be graded: {detail}")
    except KeyboardInterrupt:
        stop.set()
        raise
    finally:
        stop.set()
        worker.cleanup()
    return info, (max(startup_times) if startup_times else 0.0), sum(startup_cpu), sum(sandbox_cpu)


def _grade_one(spec, submission: Submission, key: str, slot: Slot, seed: Seed, options: Options, info: SandboxInfo):
    begun = time.monotonic()
    lang = submission.lang or i18n.DEFAULT_LANG
    try:
        outcome = grade_submission(spec, submission, slot, seed.value, options.limits, lang)
        record = gradebook.graded_record(spec, submission, key, seed.source, outcome, time.monotonic() - begun,
                                         info.mode)
    except SandboxError as error:
        slot.restart()
        record = gradebook.error_record(spec, submission, key, seed.source, f"sandbox: {error}",
                                        time.monotonic() - begun)
    except Exception as error:  # a bug of the grader must not stop the batch
        record = gradebook.error_record(spec, submission, key, seed.source, f"{type(error).__name__}: {error}",
                                        time.monotonic() - begun)
    return submission, key, record


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------- summary
def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


NOT_RUN = ("invalid", "wrong_lab")  # statuses of notebooks that never ran


def summary_text(result: BatchResult) -> str:
    book = result.book
    entries = book["submissions"]
    counts = {status: sum(1 for e in entries if e["status"] == status)
              for status in ("graded", "invalid", "wrong_lab", "timeout", "error")}
    wrong = f", {counts['wrong_lab']} of another lab" if counts["wrong_lab"] else ""
    lines = [f"{book['lab']}: {_count(len(entries), 'submission')}: {counts['graded']} graded, {counts['invalid']} invalid"
             f"{wrong}, {counts['timeout']} timed out, {counts['error']} with errors."]
    scored = [e["score"] for e in entries if e["status"] not in NOT_RUN]
    if scored:
        mean = sum(scored) / len(scored)
        lines.append(f"Mean score {mean:.2f}/{book['max_score']:g} over the {len(scored)} notebooks that ran "
                     f"({sum(e['score'] for e in entries) / len(entries):.2f} counting invalid files as 0).")
    if result.reused:
        lines.append(f"{_count(result.reused, 'submission')} taken from earlier records; {result.graded_now} graded now.")
    slow = sorted((e for e in entries if e["status"] not in NOT_RUN), key=lambda e: -e["duration"])[:3]
    if slow:
        lines.append("Slowest: " + ", ".join(f"{e['student']} {e['duration']:.2f} s" for e in slow) + ".")
    if result.graded_now and result.elapsed > 0:
        lines.append(f"Time: {result.elapsed:.1f} s for {_count(result.graded_now, 'submission')} "
                     f"(start-up of the warm workers {result.startup:.1f} s).")
    for entry in entries:
        if entry["status"] == "invalid":
            lines.append(f"invalid: {entry['student']}: {entry['reason_code']}")
        elif entry["status"] == "wrong_lab":
            lines.append(f"wrong lab: {entry['student']}: {entry.get('lab_found')}, not {book['lab']}")
    for entry in entries:
        if entry["id_mismatch"]:
            lines.append(f"id mismatch: {entry['student']} typed STUDENT_ID {entry['typed_id']!r}")
    lines += [f"note: {note}" for note in result.notes]
    if result.sandbox is not None:
        lines.append(f"Sandbox: {result.sandbox.describe()}.")
    if result.seed.source == "default":
        lines.append(f"WARNING: no --seed and no ${SEED_ENV}: the hidden cases used the default seed of "
                     f"{book['lab']}, which anyone with this code can reproduce. For final grades pass "
                     f"--seed N (or set {SEED_ENV}) and keep N to yourself.")
    else:
        lines.append(f"Hidden cases: seed from {result.seed.source} (fingerprint {result.seed.fingerprint}).")
        lines.append(seed_warning(result.seed))
    return "\n".join(line for line in lines if line)


def seed_warning(seed: Seed) -> str:
    """A warning when the seed is small enough to be found by trying every smaller one ('' otherwise)."""
    if seed.source == "default" or abs(seed.value) >= SEED_SAFE:
        return ""
    return (f"WARNING: the seed from {seed.source} is below 2^40 (fewer than 13 digits): a student who learns one "
            "hidden input can try every smaller seed (about a million a second on one core: all of them in two "
            "weeks, in a day on a class's laptops) and rebuild every hidden case. Draw a seed of 64 random bits: "
            "python -c 'import secrets; print(secrets.randbits(64))'.")
