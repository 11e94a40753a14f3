"""Check the built documentation site in headless Chromium.

    python scripts/check_site.py [SITE_DIR] [--screenshots DIR] [--chromium PATH]

Serves SITE_DIR (default ``site``, what ``make docs`` builds) on 127.0.0.1 and:

1. reads every HTML page of the site and checks every internal link and resource
   (``<a href>``, ``<link href>``, ``<img src>``, ``<script src>``): the target file must
   exist and, for ``page.html#anchor``, the anchor must be an id on the target page.
   Links to other hosts are listed, never fetched;
2. opens every page in Chromium (Debian's ``/usr/bin/chromium`` through Playwright; no
   browser download) and fails on a console error, an uncaught page error, a failed or
   4xx/5xx request, or any request that leaves 127.0.0.1 (the site must not need the
   network);
3. saves screenshots of the home page, an API reference page and the planning notebook,
   and checks what each must show: the theme's styles applied, mkdocstrings' objects,
   the notebook's executed outputs with an inline image.

Exit status 0 when everything passes, 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import posixpath
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# (screenshot name, page path in the site, what the page must show)
KEY_PAGES = [
    ("home", "index.html", "home"),
    ("api-reference", "api/core.html", "api"),
    ("notebook-planning", "notebooks/planning.html", "notebook"),
]
LINK_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "iframe": "src"}
SKIPPED_SCHEMES = ("mailto:", "javascript:", "data:", "tel:", "blob:")


class PageParser(HTMLParser):
    """Collect the links and the ids (anchors) of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Record the tag's id/name and its link attribute."""
        values = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if values.get(key):
                self.ids.add(values[key])
        url = values.get(LINK_ATTRIBUTES.get(tag, ""))
        if url is not None:
            self.links.append((tag, url.strip()))


@dataclass
class Report:
    """What the check found."""

    problems: list[str] = field(default_factory=list)
    external: dict[str, set[str]] = field(default_factory=dict)  # url -> pages linking it
    pages: int = 0
    links: int = 0
    visited: int = 0
    screenshots: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth a look, not failures

    def fail(self, message: str) -> None:
        """Record one problem."""
        self.problems.append(message)


