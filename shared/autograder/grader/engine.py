"""Grading one submission: the notebook runs in a sandboxed child, judging happens here.

The trusted side (this module) only ever sees plain data. For each exercise it
builds the call specs (public cases plus the hidden randomised ones drawn from
the instructor's seed), has the child run them in a shuffled order, and gives
the outputs to the exercise's `judge`. A time-out or a crash costs the
exercise it happened in: the child is killed, a fresh one re-runs the notebook
(without the cells known to hang or crash) and grading goes on.
"""
from __future__ import annotations

import hashlib
import importlib
import random
import re
import time
from dataclasses import dataclass, field

from .. import i18n
from ..exercise import Exercise, Feedback, Result
from ..grading import context_problem_result, read_context
from ..labs import LabSpec
from . import sanitize
from .sandbox import ChildDied, ChildHandle, SandboxError, Slot
from .submissions import Submission

RECORD_VERSION = 2  # 2: hidden cases per lab (not per student), revealed feedback kept
OUTPUT_KEPT = 8000  # characters of the notebook's printed output kept for the instructor
ANONYMOUS_FUNCTION = "candidate"
TYPED_ID_CHARS = 200
GARBLED = "it garbled the channel to the grader"


@dataclass
class TimeLimits:
    exercise: float = 10.0  # all cases of one exercise
    cell: float = 30.0  # one notebook cell
    submission: float = 120.0  # everything of one submission


@dataclass
class CellEvent:
    cell: int
    kind: str  # error | timeout | crash | dropped
    params: dict = field(default_factory=dict)
    number: int | None = None  # the cell's number as Jupyter shows it (markdown cells counted)

    def feedback(self) -> Feedback:
        key = {"error": "grader.cell_error", "timeout": "grader.cell_timeout",
               "crash": "grader.cell_crashed", "dropped": "grader.cell_dropped"}[self.kind]
        return Feedback(key, {"cell": self.number or self.cell + 1, **self.params})


class SubmissionTimeUp(Exception):
    pass


