"""What a lab notebook uses: `lab = Lab("lab01")`, `lab.check("causal_mask")`, `lab.hand_in()` (student release)."""
from __future__ import annotations

import sys

from . import i18n
from .exercise import Feedback, Result, decode
from .labs import get_lab
from .runtime import run_call


class Lab:
    def __init__(self, lab_id: str, lang: str | None = None):
        self.spec = get_lab(lab_id)
        self.lang = i18n.normalise_lang(lang) if lang else i18n.current_lang()

    def _call(self, namespace: dict):
        return lambda spec: run_call(namespace, spec)

    def _context(self, call):
        values = {}
        for name in self.spec.context_names:
            output = call({"kind": "value", "target": name})
            values[name] = decode(output["ok"]) if "ok" in output else None
        return self.spec.make_context(values)

    def results(self, namespace: dict, only: list[str] | None = None) -> list[Result]:
        return self.grade(self._call(namespace), only)

    def grade(self, call, only: list[str] | None = None) -> list[Result]:
        """The results, given `call(spec) -> output` (run_call on the namespace, or recorded outputs)."""
        ctx, problem = self._context(call)
        results = []
        for exercise in self.spec.exercises:
            if only is not None and exercise.id not in only:
                continue
            if problem is not None:
                results.append(exercise.result(0, "not_answered", Feedback(*problem)))
                continue
            cases = exercise.cases(ctx)
            results.append(exercise.judge(ctx, cases, [call(case.call) for case in cases]))
        return results

    def check(self, exercise_id: str, namespace: dict | None = None) -> None:
        """Judge one exercise on its public cases and print the feedback."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        known = [exercise.id for exercise in self.spec.exercises]
        if exercise_id not in known:
            print(i18n.t("common.unknown_exercise", self.lang, name=exercise_id, lab=self.spec.id,
                         known=", ".join(known)))
            return
        (result,) = self.results(namespace, only=[exercise_id])
        print(self._line(result))

    def _line(self, result: Result) -> str:
        points = i18n.t("common.points", self.lang, points=result.points, max_points=result.max_points)
        return f"{result.render(self.lang)} [{points}]"

    def hand_in(self, namespace: dict | None = None) -> None:
        """Check every exercise, print a summary and how to hand in."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        results = self.results(namespace)
        for result in results:
            print(self._line(result))
        total = sum(result.points for result in results)
        print()
        print(i18n.t("common.total", self.lang, lab=self.spec.id, points=total, max_points=self.spec.max_score))
        print(i18n.t("common.hand_in", self.lang))

    def show_problem(self, namespace: dict | None = None) -> None:
        """lab00: print the student's own Q, K and V."""
        from . import hand

        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        ctx, problem = self._context(self._call(namespace))
        if problem is not None:
            print(i18n.t(problem[0], self.lang, **problem[1]))
            return
        print(i18n.t("lab00.your_variant", self.lang, student_id=ctx["student_id"]))
        print(hand.format_variant(ctx["variant"]))
