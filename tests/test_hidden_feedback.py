"""Feedback on a hidden case names the exercise and the mistake, never the input (grader/engine.py).

A hidden case's name ("sliding_window_mask(10, 9)") and a diagnosis's parameters ("W = 9") are
inputs; so is the case named in a time-out or a crash. Each test builds the judge's full result
for a submission wrong only on hidden inputs, passes it through the grader's redaction, and
looks for those inputs in every language; the full text stays in `revealed` for
`--reveal-hidden`. Expected fragments are written here by hand.
"""
from types import SimpleNamespace

import numpy as np
import pytest

from autograder import i18n
from autograder.exercise import Case, Exercise, Feedback
from autograder.grader import engine
from autograder.labs import get_lab

SEED = 4242


def tensor(values, dtype="bool"):
    values = np.asarray(values)
    return {"__tensor__": values.tolist(), "dtype": dtype, "shape": list(values.shape)}


def window(T, W):
    return np.array([[i - W < j <= i for j in range(T)] for i in range(T)])


def judged(exercise_id, answer, seed=SEED):
    """The lab01 exercise, its cases (hidden ones included), the outputs of `answer` and the judge's result."""
    exercise = get_lab("lab01").exercise(exercise_id)
    cases = exercise.cases({}, seed)
    outputs = [{"ok": answer(*case.call["args"])} for case in cases]
    return exercise, cases, outputs, exercise.judge({}, cases, outputs)


def rendered(feedback):
    return {lang: " ".join(item.render(lang) for item in feedback) for lang in i18n.LANGS}


def test_a_diagnosis_with_parameters_on_a_hidden_case_keeps_none_of_them():
    # too wide only for T = 10, W = 9: a size no public case has
    def answer(T, W):
        return tensor(window(T, W + 1) if (T, W) == (10, 9) else window(T, W))

    exercise, cases, outputs, result = judged("sliding_window_mask", answer)
    assert result.diagnosis == "window_too_wide" and result.feedback[1].params == {"W": 9, "W1": 10}
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, result)
    assert (redacted.points, redacted.status, redacted.diagnosis) == (0.0, "failed", "window_too_wide")
    for lang, text in rendered(redacted.feedback).items():
        assert "sliding_window_mask(10, 9)" not in text, (lang, text)
        numbers = text.replace("09 §0", "")  # the chapter section is no input
        assert "9" not in numbers and "10" not in numbers, (lang, text)
    assert "hidden cases" in rendered(redacted.feedback)["en"]
    assert "09 §0" in rendered(redacted.feedback)["en"]  # where the book explains windows: no input
    # nothing of the mistake is left to show, so no "What goes wrong there:" before the section
    assert [item.key for item in redacted.feedback] == ["common.failed", "grader.hidden_failed", "common.see_section"]
    revealed = rendered(redacted.revealed)["en"]
    assert "W = 9" in revealed and "(Hidden case: sliding_window_mask(10, 9).)" in revealed


def test_a_mistake_without_parameters_on_a_hidden_case_is_named():
    def answer(T, W):
        mask = window(T, W)
        return tensor(mask.T if (T, W) == (10, 9) else mask)

    exercise, cases, outputs, result = judged("sliding_window_mask", answer)
    assert result.diagnosis == "wrong_triangle"
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, result)
    text = rendered(redacted.feedback)["en"]
    assert "What goes wrong there:" in text and "sliding_window_mask(" not in text
    assert [item.key for item in redacted.feedback][:3] == ["common.failed", "grader.hidden_failed",
                                                           "grader.hidden_mistake"]
    assert any(item.key.endswith("wrong_triangle") for item in redacted.feedback)


def test_a_wrong_entry_on_a_hidden_case_names_neither_the_case_nor_the_entry():
    def answer(T, W):
        mask = window(T, W)
        if (T, W) == (10, 9):
            mask[5, 5] = False  # one query without its own key: no named mistake
        return tensor(mask)

    exercise, cases, outputs, result = judged("sliding_window_mask", answer)
    assert result.diagnosis == "wrong_values"
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, result)
    for lang, text in rendered(redacted.feedback).items():
        assert "sliding_window_mask(" not in text and "5, 5" not in text, (lang, text)


def test_where_the_public_cases_fail_their_feedback_stands():
    def answer(T, W):
        return tensor(window(T, W + 1))  # too wide everywhere, public cases included

    exercise, cases, outputs, result = judged("sliding_window_mask", answer)
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, result)
    public = exercise.judge({}, [c for c in cases if c.public], [o for c, o in zip(cases, outputs) if c.public])
    assert rendered(redacted.feedback) == rendered(public.feedback)  # the first public window, shown by check too
    assert redacted.revealed is None


