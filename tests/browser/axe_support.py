"""axe-core (Deque's accessibility engine, npm package `axe-core`, pinned in package.json / package-lock.json)
run on pages in Chromium, and a command that writes the per-page totals of a built HTML edition:

    .venv/bin/python tests/browser/axe_support.py build/html [--json totals.json]

`make test` installs axe-core into node_modules/ (`npm ci`). Its absence fails the accessibility tests
with a message saying how to install it, it never skips them: like playwright, axe is one of the test
suite's pinned tools, so a missing copy is a broken set-up, and a skipped audit would read as a pass.
(Only a machine without Chromium skips the browser tests, see browser_support.)

Several pages are audited at once in one browser: each page starts its own axe run without waiting for it
(`start_audit`), and the results are collected afterwards (`collect_audit`), so Chromium's renderers work in
parallel while Python waits.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: browser_support sits beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_support import CHROMIUM, LAUNCH_ARGS, ROOT, TIMEOUT_MS  # noqa: E402

AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# WCAG 2.1 A and AA, as the accessibility office audits (shared review, part b).
AXE_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
# How many pages audit at the same time: the 2 cores the suite is sized for; more only queue.
CONCURRENT_PAGES = 2

START_AUDIT = """async (tags) => {
  // explorers render their grid by script: audit what a reader sees once they are live
  const ready = () => [...document.querySelectorAll('.lbx')].every(e => e.getAttribute('data-ready') === 'true');
  for (let waited = 0; !ready() && waited < 60000; waited += 50) await new Promise(r => setTimeout(r, 50));
  window.__axeDone = false;
  axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})
    .then(result => { window.__axeResult = {ready: ready(), violations: result.violations.map(v => ({
        rule: v.id, impact: v.impact, help: v.help,
        targets: v.nodes.map(n => n.target.map(String).join(' '))}))}; })
    .catch(error => { window.__axeResult = {error: String(error)}; })
    .finally(() => { window.__axeDone = true; });
}"""


def axe_problem() -> str | None:
    """Why axe cannot run here, or None."""
    if AXE_JS.is_file():
        return None
    return (f"axe-core is not installed ({AXE_JS.relative_to(ROOT)} is missing). `make test` installs it with "
            "npm from package-lock.json (`npm ci` in the repository root does the same); npm comes with Node.js "
            "(Debian: apt-get install npm).")


def axe_source() -> str:
    problem = axe_problem()
    if problem:
        raise RuntimeError(problem)
    return AXE_JS.read_text(encoding="utf-8")


@dataclass
class Audit:
    name: str  # what was audited (a page's path in the site, or a file name)
    violations: list[dict] = field(default_factory=list)  # {rule, impact, help, targets}
    seconds: float = 0.0
    error: str | None = None

    @property
    def nodes(self) -> int:
        return sum(len(v["targets"]) for v in self.violations)

    def by_rule(self) -> dict[str, int]:
        return {v["rule"]: len(v["targets"]) for v in self.violations}

    def lines(self, limit: int = 8) -> list[str]:
        """What is wrong, one line per rule: rule, page, how many nodes, the first node targets."""
        if self.error:
            return [f"{self.name}: axe did not finish: {self.error}"]
        return [f"{v['rule']} ({v['impact']}) on {self.name}: {len(v['targets'])} node(s): "
                + ", ".join(v["targets"][:limit]) + (" ..." if len(v["targets"]) > limit else "")
                for v in self.violations]


def start_audit(page, url: str, source: str) -> float:
    """Open `url` in `page` and start axe on it; returns the start time. Nothing waits for axe here."""
    started = time.perf_counter()
    page.goto(url, wait_until="load")
    page.add_script_tag(content=source)
    page.evaluate(f"() => {{ ({START_AUDIT})({json.dumps(list(AXE_TAGS))}); }}")
    return started


def collect_audit(page, name: str, started: float) -> Audit:
    page.wait_for_function("() => window.__axeDone === true", timeout=TIMEOUT_MS, polling=100)
    result = page.evaluate("() => window.__axeResult")
    audit = Audit(name, result.get("violations", []), time.perf_counter() - started, result.get("error"))
    if not audit.error and not result.get("ready"):
        audit.error = "an explorer on the page never became ready (data-ready stays false)"
    return audit


def audit_pages(context, pages: list[tuple[str, str]], concurrent: int = CONCURRENT_PAGES) -> list[Audit]:
    """axe on every (name, url), `concurrent` pages at a time, in one browser context; results in input order."""
    source = axe_source()
    tabs = [context.new_page() for _ in range(min(concurrent, len(pages)))]
    results: dict[int, Audit] = {}
    running: list[tuple[int, object, float]] = []  # (index, tab, started)
    queue = list(enumerate(pages))
    try:
        while queue or running:
            while queue and len(running) < len(tabs):
                index, (name, url) = queue.pop(0)
                tab = next(t for t in tabs if all(t is not r[1] for r in running))
                running.append((index, tab, start_audit(tab, url, source)))
            index, tab, started = running.pop(0)
            results[index] = collect_audit(tab, pages[index][0], started)
    finally:
        for tab in tabs:
            tab.close()
    return [results[i] for i in range(len(pages))]


def site_pages(site: Path) -> list[tuple[str, str]]:
    return [(path.relative_to(site).as_posix(), path.as_uri()) for path in sorted(site.rglob("*.html"))]


def totals_table(audits: list[Audit]) -> str:
    rules = sorted({rule for audit in audits for rule in audit.by_rule()})
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    rows = [row(["page", *rules, "total", "seconds"]), "|" + "---|" * (len(rules) + 3)]
    for audit in audits:
        counts = audit.by_rule()
        rows.append(row([audit.name, *(str(counts.get(rule, 0)) for rule in rules), str(audit.nodes),
                         f"{audit.seconds:.1f}"]))
    overall = Counter()
    for audit in audits:
        overall.update(audit.by_rule())
    rows.append(row([f"**all {len(audits)} pages**", *(str(overall[rule]) for rule in rules),
                     str(sum(overall.values())), f"{sum(a.seconds for a in audits):.1f}"]))
    return "\n".join(rows)


def chromium_cpu_seconds() -> float:
    """CPU time (user + system) of the Chromium processes this process started, alive or ended."""
    import psutil

    total = 0.0
    for process in psutil.Process().children(recursive=True):
        try:
            if "chrom" in process.name():
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            continue
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="axe-core totals per page of a built HTML edition (or any folder "
                                                 "of .html files)")
    parser.add_argument("site", type=Path)
    parser.add_argument("--json", type=Path, help="also write {page: {rule: nodes}} here")
    parser.add_argument("--concurrent", type=int, default=CONCURRENT_PAGES)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        context.set_default_timeout(TIMEOUT_MS)
        audits = audit_pages(context, site_pages(args.site.resolve()), args.concurrent)
        cpu = chromium_cpu_seconds()
        browser.close()
    print(totals_table(audits))
    print(f"axe-core on {len(audits)} pages: {time.perf_counter() - started:.1f} s wall clock, "
          f"{cpu:.1f} s of Chromium's CPU time (the wall clock on a busy machine says little)")
    if args.json:
        args.json.write_text(json.dumps({a.name: a.by_rule() for a in audits}, indent=1, sort_keys=True))
    for audit in audits:
        if audit.error:
            print(audit.lines()[0], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
