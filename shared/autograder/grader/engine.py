"""Grading one submission: the notebook runs in a sandboxed child, judging happens here.

The trusted side (this module) only ever sees plain data. For each exercise it
builds the call specs (public cases plus the hidden randomised ones drawn from
the instructor's seed), has the child run them, and gives the outputs to the
exercise's `judge`. The calls run in two phases: first every public case of
every exercise, then the hidden ones, so that nothing the student's code
produced after it saw a hidden input can reach the feedback (the feedback on
hidden cases names the exercise and the mistake, never student text: see
redact_hidden). Within a phase each exercise's calls are shuffled. Functions
handed to a student's test run here, never in the child (remote.py).

A time-out or a crash costs the exercise it happened in: the child is killed,
a fresh one re-runs the notebook (without the cells known to hang or crash)
and grading goes on. Time limits count the CPU seconds of the student's
processes and of the grader's work on their requests, never the time another
student's load takes from them; a wall-clock backstop stops code that only
waits (see Clock).
"""
from __future__ import annotations

import hashlib
import importlib
import random
import re
import time
from dataclasses import dataclass, field

from .. import i18n
from ..exercise import Exercise, Feedback, Result, render_feedback
from ..grading import context_problem_result, read_context
from ..labs import LabSpec
from . import remote, sanitize
from .sandbox import ChildDied, ChildHandle, SandboxError, Slot
from .submissions import Submission

RECORD_VERSION = 2  # 2: hidden cases per lab (not per student), revealed feedback kept
OUTPUT_KEPT = 8000  # characters of the notebook's printed output kept for the instructor
ANONYMOUS_FUNCTION = "candidate"
TYPED_ID_CHARS = 200
GARBLED = "it garbled the channel to the grader"
WALL_FACTOR, WALL_SLACK = 2.0, 1.0  # a limit of L CPU seconds also stops code that waits, after 2 L + 1 s
CPU_POLL = 0.25  # seconds between two looks at the CPU time while a call or a cell runs
# A cell's or an exercise's start reuses a CPU sample at most this old (notebooks have many short cells, labs
# many quick exercises): each sample is a round trip to the zygote, which reads /proc for the child's tree.
CELL_SAMPLE = 0.05
NOTEBOOK_LINE = 64 << 10  # one message of the child while it runs the notebook, at most
ANSWER_LINE = 4 << 20  # one answer to a call, at most (the worker refuses to send more)
REMOTE_LINE = 4 << 20  # one request for a remote function (its numbers are capped in remote.py)
REMOTE_PREFIX = b'{"remote": '  # a request for a remote function: remote.py checks every part of it
NOTEBOOK_MESSAGES = {b'{"cell": ': NOTEBOOK_LINE, b'{"cell_error": ': NOTEBOOK_LINE, b'{"ready": ': NOTEBOOK_LINE}


@dataclass
class TimeLimits:
    exercise: float = 10.0  # all cases of one exercise
    cell: float = 30.0  # one notebook cell
    submission: float = 120.0  # everything of one submission


