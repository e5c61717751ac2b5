"""What a lab notebook uses: `lab = Lab("lab01")`, `lab.check("causal_mask")`, `lab.hand_in()`."""
from __future__ import annotations

import html
import sys
from functools import cached_property
from pathlib import Path

from . import book_links, i18n
from .exercise import Result
from .grading import grade_lab, read_context
from .labs import get_lab
from .runtime import run_call


# Messages with plural forms, picked by the maximum ("[1/1 point]", "[0/2 points]").
i18n.NP_("common.points", "common.total", "grader.fb.score")


class Lab:
    def __init__(self, lab_id: str, lang: str | None = None):
        self.spec = get_lab(lab_id)
        self.lang = i18n.normalise_lang(lang) if lang else i18n.current_lang()

    def _call(self, namespace: dict):
        return lambda spec: run_call(namespace, spec)

    def results(self, namespace: dict, only: list[str] | None = None) -> list[Result]:
        return grade_lab(self.spec, self._call(namespace), only=only)

    def check(self, exercise_id: str, namespace: dict | None = None) -> None:
        """Grade one exercise on its public cases and print the feedback."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        known = [exercise.id for exercise in self.spec.exercises]
        if exercise_id not in known:
            print(i18n.t("common.unknown_exercise", self.lang, name=exercise_id, lab=self.spec.id,
                         known=", ".join(known)))
            return
        (result,) = self.results(namespace, only=[exercise_id])
        self._emit(self._line(result))

    def _line(self, result: Result) -> str:
        points = i18n.tn("common.points", self.lang, result.max_points, points=result.points,
                         max_points=result.max_points)
        return f"{result.render(self.lang)} [{points}]"

    def _emit(self, line: str) -> None:
        """Print a feedback line. In a notebook it is shown as HTML instead (feedback_html: marked with its
        language, wrapped between words), its chapter references links to the chapters; a console or a
        plain-text reader gets the same line as text."""
        show = _kernel_display()
        if show is None:
            print(line)
            return
        show({"text/plain": line,
              "text/html": feedback_html(book_links.to_html(line, self._chapter_links), self.lang)}, raw=True)

    @cached_property
    def _chapter_links(self) -> book_links.Resolver | None:
        """Links from the lab's folder (labs/<lang>/, the kernel's working folder) to course/<lang>/, found
        beside it in the repository or the student release."""
        here = Path.cwd()
        return book_links.notebook_resolver(self.lang, [here, *here.parents[:2], book_links.REPOSITORY], here)

    def hand_in(self, namespace: dict | None = None) -> None:
        """Check every exercise, print a summary and how to hand in."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        results = self.results(namespace)
        for result in results:
            self._emit(self._line(result))
        total = sum(result.points for result in results)
        print()
        self._emit(i18n.tn("common.total", self.lang, self.spec.max_score, lab=self.spec.id, points=total,
                           max_points=self.spec.max_score))
        self._emit(i18n.t("common.hand_in", self.lang))

    def hint(self, exercise_id: str) -> str:
        """The hint for an exercise in the lab's language (`<lab>.hint.<exercise>`): a stub raises
        NotImplementedError(lab.hint("causal_mask")), so the code cell is the same in every language."""
        return i18n.t(f"{self.spec.id}.hint.{exercise_id}", self.lang)

    def show_problem(self, namespace: dict | None = None) -> None:
        """lab00: print the student's own Q, K and V."""
        namespace = namespace if namespace is not None else sys._getframe(1).f_globals
        ctx, problem = read_context(self.spec, self._call(namespace))
        if problem is not None:
            print(i18n.t(problem[0], self.lang, **problem[1]))
            return
        print(i18n.t("lab00.your_variant", self.lang, student_id=ctx["student_id"]))
        print(self.spec.show_context(ctx))


# JupyterLab styles every <pre> of an output with `word-break: break-all`, which splits words at the line's
# end ("Consu|lta"): the feedback is a <div> that keeps its line breaks and spaces but wraps between words,
# breaking a word only when it alone is wider than the cell; in the code font, like the lines `check` prints.
FEEDBACK_STYLE = ("white-space: pre-wrap; word-break: normal; overflow-wrap: break-word; "
                  "font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 13px); "
                  "line-height: var(--jp-code-line-height, 1.3077)")


def feedback_html(line_html: str, lang: str) -> str:
    """A feedback line (HTML, its chapter references linked) as the notebook shows it, marked with its
    language (WCAG 3.1.2: JupyterLab's page is lang="en", a screen reader must voice Spanish feedback as
    Spanish)."""
    return f'<div class="autograder-feedback" lang="{html.escape(lang, quote=True)}" style="{FEEDBACK_STYLE}">' \
           f"{line_html}</div>"


def _kernel_display():
    """IPython's display in a running kernel (JupyterLab, VS Code, Colab), else None: a console prints."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    from IPython.display import display

    return display
