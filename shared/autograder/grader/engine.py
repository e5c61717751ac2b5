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
from . import messages, sanitize  # noqa: F401  (messages registers the grader's catalogue)
from .sandbox import ChildDied, ChildHandle, SandboxError, Slot
from .submissions import Submission

RECORD_VERSION = 1
OUTPUT_KEPT = 8000  # characters of the notebook's printed output kept for the instructor
ANONYMOUS_FUNCTION = "candidate"
TYPED_ID_CHARS = 200


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
                    if _cell_index(message.get("cell"), len(self.cells)) is not None:
                        current = message["cell"]
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
                self._cell_event(current, "crash", detail=self._kill(died=True) or "ended")
                continue
            self.child = child
            self._kill()  # a cell hung: start again without it

    def _cell_event(self, index: int, kind: str, **params) -> None:
        self.skip.add(index)
        self.events[index] = CellEvent(index, kind, params)

    def call(self, spec: dict, deadline: float) -> tuple[dict, str | None]:
        """(output, failure): failure is None, "timeout" or "crash"; the child is gone after a failure."""
        self.ensure_child()
        assert self.child is not None
        self.request_id += 1
        request_id = self.request_id
        try:
            self.child.send({"id": request_id, "call": spec}, timeout=max(0.5, deadline - time.monotonic()))
            until = min(deadline, self.deadline)
            while True:
                message = self.child.receive(until)
                if message is not None and time.monotonic() >= until:
                    message = None
                if message is None:
                    self.timed_out = True
                    self._kill()
                    return {"timeout": True}, "timeout"
                if message.get("id") == request_id and isinstance(message.get("result"), dict):
                    return message["result"], None
                # anything else on the socket was written by the student's code: ignore it
        except ChildDied as died:
            self.crashed = True
            status = self._kill(died=True)
            detail = "it garbled the channel to the grader" if "unreadable" in str(died) or status == "running" \
                else (status or "ended")
            return {"error": {"type": "WorkerCrash", "message": detail}}, "crash"


def _cell_index(value, count: int) -> int | None:
    """A cell number from the child, if it is one (the student's code may write anything there)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count else None


# ---------------------------------------------------------------- seeds, order, anonymity
def student_seed(seed: int, lab: str, student: str) -> int:
    """Each student gets their own hidden cases, all fixed by the instructor's seed."""
    digest = hashlib.sha256(f"{seed}\x00{lab}\x00{student}".encode()).digest()
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
    hidden_seed = student_seed(seed, spec.id, submission.student)
    try:
        def context_call(call_spec: dict) -> dict:
            try:
                session.ensure_child()  # running the notebook is not part of this call's time
                output, _ = session.call(call_spec, time.monotonic() + limits.exercise)
            except SubmissionTimeUp:
                return {"timeout": True}
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
        cases = exercise.cases(ctx, seed)
    except Exception as error:  # the exercise definition itself failed: not the student's fault
        return _internal_error(exercise, error), 0
    result = _run_and_judge(exercise, ctx, session, seed, limits, cases)
    return result, sum(1 for case in cases if not case.public)


def _run_and_judge(exercise: Exercise, ctx: dict, session: Session, seed: int, limits: TimeLimits,
                   cases: list) -> Result:
    outputs: list[dict | None] = [None] * len(cases)
    failure: tuple[str, int] | None = None
    deadline = None
    for index in _order(len(cases), seed, exercise.id):
        try:
            session.ensure_child()  # a respawn after an earlier failure is not this exercise's time
        except SubmissionTimeUp:
            return exercise.result(0, "timeout", Feedback("grader.submission_time_limit", {
                "name": exercise.id, "seconds": session.limits.submission}))
        if deadline is None:
            deadline = time.monotonic() + limits.exercise
        try:
            output, failed = session.call(anonymise(cases[index].call), deadline)
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
        if kind == "timeout":
            if session.remaining() <= 0:
                return exercise.result(0, "timeout", Feedback("grader.submission_time_limit", {
                    "name": exercise.id, "seconds": session.limits.submission}))
            return exercise.result(0, "timeout", Feedback("common.timeout", {"name": exercise.id, "case": case.name}),
                                   Feedback("grader.time_limit", {"seconds": limits.exercise}))
        return exercise.result(0, "error", Feedback("grader.worker_crashed", {
            "name": exercise.id, "case": case.name, "detail": outputs[index]["error"]["message"]}))
    try:
        result = exercise.judge(ctx, cases, outputs)
    except Exception as error:
        return _internal_error(exercise, error)
    if result.status == "missing":
        missing = next((o["missing"] for o in outputs if o and "missing" in o), exercise.id)
        result.feedback = [Feedback("grader.not_found", {"name": missing})]
    return result


def _internal_error(exercise: Exercise, error: Exception) -> Result:
    detail = f"{type(error).__name__}: {error}"[:200]
    return exercise.result(0, "grader_error", Feedback("grader.internal_error", {"name": exercise.id, "detail": detail}))


def render_all(feedback: list[Feedback]) -> dict[str, str]:
    return {lang: " ".join(item.render(lang) for item in feedback) for lang in i18n.LANGS}
