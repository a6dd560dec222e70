"""`burn-errors coverage` end to end on fixture repositories: explicit arms and catch-alls,
partial arms, tuple scrutinees, a foreign enum, two matches of one operation, the four formats,
--backend, --records, --out and the errors."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from analyzer.features.coverage import matches, model
from analyzer.records.model import RecordLine
from analyzer.records import reader
from conftest import DTYPE_RS, GitRepo, read_records
from targets import BURN

# Every variant of the fixture's DType (conftest.DTYPE_RS), payloads expanded, in declaration order.
ALL = ["F64", "F32", "F16", "BF16", "I64", "I32", "U8", "Bool(Native)", "Bool(U8)", "Bool(U32)", "QFloat"]
COLLAPSED = ["F64", "F32", "F16", "BF16", "I64", "I32", "U8", "Bool", "QFloat"]

FLEX_OPS = '''\
use burn_std::{BoolStore, DType};

pub fn conv3d(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => conv3d_f32(x),
        DType::F64 => conv3d_f64(x),
        dtype => panic!("conv3d: unsupported dtype {:?}", dtype),
    }
}

pub fn select(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F64 | DType::F32 | DType::F16 | DType::BF16 => select_float(x),
        DType::I64 | DType::I32 | DType::U8 => select_int(x),
        DType::Bool(_) => select_bool(x),
        DType::QFloat(_) => panic!("select: quantized tensors are not supported"),
    }
}

pub fn gather(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::QFloat(_) => panic!("gather: quantized tensors are not supported"),
        other => gather_any(x, other),
    }
}

pub fn to_contiguous(x: &Tensor) -> Tensor {
    match x.dtype {
        DType::F64 => copy::<f64>(x),
        DType::F32 => copy::<f32>(x),
        DType::Bool(BoolStore::Native | BoolStore::U8) => copy::<u8>(x),
        DType::Bool(BoolStore::U32) => {
            panic!("to_contiguous: Bool(U32) storage is not yet supported")
        }
        _ => panic!("Unsupported dtype for dense copy: {:?}", x.dtype),
    }
}

pub fn interpolate(x: Tensor, options: InterpolateOptions) -> Tensor {
    match (options.mode, x.dtype()) {
        (_, DType::F32) => interpolate_f32(x, options),
        (_, DType::F16) => interpolate_f16(x, options),
        (mode, dtype) => panic!("interpolate: {:?} on {:?} is not supported", mode, dtype),
    }
}

pub fn float_convert(x: Tensor, target: DType) -> Tensor {
    let data = match x.dtype() {
        DType::F32 => read_f32(x),
        DType::F64 => read_f64(x),
        _ => panic!("float_convert: unsupported source dtype"),
    };
    match target {
        DType::F32 => write_f32(data),
        DType::F16 => write_f16(data),
        _ => panic!("float_convert: unsupported target dtype"),
    }
}

pub fn interpolate_backward(x: Tensor, mode: InterpolateMode) -> Tensor {
    match mode {
        InterpolateMode::Nearest => nearest_backward(x),
        InterpolateMode::Bicubic => panic!("bicubic backward is not supported by this backend"),
    }
}
'''
LINE = {name: FLEX_OPS.splitlines().index(text) + 1 for name, text in [
    ("conv3d", '        dtype => panic!("conv3d: unsupported dtype {:?}", dtype),'),
    ("u32", '            panic!("to_contiguous: Bool(U32) storage is not yet supported")'),
    ("contiguous_rest", '        _ => panic!("Unsupported dtype for dense copy: {:?}", x.dtype),'),
]}

TCH_TENSOR = '''\
use burn_std::DType;

impl TchTensor {
    pub fn dtype(&self) -> DType {
        match self.tensor.kind() {
            tch::Kind::Float => DType::F32,
            tch::Kind::Double => DType::F64,
            tch::Kind::Int64 => DType::I64,
            _ => unimplemented!("this tch kind"),
        }
    }

    pub fn float_into_data(&self) -> Data {
        match self.tensor.kind() {
            tch::Kind::Float => read::<f32>(self),
            _ => panic!("float_into_data: not a float kind"),
        }
    }

    pub fn float_from_data(data: Data) -> Self {
        match data.dtype {
            DType::F32 => from_f32(data),
            DType::F64 => from_f64(data),
            _ => panic!("float_from_data: unsupported dtype"),
        }
    }
}
'''

# Another crate's enum that happens to be called Kind too.
TENSOR_BRIDGE = '''\
pub fn from_bridge(tensor: BridgeTensor) -> Tensor {
    match tensor.kind() {
        Kind::Int => Tensor::int(tensor),
        _ => panic!("from_bridge: unexpected kind"),
    }
}
'''

NDARRAY_OPS = '''\
use burn_std::DType;

pub fn conv3d(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => conv3d_f32(x),
        DType::F16 => conv3d_f16(x),
        DType::I64 => conv3d_i64(x),
        other => panic!("conv3d: {other:?} is not supported"),
    }
}
'''


def fix_backend_repo(path) -> GitRepo:
    """A tree of the dtype enum, the ops traits and one backend (`burn-fix`) implementing them:
    what the coverage-cache, document and start-up tests audit."""
    repo = GitRepo(path)
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS})
    repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    repo.sha = repo.commit("backend ops")
    return repo


@pytest.fixture
def backends(git_repo):
    """A tree with three backends (flex, tch, ndarray) and a front-end crate."""
    git_repo.crate("burn-flex", {"src/ops.rs": FLEX_OPS})
    git_repo.crate("burn-tch", {"src/tensor.rs": TCH_TENSOR})
    git_repo.crate("burn-ndarray", {"src/ops.rs": NDARRAY_OPS})
    git_repo.crate("burn-tensor", {"src/bridge.rs": TENSOR_BRIDGE})
    git_repo.sha = git_repo.commit()
    return git_repo


def run_coverage(cli, repo, *args, code=0):
    res = cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", *args)
    assert res.code == code, res.stderr
    return res


def coverage_json(cli, repo, *args) -> dict:
    return json.loads(run_coverage(cli, repo, "--format", "json", *args).stdout)


def match_of(doc: dict, crate: str, operation: str) -> list[dict]:
    return [m for m in doc["matches"] if m["crate"] == crate and m["operation"] == operation]


def cells_of(doc: dict, crate: str, operation: str) -> dict[str, str]:
    return {c["dtype"]: c["status"] for c in doc["cells"] if c["crate"] == crate and c["operation"] == operation}


# ---------------------------------------------------------------------------------------------
# The rules


def test_explicit_arms_and_catch_all_arms(cli, backends):
    doc = coverage_json(cli, backends)
    assert doc["columns"][0]["enum"] == "DType" and doc["columns"][0]["dtypes"] == COLLAPSED  # the tree's order

    # A catch-all panicking arm: every variant no other arm names panics.
    [conv] = match_of(doc, "burn-flex", "conv3d")
    assert conv["handled"] == ["F64", "F32"]
    assert conv["panics"] == [d for d in ALL if d not in ("F64", "F32")]
    assert conv["function"] == "conv3d" and conv["path"] == "crates/burn-flex/src/ops.rs"
    assert conv["line"] == LINE["conv3d"] and conv["scrutinee"] == "x.dtype()"
    assert [a["pattern"] for a in conv["arms"]] == ["dtype"]
    assert cells_of(doc, "burn-flex", "conv3d") == {d: ("handled" if d in ("F64", "F32") else "panics")
                                                    for d in COLLAPSED}

    # Explicit arms only: the panicking arm's own variants panic, the other arms' are handled.
    [sel] = match_of(doc, "burn-flex", "select")
    assert sel["panics"] == ["QFloat"] and sel["handled"] == ALL[:-1]

    # An explicit panicking arm beside a catch-all arm that does not panic.
    [gat] = match_of(doc, "burn-flex", "gather")
    assert gat["panics"] == ["QFloat"] and gat["handled"] == ALL[:-1]

    # The same operation in another backend, with its own arms.
    assert cells_of(doc, "burn-ndarray", "conv3d") == {
        d: ("handled" if d in ("F32", "F16", "I64") else "panics") for d in COLLAPSED}
    # Unsupported-mode records are not part of the matrix.
    assert not match_of(doc, "burn-flex", "interpolate_backward")


def test_a_partial_arm_shows_as_partial(cli, backends):
    doc = coverage_json(cli, backends)
    [m] = match_of(doc, "burn-flex", "to_contiguous")  # two panicking arms, one match
    assert [a["line"] for a in m["arms"]] == [LINE["u32"], LINE["contiguous_rest"]]
    assert [a["rejects"] for a in m["arms"]] == [["Bool(U32)"], ["F16", "BF16", "I64", "I32", "U8", "QFloat"]]
    assert m["handled"] == ["F64", "F32", "Bool(Native)", "Bool(U8)"]
    assert m["partial"] == ["Bool"]
    [bool_cell] = [c for c in doc["cells"] if c["crate"] == "burn-flex" and c["operation"] == "to_contiguous"
                   and c["dtype"] == "Bool"]
    assert bool_cell["status"] == "partial"
    assert bool_cell["parts"] == {"Bool(Native)": "handled", "Bool(U8)": "handled", "Bool(U32)": "panics"}
    assert bool_cell["sites"][0]["line"] == LINE["u32"]  # the arm that panics comes first

    expanded = coverage_json(cli, backends, "--expand")
    assert expanded["collapsed"] is False and expanded["columns"][0]["dtypes"] == ALL
    cells = cells_of(expanded, "burn-flex", "to_contiguous")
    assert cells["Bool(U32)"] == "panics" and cells["Bool(U8)"] == cells["Bool(Native)"] == "handled"
    assert "Bool" not in cells and "partial" not in cells.values()


def test_tuple_scrutinee(cli, backends):
    doc = coverage_json(cli, backends)
    [m] = match_of(doc, "burn-flex", "interpolate")
    assert m["scrutinee"] == "(options.mode, x.dtype())"
    assert m["handled"] == ["F32", "F16"]
    assert m["panics"] == [d for d in ALL if d not in ("F32", "F16")]


def test_two_matches_of_one_operation_disagreeing_is_partial(cli, backends):
    doc = coverage_json(cli, backends)
    assert len(match_of(doc, "burn-flex", "float_convert")) == 2
    cells = cells_of(doc, "burn-flex", "float_convert")
    # source handles F64 and F32, target handles F32 and F16
    assert cells["F32"] == "handled"
    assert cells["F64"] == cells["F16"] == "partial"
    assert cells["BF16"] == cells["I64"] == "panics"


def test_a_foreign_enum_keeps_columns_of_its_own(cli, backends):
    doc = coverage_json(cli, backends)
    groups = {g["enum"]: g["dtypes"] for g in doc["columns"]}
    assert list(groups) == ["DType", "Kind"]
    assert not [d for d in groups["DType"] if "Kind" in d]
    assert groups["Kind"] == ["Kind::Double", "Kind::Float", "Kind::Int", "Kind::Int64", "Kind::*"]
    tch = {b["crate"]: b for b in doc["backends"]}["burn-tch"]
    assert tch["enums"] == ["DType", "Kind"]

    assert cells_of(doc, "burn-tch", "dtype") == {"Kind::Double": "handled", "Kind::Float": "handled",
                                                  "Kind::Int64": "handled", "Kind::*": "panics"}
    # The catch-all panics on the kinds the crate's other matches name, and on any other kind.
    assert cells_of(doc, "burn-tch", "float_into_data") == {"Kind::Double": "panics", "Kind::Float": "handled",
                                                            "Kind::Int64": "panics", "Kind::*": "panics"}
    # Another crate's `Kind` is not assumed to have tch's variants.
    assert cells_of(doc, "burn-tensor", "from_bridge") == {"Kind::Int": "handled", "Kind::*": "panics"}
    # The DType match of the same backend stays in the DType columns.
    assert set(cells_of(doc, "burn-tch", "float_from_data")) == set(COLLAPSED)


def test_column_order_is_recovered_from_the_records():
    """Each record lists its handled and its rejected dtypes in the enum's order; the columns are
    one order consistent with all those lists, whichever record comes first and however few
    variants it names."""
    def line(i: int, handled: list[str], rejected: list[str]) -> RecordLine:
        rid = f"{i:016x}"
        return RecordLine.model_validate({
            "record": {"id": rid, "repo": "o/r", "slug": "s", "errorMessage": "m", "messagePattern": "m",
                       "filePath": f"crates/burn-x/src/f{i}.rs", "lineNumber": 3, "sourceCode": "",
                       "sourceCodeStart": 1, "sourceCodeEnd": 5,
                       "githubUrl": f"https://github.com/o/r/blob/{'a' * 40}/f{i}.rs#L1-L5", "tags": [],
                       "backgroundTag": "unsupported-dtype", "analyzedSha": "a" * 40,
                       "analyzedAt": "2025-01-01T00:00:00.000Z", "contentChangedAt": "2025-01-01T00:00:00.000Z"},
            "analysis": {"category": "dtype-dispatch", "macro": "panic", "crate": "burn-x", "function": f"f{i}",
                         "scrutinee": "dtype", "pattern": "_", "enum": "DType", "handled": handled,
                         "rejected": rejected, "messageRegex": "m", "operation": f"op{i}", "rule": "r",
                         "contentHash": "h"}})

    m = matches.build([line(1, ["F32"], ["QFloat"]),
                        line(2, ["F64", "F32", "F16"], ["Bool(U8)", "Bool(U32)", "QFloat"]),
                        line(3, ["F16", "Bool(U8)"], ["F64"])])
    assert m.dtypes == ["F64", "F32", "F16", "Bool(U8)", "Bool(U32)", "QFloat"]
    folded = matches.build([line(3, ["F16", "Bool(U8)"], ["Bool(U32)"])], collapse=True)
    assert folded.dtypes == ["F16", "Bool"]
    assert folded.get("burn-x", "op3", "Bool").status == "partial"
    assert folded.get("burn-x", "op3", "F16").status == "handled"


def test_cells_that_flip_between_revisions(cli, backends, tmp_path):
    """The diff command's use of the matrix: build, Cell.key and Cell.status, flipped()."""
    cli("extract", "--repo", str(backends.path), "--sha", "HEAD", "--out", str(tmp_path / "a"))
    backends.write("crates/burn-flex/src/ops.rs",
                   FLEX_OPS.replace("        DType::F64 => conv3d_f64(x),\n",
                                    "        DType::F64 => conv3d_f64(x),\n        DType::F16 => conv3d_f16(x),\n"))
    backends.commit()
    cli("extract", "--repo", str(backends.path), "--sha", "HEAD", "--out", str(tmp_path / "b"))
    base = matches.build(reader.read(tmp_path / "a" / "records.jsonl"))
    head = matches.build(reader.read(tmp_path / "b" / "records.jsonl"))
    assert model.flipped(base, head) == [(("burn-flex", "conv3d", "F16"), "panics", "handled")]
    cell = head.cells[("burn-flex", "conv3d", "F16")]
    assert cell.key == ("burn-flex", "conv3d", "F16") and cell.status == "handled"