def short(text: object, limit: int = 160) -> str:
    """Cut ``text`` (a data: URL can be megabytes) to ``limit`` characters."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@functools.cache
def parse_page(path: Path) -> PageParser:
    """Parse one HTML file of the site (cached: targets are parsed once for their ids)."""
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return parser


def site_file(site: Path, url_path: str) -> Path | None:
    """Find the file the server sends for ``url_path`` (a path from the site's root)."""
    relative = posixpath.normpath(unquote(url_path)).lstrip("/")
    if relative.startswith(".."):
        return None
    target = site / relative if relative not in ("", ".") else site
    if target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None


def check_links(site: Path, report: Report) -> list[str]:
    """Check every internal link of every page; return the pages' paths from the site root."""
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    base = "http://site.invalid/"
    for page in pages:
        report.pages += 1
        parser = parse_page(site / page)
        for tag, url in parser.links:
            if not url or url.startswith(SKIPPED_SCHEMES):
                continue
            report.links += 1
            absolute = urljoin(base + page, url)
            parts = urlsplit(absolute)
            if f"{parts.scheme}://{parts.netloc}/" != base:
                report.external.setdefault(absolute, set()).add(page)
                continue
            target = site_file(site, parts.path)
            if target is None:
                report.fail(f"{page}: broken link <{tag}> {url!r}: no {parts.path} in the site")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html" and fragment not in parse_page(target).ids:
                report.fail(f"{page}: broken anchor {url!r}: no id {fragment!r} in {parts.path}")
    return pages


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serve files without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        """Log nothing."""


@contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 (a free port) in a thread; yield the base URL."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# What each key page must show, evaluated in the page: a list of missing things.
PAGE_CHECKS = {
    "common": """() => {
        const missing = [];
        const header = document.querySelector('.md-header');
        if (!header || getComputedStyle(header).position !== 'sticky')
            missing.push('the theme stylesheet is not applied (.md-header is not sticky)');
        const content = document.querySelector('.md-content');
        if (!content || content.innerText.trim().length < 200)
            missing.push('the page content is empty');
        return missing;
    }""",
    "home": """() => {
        const links = document.querySelectorAll('.md-nav a.md-nav__link').length;
        return links >= 10 ? [] : [`the navigation has ${links} links`];
    }""",
    "api": """() => {
        const objects = document.querySelectorAll('.doc.doc-object').length;
        const signatures = document.querySelectorAll('.doc-signature').length;
        const missing = [];
        if (objects < 2) missing.push(`${objects} mkdocstrings objects`);
        if (signatures < 1) missing.push('no rendered signature');
        return missing;
    }""",
    "notebook": """() => {
        const missing = [];
        const wrapper = document.querySelector('.jupyter-wrapper');
        if (!wrapper) return ['no rendered notebook (.jupyter-wrapper)'];
        const outputs = wrapper.querySelectorAll('.jp-OutputArea-output').length;
        if (outputs < 1) missing.push('no cell outputs (was the notebook executed?)');
        const images = [...wrapper.querySelectorAll('.jp-OutputArea-output img')]
            .filter(img => img.src.startsWith('data:image/'));
        if (!images.length) missing.push('no inline image output (<img src="data:image/...">)');
        else if (!images.some(img => img.complete && img.naturalWidth > 0))
            missing.push('the inline image output does not decode');
        return missing;
    }""",
}


STDERR_OUTPUTS = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
STDERR_TEXTS = "outputs => outputs.map(output => output.innerText.trim().slice(0, 160))"


def visit_pages(site: Path, pages: list[str], shots: Path, chromium: str, report: Report) -> None:
    """Open every page in Chromium; screenshot and check the key pages."""
    from playwright.sync_api import sync_playwright

    key = {path: (name, kind) for name, path, kind in KEY_PAGES}
    for name, path, _ in KEY_PAGES:
        if path not in pages:
            report.fail(f"{path} ({name}) is not in the site")
    shots.mkdir(parents=True, exist_ok=True)
    with serve(site) as root, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=CHROMIUM_ARGS
        )
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        here = urlsplit(root).netloc
        current = {"page": ""}

        def fail(message: str) -> None:
            report.fail(f"{current['page']}: {message}")

        def leave(route) -> None:  # any request to another host fails the check
            fail(f"requests {short(route.request.url)} (outside the site)")
            route.abort()

        def console(message) -> None:
            if message.type == "error":
                fail(f"console error: {short(message.text)} ({short(message.location['url'])})")

        def response(answer) -> None:
            if answer.status >= 400:
                fail(f"HTTP {answer.status} for {short(answer.url)}")

        context.route(lambda url: urlsplit(url).netloc not in (here, ""), leave)
        page = context.new_page()
        page.on("console", console)
        page.on("pageerror", lambda error: fail(f"page error: {short(error)}"))
        page.on(
            "requestfailed", lambda req: fail(f"request failed: {short(req.url)} ({req.failure})")
        )
        page.on("response", response)
        for path in pages:
            current["page"] = path
            page.goto(root + path, wait_until="networkidle")
            report.visited += 1
            for text in page.eval_on_selector_all(STDERR_OUTPUTS, STDERR_TEXTS):
                report.notes.append(f"{path}: a cell wrote to stderr: {text!r}")
            if path not in key:
                continue
            name, kind = key[path]
            for check in ("common", kind):
                for missing in page.evaluate(PAGE_CHECKS[check]):
                    report.fail(f"{path}: {missing}")
            shot = shots / f"{name}.png"
            page.screenshot(path=str(shot))
            report.screenshots.append(shot)
            if kind == "notebook":  # the first inline image, scrolled into view
                image = page.locator(".jp-OutputArea-output img[src^='data:image/']").first
                if image.count():
                    image.scroll_into_view_if_needed()
                    page.wait_for_timeout(300)
                    shot = shots / f"{name}-image.png"
                    page.screenshot(path=str(shot))
                    report.screenshots.append(shot)
        browser.close()


def main(argv: list[str] | None = None) -> int:
    """Run the checks; print a summary; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", nargs="?", default="site", type=Path, help="the built site")
    parser.add_argument(
        "--screenshots", default=Path("site-screenshots"), type=Path, help="PNG folder"
    )
    parser.add_argument("--chromium", default=CHROMIUM, help="the Chromium executable")
    args = parser.parse_args(argv)
    site = args.site.resolve()
    if not (site / "index.html").is_file():
        print(f"check_site: no {site}/index.html: build the site first (make docs)")
        return 1
    if not Path(args.chromium).exists():
        print(f"check_site: no Chromium at {args.chromium} (Debian: apt-get install chromium)")
        return 1

    start = time.perf_counter()
    report = Report()
    pages = check_links(site, report)
    visit_pages(site, pages, args.screenshots, args.chromium, report)
    elapsed = time.perf_counter() - start

    print(
        f"check_site: {report.pages} pages, {report.links} links checked "
        f"({len(report.external)} external, not fetched), {report.visited} pages opened in "
        f"Chromium, {len(report.screenshots)} screenshots in {args.screenshots}/ "
        f"({elapsed:.1f} s)"
    )
    for url in sorted(report.external):
        print(f"  external: {short(url)} (from {', '.join(sorted(report.external[url])[:3])})")
    for shot in report.screenshots:
        print(f"  screenshot: {shot}")
    for note in report.notes:
        print(f"  note: {note}")
    if report.problems:
        print(f"check_site: FAILED, {len(report.problems)} problems:")
        for problem in dict.fromkeys(report.problems):
            print(f"  {problem}")
        return 1
    print("check_site: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
