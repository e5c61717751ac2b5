"""Registry of labs. A lab is a module here that defines ``LAB: LabSpec``."""
from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Callable

from ..exercise import Exercise

LAB_IDS: tuple[str, ...] = tuple(
    sorted(name for _, name, _ in pkgutil.iter_modules(__path__) if re.fullmatch(r"lab\d\d", name))
)


@dataclass
class LabSpec:
    id: str
    exercises: list[Exercise]
    # Names read from the student's namespace before grading (lab00: STUDENT_ID).
    context_names: tuple[str, ...] = ()
    # Builds the grading context from those values; returns (ctx, problem message key or None).
    make_context: Callable[[dict], tuple[dict, tuple[str, dict] | None]] = field(
        default=lambda values: ({}, None)
    )
    # Key of a message that introduces the lab's check output (optional).
    title_key: str | None = None
    # lab00: the student's own problem, as `Lab.show_problem` prints it.
    show_context: Callable[[dict], str] | None = None
    # Written answers graded by hand: part id -> points. A markdown cell tagged `hand-graded` with
    # metadata {"labbook": {"part": id}} holds the answer; `grade` lists them in DIR/hand-graded.csv.
    hand_graded: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for exercise in self.exercises:
            exercise.lab = self.id

    def exercise(self, exercise_id: str) -> Exercise:
        for exercise in self.exercises:
            if exercise.id == exercise_id:
                return exercise
        raise KeyError(exercise_id)

    @property
    def max_score(self) -> float:
        return float(sum(exercise.points for exercise in self.exercises))


class UnknownLab(KeyError):
    pass


def get_lab(lab_id: str) -> LabSpec:
    if lab_id not in LAB_IDS:
        raise UnknownLab(lab_id)
    return importlib.import_module(f"{__name__}.{lab_id}").LAB
