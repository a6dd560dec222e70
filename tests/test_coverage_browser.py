"""The coverage HTML page in a real browser: headless Chromium (the system's `chromium` and
`chromium-driver` packages) driven through selenium. The filters hide and show rows as a reader
uses them, and a panicking cell's link is the pinned source line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_coverage import FIX_OPS_RS, FIX_TENSOR_RS, OPS_TRAITS_RS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000")


@pytest.fixture
def browser(tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install '.[test]')")
    if not CHROMIUM or not DRIVER:
        pytest.skip("no chromium and chromedriver on this machine (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def _page(cli, git_repo, out: Path) -> Path:
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    git_repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    # A second backend that also handles F16 in float_add: the two differ there.
    other = FIX_OPS_RS.replace("Fix", "Other").replace("add(lhs, rhs), [F64 => f64, F32 => f32]",
                                                       "add(lhs, rhs), [F64 => f64, F32 => f32, F16 => f16]")
    git_repo.crate("burn-other", {"src/ops.rs": other})
    sha = git_repo.commit("two backends")
    r = cli("coverage", "--repo", str(git_repo.path), "--sha", sha, "--format", "html", "--out", str(out))
    assert r.code == 0, r.stderr
    return out


def _visible_rows(driver, section: str) -> list[tuple[str, str]]:
    rows = driver.find_elements("css selector", f"{section} tr.row")
    return [(r.get_attribute("data-op"), r.get_attribute("data-crate")) for r in rows if r.is_displayed()]


def test_filters_and_links_in_headless_chromium(cli, git_repo, tmp_path, browser):
    page = _page(cli, git_repo, tmp_path / "coverage.html")
    browser.get(page.as_uri())
    side = "#shared"
    # Operations the backends agree on sit in a folded <details>: open it as a reader would.
    for summary in browser.find_elements("css selector", "#shared details > summary"):
        summary.click()
    shown = _visible_rows(browser, side)
    assert ("float_add", "burn-fix") in shown and ("float_add", "burn-other") in shown

    # The operation filter keeps the matching operations only, in both backends.
    box = browser.find_element("id", "filter")
    box.send_keys("neg")
    shown = _visible_rows(browser, side)
    assert shown and {name for name, _ in shown} == {"float_neg", "int_neg"}

    # Unticking a backend hides its rows and its section.
    browser.find_element("css selector", "#backend-filter input[value='burn-other']").click()
    assert {crate for _, crate in _visible_rows(browser, side)} == {"burn-fix"}
    assert not browser.find_element("id", "b-burn-other").is_displayed()

    # "Only operations that panic on" F16: float_neg panics on it, int_neg is n/a there.
    box.clear()
    box.send_keys(" ")  # an input event with an empty query
    from selenium.webdriver.support.ui import Select
    Select(browser.find_element("id", "panics-on")).select_by_value("F16")
    names = {name for name, _ in _visible_rows(browser, side)}
    assert "float_neg" in names and "int_neg" not in names and "float_exp" not in names

    # A panicking cell links the pinned source line of its panic.
    cell = browser.find_element("css selector", "#shared tr.row[data-op='float_neg'][data-crate='burn-fix'] "
                                                "td.panics a")
    href = cell.get_attribute("href")
    assert href.startswith("https://github.com/") and "/crates/burn-fix/src/ops.rs#L" in href
    assert "checked" in cell.get_attribute("title")
    # An n/a cell has no link.
    na = browser.find_elements("css selector", "#shared tr.row[data-op='int_neg'][data-crate='burn-fix'] td.na a")
    assert na == []