def test_a_right_answer_is_left_alone():
    exercise, cases, outputs, result = judged("sliding_window_mask", lambda T, W: tensor(window(T, W)))
    assert engine.redact_hidden(exercise, {}, cases, outputs, result) is result
    assert result.revealed is None and result.status == "passed"


class Counted(Exercise):
    """A point off per wrong case; the feedback names the first wrong case and counts them."""

    id = "counted"
    lab = "lab01"
    points = 3

    def cases(self, ctx, seed=None):
        return [Case("public(1)", {"kind": "call", "target": "f", "args": [1]}),
                Case("secret(2)", {"kind": "call", "target": "f", "args": [2]}, public=False),
                Case("secret(3)", {"kind": "call", "target": "f", "args": [3]}, public=False)]

    def judge_outputs(self, ctx, cases, values):
        wrong = [case for case, value in zip(cases, values) if value != 2 * case.call["args"][0]]
        if not wrong:
            return self.passed()
        return self.result(max(0, self.points - len(wrong)), "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_entry", {"case": wrong[0].name, "index": "0", "got": str(len(wrong))}))


def test_points_the_hidden_cases_cost_are_said_without_the_cases():
    exercise = Counted()
    cases = exercise.cases({})
    outputs = [{"ok": 0}, {"ok": 0}, {"ok": 6}]  # public(1) and secret(2) wrong
    result = exercise.judge({}, cases, outputs)
    assert result.points == 1.0
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, result)
    text = rendered(redacted.feedback)["en"]
    assert "public(1)" in text and "secret" not in text
    assert redacted.feedback[-1] == Feedback("grader.hidden_more", {"name": "counted", "lost": "1"}, count="lost")
    # the plural form the count asks for, in every language: no "point(s)", "punto(s)", "Punkt(e)"
    assert "cost 1 more point:" in text
    assert "restan 1 punto más" in rendered(redacted.feedback)["es"]
    assert "kosten 1 weiteren Punkt" in rendered(redacted.feedback)["de"]
    assert "1 point aur kat gaya" in rendered(redacted.feedback)["hi-Latn"]
    assert "(Hidden case: secret(2).)" in rendered(redacted.revealed)["en"]
    assert redacted.points == 1.0  # the redaction changes words, never points


def test_no_extra_sentence_when_the_hidden_cases_cost_nothing_more():
    exercise = Counted()
    cases = exercise.cases({})
    outputs = [{"ok": 0}, {"ok": 4}, {"ok": 6}]  # only the public case is wrong
    result = exercise.judge({}, cases, outputs)
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, result)
    assert "grader.hidden_more" not in [item.key for item in redacted.feedback]


LIMITS = engine.TimeLimits(exercise=7.0)


def session_with(left: float, submission: float = 99.0) -> engine.Session:
    """A real session whose submission has `left` CPU seconds of its limit still to use."""
    slot = SimpleNamespace(child_cpu_now=lambda: 0.0)
    session = engine.Session(slot, SimpleNamespace(cells=[], dropped_cells=[]), engine.TimeLimits(submission=submission),
                             {})
    session.grader_cpu = submission - left  # CPU charged to the student so far
    return session


@pytest.mark.parametrize("kind", ["timeout", "crash"])
def test_a_time_out_or_a_crash_on_a_hidden_case_does_not_name_it(kind):
    exercise = Counted()
    case = exercise.cases({})[2]
    session = session_with(60.0, engine.TimeLimits().submission)
    output = {"timeout": True} if kind == "timeout" else {"error": {"type": "WorkerCrash", "message": "killed by SIGKILL"}}
    full = engine._failure_result(exercise, kind, case, LIMITS, session, output)
    assert "secret(3)" in rendered(full.feedback)["en"]  # what the public version of this case would say
    hidden = engine._hidden_failure(exercise, kind, LIMITS, full)
    for lang, text in rendered(hidden.feedback).items():
        assert "secret(3)" not in text and "SIGKILL" not in text, (lang, text)
    assert hidden.points == 0.0 and hidden.status == ("timeout" if kind == "timeout" else "error")
    keys = [item.key for item in hidden.feedback]
    assert keys[:2] == ["common.failed", "grader.hidden_failed"]
    if kind == "timeout":
        assert keys[2:] == ["grader.time_limit"] and "7 s per exercise" in rendered(hidden.feedback)["en"]
    else:
        assert keys[2:] == []
    assert "secret(3)" in rendered(hidden.revealed)["en"]


