"""Groups of submissions whose graded code is the same, or nearly, after normalisation (code.py).

Identical: the same normalised code for every exercise attempted. Near-identical:
for one exercise, a Jaccard similarity of token 4-grams of at least NEAR between
two different codes, neither of them the class's most common answer. A group is a hint for the instructor, not a verdict: short correct
answers converge, so large groups of full-mark code are expected; small groups
of the same wrong code are the ones to look at.
"""
from __future__ import annotations

from .code import tokens

NEAR = 0.85
SHINGLE = 4
MIN_TOKENS = 12  # shorter code is too common to say anything


def _shingles(text: str) -> frozenset:
    words = tokens(text)
    return frozenset(tuple(words[i:i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1)))


def groups(codes: dict[str, dict[str, str]]) -> list[dict]:
    """codes: student -> {exercise: normalised code}. Returns [{"kind", "students", "exercises",
    "similarity"}], biggest first; similarity is 1 for identical code, else the closest pair's Jaccard."""
    by_code: dict[str, list[str]] = {}
    exercises_of: dict[str, list[str]] = {}
    for student, code in codes.items():
        if not code:
            continue
        text = "\n".join(f"# {exercise}\n{code[exercise]}" for exercise in sorted(code))
        if len(tokens(text)) < MIN_TOKENS:
            continue
        by_code.setdefault(text, []).append(student)
        exercises_of[text] = sorted(code)
    found = [{"kind": "identical", "students": sorted(students), "exercises": exercises_of[text], "similarity": 1.0}
             for text, students in by_code.items() if len(students) > 1]
    found += _near(codes)
    return sorted(found, key=lambda g: (-len(g["students"]), g["kind"], g["students"]))


def _near(codes: dict[str, dict[str, str]]) -> list[dict]:
    """Per exercise, students whose code is close to another's but not the same, leaving out the class's
    most common answer (the one everybody converges on)."""
    found = []
    exercises = sorted({exercise for code in codes.values() for exercise in code})
    for exercise in exercises:
        holders: dict[str, list[str]] = {}
        for student, code in codes.items():
            if exercise in code and len(tokens(code[exercise])) >= MIN_TOKENS:
                holders.setdefault(code[exercise], []).append(student)
        if len(holders) < 2:
            continue
        common = max(holders, key=lambda text: (len(holders[text]), text))
        texts = sorted(text for text in holders if text != common)
        shingles = [_shingles(text) for text in texts]
        parent = list(range(len(texts)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        best: dict[int, float] = {}  # member -> its closest link
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                a, b = shingles[i], shingles[j]
                if min(len(a), len(b)) / max(len(a), len(b)) < NEAR:
                    continue  # Jaccard cannot reach NEAR
                score = len(a & b) / len(a | b)
                if score >= NEAR:
                    parent[root(i)] = root(j)
                    best[i] = max(best.get(i, 0.0), score)
                    best[j] = max(best.get(j, 0.0), score)
        clusters: dict[int, list[int]] = {}
        for i in range(len(texts)):
            clusters.setdefault(root(i), []).append(i)
        for members in clusters.values():
            if len(members) > 1:
                found.append({"kind": "near", "students": sorted(s for i in members for s in holders[texts[i]]),
                              "exercises": [exercise], "similarity": round(max(best[i] for i in members), 3)})
    return found
