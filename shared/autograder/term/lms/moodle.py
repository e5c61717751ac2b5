"""What Moodle writes: its grading worksheet and participants download (rosters) and the names in
its "Download all submissions" zip.

Read from Moodle's source (moodle/moodle):
- mod/assign/locallib.php, `download_submissions`: every file is
  `<prefix><plugin subtype>_<plugin type>_<file>`, where prefix is
  `clean_filename(str_replace('_', ' ', <group->-<fullname($user)>) . '_' . <unique id> . '_')`:
  the name holds no `_` (Moodle makes each a space), the unique id is the participant id
  (`get_uniqueid_for_user`), and blind marking writes get_string('participant', 'assign')
  (`Participant`) instead of the name. Downloaded as folders, the prefix (with the plugin
  part) is the folder and the student's file name follows below it; without folders, the
  student's file name follows the prefix directly, so everything after the first
  `_assignsubmission_file_` is the student's choice and decides nothing.
- mod/assign/gradingtable.php and lang/en/assign.php: the grading worksheet's columns are
  `Identifier` ("Participant " + the same unique id), `Full name`, the identity fields
  (`ID number`, `Email address`...), `Status` (with `Extension granted until: <date>` for a
  student given an extension), `Grade`, `Maximum Grade`, `Grade can be changed`, `Last
  modified (submission)` (userdate(), `-` when none), `Online text`, `Last modified (grade)`,
  `Feedback comments`.
- user/action_redir.php (`download_participants`): the participants download has
  `First name`, `Last name` and the site's identity fields (`ID number`, `Email address`,
  `Username`...), and no participant id (so files are matched by name).
Headers are read in English (Moodle writes them in the language of the downloading user).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...grader.submissions import UsageError
from .. import names
from ..roster import Student, extension, extension_cell

IDENTIFIER, FULL_NAME, ID_NUMBER, EMAIL, USERNAME = "Identifier", "Full name", "ID number", "Email address", "Username"
SUBMITTED = "Last modified (submission)"
STATUS = "Status"
FIRST, LAST = "First name", "Last name"
BLIND_NAME = "participant"  # get_string('participant', 'assign') in English, casefolded


def is_worksheet(header: list[str]) -> bool:
    return IDENTIFIER in header and any(c in header for c in (FULL_NAME, ID_NUMBER, EMAIL, SUBMITTED))


def is_participants(header: list[str]) -> bool:
    return FIRST in header and LAST in header and IDENTIFIER not in header


_PARTICIPANT = re.compile(r".*?(\d+)")


def worksheet_rows(rows: list[tuple[int, dict]], shown: str) -> list[Student]:
    """student = ID number (else the email, else the participant id), lms_id = the participant id,
    the hand-in time's text from `Last modified (submission)`."""
    people = []
    for line, row in rows:
        match = _PARTICIPANT.fullmatch(row.get(IDENTIFIER, "").strip())
        if not match:
            raise UsageError(f"roster {shown} line {line}: Identifier {names.shown(row.get(IDENTIFIER, ''))!r} is "
                             "not Moodle's `Participant N`")
        participant = match.group(1)
        email = names.ident(row.get(EMAIL, ""))
        student = names.ident(row.get(ID_NUMBER, "")) or email or participant
        written = names.name(row.get(FULL_NAME, ""))
        people.append(Student(
            student=student, name=written, email=email, lms_id=participant,
            extension_days=extension(extension_cell(row), f"roster {shown} line {line}"), line=line,
            login=names.ident(row.get(USERNAME, "")), lms_display_name=written,
            submitted=names.name(row.get(SUBMITTED, "")) if SUBMITTED in row else None,
            extension_until=_extension_until(row.get(STATUS, ""))))
    return people


_EXTENSION = re.compile(r"Extension granted until:\s*([^<\n]+)")


def _extension_until(status: str) -> str | None:
    """The date of `Extension granted until: <date>` (lang/en/assign.php, userextensiondate) in the Status cell."""
    match = _EXTENSION.search(status)
    return names.name(match.group(1)) if match else None


def participants_rows(rows: list[tuple[int, dict]], shown: str) -> list[Student]:
    """student = ID number (else the email, else the username); no lms_id: the zip's files are matched by name."""
    people = []
    for line, row in rows:
        written = names.name(f"{row.get(FIRST, '')} {row.get(LAST, '')}")
        email = names.ident(row.get(EMAIL, ""))
        login = names.ident(row.get(USERNAME, ""))
        student = names.ident(row.get(ID_NUMBER, "")) or email or login
        if not student:
            raise UsageError(f"roster {shown} line {line}: no ID number, Email address or Username for "
                             f"{written!r}: add one of these identity fields to the download")
        people.append(Student(
            student=student, name=written, email=email, lms_id="",
            extension_days=extension(extension_cell(row), f"roster {shown} line {line}"), line=line,
            login=login, lms_display_name=written))
    return people


# ---------------------------------------------------------------- file names in the zip
@dataclass(frozen=True)
class Prefix:
    name: str  # the full name (or `Participant` under blind marking), as Moodle wrote it
    participant: str
    plugin: str  # `file`, `onlinetext`...
    rest: str  # after the prefix: the student's own file name (flat download), or "" (a folder)


# The name is everything up to the first `_` (Moodle writes none into it), then the id and the plugin.
_PREFIX = re.compile(r"(?P<name>[^_/]*)_(?P<id>\d+)_assign(?:submission|feedback)_(?P<plugin>[a-z]+)_(?P<rest>.*)",
                     re.DOTALL)


def prefix(component: str) -> Prefix | None:
    """The part of a top-level name that Moodle wrote; None when it is not Moodle's."""
    match = _PREFIX.fullmatch(component)
    if not match:
        return None
    return Prefix(match["name"], match["id"], match["plugin"], match["rest"])


def is_blind(name: str) -> bool:
    return name.strip().casefold() == BLIND_NAME