class Clock:
    """One time limit: CPU seconds of the student's processes and of the grader's work on their requests.

    Measured so, a limit cannot expire because another student's load slowed
    this one down (the CPU time of a computation does not grow when it waits
    for a processor). Code that only waits (sleep, a blocked read) uses no CPU:
    a wall-clock backstop of WALL_FACTOR * limit + WALL_SLACK stops it. A clock
    runs in segments (an exercise's public cases, later its hidden ones).
    """

    def __init__(self, limit: float):
        self.limit = limit
        self.cpu = 0.0
        self.wall = 0.0
        self._since: tuple[float, float] | None = None

    @property
    def running(self) -> bool:
        return self._since is not None

    @property
    def backstop(self) -> float:
        return WALL_FACTOR * self.limit + WALL_SLACK

    def start(self, cpu: float, wall: float) -> None:
        if self._since is None:
            self._since = (cpu, wall)

    def stop(self, cpu: float, wall: float) -> None:
        if self._since is not None:
            self.cpu += max(0.0, cpu - self._since[0])
            self.wall += max(0.0, wall - self._since[1])
            self._since = None

    def used(self, cpu: float, wall: float) -> tuple[float, float]:
        if self._since is None:
            return self.cpu, self.wall
        return self.cpu + max(0.0, cpu - self._since[0]), self.wall + max(0.0, wall - self._since[1])

    def expired(self, cpu: float, wall: float) -> bool:
        used_cpu, used_wall = self.used(cpu, wall)
        return used_cpu > self.limit or used_wall > self.backstop

    def wall_left(self, wall: float) -> float:
        return self.backstop - self.used(0.0, wall)[1]


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
        self.submission_clock = Clock(limits.submission)
        self.submission_clock.start(0.0, self.started)
        self.skip: set[int] = set(submission.dropped_cells)
        self.events: dict[int, CellEvent] = {i: CellEvent(i, "dropped") for i in submission.dropped_cells}
        self.child: ChildHandle | None = None
        self.request_id = 0
        self.output = ""
        self.children = 0
        self.timed_out = False
        self.crashed = False
        # (request id, spec, child, remote functions) of the call already sent ahead
        self.prefetched: tuple[int, dict, ChildHandle, list] | None = None
        self.protocol_problem = ""  # what was wrong with the last forged answer
        self.saw_hidden = False  # a hidden case was asked: later cell notes keep no student text
        # CPU seconds: of the children that ended, of the live child (a sample and when it was taken),
        # of the grader's work on this student's calls
        self.cpu_ended = 0.0
        self.child_sample = (0.0, -1.0)
        self.grader_cpu = 0.0

    # -- time
    def student_cpu(self, fresh: float = CPU_POLL) -> float:
        """CPU seconds this submission's code has used, children and the grader's work on its requests.

        The live child's share is a sample of the zygote's, at most `fresh` seconds old.
        """
        cpu, taken = self.child_sample
        now = time.monotonic()
        if self.child is not None and now - taken > fresh:
            cpu = self.slot.child_cpu_now()
            self.child_sample = (cpu, now)
        return self.cpu_ended + (cpu if self.child is not None else 0.0) + self.grader_cpu

    def time_up(self, clock: Clock | None, fresh: float = CPU_POLL) -> str:
        """"" while time is left, else "submission" or "clock" (the limit that ran out)."""
        cpu, wall = self.student_cpu(fresh), time.monotonic()
        if self.submission_clock.expired(cpu, wall):
            return "submission"
        if clock is not None and clock.expired(cpu, wall):
            return "clock"
        return ""

    def _step(self, clock: Clock | None) -> float:
        """How long to wait for the child before looking at the clocks again."""
        wall = time.monotonic()
        left = [CPU_POLL, self.submission_clock.wall_left(wall)]
        if clock is not None:
            left.append(clock.wall_left(wall))
        return max(0.005, min(left))

    def _kill(self, died: bool = False) -> str:
        status = ""
        if self.child is not None:
            self.child.drain()
            if len(self.output) < OUTPUT_KEPT:
                self.output = (self.output + self.child.output_text())[:OUTPUT_KEPT]
            last = self.student_cpu(fresh=0.0) - self.cpu_ended - self.grader_cpu
            before = self.slot.child_cpu
            status = self.slot.kill(self.child, died=died)
            self.cpu_ended += max(last, self.slot.child_cpu - before)
            self.child = None
            self.child_sample = (0.0, -1.0)
            self.prefetched = None
        return status

    def close(self) -> None:
        self._kill()

    def ensure_child(self) -> None:
        """A child that has run the notebook and waits for calls; SubmissionTimeUp if no time is left."""
        while self.child is None:
            if self.time_up(None):
                self.timed_out = True
                raise SubmissionTimeUp()
            try:
                child = self.slot.spawn(self.env)
            except SandboxError:
                self.slot.restart()
                child = self.slot.spawn(self.env)
            self.children += 1
            self.child = child
            current, cell_clock = None, None
            try:
                child.send({"cells": self.cells, "skip": sorted(self.skip)},
                           timeout=max(1.0, self.submission_clock.wall_left(time.monotonic())))
                while True:
                    # before the first cell only the submission's limit applies (a busy machine is slow to fork)
                    message = child.receive(time.monotonic() + self._step(cell_clock), accept=NOTEBOOK_MESSAGES)
                    ran_out = self.time_up(cell_clock)
                    if ran_out:
                        self.timed_out = True
                        if current is not None:
                            self._cell_event(current, "timeout", seconds=self.limits.cell)
                        if ran_out == "submission" or current is None:
                            self._kill()
                            raise SubmissionTimeUp()
                        break
                    if message is None:
                        continue
                    index = _cell_index(message.get("cell"), len(self.cells))
                    if index is not None and (current is None or index > current) and index not in self.skip:
                        # Cells run in order, each once: a message that does not move forward is forged
                        # (student code may write to this socket) and must not restart the cell's clock.
                        current = index
                        cell_clock = Clock(self.limits.cell)
                        cell_clock.start(self.student_cpu(fresh=CELL_SAMPLE), time.monotonic())
                    elif _cell_index(message.get("cell_error"), len(self.cells)) is not None:
                        index = message["cell_error"]
                        params = {"type": str(message.get("type", "Exception"))[:80],
                                  "message": str(message.get("message", ""))[:300]}
                        if not self.saw_hidden:  # no student text from any child after a hidden input
                            self.events.setdefault(index, CellEvent(index, "error", params))
                    elif message.get("ready") is True:
                        return
            except ChildDied as died:
                if current is None:
                    self._kill(died=True)
                    raise SandboxError(f"the worker died before running the notebook: {died}") from died
                self.crashed = True
                status = self._kill(died=True) or "ended"
                self._cell_event(current, "crash", detail=GARBLED if "unreadable" in str(died) else status)
                continue
            self._kill()  # a cell hung: start again without it

    def _cell_event(self, index: int, kind: str, **params) -> None:
        self.skip.add(index)
        self.events[index] = CellEvent(index, kind, params)

    def call(self, spec: dict, clock: Clock, upcoming: dict | None = None, hidden: bool = False
             ) -> tuple[dict, str | None]:
        """(output, failure): failure is None, "timeout" or "crash"; the child is gone after a failure.

        `upcoming`, the call that will follow, is sent as soon as this one's answer
        arrives (the child works on it while this answer is decoded); the next
        `call` with that very spec then only waits for its answer. `clock` runs
        while this call does; `hidden` marks a hidden case (see saw_hidden).
        """
        self.ensure_child()
        assert self.child is not None
        child = self.child
        thread_cpu = remote.cpu_clock()
        if not clock.running:  # the first call of a segment: a fresh look at the CPU time
            clock.start(self.student_cpu(fresh=CELL_SAMPLE), time.monotonic())
        try:
            if self.prefetched is not None and self.prefetched[1] is spec and self.prefetched[2] is child:
                request_id, functions = self.prefetched[0], self.prefetched[3]
            else:
                request_id, functions = self._send(child, spec, clock)
            self.prefetched = None
            if hidden:
                self.saw_hidden = True
            tokens = {function.token: function for function in functions}
            answer = b'{"id": %d, "result": ' % request_id
            accept = {answer: ANSWER_LINE, REMOTE_PREFIX: REMOTE_LINE}

            def send_upcoming(line: bytes) -> None:
                if upcoming is not None and self.prefetched is None and line.startswith(answer):
                    next_id, next_functions = self._send(child, upcoming, clock)
                    self.prefetched = (next_id, upcoming, child, next_functions)

            while True:
                message = child.receive(time.monotonic() + self._step(clock), accept=accept,
                                        on_line=send_upcoming, fatal=(answer,), raw=(REMOTE_PREFIX,))
                self.grader_cpu += remote.cpu_clock() - thread_cpu
                thread_cpu = remote.cpu_clock()
                if self.time_up(clock):
                    self.timed_out = True
                    self._kill()
                    self._stop(clock)
                    return {"timeout": True}, "timeout"
                if message is None:
                    continue
                if "remote" in message:
                    self._serve(child, message, tokens)
                    continue
                if message.get("id") == request_id and "result" in message:
                    result, problem = sanitize.call_result(_trusted_parts(message["result"], spec))
                    if problem:
                        # no worker answers so: the student's code wrote it on the socket (a protocol error,
                        # that exercise's, never a value the trusted judge would choke on)
                        self.crashed = True
                        self.protocol_problem = problem
                        self._kill()
                        self._stop(clock)
                        return {"error": {"type": "WorkerCrash", "message": GARBLED}}, "crash"
                    if any(function.record for function in functions):
                        result["calls"] = remote.evidence(functions)  # what the grader saw, not the child
                    return result, None  # the clock runs on: the exercise's next call continues its segment
        except ChildDied as died:
            self.crashed = True
            status = self._kill(died=True)
            self._stop(clock)
            detail = GARBLED if "unreadable" in str(died) or status == "running" \
                else (status or "ended")
            return {"error": {"type": "WorkerCrash", "message": detail}}, "crash"
        finally:
            self.grader_cpu += remote.cpu_clock() - thread_cpu

    def _stop(self, clock: Clock, fresh: float = CPU_POLL) -> None:
        clock.stop(self.student_cpu(fresh), time.monotonic())

    def _send(self, child: ChildHandle, spec: dict, clock: Clock) -> tuple[int, list]:
        """Send one call, its functions replaced by handles (remote.translate); (request id, functions)."""
        functions: list[remote.RemoteFunction] = []
        sent = remote.translate(spec, functions)
        self.request_id += 1
        child.send({"id": self.request_id, "call": sent},
                   timeout=max(0.5, min(clock.wall_left(time.monotonic()),
                                        self.submission_clock.wall_left(time.monotonic()))))
        return self.request_id, functions

    def _serve(self, child: ChildHandle, message: dict, tokens: dict) -> None:
        """Answer a request for a remote function (any other token: a function no longer handed out)."""
        seq, token = message.get("seq"), message.get("remote")  # raw: not cleaned, checked here
        function = tokens.get(token) if isinstance(token, str) else None
        if function is None:
            reply = {"error": {"type": "RuntimeError",
                               "message": "this function was handed to another call of your test"}}
        else:
            reply = function.handle(message)
        child.send({"remote_reply": seq if type(seq) is int else None, **reply}, timeout=5.0)


