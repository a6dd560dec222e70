"""The coverage HTML page in a real browser: headless Chromium (the system's `chromium` and
`chromium-driver` packages) driven through selenium. The filters hide and show rows as a reader
uses them (a filter nothing matches says so), a panicking cell's link is the pinned source line,
a wrapper backend that only delegates is one line, and the page stays small as the tree grows."""

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


# A wrapper backend: every operation hands its tensors to the backend it wraps, one is a stub.
WRAP_OPS_RS = """\
use burn_backend::{Backend, FloatTensorOps, IntTensorOps, ModuleOps};

impl<B: Backend> FloatTensorOps<Self> for Wrap<B> {
    fn float_add(lhs: WrapTensor, rhs: WrapTensor) -> WrapTensor {
        B::float_add(lhs.inner, rhs.inner)
    }

    fn float_cat(tensors: Vec<WrapTensor>) -> WrapTensor {
        B::float_cat(tensors)
    }

    fn float_exp(tensor: WrapTensor) -> WrapTensor {
        B::float_exp(tensor.inner)
    }

    fn float_neg(tensor: WrapTensor) -> WrapTensor {
        B::float_neg(tensor.inner)
    }

    fn float_sort(tensor: WrapTensor) -> WrapTensor {
        unimplemented!("float_sort is not supported by the wrapper")
    }

    fn float_gather(tensor: WrapTensor, indices: WrapTensor) -> WrapTensor {
        B::float_gather(tensor.inner, indices.inner)
    }
}

impl<B: Backend> IntTensorOps<Self> for Wrap<B> {
    fn int_abs(tensor: WrapTensor) -> WrapTensor {
        B::int_abs(tensor.inner)
    }

    fn int_neg(tensor: WrapTensor) -> WrapTensor {
        B::int_neg(tensor.inner)
    }
}
"""


