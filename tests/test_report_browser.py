"""report.html in a real browser: headless Chromium (Debian package `chromium`, installed
by scripts/install-deps) loads the report of a run of one's own; every table is there,
every image decodes (no broken image), the scenario's parameters are shown, and a
screenshot is not blank."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_analysis_report import build_user_run
from testbed.cli import main as squall

# Run after the page has loaded: each image's state into the page, for --dump-dom to print.
CHECK = """<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(i => ({alt: i.alt, complete: i.complete,
                                                  width: i.naturalWidth}));
  const out = document.createElement("pre");
  out.id = "browser-check";
  const page = document.documentElement;
  // a table wider than the text: any table whose box is wider than its container's
  const wide = [...document.querySelectorAll("table")].filter(
    t => t.getBoundingClientRect().width > t.parentElement.clientWidth).map(
    t => t.closest("div.table").querySelector("h2").textContent);
  out.textContent = JSON.stringify({images: images,
                                    tables: document.querySelectorAll("div.table").length,
                                    scrollWidth: page.scrollWidth, clientWidth: page.clientWidth,
                                    wide: wide});
  document.body.appendChild(out);
});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("chromium is not installed (Debian package chromium; scripts/install-deps "
                "installs it)")


def _run(args: list[str], cwd: Path) -> str:
    # --no-sandbox: the tests run as root, where Chromium's sandbox refuses to start
    result = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                             "--hide-scrollbars", f"--user-data-dir={cwd / 'profile'}", *args],
                            capture_output=True, text=True, timeout=120, cwd=cwd)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _chromium()
    root = build_user_run(tmp_path_factory.mktemp("browser") / "umts-mix-20261122T030000Z")
    assert squall(["report", str(root), "--jobs", "1"]) == 0
    return root / "summary" / "report.html"


def test_every_table_and_image_loads(report: Path, tmp_path: Path) -> None:
    page = tmp_path / "checked.html"
    page.write_text(report.read_text().replace("</body>", CHECK + "</body>"))
    dom = _run(["--virtual-time-budget=10000", "--dump-dom", page.as_uri()], tmp_path)
    found = re.search(r'<pre id="browser-check">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    check = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    markdown = (report.parent / "report.md").read_text()
    assert check["tables"] == markdown.count("\n## ") >= 6
    assert len(check["images"]) >= 8
    broken = [i["alt"] for i in check["images"] if not i["complete"] or i["width"] < 100]
    assert not broken, broken
    # what was run, as the browser shows it
    text = re.sub(r"<[^>]+>", " ", dom)
    for shown in ("bulk TCP and a CBR stream in EF over a 384/64 kbit/s link",
                  "link.down.bandwidth", "384 kbit/s", "64 kbit/s", "router.classes.EF.rate",
                  "128 kbit/s", "0123abc", "Linux 6.1.0-test", "exponential(4 s)",
                  "UDP flow voice", "Router queue"):
        assert shown in text, shown


def test_wide_tables_fit_a_1280_px_window(report: Path, tmp_path: Path) -> None:
    """The bulk and UDP tables (21 columns each) come in parts that fit: nothing scrolls
    sideways, the page or a table."""
    page = tmp_path / "checked.html"
    page.write_text(report.read_text().replace("</body>", CHECK + "</body>"))
    dom = _run(["--window-size=1280,900", "--virtual-time-budget=10000", "--dump-dom",
                page.as_uri()], tmp_path)
    found = re.search(r'<pre id="browser-check">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    check = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert check["scrollWidth"] <= check["clientWidth"] == 1280
    assert check["wide"] == []
    assert "part 2 of 3: the same rows, the next columns" in report.read_text()


def test_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    shot = tmp_path / "report.png"
    _run(["--window-size=1400,3000", f"--screenshot={shot}", report.as_uri()], tmp_path)
    image = Image.open(shot).convert("L")
    assert image.size == (1400, 3000)
    low, high = image.getextrema()
    assert high - low > 100                        # text and tables, not an empty page
    assert len(image.resize((140, 300)).getcolors(maxcolors=256 * 256) or []) > 20


def test_the_compare_report_opens_with_its_tables_and_plots(tmp_path: Path) -> None:
    from support_compare import write_run

    _chromium()
    runs = []
    for name, shift in (("a", 0.0), ("b", -1.5)):
        runs.append(write_run(tmp_path / name, "bulk", {
            f"link-{link}": ({"link": link}, {"bulk.elapsed_s": [base + shift + k / 10
                                                                 for k in range(6)],
                                              "bulk.throughput_Bps": [8000.0 - k for k in range(6)]})
            for link, base in (("e0", 5.0), ("r2", 9.0))}))
    out = tmp_path / "out"
    assert squall(["compare", *map(str, runs), "--out", str(out)]) == 0
    page = tmp_path / "checked.html"
    page.write_text((out / "compare.html").read_text().replace("</body>", CHECK + "</body>"))
    dom = _run(["--virtual-time-budget=10000", "--dump-dom", page.as_uri()], tmp_path)
    found = re.search(r'<pre id="browser-check">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    check = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert check["tables"] == 3                    # runs, what is compared, effects
    assert [i["alt"] for i in check["images"]] == ["compare_bulk.elapsed_s",
                                                   "compare_bulk.throughput_Bps"]
    assert all(i["complete"] and i["width"] > 100 for i in check["images"]), check
    text = re.sub(r"<[^>]+>", " ", dom)
    for shown in ("Effects", "p (Holm)", "B lower", "no difference shown", "2000 resamples"):
        assert shown in text, shown


def test_the_compare_report_screenshot_is_not_blank(tmp_path: Path) -> None:
    from PIL import Image
    from support_compare import write_run

    _chromium()
    runs = [write_run(tmp_path / name, "web", {"c": ({}, {"web.response_time_s": [
        base + k / 10 for k in range(5)]})}) for name, base in (("a", 4.0), ("b", 3.0))]
    out = tmp_path / "out"
    assert squall(["compare", *map(str, runs), "--out", str(out)]) == 0
    shot = tmp_path / "compare.png"
    _run(["--window-size=1400,2000", f"--screenshot={shot}", (out / "compare.html").as_uri()],
         tmp_path)
    image = Image.open(shot).convert("L")
    low, high = image.getextrema()
    assert image.size == (1400, 2000) and high - low > 100
    assert len(image.resize((140, 200)).getcolors(maxcolors=256 * 256) or []) > 20