def _trusted_parts(result, spec: dict):
    """The answer with what the grader knows better in place: the name a "missing" answer reports is
    the call's target (never a text of the child's), and recorded calls come from the grader."""
    if not isinstance(result, dict):
        return result
    result = {k: v for k, v in result.items() if k != "calls"}
    if "missing" in result and isinstance(result["missing"], str):
        result["missing"] = str(spec.get("target", ""))
    return result


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
    cpu: float = 0.0  # CPU seconds the student's code used (its processes, and the grader on its requests)


def normaliser(spec: LabSpec):
    module = importlib.import_module(f"autograder.labs.{spec.id}")
    return getattr(module, "normalise_id", lambda text: str(text).strip().casefold())


@dataclass
class Plan:
    """One exercise of one submission: its cases, the order they run in, what came back."""

    exercise: Exercise
    cases: list
    calls: list
    order: list[int]  # public cases first (phase 1), then hidden ones (phase 2), each part shuffled
    clock: Clock
    outputs: list = field(default_factory=list)
    result: Result | None = None  # set when a failure (time-out, crash) decided the exercise

    @property
    def hidden(self) -> int:
        return sum(1 for case in self.cases if not case.public)


def grade_submission(spec: LabSpec, submission: Submission, slot: Slot, seed: int,
                     limits: TimeLimits, lang: str) -> Outcome:
    env = {"LABBOOK_LANG": lang}
    session = Session(slot, submission, limits, env)
    results: list[Result] = []
    typed_id, mismatch = None, False
    notes: list[Feedback] = []
    hidden_seed = case_seed(seed, spec.id)
    plans: list[Plan] = []
    try:
        def context_call(call_spec: dict) -> dict:
            try:
                session.ensure_child()  # running the notebook is not part of this call's time
                crashed = session.crashed
                clock = Clock(limits.exercise)
                output, failed = session.call(call_spec, clock)
                session._stop(clock)
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
        by_exercise: dict[str, Result] = {}
        if problem is not None:
            for exercise in spec.exercises:
                by_exercise[exercise.id] = context_problem_result(exercise, problem)
        else:
            for exercise in spec.exercises:
                try:
                    cases, calls = batch_cases(exercise, ctx, hidden_seed)
                except Exception as error:  # the exercise definition itself failed: not the student's fault
                    by_exercise[exercise.id] = _internal_error(exercise, error)
                    continue
                plans.append(_plan(exercise, cases, calls, hidden_seed, limits))
            _run_plans(plans, session, limits)
            for plan in plans:
                by_exercise[plan.exercise.id] = plan.result or _judge(plan, ctx)
        results = [by_exercise[exercise.id] for exercise in spec.exercises]
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
                   sum(plan.hidden for plan in plans), session.student_cpu(fresh=0.0))


