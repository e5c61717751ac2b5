"""Running a term: roster, LMS layouts, lateness, overrides, hand-graded parts, exports and the class report.

Course management lives here and uses the grading engine (`autograder.grader`)
only through its records; the engine never imports this package.
"""
