"""Open the Snakemake report in headless Chromium and check that its landing page shows the
introduction and the first main figure at common window sizes.

Snakemake's report is a single-page React application; the page it opens on is the workflow
description (``workflow/report/workflow.rst``, which includes the landing page of the main
figures).  This script drives Debian's Chromium through ChromeDriver's W3C WebDriver HTTP
interface with the standard library alone (``urllib``, ``json``).  For each window size it:

1. loads the report and waits until the application has rendered the description and its
   first figure;
2. scrolls every scrollable box to its top (what a reader sees first);
3. checks that the first paragraph of the introduction lies inside the viewport and that the
   first main figure (the first ``<img>`` of the description) starts inside it;
4. saves a screenshot ``landing-<width>x<height>.png`` and the measured boxes
   (``landing-<width>x<height>.json``) into ``--out``.

Usage (``.ci/report-check`` installs Chromium, makes the report and runs it)::

    python .ci/report_browser_check.py results/test/report.html --out results/test/browser

Exit 0 when every size passes, 1 (one line per failing size) otherwise, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

#: Window sizes checked (CSS pixels): a small laptop, a common desktop, full HD.
SIZES = ((1280, 720), (1400, 1000), (1920, 1080))

#: JavaScript run in the page: where the introduction and the first figure are, after every
#: scrollable box is scrolled to its top.  Returns a JSON-able dict.
_PROBE = r"""
const desc = Array.from(document.querySelectorAll('.prose')).find(
    d => d.textContent.includes('shuffledp'));
if (!desc) { return {ready: false}; }
let el = desc;
while (el) { if (el.scrollTop) { el.scrollTop = 0; } el = el.parentElement; }
window.scrollTo(0, 0);
const first = desc.querySelector('p');
const img = desc.querySelector('img');
const r = x => { if (!x) return null; const b = x.getBoundingClientRect();
                 return {top: b.top, bottom: b.bottom, left: b.left, right: b.right,
                         width: b.width, height: b.height}; };
return {ready: true, vw: window.innerWidth, vh: window.innerHeight,
        intro: r(first), intro_text: first ? first.textContent.slice(0, 80) : '',
        figure: r(img), figure_loaded: img ? img.complete && img.naturalWidth > 0 : false,
        headings: Array.from(desc.querySelectorAll('h1,h2,h3')).slice(0, 3).map(
            h => [h.textContent, h.getBoundingClientRect().top]),
        desc: r(desc)};
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """The few W3C WebDriver commands this check needs, over HTTP."""

    def __init__(self, url: str) -> None:
        self.url = url
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": shutil.which("chromium") or "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--force-device-scale-factor=1"],
            },
        }}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method: str, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return json.loads(resp.read())["value"]
        except urllib.error.HTTPError as err:
            raise RuntimeError(f"WebDriver {method} {path}: {err.read()[:300]!r}") from None

    def cmd(self, method: str, path: str, body: dict | None = None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def quit(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}")
        except (OSError, RuntimeError):  # the browser is going away anyway
            pass


def check_size(wd: WebDriver, report: Path, width: int, height: int, out: Path) -> str | None:
    """None when the landing page passes at this size, else the reason (one line)."""
    wd.cmd("POST", "/window/rect", {"width": width, "height": height, "x": 0, "y": 0})
    wd.cmd("POST", "/url", {"url": report.resolve().as_uri()})
    probe = {"ready": False}
    for _ in range(240):  # the report unpacks its data and renders: up to 2 min
        probe = wd.cmd("POST", "/execute/sync", {"script": _PROBE, "args": []})
        if probe.get("ready") and probe.get("figure_loaded"):
            break
        time.sleep(0.5)
    time.sleep(0.5)  # one more layout pass after the figure decoded
    probe = wd.cmd("POST", "/execute/sync", {"script": _PROBE, "args": []})
    png = base64.b64decode(wd.cmd("GET", "/screenshot"))
    (out / f"landing-{width}x{height}.png").write_bytes(png)
    (out / f"landing-{width}x{height}.json").write_text(json.dumps(probe, indent=1))
    if not probe.get("ready"):
        return "the report never rendered its description (no '.prose' with 'shuffledp')"
    vh, vw = probe["vh"], probe["vw"]
    intro, fig = probe["intro"], probe["figure"]
    if intro is None or not (0 <= intro["top"] and intro["bottom"] <= vh):
        return f"the introduction is not in view (its box {intro}, viewport {vw}x{vh})"
    if fig is None:
        return "the description holds no figure"
    if not probe["figure_loaded"]:
        return "the first main figure did not load"
    if not (0 <= fig["top"] < vh and fig["left"] < vw and fig["right"] > 0):
        return (f"the first main figure does not start inside the viewport (top "
                f"{fig['top']:.0f} px, viewport {vw}x{vh})")
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path, help="the report's HTML file")
    ap.add_argument("--out", type=Path, default=Path("results/browser-check"),
                    help="folder for the screenshots and probes (default: %(default)s)")
    ap.add_argument("--chromedriver", default=shutil.which("chromedriver") or "chromedriver")
    args = ap.parse_args(argv)
    if not args.report.is_file():
        print(f"error: report {str(args.report)!r} is not a file", file=sys.stderr)
        return 2
    if not shutil.which(args.chromedriver) and not os.path.exists(args.chromedriver):
        print(f"error: chromedriver {args.chromedriver!r} not found (Debian: apt-get install "
              "chromium chromium-driver)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    driver = subprocess.Popen([args.chromedriver, f"--port={port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures = []
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/status", timeout=2).read()
                break
            except OSError:
                time.sleep(0.1)
        wd = WebDriver(url)
        try:
            for width, height in SIZES:
                why = check_size(wd, args.report, width, height, args.out)
                print(f"{width}x{height}: {'ok' if why is None else 'FAIL: ' + why}")
                if why is not None:
                    failures.append(f"{width}x{height}")
        finally:
            wd.quit()
    finally:
        driver.terminate()
        driver.wait(timeout=10)
    print(f"screenshots and measured boxes in {args.out}/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