_CELL_NAME = re.compile(r"<cell ([0-9]{1,6})>")


def _cell_number(submission: Submission, index: int) -> int:
    numbers = submission.cell_numbers
    return numbers[index] if 0 <= index < len(numbers) else index + 1


def _plan(exercise: Exercise, cases: list, calls: list, seed: int, limits: TimeLimits) -> Plan:
    shuffled = _order(len(cases), seed, exercise.id)
    order = [i for i in shuffled if cases[i].public] + [i for i in shuffled if not cases[i].public]
    return Plan(exercise, cases, calls, order, Clock(limits.exercise), [None] * len(cases))


def _run_plans(plans: list[Plan], session: Session, limits: TimeLimits) -> None:
    """Every public case of every exercise, then every hidden one.

    Nothing the child computed after it saw a hidden input is judged as a
    public case, so the public cases' feedback (which may carry the student's
    messages and values) never carries a hidden input. A time-out or crash
    decides its exercise (its remaining cases are not run), except on an
    optional input (lab00's own weights, lab03's buggy decoders), after which
    the exercise goes on with fresh time.
    """
    sequence = [(plan, i) for public in (True, False) for plan in plans for i in plan.order
                if plan.cases[i].public == public]
    running: Plan | None = None
    for position, (plan, index) in enumerate(sequence):
        if plan.result is not None:
            continue
        if running is not None and running is not plan:
            session._stop(running.clock, fresh=CELL_SAMPLE)  # the next exercise's clock starts from this sample
        running = plan
        upcoming = next((p.calls[i] for p, i in sequence[position + 1:] if p.result is None), None)
        case = plan.cases[index]
        try:
            output, failed = session.call(plan.calls[index], plan.clock, upcoming, hidden=not case.public)
        except SubmissionTimeUp:
            for waiting in plans:
                if waiting.result is None:
                    waiting.result = _submission_time_up(waiting.exercise, session)
            return
        plan.outputs[index] = output
        if failed and case.data.get("optional"):
            plan.clock = Clock(limits.exercise)  # an optional input failed: judge without it, fresh time
        elif failed:
            full = _failure_result(plan.exercise, failed, case, limits, session, output)
            plan.result = full if case.public else _hidden_failure(plan.exercise, failed, limits, full)
    if running is not None:
        session._stop(running.clock)