class Session:
    """The children of one submission: at most one alive, each a fresh fork, none reused elsewhere."""

    def __init__(self, slot: Slot, submission: Submission, limits: TimeLimits, env: dict):
        self.slot = slot
        self.cells = submission.cells
        self.limits = limits
        self.env = env
        self.started = time.monotonic()
        self.deadline = self.started + limits.submission
        self.skip: set[int] = set(submission.dropped_cells)
        self.events: dict[int, CellEvent] = {i: CellEvent(i, "dropped") for i in submission.dropped_cells}
        self.child: ChildHandle | None = None
        self.request_id = 0
        self.output = ""
        self.children = 0
        self.timed_out = False
        self.crashed = False
        self.prefetched: tuple[int, dict, ChildHandle] | None = None  # (request id, spec, child) already sent
        self.protocol_problem = ""  # what was wrong with the last forged answer

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def _kill(self, died: bool = False) -> str:
        status = ""
        if self.child is not None:
            self.child.drain()
            if len(self.output) < OUTPUT_KEPT:
                self.output = (self.output + self.child.output_text())[:OUTPUT_KEPT]
            status = self.slot.kill(self.child, died=died)
            self.child = None
        return status

    def close(self) -> None:
        self._kill()

    def ensure_child(self) -> None:
        """A child that has run the notebook and waits for calls; SubmissionTimeUp if no time is left."""
        while self.child is None:
            if self.remaining() <= 0:
                self.timed_out = True
                raise SubmissionTimeUp()
            try:
                child = self.slot.spawn(self.env)
            except SandboxError:
                self.slot.restart()
                child = self.slot.spawn(self.env)
            self.children += 1
            current = None
            try:
                child.send({"cells": self.cells, "skip": sorted(self.skip)}, timeout=max(1.0, self.remaining()))
                cell_deadline = time.monotonic() + self.limits.cell
                while True:
                    # before the first cell only the submission's limit applies (a busy machine is slow to fork)
                    until = self.deadline if current is None else min(cell_deadline, self.deadline)
                    message = child.receive(until)
                    if message is not None and time.monotonic() >= until:
                        message = None  # a child that chatters without end still runs out of time
                    if message is None:
                        if current is None or time.monotonic() >= self.deadline:
                            self.timed_out = True
                            if current is not None:
                                self._cell_event(current, "timeout", seconds=self.limits.cell)
                            self.child = child
                            self._kill()
                            raise SubmissionTimeUp()
                        self._cell_event(current, "timeout", seconds=self.limits.cell)
                        self.timed_out = True
                        break
                    index = _cell_index(message.get("cell"), len(self.cells))
                    if index is not None and (current is None or index > current) and index not in self.skip:
                        # Cells run in order, each once: a message that does not move forward is forged
                        # (student code may write to this socket) and must not restart the cell's clock.
                        current = index
                        cell_deadline = time.monotonic() + self.limits.cell
                    elif _cell_index(message.get("cell_error"), len(self.cells)) is not None:
                        index = message["cell_error"]
                        self.events.setdefault(index, CellEvent(index, "error", {
                            "type": str(message.get("type", "Exception"))[:80],
                            "message": str(message.get("message", ""))[:300]}))
                    elif message.get("ready") is True:
                        self.child = child
                        return
            except ChildDied as died:
                if current is None:
                    self.child = child
                    self._kill(died=True)
                    raise SandboxError(f"the worker died before running the notebook: {died}") from died
                self.crashed = True
                self.child = child
                status = self._kill(died=True) or "ended"
                self._cell_event(current, "crash", detail=GARBLED if "unreadable" in str(died) else status)
                continue
            self.child = child
            self._kill()  # a cell hung: start again without it

    def _cell_event(self, index: int, kind: str, **params) -> None:
        self.skip.add(index)
        self.events[index] = CellEvent(index, kind, params)

    def call(self, spec: dict, deadline: float, upcoming: dict | None = None) -> tuple[dict, str | None]:
        """(output, failure): failure is None, "timeout" or "crash"; the child is gone after a failure.

        `upcoming`, the call that will follow, is sent as soon as this one's answer
        arrives (the child works on it while this answer is decoded); the next
        `call` with that very spec then only waits for its answer.
        """
        self.ensure_child()
        assert self.child is not None
        child = self.child
        try:
            if self.prefetched is not None and self.prefetched[1] is spec and self.prefetched[2] is child:
                request_id = self.prefetched[0]
            else:
                self.request_id += 1
                request_id = self.request_id
                child.send({"id": request_id, "call": spec}, timeout=max(0.5, deadline - time.monotonic()))
            self.prefetched = None

            def send_upcoming() -> None:
                if upcoming is not None:
                    self.request_id += 1
                    child.send({"id": self.request_id, "call": upcoming},
                               timeout=max(0.5, deadline - time.monotonic()))
                    self.prefetched = (self.request_id, upcoming, child)

            until = min(deadline, self.deadline)
            while True:
                message = self.child.receive(until, on_line=send_upcoming if self.prefetched is None else None)
                if message is not None and time.monotonic() >= until:
                    message = None
                if message is None:
                    self.timed_out = True
                    self._kill()
                    return {"timeout": True}, "timeout"
                if type(message.get("id")) is int and message["id"] == request_id and "result" in message:
                    result, problem = sanitize.call_result(message["result"])
                    if problem:
                        # no worker answers so: the student's code wrote it on the socket (a protocol error,
                        # that exercise's, never a value the trusted judge would choke on)
                        self.crashed = True
                        self.protocol_problem = problem
                        self._kill()
                        return {"error": {"type": "WorkerCrash", "message": GARBLED}}, "crash"
                    return result, None
                # anything else on the socket was written by the student's code: ignore it
        except ChildDied as died:
            self.crashed = True
            status = self._kill(died=True)
            detail = GARBLED if "unreadable" in str(died) or status == "running" \
                else (status or "ended")
            return {"error": {"type": "WorkerCrash", "message": detail}}, "crash"


