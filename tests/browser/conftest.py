"""Real-browser tests: Playwright driving Debian's Chromium (/usr/bin/chromium).

`make test` installs chromium first (Makefile target system-deps). Where it is
missing anyway, every browser test skips with a reason that says so, and the
end of the pytest run prints it in capitals: a skipped browser test must never
look like a pass. A Chromium that is installed but does not start, or a missing
playwright package (a pinned requirement), fails them. Playwright's own browser
download is not used.

Tests wait for the page's own signals (data-ready, data-status, prompts,
texts), never for a fixed time. Screenshots go to artifacts/browser/.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from browser_support import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, TIMEOUT_MS, chromium_problem


def pytest_terminal_summary(terminalreporter):
    problem = chromium_problem()
    if problem:
        terminalreporter.write_sep("!", problem, red=True, bold=True)


@pytest.fixture(scope="module")
def browser():
    """One Chromium per test module (each module runs on one xdist worker, start to end)."""
    problem = chromium_problem()
    if problem:
        warnings.warn(problem)  # shown in the warnings summary, also under xdist
        pytest.skip(problem)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        except Exception as error:  # a Chromium that is there but does not start is a failure, not a skip
            pytest.fail(f"Chromium at {CHROMIUM} is installed but does not start: {error}")
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def html_site(tmp_path_factory, worker_id) -> tuple[Path, dict]:
    """The HTML edition (python -m labbook.html_edition), built once per test run: the first module that asks
    builds it, under a lock, into the run's temporary folder, which every xdist worker of this run shares
    (nothing else in `make test` builds it; it takes ~35 s). Returns (site folder, the build's numbers)."""
    from filelock import FileLock

    from labbook import html_edition

    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":  # gw0, gw1 ...: their folders sit in the run's own folder
        shared = shared.parent
    out, done = shared / "html-edition" / "site", shared / "html-edition" / "stats.json"
    with FileLock(str(shared / "html-edition.lock")):
        if not done.exists():
            stats = html_edition.build(out, quiet=True)
            done.write_text(json.dumps(stats), encoding="utf-8")
    return out, json.loads(done.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


class PageLog:
    """What a page did: requests it made, script errors it raised."""

    def __init__(self):
        self.requests: list[str] = []
        self.errors: list[str] = []


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture
def page(browser, page_log):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.on("request", lambda request: page_log.requests.append(request.url))
    page.on("pageerror", lambda error: page_log.errors.append(str(error)))
    yield page
    context.close()