def _submission_time_up(exercise: Exercise, session: Session) -> Result:
    return exercise.result(0, "timeout", Feedback("grader.submission_time_limit", {
        "name": exercise.id, "seconds": session.limits.submission}))


def _judge(plan: Plan, ctx: dict) -> Result:
    exercise, cases, outputs = plan.exercise, plan.cases, plan.outputs
    try:
        result = exercise.judge(ctx, cases, outputs)
    except Exception as error:
        return _internal_error(exercise, error)
    if result.status == "missing":
        missing = next((o["missing"] for o in outputs if o and "missing" in o), exercise.id)
        result.feedback = [Feedback("grader.not_found", {"name": missing})]
        return result
    return redact_hidden(exercise, ctx, cases, outputs, result)


def grade_exercise(exercise: Exercise, ctx: dict, session: Session, seed: int,
                   limits: TimeLimits) -> tuple[Result, int]:
    """One exercise alone (its public cases, then its hidden ones): its Result and how many hidden cases."""
    try:
        cases, calls = batch_cases(exercise, ctx, seed)
    except Exception as error:  # the exercise definition itself failed: not the student's fault
        return _internal_error(exercise, error), 0
    plan = _plan(exercise, cases, calls, seed, limits)
    _run_plans([plan], session, limits)
    return plan.result or _judge(plan, ctx), plan.hidden


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
            feedback.append(Feedback("grader.hidden_more", {"name": exercise.id, "lost": f"{lost:g}"}, count="lost"))
    else:
        kept = [item for item in result.feedback if _safe(item)]
        feedback = [Feedback("common.failed", {"name": exercise.id}), Feedback("grader.hidden_failed", {})]
        if any(item.key != "common.see_section" for item in kept):
            feedback.append(Feedback("grader.hidden_mistake", {}))
        feedback += kept
    result.feedback = feedback
    result.revealed = revealed
    return result


