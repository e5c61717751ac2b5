"""The student release: `python -m autograder release --out DIR [--zip FILE]` (see bundle.py).

`student/` holds the check-only package's own modules; bundle.py adds the
modules it shares with the full autograder (exercise.py, runtime.py,
notebook_lang.py), the labbook display helpers, and the data that replay.py
records from the exercise definitions at release time.
"""