def test_a_public_time_out_or_crash_names_its_case():
    exercise = Counted()
    case = exercise.cases({})[0]
    session = session_with(60.0, engine.TimeLimits().submission)
    timeout = engine._failure_result(exercise, "timeout", case, LIMITS, session, {"timeout": True})
    assert "public(1)" in rendered(timeout.feedback)["en"] and "7 s per exercise" in rendered(timeout.feedback)["en"]
    crash = engine._failure_result(exercise, "crash", case, LIMITS, session,
                                   {"error": {"type": "WorkerCrash", "message": "killed by SIGKILL"}})
    assert (crash.status, crash.points) == ("error", 0.0)
    assert "public(1)" in rendered(crash.feedback)["en"] and "killed by SIGKILL" in rendered(crash.feedback)["en"]
    out_of_time = session_with(-0.1)  # 0.1 s over its limit
    late = engine._failure_result(exercise, "timeout", case, LIMITS, out_of_time, {"timeout": True})
    assert late.feedback == [Feedback("grader.submission_time_limit", {"name": "counted", "seconds": 99.0})]


def test_a_hidden_case_cut_by_the_submissions_time_limit_says_only_that():
    exercise = Counted()
    hidden_case = exercise.cases({})[2]
    out_of_time = session_with(-0.1)  # 0.1 s over the submission's limit
    full = engine._failure_result(exercise, "timeout", hidden_case, LIMITS, out_of_time, {"timeout": True})
    hidden = engine._hidden_failure(exercise, "timeout", LIMITS, full)
    # the exercise and the submission's limit are no input: nothing to hide, and not the exercise's own limit
    assert hidden.feedback == [Feedback("grader.submission_time_limit", {"name": "counted", "seconds": 99.0})]
    assert (hidden.status, hidden.points, hidden.revealed) == ("timeout", 0.0, None)


def test_safe_feedback_carries_only_names_sections_and_seconds():
    assert engine._safe(Feedback("common.see_section", {"section": "02 §0"}))
    assert engine._safe(Feedback("grader.time_limit", {"seconds": 3}))
    assert engine._safe(Feedback("lab01.wrong_triangle", {}))
    assert not engine._safe(Feedback("lab01.window_too_wide", {"W": 9, "W1": 10}))
    assert not engine._safe(Feedback("common.failed", {"name": "x"}))  # said once, by the redaction itself
    assert not engine._safe(Feedback("common.passed", {"name": "x"}))
    assert not engine._safe(Feedback("common.wrong_entry", {"case": "f(3)", "index": "0", "got": "1"}))


def test_a_time_out_just_before_the_submissions_limit_is_still_the_exercises():
    exercise = Counted()
    case = exercise.cases({})[0]
    almost = session_with(0.5)
    result = engine._failure_result(exercise, "timeout", case, LIMITS, almost, {"timeout": True})
    assert [item.key for item in result.feedback] == ["common.timeout", "grader.time_limit"]
    over = session_with(-0.1)
    result = engine._failure_result(exercise, "timeout", case, LIMITS, over, {"timeout": True})
    assert (result.status, result.points, result.max_points) == ("timeout", 0.0, 3.0)


def test_a_failure_of_the_grader_itself_is_said_and_capped():
    result = engine._internal_error(Counted(), ValueError("x" * 500))
    assert (result.status, result.points) == ("grader_error", 0.0)
    (item,) = result.feedback
    assert item.key == "grader.internal_error"
    assert item.params == {"name": "counted", "detail": ("ValueError: " + "x" * 500)[:200]}


def test_the_order_of_an_exercises_calls_is_a_permutation_fixed_by_the_seed_and_the_exercise():
    order = engine._order(30, 7, "causal_mask")
    assert sorted(order) == list(range(30)) and order != list(range(30))
    assert engine._order(30, 7, "causal_mask") == order  # the same for every student of a batch
    assert engine._order(30, 8, "causal_mask") != order
    assert engine._order(30, 7, "allowed_mask") != order


class AllOrNothing(Counted):
    """Every point or none; the feedback counts the wrong cases."""

    def judge_outputs(self, ctx, cases, values):
        result = super().judge_outputs(ctx, cases, values)
        if result.status == "failed":
            result.points = 0.0
        return result