def _first_failing_hidden(exercise: Exercise, ctx: dict, cases: list, outputs: list) -> "str | Feedback | None":
    """The name of the first hidden case that fails when judged on its own (None where that means nothing)."""
    for case, output in zip(cases, outputs):
        if case.public:
            continue
        try:
            alone = exercise.judge(ctx, [case], [output])
        except Exception:  # an exercise judged only as a whole (a student's test over many functions)
            return None
        if alone.status != "passed":
            return case.shown
    return None


def _hidden_failure(exercise: Exercise, kind: str, limits: TimeLimits, full: Result) -> Result:
    """A time-out or crash on a hidden case: say so without the case (nor any text of the child's)."""
    if full.feedback and full.feedback[0].key == "grader.submission_time_limit":
        return full  # names the exercise and the limit only
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
        if session.time_up(None) == "submission":
            return _submission_time_up(exercise, session)
        return exercise.result(0, "timeout", Feedback("common.timeout", {"name": exercise.id, "case": case.shown}),
                               Feedback("grader.time_limit", {"seconds": limits.exercise}))
    return exercise.result(0, "error", Feedback("grader.worker_crashed", {
        "name": exercise.id, "case": case.shown, "detail": output["error"]["message"]}))


def _internal_error(exercise: Exercise, error: Exception) -> Result:
    detail = f"{type(error).__name__}: {error}"[:200]
    return exercise.result(0, "grader_error", Feedback("grader.internal_error", {"name": exercise.id, "detail": detail}))


def render_all(feedback: list[Feedback]) -> dict[str, str]:
    return {lang: render_feedback(feedback, lang) for lang in i18n.LANGS}


i18n.NP_("grader.hidden_more")  # one point, several points