def _cell_index(value, count: int) -> int | None:
    """A cell number from the child, if it is one (the student's code may write anything there)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count else None


# ---------------------------------------------------------------- seeds, order, anonymity
def case_seed(seed: int, lab: str) -> int:
    """The seed of a lab's hidden cases: the instructor's seed and the lab, nothing else.

    Never the student, the file name or the batch order: identical code gets
    identical cases and so identical points (each exercise then draws its own
    cases from this seed and its id).
    """
    digest = hashlib.sha256(f"{seed}\x00{lab}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def anonymise(value):
    """Functions handed to a student's test lose their telling names (`no_mask` -> `candidate`)."""
    if isinstance(value, dict):
        if "__function__" in value and "name" in value:
            return _rename_function(value)
        return {k: anonymise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [anonymise(v) for v in value]
    return value


def _rename_function(value: dict) -> dict:
    """Rename the function (and its uses) to a neutral name: an identifier swap, no parsing needed."""
    name = value["name"]
    source = value["__function__"]
    if name == ANONYMOUS_FUNCTION or not re.fullmatch(r"[A-Za-z_]\w*", name):
        return value
    if re.search(rf"(?<![\w.]){ANONYMOUS_FUNCTION}\b", source):
        return value  # the neutral name is taken: leave the source alone
    renamed = re.sub(rf"(?<![\w.]){re.escape(name)}\b", ANONYMOUS_FUNCTION, source)
    return {**value, "__function__": renamed, "name": ANONYMOUS_FUNCTION}


def _order(n: int, seed: int, exercise: str) -> list[int]:
    order = list(range(n))
    random.Random(f"{seed}:{exercise}").shuffle(order)
    return order


# ---------------------------------------------------------------- one submission
@dataclass
class Outcome:
    status: str
    results: list[Result]
    events: list[CellEvent]
    typed_id: str | None
    id_mismatch: bool
    output: str
    children: int
    notes: list[Feedback] = field(default_factory=list)
    hidden_cases: int = 0  # cases the student never saw in `check`
    cpu: float = 0.0  # CPU seconds the student's processes used (notebook and calls)


def normaliser(spec: LabSpec):
    module = importlib.import_module(f"autograder.labs.{spec.id}")
    return getattr(module, "normalise_id", lambda text: str(text).strip().casefold())


def grade_submission(spec: LabSpec, submission: Submission, slot: Slot, seed: int,
                     limits: TimeLimits, lang: str) -> Outcome:
    env = {"LABBOOK_LANG": lang}
    cpu_before = slot.child_cpu
    session = Session(slot, submission, limits, env)
    results: list[Result] = []
    typed_id, mismatch = None, False
    notes: list[Feedback] = []
    hidden_cases = 0
    hidden_seed = case_seed(seed, spec.id)
    try:
        def context_call(call_spec: dict) -> dict:
            try:
                session.ensure_child()  # running the notebook is not part of this call's time
                crashed = session.crashed
                output, failed = session.call(call_spec, time.monotonic() + limits.exercise)
            except SubmissionTimeUp:
                return {"timeout": True}
            if failed == "crash" and output["error"]["message"] == GARBLED:
                # a forged answer for STUDENT_ID is a value the lab cannot use, said as such (and no crash)
                session.crashed = crashed
                raise sanitize.ProtocolError(session.protocol_problem or GARBLED)
            return output

        try:
            ctx, problem = read_context(spec, context_call)
        except SandboxError:
            raise
        except Exception as error:  # a value no honest notebook holds: the student's problem, not ours
            ctx, problem = {}, ("grader.context_unreadable", {
                "names": ", ".join(spec.context_names),
                "detail": sanitize.text(f"{type(error).__name__}: {error}", 200, newlines=False)})
        if "STUDENT_ID" in spec.context_names and ctx.get("student_id"):
            typed_id = sanitize.text(ctx["student_id"], TYPED_ID_CHARS, newlines=False)
            normalise = normaliser(spec)
            mismatch = normalise(typed_id) != normalise(submission.student)
            if mismatch:
                notes.append(Feedback("grader.id_mismatch", {"typed": typed_id, "student": submission.student}))
        for exercise in spec.exercises:
            if problem is not None:
                results.append(context_problem_result(exercise, problem))
                continue
            result, hidden = grade_exercise(exercise, ctx, session, hidden_seed, limits)
            results.append(result)
            hidden_cases += hidden
    finally:
        session.close()
    events = [session.events[i] for i in sorted(session.events)]
    for event in events:
        event.number = _cell_number(submission, event.cell)
        if isinstance(event.params.get("message"), str):  # the child names cells by code-cell count
            event.params["message"] = _CELL_NAME.sub(
                lambda m: f"<cell {_cell_number(submission, int(m.group(1)) - 1)}>", event.params["message"])
    statuses = {r.status for r in results}
    if session.timed_out or "timeout" in statuses:
        status = "timeout"
    elif session.crashed or "grader_error" in statuses:
        status = "error"
    else:
        status = "graded"
    for result in results:
        if result.status == "grader_error":
            result.status = "error"
    return Outcome(status, results, events, typed_id, mismatch, session.output, session.children, notes,
                   hidden_cases, slot.child_cpu - cpu_before)


_CELL_NAME = re.compile(r"<cell ([0-9]{1,6})>")


def _cell_number(submission: Submission, index: int) -> int:
    numbers = submission.cell_numbers
    return numbers[index] if 0 <= index < len(numbers) else index + 1


def grade_exercise(exercise: Exercise, ctx: dict, session: Session, seed: int,
                   limits: TimeLimits) -> tuple[Result, int]:
    """The exercise's Result and how many hidden cases it had."""
    try:
        cases, calls = batch_cases(exercise, ctx, seed)
    except Exception as error:  # the exercise definition itself failed: not the student's fault
        return _internal_error(exercise, error), 0
    result = _run_and_judge(exercise, ctx, session, seed, limits, cases, calls)
    return result, sum(1 for case in cases if not case.public)


_BATCH_CASES: dict[tuple, tuple[list, list]] = {}


def batch_cases(exercise: Exercise, ctx: dict, seed: int) -> tuple[list, list]:
    """The cases and their anonymised calls: the same for every student of a batch, so built once.

    Only an empty context (every lab but lab00, whose cases follow the typed id) is shared.
    """
    if ctx:
        cases = exercise.cases(ctx, seed)
        return cases, [anonymise(case.call) for case in cases]
    key = (exercise.lab, exercise.id, seed)
    if key not in _BATCH_CASES:
        if len(_BATCH_CASES) > 64:
            _BATCH_CASES.clear()
        cases = exercise.cases(ctx, seed)
        _BATCH_CASES[key] = (cases, [anonymise(case.call) for case in cases])
    return _BATCH_CASES[key]


def _run_and_judge(exercise: Exercise, ctx: dict, session: Session, seed: int, limits: TimeLimits,
                   cases: list, calls: list) -> Result:
    outputs: list[dict | None] = [None] * len(cases)
    failure: tuple[str, int] | None = None
    deadline = None
    order = _order(len(cases), seed, exercise.id)
    for position, index in enumerate(order):
        upcoming = calls[order[position + 1]] if position + 1 < len(order) else None
        try:
            session.ensure_child()  # a respawn after an earlier failure is not this exercise's time
        except SubmissionTimeUp:
            return exercise.result(0, "timeout", Feedback("grader.submission_time_limit", {
                "name": exercise.id, "seconds": session.limits.submission}))
        if deadline is None:
            deadline = time.monotonic() + limits.exercise
        try:
            output, failed = session.call(calls[index], deadline, upcoming)
        except SubmissionTimeUp:
            return exercise.result(0, "timeout", Feedback("grader.submission_time_limit", {
                "name": exercise.id, "seconds": session.limits.submission}))
        outputs[index] = output
        if failed and cases[index].data.get("optional"):
            deadline = None  # an optional input (lab00's own weights) failed: judge without it, fresh time
        elif failed:
            failure = (failed, index)
            break
    if failure is not None:
        kind, index = failure
        case = cases[index]
        if not case.public:
            full = _failure_result(exercise, kind, case, limits, session, outputs[index])
            return _hidden_failure(exercise, kind, limits, full)
        return _failure_result(exercise, kind, case, limits, session, outputs[index])
    try:
        result = exercise.judge(ctx, cases, outputs)
    except Exception as error:
        return _internal_error(exercise, error)
    if result.status == "missing":
        missing = next((o["missing"] for o in outputs if o and "missing" in o), exercise.id)
        result.feedback = [Feedback("grader.not_found", {"name": missing})]
        return result
    return redact_hidden(exercise, ctx, cases, outputs, result)


# Feedback items that say nothing about an input: their parameters are among these.
SAFE_PARAMS = frozenset({"name", "section", "seconds"})


def _safe(item: Feedback) -> bool:
    return item.key not in ("common.failed", "common.passed") and set(item.params) <= SAFE_PARAMS


def redact_hidden(exercise: Exercise, ctx: dict, cases: list, outputs: list, result: Result) -> Result:
    """Feedback that names the exercise and the mistake, never a hidden input; the full text is kept aside.

    The public cases are judged alone too: where they tell the whole story
    their feedback stands (those inputs are in `check` anyway); where the
    hidden cases cost points, the student learns that, and the named mistake,
    but not which input it was. `--reveal-hidden` shows `revealed`.
    """
    public = [i for i, case in enumerate(cases) if case.public]
    if len(public) == len(cases) or result.status == "passed":
        return result
    try:
        alone = exercise.judge(ctx, [cases[i] for i in public], [outputs[i] for i in public])
    except Exception:
        alone = None
    if alone is not None and [f.render("en") for f in alone.feedback] == [f.render("en") for f in result.feedback]:
        return result
    revealed = list(result.feedback)
    failing = _first_failing_hidden(exercise, ctx, cases, outputs)
    if failing is not None:
        revealed.append(Feedback("grader.hidden_case_was", {"case": failing}))
    if alone is not None and alone.status != "passed":
        feedback = list(alone.feedback)
        lost = alone.points - result.points
        if lost > 0:
            feedback.append(Feedback("grader.hidden_more", {"name": exercise.id, "lost": f"{lost:g}"}))
    else:
        kept = [item for item in result.feedback if _safe(item)]
        feedback = [Feedback("common.failed", {"name": exercise.id}), Feedback("grader.hidden_failed", {})]
        if any(item.key != "common.see_section" for item in kept):
            feedback.append(Feedback("grader.hidden_mistake", {}))
        feedback += kept
    result.feedback = feedback
    result.revealed = revealed
    return result


def _first_failing_hidden(exercise: Exercise, ctx: dict, cases: list, outputs: list) -> str | None:
    """The name of the first hidden case that fails when judged on its own (None where that means nothing)."""
    for case, output in zip(cases, outputs):
        if case.public:
            continue
        try:
            alone = exercise.judge(ctx, [case], [output])
        except Exception:  # an exercise judged only as a whole (a student's test over many functions)
            return None
        if alone.status != "passed":
            return case.name
    return None


def _hidden_failure(exercise: Exercise, kind: str, limits: TimeLimits, full: Result) -> Result:
    """A time-out or crash on a hidden case: say so without the case."""
    feedback = [Feedback("common.failed", {"name": exercise.id}), Feedback("grader.hidden_failed", {})]
    if kind == "timeout":
        feedback.append(Feedback("grader.time_limit", {"seconds": limits.exercise}))
    full_feedback = list(full.feedback)
    full.feedback = feedback
    full.revealed = full_feedback
    return full


def _failure_result(exercise: Exercise, kind: str, case, limits: TimeLimits, session: "Session",
                    output: dict) -> Result:
    if kind == "timeout":
        if session.remaining() <= 0:
            return exercise.result(0, "timeout", Feedback("grader.submission_time_limit", {
                "name": exercise.id, "seconds": session.limits.submission}))
        return exercise.result(0, "timeout", Feedback("common.timeout", {"name": exercise.id, "case": case.name}),
                               Feedback("grader.time_limit", {"seconds": limits.exercise}))
    return exercise.result(0, "error", Feedback("grader.worker_crashed", {
        "name": exercise.id, "case": case.name, "detail": output["error"]["message"]}))


def _internal_error(exercise: Exercise, error: Exception) -> Result:
    detail = f"{type(error).__name__}: {error}"[:200]
    return exercise.result(0, "grader_error", Feedback("grader.internal_error", {"name": exercise.id, "detail": detail}))


def render_all(feedback: list[Feedback]) -> dict[str, str]:
    return {lang: " ".join(item.render(lang) for item in feedback) for lang in i18n.LANGS}