# ---------------------------------------------------------------------------------------------
# The views


def _section(text: str, heading: str) -> list[str]:
    """The lines of one backend's table in the terminal output."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(heading + "  "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_terminal_table_shows_every_backend_in_100_columns(cli, backends):
    out = run_coverage(cli, backends).stdout
    assert max(len(ln) for ln in out.splitlines()) <= 100
    assert out.splitlines()[0] == f"dtype coverage of tracel-ai/burn@{backends.sha[:12]}"
    flex = _section(out, "burn-flex")
    assert flex[1].split() == ["DType", *COLLAPSED]
    row = next(i for i, ln in enumerate(flex) if ln.startswith("conv3d "))
    assert flex[row].split()[1:] == ["✓", "✓"] + ["✗"] * 7
    assert flex[row + 1].strip() == f"src/ops.rs:{LINE['conv3d']}"
    contiguous = next(ln for ln in flex if ln.startswith("to_contiguous "))
    assert contiguous.split()[-2:] == ["◐", "✗"]
    assert f"src/ops.rs:{LINE['u32']},{LINE['contiguous_rest']}" in "\n".join(flex)
    ndarray = _section(out, "burn-ndarray")
    assert next(ln for ln in ndarray if ln.startswith("conv3d ")).split()[1:] == \
        ["✗", "✓", "✓", "✗", "✓", "✗", "✗", "✗", "✗"]
    tch = _section(out, "burn-tch")
    kind_header = next(ln for ln in tch if ln.startswith("Kind "))
    # every column of the group, so backends line up; a foreign enum's variants alphabetically
    assert kind_header.split() == ["Kind", "Double", "Float", "Int", "Int64", "other"]
    assert next(ln for ln in tch if ln.startswith("dtype ")).split()[1:] == ["✓", "✓", "·", "✓", "✗"]
    # Several backends: a summary of operations that panic per dtype closes the output.
    assert "Operations that panic on each dtype (DType), per backend" in out
    summary = out[out.index("Operations that panic on each dtype (DType)"):].splitlines()
    assert next(ln for ln in summary if ln.startswith("burn-ndarray ")).split() == \
        ["burn-ndarray", "1", "1", "✓", "✓", "1", "✓", "1", "1", "1", "1"]


def test_backend_filter(cli, backends):
    out = run_coverage(cli, backends, "--backend", "flex").stdout
    assert "burn-flex" in out and "burn-tch" not in out and "burn-ndarray" not in out
    assert "per backend" not in out  # one backend: no summary
    doc = coverage_json(cli, backends, "--backend", "burn-tch", "--backend", "ndarray")
    assert [b["crate"] for b in doc["backends"]] == ["burn-ndarray", "burn-tch"]
    assert {c["crate"] for c in doc["cells"]} == {m["crate"] for m in doc["matches"]} == {"burn-ndarray", "burn-tch"}
    # the chosen backends' enums keep all their columns (Int comes from burn-tensor's match)
    assert doc["columns"][1]["dtypes"] == ["Kind::Double", "Kind::Float", "Kind::Int", "Kind::Int64", "Kind::*"]
    assert [g["enum"] for g in coverage_json(cli, backends, "--backend", "flex")["columns"]] == ["DType"]
    res = run_coverage(cli, backends, "--backend", "cuda", code=2)
    assert res.stdout == "" and len(res.stderr.splitlines()) == 1
    assert "--backend cuda" in res.stderr and "burn-flex, burn-ndarray, burn-tch, burn-tensor" in res.stderr


def test_json_shape(cli, backends):
    doc = coverage_json(cli, backends)
    assert list(doc) == ["tool", "toolVersion", "formatVersion", "repo", "sha", "collapsed", "statuses",
                         "view", "columns", "naCells", "operations", "helpers", "backends", "matches", "cells",
                         "settings", "claims"]
    assert doc["repo"] == "tracel-ai/burn" and doc["sha"] == backends.sha and doc["collapsed"] is True
    assert set(doc["statuses"]) == {"handled", "panics", "partial", "n/a", "unknown"}
    assert doc["view"] == "matches" and doc["operations"] == []  # no ops trait in this tree
    flex = {b["crate"]: b for b in doc["backends"]}["burn-flex"]
    assert flex == {"crate": "burn-flex", "operations": 6, "traits": [], "matches": 7, "enums": ["DType"],
                    "cells": {"handled": 23, "panics": 28, "partial": 3, "n/a": 0, "unknown": 0},
                    "cannotHold": []}
    for m in doc["matches"]:
        assert set(m) == {"crate", "operation", "function", "path", "line", "enum", "scrutinee", "context",
                          "via", "handled", "panics", "partial", "unknown", "arms"}
        for a in m["arms"]:
            assert set(a) == {"id", "path", "line", "url", "pattern", "message", "rejects"}
    records = {r["record"]["id"]: r["record"] for r in _records(cli, backends)}
    for c in doc["cells"]:
        assert set(c) == {"crate", "operation", "dtype", "enum", "status", "parts", "sites"}
        assert c["status"] in ("handled", "panics", "partial") and c["sites"]
        for s in c["sites"]:  # every site is a record, with its pinned link
            r = records[s["id"]]
            assert (s["path"], s["line"], s["url"]) == (r["filePath"], r["lineNumber"], r["githubUrl"])


def _records(cli, repo):
    out = Path(repo.path).parent / "records-out"
    res = cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    return read_records(out)


def test_markdown_tables(cli, backends):
    md = run_coverage(cli, backends, "--format", "markdown").stdout
    records = {(r["analysis"]["crate"], r["record"]["lineNumber"]): r["record"] for r in _records(cli, backends)}
    assert md.startswith(f"# dtype coverage of `tracel-ai/burn` at `{backends.sha[:12]}`\n")
    assert "## burn-flex\n" in md and "## burn-tch\n" in md and "### Kind\n" in md
    flex = md[md.index("## burn-flex\n"):md.index("## burn-ndarray\n")]
    header = "| operation | " + " | ".join(f"`{d}`" for d in COLLAPSED) + " | source |"
    assert header in flex
    url = records[("burn-flex", LINE["conv3d"])]["githubUrl"]
    assert (f"| `conv3d` | ✅ | ✅ | {' | '.join(['❌'] * 7)} | [src/ops.rs:{LINE['conv3d']}]({url}) |") in flex
    row = next(ln for ln in flex.splitlines() if ln.startswith("| `to_contiguous` |"))
    assert row.split(" | ")[8] == "🟡"  # Bool
    assert row.count("](https://github.com/tracel-ai/burn/blob/") == 2
    summary = md[md.index("## Summary"):md.index("## burn-flex")]
    assert "| burn-ndarray | 1 | 1 | ✅ | ✅ | 1 | ✅ | 1 | 1 | 1 | 1 |" in summary


class _Cells(HTMLParser):
    """Heatmap cells (<td class="c STATUS">) with the link and tooltip the page's script gives
    them from its lookup table (href: a base and the rest; title: backend · operation · column
    head: status, then the table's text), and every asset reference."""

    def __init__(self):
        super().__init__()
        self.cells: list[dict] = []
        self.assets: list[str] = []
        self.tags: set[str] = set()
        self.heads: list[str] = []
        self.row: dict = {}
        self.col = 0
        self.where = ""  # the element whose text is read: a column head, the lookup script
        self.lookup_text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        classes = (a.get("class") or "").split()
        if tag == "table":
            self.heads = []
        elif tag == "th" and "dt" in classes:
            self.where = "head"
            self.heads.append("")
        elif tag == "tr":
            self.row, self.col = a, 0
        elif tag == "td" and "c" in classes:
            cell = {"class": classes, "col": self.col, "crate": self.row.get("data-crate"),
                    "op": self.row.get("data-op"), "heads": self.heads, "s": a.get("data-s"), "t": a.get("data-t")}
            self.cells.append(cell)
            self.col += int(a.get("colspan") or 1)
        elif tag == "script" and a.get("id") == "lookup":
            self.where = "lookup"
        for attr in ("src", "srcset", "data", "poster"):
            if attr in a:
                self.assets.append(a[attr])
        if tag == "link":
            self.assets.append(a.get("href", ""))

    def handle_endtag(self, tag):
        if tag in ("th", "script"):
            self.where = ""

    def handle_data(self, data):
        if self.where == "head":
            self.heads[-1] += data
        elif self.where == "lookup":
            self.lookup_text += data

    def resolve(self) -> None:
        lookup = json.loads(self.lookup_text)
        for c in self.cells:
            if c["s"] is None:
                continue
            if c["s"] != "":
                base, rest = lookup["urls"][int(c["s"])]
                c["href"] = lookup["bases"][base] + rest
            status = next(s for s in ("handled", "panics", "partial", "unknown") if s in c["class"])
            body = lookup["titles"][int(c["t"])] if c["t"] != "" else ""
            c["title"] = f"{c['crate']} · {c['op']} · {c['heads'][c['col']]}: {status}" + (f"\n{body}" if body else "")


def test_html_page_is_self_contained_with_linked_cells(cli, backends, tmp_path):
    page = tmp_path / "coverage.html"
    res = run_coverage(cli, backends, "--format", "html", "--out", str(page))
    assert res.stdout == "" and f"Wrote {page}" in res.stderr
    html = page.read_text(encoding="utf-8")
    parser = _Cells()
    parser.feed(html)
    parser.resolve()
    assert parser.assets == [] and not {"iframe", "object", "embed", "img"} & parser.tags
    assert not re.search(r"@import|url\(", html)  # no CSS fetches
    # the only http(s) addresses are links to pinned source lines
    addresses = re.findall(r"https?://[^\s\"'<>)]+", html)
    assert addresses and all(a.startswith(f"https://github.com/tracel-ai/burn/blob/{backends.sha}/") for a in addresses)
    assert "<style>" in html and "<script>" in html

    records = {(r["analysis"]["crate"], r["record"]["lineNumber"]): r["record"] for r in _records(cli, backends)}
    conv = records[("burn-flex", LINE["conv3d"])]
    f16 = [c for c in parser.cells if (c.get("title") or "").startswith("burn-flex · conv3d · F16:")]
    assert f16, "no heatmap cell for burn-flex conv3d F16"
    for c in f16:
        assert "panics" in c["class"] and c["href"] == conv["githubUrl"]
        assert f"crates/burn-flex/src/ops.rs:{LINE['conv3d']}" in c["title"]
    bool_cells = [c for c in parser.cells if (c.get("title") or "").startswith("burn-flex · to_contiguous · Bool:")]
    assert bool_cells and all("partial" in c["class"] for c in bool_cells)
    assert records[("burn-flex", LINE["u32"])]["githubUrl"] == bool_cells[0]["href"]
    assert "Bool(U32) panics at crates/burn-flex/src/ops.rs:" + str(LINE["u32"]) in bool_cells[0]["title"]
    # conv3d is in two backends: shown side by side, the dtypes where they differ outlined
    assert ('title="F64: burn-ndarray panics, burn-flex does not; F16: burn-flex panics, burn-ndarray does not; '
            'I64: burn-flex panics, burn-ndarray does not">backends differ on F64, F16, I64</span>') in html
    gaps = {tuple(c["title"].split(":")[0].split(" · ")) for c in parser.cells if "gap" in c["class"]}
    assert gaps == {(crate, "conv3d", d) for crate in ("burn-flex", "burn-ndarray") for d in ("F64", "F16", "I64")}
    # the "only operations that panic on" filter reads which dtypes each row panics on
    assert ('<tr class="row" data-name="conv3d" data-op="conv3d" data-crate="burn-flex" '
            'data-panics="F16 BF16 I64 I32 U8 Bool QFloat">'
            in html)
    assert '<option value="Kind::*">other</option>' in html
    # every backend has a section and an overview row
    for crate in ("burn-flex", "burn-ndarray", "burn-tch", "burn-tensor"):
        assert f'id="b-{crate}"' in html and f'href="#b-{crate}"' in html


def test_records_input_gives_the_same_matrix(cli, backends, tmp_path):
    cli("extract", "--repo", str(backends.path), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    records = str(tmp_path / "o" / "records.jsonl")
    from_file = cli("coverage", "--records", records, "--format", "json")
    assert from_file.code == 0, from_file.stderr
    assert json.loads(from_file.stdout) == coverage_json(cli, backends)
    table = cli("coverage", "--records", records, "--backend", "flex")
    assert table.code == 0 and "conv3d" in table.stdout

    res = cli("coverage", "--records", records, "--sha", "HEAD")
    assert res.code == 2 and len(res.stderr.splitlines()) == 1
    assert "--records" in res.stderr and "--sha" in res.stderr
    res = cli("coverage", "--records", str(tmp_path / "missing.jsonl"))
    assert res.code == 2 and "no such records file" in res.stderr and len(res.stderr.splitlines()) == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text(Path(records).read_text() + "{not json\n")
    res = cli("coverage", "--records", str(broken))
    assert res.code == 2 and f"{broken}:" in res.stderr and "Traceback" not in res.stderr


def test_out_writes_the_file_and_nothing_to_stdout(cli, backends, tmp_path):
    md = run_coverage(cli, backends, "--format", "markdown").stdout
    out = tmp_path / "sub" / "coverage.md"
    res = run_coverage(cli, backends, "--format", "markdown", "--out", str(out))
    assert res.stdout == "" and out.read_text(encoding="utf-8") == md
    table = tmp_path / "coverage.txt"
    run_coverage(cli, backends, "--out", str(table))
    text = table.read_text(encoding="utf-8")
    assert "\x1b[" not in text and max(len(ln) for ln in text.splitlines()) <= 100 and "conv3d" in text
    # a folder is not a file: an error, and the earlier file stays
    res = run_coverage(cli, backends, "--out", str(tmp_path), code=2)
    assert "is a directory" in res.stderr and len(res.stderr.splitlines()) == 1
    assert out.read_text(encoding="utf-8") == md


def test_a_tree_without_dtype_dispatch(cli, git_repo):
    git_repo.crate("burn-x", {"src/lib.rs": "fn f(m: Mode) { match m { Mode::A => 1, Mode::B => "
                                            "unimplemented!(\"mode B\") }; }\n"})
    git_repo.commit()
    res = run_coverage(cli, git_repo)
    assert "No dtype-dispatch sites" in res.stdout
    doc = coverage_json(cli, git_repo)
    assert doc["backends"] == doc["matches"] == doc["cells"] == [] and doc["columns"] == []
    assert "No dtype-dispatch sites" in run_coverage(cli, git_repo, "--format", "html").stdout


def test_help_has_examples(cli):
    res = cli("coverage", "--help")
    assert res.code == 0
    examples = res.stdout[res.stdout.index("Examples:"):]
    assert "burn-errors coverage --repo ../burn --sha main --backend flex\n" in examples
    assert "burn-errors coverage --records output/records.jsonl --format markdown --out coverage.md" in examples
    for flag in ("--records", "--format", "--out", "--backend", "--expand", "--repo", "--sha"):
        assert flag in res.stdout


def test_written_message_counts_in_the_singular_for_one(cli, backends, tmp_path):
    page = tmp_path / "flex.md"
    res = run_coverage(cli, backends, "--format", "markdown", "--backend", "flex", "--out", str(page))
    assert res.code == 0, res.stderr
    assert re.search(rf"Wrote {re.escape(str(page))} \(markdown: \d+ operations? in 1 backend\)\.", res.stderr), res.stderr


# -- the operations view: backend ops traits, their impls, helpers and repetition macros --------

OPS_TRAITS_RS = """\
pub trait Backend {}

pub trait FloatTensorOps<B: Backend> {
    fn float_add(lhs: B::Float, rhs: B::Float) -> B::Float;
    fn float_cat(tensors: Vec<B::Float>) -> B::Float;
    fn float_exp(tensor: B::Float) -> B::Float;
    fn float_neg(tensor: B::Float) -> B::Float;
    fn float_sort(tensor: B::Float) -> B::Float;
    fn float_gather(tensor: B::Float, indices: B::Int) -> B::Float;
}

pub trait IntTensorOps<B: Backend> {
    fn int_abs(tensor: B::Int) -> B::Int;
    fn int_neg(tensor: B::Int) -> B::Int;
}

pub trait ModuleOps<B: Backend> {
    fn conv_transpose_with_a_rather_long_operation_name(x: B::Float) -> B::Float;
    fn conv2d(x: B::Float, bias: B::Float) -> B::Float;
}
"""

FIX_TENSOR_RS = """\
macro_rules! execute_with_dtype {
    ($tensor:expr, $op:expr, [$($dtype: ident => $ty: ty),*]) => {{
        match $tensor.dtype() {
            $(
                DType::$dtype => {
                    type E = $ty;
                    $op
                }
            )*
            other => unimplemented!("unsupported dtype: {:?}", other),
        }
    }};
}
"""

FIX_OPS_RS = """\
use burn_backend::{Backend, FloatTensorOps, IntTensorOps, ModuleOps};

impl FloatTensorOps<Self> for Fix {
    fn float_add(lhs: FixTensor, rhs: FixTensor) -> FixTensor {
        execute_with_dtype!(lhs, add(lhs, rhs), [F64 => f64, F32 => f32])
    }

    fn float_cat(tensors: Vec<FixTensor>) -> FixTensor {
        execute_with_dtype!(tensors[0], cat(tensors), [F64 => f64, F32 => f32, F16 => f16])
    }

    fn float_exp(tensor: FixTensor) -> FixTensor {
        exp_kernel(tensor)
    }

    fn float_neg(tensor: FixTensor) -> FixTensor {
        checked(tensor)
    }

    fn float_sort(tensor: FixTensor) -> FixTensor {
        execute_with_dtype!(tensor, sort(tensor), SORTABLE)
    }

    fn float_gather(tensor: FixTensor, indices: FixTensor) -> FixTensor {
        let indices = execute_with_dtype!(indices, to_i64(indices), [I64 => i64, I32 => i32]);
        execute_with_dtype!(tensor, gather(tensor, indices), [F64 => f64, F32 => f32])
    }
}

impl IntTensorOps<Self> for Fix {
    fn int_abs(tensor: FixTensor) -> FixTensor {
        match tensor.dtype() {
            DType::I64 => abs_i64(tensor),
            DType::I32 => abs_i32(tensor),
            other => panic!("int_abs: unsupported dtype {other:?}"),
        }
    }

    fn int_neg(tensor: FixTensor) -> FixTensor {
        checked(tensor)
    }
}

impl ModuleOps<Self> for Fix {
    fn conv_transpose_with_a_rather_long_operation_name(x: FixTensor) -> FixTensor {
        match x.dtype() {
            DType::F32 => x,
            other => panic!("conv_transpose: unsupported dtype {other:?}"),
        }
    }

    fn conv2d(x: FixTensor, bias: FixTensor) -> FixTensor {
        match x.dtype() {
            DType::F32 => match bias.dtype() {
                DType::F32 => x,
                _ => panic!("conv2d: bias dtype differs from the input's"),
            },
            other => panic!("conv2d: unsupported dtype {other:?}"),
        }
    }
}

fn checked(tensor: FixTensor) -> FixTensor {
    match tensor.dtype() {
        DType::F32 => tensor,
        DType::I64 => tensor,
        dtype => panic!("checked: unsupported dtype {dtype:?}"),
    }
}

fn exp_kernel(tensor: FixTensor) -> FixTensor {
    tensor
}

fn lonely(tensor: FixTensor) -> FixTensor {
    match tensor.dtype() {
        DType::F32 => tensor,
        dtype => panic!("lonely: unsupported dtype {dtype:?}"),
    }
}
"""


@pytest.fixture
def ops_repo(git_repo):
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    git_repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    git_repo.sha = git_repo.commit("backend ops")
    return git_repo


def _ops_doc(cli, repo, *args) -> dict:
    """The whole matrix, n/a cells listed (--full)."""
    return coverage_json(cli, repo, "--full", *args)


def test_the_json_leaves_the_na_cells_out_unless_full(cli, ops_repo, tmp_path):
    full, short = _ops_doc(cli, ops_repo), coverage_json(cli, ops_repo)
    assert full["naCells"] == "listed" and short["naCells"] == "elided"
    na = [c for c in full["cells"] if c["status"] == "n/a"]
    assert na and not [c for c in short["cells"] if c["status"] == "n/a"]
    # Everything else is the same, and an absent cell is n/a exactly where the kinds differ.
    assert [c for c in full["cells"] if c["status"] != "n/a"] == short["cells"]
    kinds = {d: k for g in short["columns"] for d, k in g["kinds"].items()}
    assert kinds["F32"] == "float" and kinds["I64"] == "int" and kinds["Bool"] == "bool"
    op_kind = {(o["crate"], o["operation"]): o["kind"] for o in short["operations"]}
    listed = {(c["crate"], c["operation"], c["dtype"]) for c in short["cells"]}
    derived = {(crate, op, d) for (crate, op), kind in op_kind.items() for g in short["columns"] for d in g["dtypes"]
               if (crate, op, d) not in listed and kind and kinds[d] and kinds[d] != kind}
    assert derived == {(c["crate"], c["operation"], c["dtype"]) for c in na}
    # The option is the JSON's: another format refuses it in one line.
    res = run_coverage(cli, ops_repo, "--full", code=2)
    assert res.stderr.count("\n") == 1 and "--format json" in res.stderr


def _row(doc: dict, crate: str, op: str) -> dict[str, str]:
    return {c["dtype"]: c["status"] for c in doc["cells"] if c["crate"] == crate and c["operation"] == op}


def test_every_implemented_operation_is_a_row_with_its_trait(cli, ops_repo):
    doc = _ops_doc(cli, ops_repo)
    assert doc["view"] == "operations"
    ops = {(o["crate"], o["operation"]): o for o in doc["operations"]}
    assert set(ops) == {("burn-fix", n) for n in ("float_add", "float_cat", "float_exp", "float_neg", "float_sort",
                                                  "float_gather", "int_abs", "int_neg", "conv2d",
                                                  "conv_transpose_with_a_rather_long_operation_name")}
    assert ops[("burn-fix", "float_add")]["trait"] == "FloatTensorOps"
    assert ops[("burn-fix", "int_abs")]["trait"] == "IntTensorOps" and ops[("burn-fix", "int_abs")]["kind"] == "int"
    # An impl without any dispatch: a row, no panic found, its float cells blank, the rest n/a.
    exp = _row(doc, "burn-fix", "float_exp")
    assert not ops[("burn-fix", "float_exp")]["panicFound"]
    assert "F32" not in exp and exp["I64"] == "n/a" and exp["Bool"] == "n/a"


def test_repetition_macro_resolved_per_invocation(cli, ops_repo):
    doc = _ops_doc(cli, ops_repo)
    add, cat = _row(doc, "burn-fix", "float_add"), _row(doc, "burn-fix", "float_cat")
    assert (add["F64"], add["F32"], add["F16"], add["BF16"]) == ("handled", "handled", "panics", "panics")
    assert (cat["F64"], cat["F32"], cat["F16"], cat["BF16"]) == ("handled", "handled", "handled", "panics")
    vias = {m["operation"]: m["via"] for m in doc["matches"] if m["crate"] == "burn-fix"}
    assert "execute_with_dtype! [F64, F32]" in vias["float_add"]


def test_helper_reached_from_two_ops_counts_for_each(cli, ops_repo):
    doc = _ops_doc(cli, ops_repo)
    neg, ineg = _row(doc, "burn-fix", "float_neg"), _row(doc, "burn-fix", "int_neg")
    assert neg["F32"] == "handled" and neg["F16"] == "panics" and neg["I64"] == "n/a"
    assert ineg["I64"] == "handled" and ineg["I32"] == "panics" and ineg["F32"] == "n/a"
    assert [h["function"] for h in doc["helpers"]] == ["lonely"]


def test_int_op_catch_all_rejecting_floats_is_na_not_panics(cli, ops_repo):
    row = _row(_ops_doc(cli, ops_repo), "burn-fix", "int_abs")
    assert row["I64"] == row["I32"] == "handled" and row["U8"] == "panics"
    assert {row[d] for d in ("F64", "F32", "F16", "BF16", "Bool", "QFloat")} == {"n/a"}


def test_unresolvable_dispatch_is_unknown_with_a_reason(cli, ops_repo):
    doc = _ops_doc(cli, ops_repo)
    row = _row(doc, "burn-fix", "float_sort")
    assert {row[d] for d in ("F64", "F32", "F16", "BF16")} == {"unknown"}
    cell = next(c for c in doc["cells"] if c["operation"] == "float_sort" and c["dtype"] == "F32")
    assert cell["reasons"] and "execute_with_dtype!" in cell["reasons"][0]
    assert "panics" not in row.values()


def test_op_and_backend_filters_and_narrow_terminal(cli, ops_repo):
    doc = _ops_doc(cli, ops_repo, "--op", "neg", "--backend", "fix")
    assert {o["operation"] for o in doc["operations"]} == {"float_neg", "int_neg"}
    glob = _ops_doc(cli, ops_repo, "--op", "float_[ac]*")
    assert {o["operation"] for o in glob["operations"]} == {"float_add", "float_cat"}
    bad = run_coverage(cli, ops_repo, "--op", "nothing_like_it", code=2)
    assert "no operation" in bad.stderr and "Traceback" not in bad.stderr
    for columns in ("100", "80"):
        r = cli("coverage", "--repo", str(ops_repo.path), "--sha", ops_repo.sha, env={"COLUMNS": columns})
        assert r.code == 0, r.stderr
        lines = r.stdout.splitlines()
        assert max(len(line) for line in lines) <= int(columns)
        assert any("…" in line and line.startswith("conv_tr") for line in lines)  # cut in the middle
        assert not any(line.startswith("operation_name") for line in lines)  # never wrapped
        assert any("n/a" in line for line in lines)  # the legend stays


def test_a_dispatch_on_another_tensor_kind_and_a_same_dtype_check_are_not_gaps(cli, ops_repo):
    doc = _ops_doc(cli, ops_repo)
    # The int index tensor's dispatch says nothing about the float op's F32.
    gather = _row(doc, "burn-fix", "float_gather")
    assert (gather["F64"], gather["F32"], gather["F16"], gather["I64"]) == ("handled", "handled", "panics", "n/a")
    # A match on the bias inside the F32 arm checks both dtypes agree: F32 stays handled.
    conv = _row(doc, "burn-fix", "conv2d")
    assert (conv["F32"], conv["F64"], conv["I32"]) == ("handled", "panics", "n/a")


def test_terminal_puts_the_chosen_operations_of_two_backends_side_by_side(cli, ops_repo):
    ops_repo.crate("burn-other", {"src/ops.rs": FIX_OPS_RS.replace("Fix", "Other")})
    ops_repo.commit("a second backend")
    for columns in ("100", "80"):
        r = cli("coverage", "--repo", str(ops_repo.path), "--sha", "HEAD", "--op", "neg", env={"COLUMNS": columns})
        assert r.code == 0, r.stderr
        lines = r.stdout.splitlines()
        assert max(len(line) for line in lines) <= int(columns)
        at = lines.index(next(line for line in lines if line.startswith("The chosen operations side by side")))
        # each operation, then one row per backend (file names of panics may sit under a row)
        rows = [line.split()[0] for line in lines[at + 3:] if line.startswith(("float_", "int_", " burn-"))]
        assert rows[:6] == ["float_neg", "burn-fix", "burn-other", "int_neg", "burn-fix", "burn-other"]
        # the panicking line of each backend's helper is named
        assert any("checked()" in line and "src/ops.rs:" in line for line in lines)


def test_parse_reads_macro_dtype_lists_calls_and_ops_items():
    from analyzer.facts.parse import parse_file

    src = b'''
pub trait IntTensorOps<B: Backend> {
    fn int_abs(t: B::Int) -> B::Int;
}
impl IntTensorOps<Self> for Fix {
    fn int_abs(t: FixTensor) -> FixTensor {
        let label = "[not, a, list]";
        dispatch!(t, |x| helper::<i64>(x), [DType::I64 => i64, DType::Bool(BoolStore::Native) => bool])
    }
}
macro_rules! forward {
    ($t:expr) => { $crate::dispatch!($t, run, [$($d),*]) };
}
#[cfg(test)]
mod tests {
    fn only_in_tests() { never_reached() }
}
'''
    facts = parse_file(src, BURN, code=True)
    assert [(t.name, t.methods) for t in facts.traits] == [("IntTensorOps", ["int_abs"])]
    assert "Backend" in facts.traits[0].header
    assert [(i.trait, i.type, [m for m, _ in i.methods]) for i in facts.impls] == [("IntTensorOps", "Fix", ["int_abs"])]
    [fn] = facts.functions  # test modules are left out
    assert fn.trait == "IntTensorOps" and "helper" in fn.calls
    [call] = fn.macros
    assert (call.name, call.dtypes, call.unreadable) == ("dispatch", ["I64", "Bool"], False)
    [forward] = facts.macro_defs
    assert [(m.name, m.dtypes, m.unreadable) for m in forward.macros] == [("dispatch", None, True)]


MIX_OPS_RS = """\
use burn_backend::{Backend, FloatTensorOps};

impl FloatTensorOps<Self> for Mix {
    fn float_add(lhs: MixTensor, rhs: MixTensor) -> MixTensor {
        let lhs = execute_with_dtype!(lhs, contiguous(lhs), [F64 => f64, F32 => f32]);
        execute_with_dtype!(rhs, add(lhs, rhs), SUMMABLE)
    }
}
"""


def test_a_dtype_handled_by_one_dispatch_and_unknown_to_another_is_unknown(cli, ops_repo):
    """Two dispatches of one operation: the first handles F32, the second's dtype list cannot be
    read. F32 may still panic in the second, so the cell is unknown, not handled; F16, which the
    first rejects, panics whatever the second does."""
    ops_repo.crate("burn-mix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": MIX_OPS_RS})
    ops_repo.commit("a backend with an unreadable dtype list")
    doc = coverage_json(cli, ops_repo)
    row = _row(doc, "burn-mix", "float_add")
    assert (row["F64"], row["F32"], row["F16"], row["BF16"]) == ("unknown", "unknown", "panics", "panics")
    f32 = next(c for c in doc["cells"] if (c["crate"], c["operation"], c["dtype"]) == ("burn-mix", "float_add", "F32"))
    assert f32["reasons"] and "execute_with_dtype!" in f32["reasons"][0]
