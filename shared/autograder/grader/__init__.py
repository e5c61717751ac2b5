"""The instructor's sandboxed batch grader: `python -m autograder grade LAB PATH ... --out DIR`.

Modules:
  cli          command line (grade, gradescope)
  batch        discovery, resumable records, job slots, progress, summary
  submissions  finding and reading notebooks (robust to broken files)
  engine       grading one submission: calls in the sandbox, judging here
  sandbox      the grader's side of the sandbox (bwrap, zygotes, children)
  _worker      what runs inside the sandbox (copied there alone, with runtime.py)
  stubs        the stand-in `autograder` / `labbook` packages inside the sandbox
  gradebook    records and grades.json / grades.csv / feedback files
  gradescope   the Gradescope bundle
  messages     the grader's feedback texts in the four languages
"""