def test_no_points_lost_to_the_hidden_cases_means_no_sentence_about_them():
    exercise = AllOrNothing()
    cases = exercise.cases({})
    outputs = [{"ok": 0}, {"ok": 0}, {"ok": 6}]  # public(1) and secret(2) wrong: 0 points either way
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, exercise.judge({}, cases, outputs))
    assert [item.key for item in redacted.feedback] == ["common.failed", "common.wrong_entry"]
    assert "secret" not in rendered(redacted.feedback)["en"]


class NeedsEveryCase(Counted):
    """A judge that only works on its whole set of cases (as a student's test judged over many functions)."""

    def judge_outputs(self, ctx, cases, values):
        if len(cases) < 3:
            raise ValueError("judged as a whole only")
        return super().judge_outputs(ctx, cases, values)


def test_an_exercise_judged_only_as_a_whole_still_hides_its_hidden_cases():
    exercise = NeedsEveryCase()
    cases = exercise.cases({})
    outputs = [{"ok": 2}, {"ok": 0}, {"ok": 6}]  # only secret(2) wrong
    redacted = engine.redact_hidden(exercise, {}, cases, outputs, exercise.judge({}, cases, outputs))
    assert [item.key for item in redacted.feedback][:2] == ["common.failed", "grader.hidden_failed"]
    assert "secret" not in rendered(redacted.feedback)["en"]
    assert redacted.revealed is not None and "secret(2)" in rendered(redacted.revealed)["en"]


def test_the_seed_of_a_labs_hidden_cases_is_sha256_of_the_seed_and_the_lab():
    """Written out from the README: the same seed gives the same hidden cases in every version (appeals)."""
    import hashlib

    for seed, lab in ((1, "lab02"), (20261201, "lab01"), (0, "lab05")):
        digest = hashlib.sha256(f"{seed}\x00{lab}".encode()).digest()
        assert engine.case_seed(seed, lab) == int.from_bytes(digest[:8], "big") // 2
        assert 0 <= engine.case_seed(seed, lab) < 2 ** 63


def test_a_batchs_cases_are_built_once_and_their_functions_renamed():
    perturbation = get_lab("lab02").exercise("perturbation_test")
    cases, calls = engine.batch_cases(perturbation, {}, 77)
    assert engine.batch_cases(perturbation, {}, 77)[0] is cases  # built once for the batch
    assert [c.call for c in cases] == [c.call for c in perturbation.cases({}, 77)]
    assert any(not c.public for c in cases)
    functions = [arg for call in calls for arg in call["args"] if isinstance(arg, dict) and "__function__" in arg]
    assert functions and {f["name"] for f in functions} == {"candidate"}
    fresh, fresh_calls = engine.batch_cases(perturbation, {"student_id": "x"}, 77)  # a context: never shared
    assert fresh is not cases and [c.call for c in fresh] == [c.call for c in cases] and fresh_calls == calls
    jacobian = get_lab("lab02").exercise("jacobian_leaks")
    assert [c.call for c in engine.batch_cases(jacobian, {}, 77)[0]] == [c.call for c in jacobian.cases({}, 77)]


def test_functions_handed_to_a_students_test_lose_their_names():
    source = "def no_mask(x):\n    return no_mask_helper(x) + no_mask.cache + no_mask(x)\n"
    renamed = engine.anonymise({"args": [{"__function__": source, "name": "no_mask"}, [1, {"k": 2}]], "kind": "call"})
    function = renamed["args"][0]
    assert function["name"] == "candidate"
    assert function["__function__"] == ("def candidate(x):\n    return no_mask_helper(x) + candidate.cache + "
                                        "candidate(x)\n")
    assert renamed["args"][1] == [1, {"k": 2}] and renamed["kind"] == "call"
    taken = {"__function__": "def f(x):\n    candidate = 1\n    return f(x)\n", "name": "f"}
    assert engine.anonymise(taken) == taken  # the neutral name is taken: left alone
    odd = {"__function__": "x = 1\n", "name": "not a name"}
    assert engine.anonymise(odd) == odd
    assert engine.anonymise({"__function__": "def candidate(): pass\n", "name": "candidate"})["name"] == "candidate"
    upper = engine.anonymise({"__function__": "def NoMask(x):\n    return x\n", "name": "NoMask"})
    assert upper["name"] == "candidate" and upper["__function__"].startswith("def candidate(x)")
    assert engine.anonymise({"name": "ana", "k": [1]}) == {"name": "ana", "k": [1]}  # a name alone is no function