def _page(cli, git_repo, out: Path) -> Path:
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    git_repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    # A second backend that also handles F16 in float_add: the two differ there.
    other = FIX_OPS_RS.replace("Fix", "Other").replace("add(lhs, rhs), [F64 => f64, F32 => f32]",
                                                       "add(lhs, rhs), [F64 => f64, F32 => f32, F16 => f16]")
    git_repo.crate("burn-other", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": other})
    git_repo.crate("burn-wrap", {"src/ops.rs": WRAP_OPS_RS})
    sha = git_repo.commit("two backends and a wrapper")
    r = cli("coverage", "--repo", str(git_repo.path), "--sha", sha, "--format", "html", "--out", str(out))
    assert r.code == 0, r.stderr
    return out


def _visible_rows(driver, section: str) -> list[tuple[str, str]]:
    rows = driver.find_elements("css selector", f"{section} tr.row")
    return [(r.get_attribute("data-op"), r.get_attribute("data-crate")) for r in rows if r.is_displayed()]


def test_filters_and_links_in_headless_chromium(cli, git_repo, tmp_path, browser):
    page = _page(cli, git_repo, tmp_path / "coverage.html")
    browser.get(page.as_uri())
    # Side by side: only the operations the backends differ on, and what differs.
    assert _visible_rows(browser, "#shared") == [("float_add", "burn-fix"), ("float_add", "burn-other")]
    tag = browser.find_element("css selector", "#shared tbody.shared-op[data-name='float_add'] .tag")
    assert tag.text == "backends differ on F16"
    assert tag.get_attribute("title") == "F16: burn-fix panics, burn-other does not"
    # The others are named, folded away: their rows are in each backend's table.
    browser.find_element("css selector", "#shared details > summary").click()
    same = browser.find_elements("css selector", "#shared li.shared-op")
    assert "float_neg" in {li.get_attribute("data-name") for li in same} and all(li.is_displayed() for li in same)

    # The wrapper is one line, with its stub; it has no table and no side-by-side rows.
    wrap = browser.find_element("id", "b-burn-wrap")
    assert wrap.tag_name == "li" and wrap.is_displayed()
    assert "burn-wrap: 8 operations, delegates to the backend it wraps" in wrap.text
    assert "not implemented: float_sort" in wrap.text
    stub = wrap.find_element("css selector", "a")
    assert "/crates/burn-wrap/src/ops.rs#L" in stub.get_attribute("href")
    assert not browser.find_elements("css selector", "section.backend[data-crate='burn-wrap'], "
                                                     "tr.row[data-crate='burn-wrap']")

    # The operation filter keeps the matching operations only, in both backends.
    box = browser.find_element("id", "filter")
    box.send_keys("neg")
    assert set(_visible_rows(browser, "section.backend")) == {
        (op, crate) for op in ("float_neg", "int_neg") for crate in ("burn-fix", "burn-other")}
    assert not browser.find_element("id", "no-match").is_displayed()

    # Unticking a backend hides its rows and its section.
    browser.find_element("css selector", "#backend-filter input[value='burn-other']").click()
    assert {crate for _, crate in _visible_rows(browser, "section.backend")} == {"burn-fix"}
    assert not browser.find_element("id", "b-burn-other").is_displayed()

    # A filter nothing matches says so, and leaves no bare table headers.
    box.clear()
    box.send_keys("<b>nothing")
    none = browser.find_element("id", "no-match")
    assert none.is_displayed() and none.text == "No operation of the backends shown matches the name \u201c<b>nothing\u201d."
    assert not [t for t in browser.find_elements("css selector", "section.backend table, #shared table") if t.is_displayed()]

    # "Only operations that panic on" F16: float_neg panics on it, int_neg is n/a there.
    box.clear()
    box.send_keys(" ")  # an input event with an empty query
    from selenium.webdriver.support.ui import Select
    Select(browser.find_element("id", "panics-on")).select_by_value("F16")
    names = {name for name, _ in _visible_rows(browser, "section.backend")}
    assert "float_neg" in names and "int_neg" not in names and "float_exp" not in names

    # A panicking cell links the pinned source line of its panic; its tooltip names the cell.
    cells = browser.find_elements("css selector", "section.backend tr.row[data-op='float_neg'][data-crate='burn-fix'] "
                                                  "td.panics a")
    titles = [c.get_attribute("title") for c in cells]
    assert [t.split(":")[0] for t in titles] == [f"burn-fix · float_neg · {d}" for d in ("F64", "F16", "BF16")]
    assert all(t.split("\n")[1].startswith("panics at crates/burn-fix/src/ops.rs:") and "checked" in t for t in titles)
    href = cells[1].get_attribute("href")
    assert href.startswith("https://github.com/") and "/crates/burn-fix/src/ops.rs#L" in href
    # The row's source line is a link too; an n/a cell has none.
    loc = browser.find_element("css selector", "section.backend tr.row[data-op='float_neg'][data-crate='burn-fix'] a.loc")
    assert "/crates/burn-fix/src/ops.rs#L" in loc.get_attribute("href") and "checked" in loc.get_attribute("title")
    na = browser.find_elements("css selector", "tr.row[data-op='int_neg'][data-crate='burn-fix'] td.na a")
    assert na == []


def _many_operations(n: int) -> tuple[str, str, str]:
    """An ops trait of `n` float operations, a backend whose every operation reaches one
    panicking dispatch, and a wrapper that delegates each."""
    names = [f"float_op{i}" for i in range(n)]
    traits = ("pub trait Backend {}\n\npub trait FloatTensorOps<B: Backend> {\n"
              + "".join(f"    fn {op}(tensor: B::Float) -> B::Float;\n" for op in names) + "}\n")
    backend = ("use burn_backend::{Backend, FloatTensorOps};\n\nimpl FloatTensorOps<Self> for Big {\n"
               + "".join(f"    fn {op}(tensor: BigTensor) -> BigTensor {{\n        checked(tensor)\n    }}\n\n"
                         for op in names)
               + "}\n\nfn checked(tensor: BigTensor) -> BigTensor {\n    match tensor.dtype() {\n"
                 "        DType::F32 => tensor,\n        dtype => panic!(\"checked: unsupported dtype {dtype:?}\"),\n"
                 "    }\n}\n")
    wrapper = ("use burn_backend::{Backend, FloatTensorOps};\n\nimpl<B: Backend> FloatTensorOps<Self> for Wrap<B> {\n"
               + "".join(f"    fn {op}(tensor: WrapTensor) -> WrapTensor {{\n        B::{op}(tensor.inner)\n    }}\n\n"
                         for op in names) + "}\n")
    return traits, backend, wrapper


def test_the_page_grows_by_a_few_hundred_bytes_an_operation(cli, git_repo, tmp_path):
    """Each operation's row costs its name, its source line and one short cell per dtype: links
    and tooltips are written once in the lookup table, runs of n/a cells are one cell, and a
    wrapper's operations are one line for all."""
    sizes = []
    for n in (40, 240):
        traits, backend, wrapper = _many_operations(n)
        git_repo.crate("burn-backend", {"src/ops.rs": traits})
        git_repo.crate("burn-big", {"src/ops.rs": backend})
        git_repo.crate("burn-wrap", {"src/ops.rs": wrapper})
        sha = git_repo.commit(f"{n} operations")
        out = tmp_path / f"c{n}.html"
        r = cli("coverage", "--repo", str(git_repo.path), "--sha", sha, "--format", "html", "--out", str(out))
        assert r.code == 0, r.stderr
        sizes.append(len(out.read_bytes()))
    per_operation = (sizes[1] - sizes[0]) / 200
    assert per_operation < 700, per_operation


def test_runtime_limits_beside_the_backends_that_run_on_them(cli, git_repo, tmp_path, browser):
    """--with-dependencies: each backend's section ends with what the runtimes it runs on reject,
    linked to the dependency's pinned lines; a backend with no operations of its own is a section
    of its limits alone, which an operation filter hides."""
    from test_runtimes import make_burn, make_cubecl

    cubecl = make_cubecl(tmp_path)
    burn = make_burn(git_repo, cubecl)
    page = tmp_path / "limits.html"
    r = cli("coverage", "--repo", str(burn.path), "--sha", "HEAD", "--with-dependencies", "--format", "html",
            "--dependency-repo", f"tracel-ai/cubecl={cubecl.path}", "--out", str(page))
    assert r.code == 0, r.stderr
    browser.get(page.as_uri())

    def limits(crate: str) -> list[tuple[str, str, str, list[str]]]:
        rows = browser.find_elements("css selector", f"section.backend[data-crate='{crate}'] .runtime-limits tr.limit")
        return [(*(" ".join(td.text.split()) for td in r.find_elements("css selector", "td")[:3]),
                 [a.get_attribute("href") for a in r.find_elements("css selector", "a.loc")]) for r in rows]

    pinned = f"https://github.com/tracel-ai/cubecl/blob/{cubecl.pinned}/crates/"
    wgpu = limits("burn-wgpu")
    assert [row[:3] for row in wgpu] == [("cpp/metal", "Float", "◐ partial"), ("cpp/metal", "Bool", "◐ partial"),
                                         ("wgpu", "tensor maps", "✗ panics")]
    assert wgpu[2][3] == [pinned + "cubecl-wgpu/src/server.rs#L1-L6"]  # the record's pinned lines
    assert all(href.startswith(pinned) for row in wgpu for href in row[3])
    # burn-cubecl runs on every runtime: its own table first, then the limits.
    section = browser.find_element("css selector", "section.backend[data-crate='burn-cubecl']")
    assert section.find_element("css selector", "table.heat tr.row[data-op='conv2d']").is_displayed()
    assert {row[0] for row in limits("burn-cubecl")} == {"cpp/cuda", "cpp/hip", "cpp/metal", "wgpu"}
    assert section.find_element("css selector", ".runtime-limits h3").text == (
        "Runtime limits: what the runtimes burn-cubecl runs on reject (tracel-ai/cubecl)")
    # burn-cuda: the CUDA dialect's Bool only, a section with no table of operations.
    cuda = browser.find_element("id", "b-burn-cuda")
    assert cuda.is_displayed() and not cuda.find_elements("css selector", "table.heat")
    assert [row[:3] for row in limits("burn-cuda")] == [("cpp/cuda", "Bool", "✗ panics")]
    assert "burn-cuda" in {a.text for a in browser.find_elements("css selector", ".toolbar nav a")}

    # An operation filter leaves the sections with operations only; clearing it brings them back.
    box = browser.find_element("id", "filter")
    box.send_keys("conv")
    assert section.is_displayed() and not cuda.is_displayed()
    box.clear()
    box.send_keys(" ")
    assert cuda.is_displayed()
    browser.find_element("css selector", "#backend-filter input[value='burn-cuda']").click()
    assert not cuda.is_displayed() and section.is_displayed()


def test_the_settings_tables_header_covers_none_of_its_rows(cli, git_repo, tmp_path, browser):
    from test_coverage_limits import MODES_RS, OPS_TRAITS_RS as MODE_TRAITS_RS, TORCHY_OPS_RS

    git_repo.crate("burn-backend", {"src/ops.rs": MODE_TRAITS_RS, "src/modes.rs": MODES_RS})
    git_repo.crate("burn-torchy", {"src/ops.rs": TORCHY_OPS_RS})
    sha = git_repo.commit("a backend with settings")
    page = tmp_path / "settings.html"
    r = cli("coverage", "--repo", str(git_repo.path), "--sha", sha, "--format", "html", "--out", str(page))
    assert r.code == 0, r.stderr
    browser.get(page.as_uri())
    tables = browser.find_elements("css selector", "#settings table.settings")
    assert tables
    for table in tables:
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", table)
        head = table.find_element("css selector", "thead").rect
        rows = [r.rect for r in table.find_elements("css selector", "tbody tr.row")]
        assert rows and all(row["y"] >= head["y"] + head["height"] - 1 for row in rows), (head, rows)
        # Every row is where a reader sees it: the element drawn at its first cell is its own.
        for row in table.find_elements("css selector", "tbody tr.row"):
            hit = browser.execute_script(
                "var r = arguments[0].getBoundingClientRect();"
                "var e = document.elementFromPoint(r.left + 20, r.top + r.height / 2);"
                "return arguments[0].contains(e);", row)
            assert hit, row.get_attribute("data-op")
