"""What every coverage format folds: a backend that only delegates is one line, the backends
differ only where like is compared with like, and a choice of operations nothing matches says so."""

from __future__ import annotations

from test_coverage import FIX_OPS_RS, FIX_TENSOR_RS, OPS_TRAITS_RS
from test_coverage_browser import WRAP_OPS_RS

from analyzer.features.coverage.claims import Claim
from analyzer.features.coverage.model import CANNOT_HOLD, HANDLED, PANICS, Cell, Group, Matrix, Operation
from analyzer.sinks import Options, coverage_html, coverage_json, coverage_markdown, coverage_table
from analyzer.sinks.coverage_fold import gaps


def _repo(git_repo) -> str:
    git_repo.crate("burn-backend", {"src/ops.rs": OPS_TRAITS_RS})
    git_repo.crate("burn-fix", {"src/tensor.rs": FIX_TENSOR_RS, "src/ops.rs": FIX_OPS_RS})
    git_repo.crate("burn-wrap", {"src/ops.rs": WRAP_OPS_RS})
    return git_repo.commit("a backend and a wrapper")


STUB_LINE = WRAP_OPS_RS.splitlines().index('        unimplemented!("float_sort is not supported by the wrapper")') + 1


def test_a_delegating_backend_is_one_line_in_markdown_and_the_terminal(cli, git_repo):
    sha = _repo(git_repo)
    md = cli("coverage", "--repo", str(git_repo.path), "--sha", sha, "--format", "markdown")
    assert md.code == 0, md.stderr
    line = next(ln for ln in md.stdout.splitlines() if ln.startswith("- **burn-wrap**"))
    assert line.startswith("- **burn-wrap**: 8 operations, delegates to the backend it wraps (no dtype dispatch of "
                           "its own); cells: 0 handled, 4 panic; not implemented: `float_sort` ([src/ops.rs:"
                           f"{STUB_LINE}](https://github.com/")
    assert "## burn-wrap" not in md.stdout and "## burn-fix\n" in md.stdout
    table = cli("coverage", "--repo", str(git_repo.path), "--sha", sha)
    assert table.code == 0, table.stderr
    text = " ".join(table.stdout.split())
    assert (f"burn-wrap: 8 operations, delegates to the backend it wraps (no dtype dispatch of its own); cells: 0 "
            f"handled, 4 panic; not implemented: float_sort src/ops.rs:{STUB_LINE}.") in text
    assert "burn-wrap 8 operations" not in text  # no heading of a table
    # A choice of operations folds nothing: the wrapper's float_sort is shown beside the others'.
    chosen = cli("coverage", "--repo", str(git_repo.path), "--sha", sha, "--op", "sort")
    assert chosen.code == 0 and "delegates" not in chosen.stdout and "burn-wrap" in chosen.stdout


def _matrix(reason: str) -> Matrix:
    """Two backends' float_exp on F16: one panics (with `reason`), the other handles it."""
    cells = {("burn-a", "float_exp", "F16"): Cell("burn-a", "float_exp", "F16", PANICS, enum="DType", reason=reason),
             ("burn-b", "float_exp", "F16"): Cell("burn-b", "float_exp", "F16", HANDLED, enum="DType")}
    ops = {(c, "float_exp"): Operation(c, "float_exp", "FloatTensorOps", "float", "src/ops.rs", 1) for c in
           ("burn-a", "burn-b")}
    return Matrix(cells, ["F16"], [Group("DType", ["F16"])], ops=ops)


def test_backends_differ_only_on_like_cells():
    group = Group("DType", ["F16"])
    assert gaps(_matrix(""), "float_exp", ["burn-a", "burn-b"], group) == {
        "F16": {PANICS: ["burn-a"], HANDLED: ["burn-b"]}}
    # A dtype the backend cannot hold panics at creation: no difference in the operation.
    assert gaps(_matrix(CANNOT_HOLD), "float_exp", ["burn-a", "burn-b"], group) == {}
    # Nor one the backend's own dtype_usage says it does not support, unless only some of its
    # payload variants are refused.
    refused = _matrix("")
    refused.claims = [Claim("burn-a", "F16", False, "src/backend.rs:9", "match")]
    assert gaps(refused, "float_exp", ["burn-a", "burn-b"], group) == {}
    refused.claims.append(Claim("burn-a", "F16(Native)", True, "src/backend.rs:10", "match"))
    assert list(gaps(refused, "float_exp", ["burn-a", "burn-b"], group)) == ["F16"]


def test_a_choice_nothing_matches_says_so_in_every_format():
    empty = _matrix("").only_operations_any(["zzz", "conv*"])
    said = "No operation matches --op zzz --op conv*."
    assert said in coverage_html.render(empty, Options())
    assert said.replace("*", "\\*") in coverage_markdown.render(empty, Options())
    assert said in coverage_table.dumps(empty)
    doc = coverage_json.build(empty)
    assert doc["cells"] == [] and doc["backends"] == []


def test_runtime_limits_in_the_page_are_escaped_and_link_only_https():
    from analyzer.features.coverage.model import Site
    from analyzer.features.coverage.runtimes import RuntimeLimit

    hostile = Site("1", "crates/x/<b>.rs", 3, "f", "javascript:alert(1)", message="<script>alert(1)</script>")
    fine = Site("2", "crates/x/ok.rs", 7, "f", "https://github.com/acme/dep/blob/abc/crates/x/ok.rs#L7", message="no")
    matrix = Matrix(cells={}, dtypes=[], repo="acme/app", sha="a" * 40)
    matrix.runtime_limits = [RuntimeLimit("app-gpu", "acme/dep", "<i>rt</i>", "feature::<img src=x>", PANICS,
                                          (hostile, fine))]
    page = coverage_html.render(matrix, Options())
    body = page.split("<main>", 1)[1].split("<script", 1)[0]
    assert "<script>alert" not in page and "<i>rt</i>" not in body and "<img" not in body and "<b>" not in body
    assert "&lt;i&gt;rt&lt;/i&gt;" in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "javascript:" not in page
    assert 'href="https://github.com/acme/dep/blob/abc/crates/x/ok.rs#L7"' in body
    # The backend has no operations of its own: its section holds its limits alone.
    assert 'id="b-app-gpu"' in body and "no backend operations of its own" in body
