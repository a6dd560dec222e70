"""`history` flips the cells of the one coverage model `coverage` and `diff` use: between two
neighbouring revisions, exactly the cells `coverage --repo` shows at both whose status differs
(blank included), each with its kind, served the same from the results cache."""

from __future__ import annotations

import json

from conftest import run_cli
from test_diff_coverage import expected_flips, ok, revisions  # noqa: F401 (the fixture)


def history(repo, base: str, head: str, *extra: str) -> dict:
    res = run_cli("history", "--repo", str(repo.path), "--revs", f"{base},{head}", "--format", "json", *extra)
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def changes(doc: dict) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    return {(c["crate"], c["operation"], c["dtype"]): (x["from"], x["to"], x["kind"])
            for c in doc["cells"] for x in c["changes"]}


def test_history_flips_exactly_the_cells_coverage_shows_changed(revisions):  # noqa: F811
    repo, base, head = revisions
    docs = [json.loads(ok("coverage", "--repo", str(repo.path), "--sha", sha, "--format", "json").stdout)
            for sha in (base, head)]
    got = changes(history(repo, base, head))
    assert {k: v[:2] for k, v in got.items()} == expected_flips(*docs)
    diffed = json.loads(ok("diff", base, head, "--repo", str(repo.path), "--format", "json").stdout)
    assert {k: v[:2] for k, v in got.items()} == {(f["crate"], f["operation"], f["dtype"]): (f["base"], f["head"])
                                                  for f in diffed["flipped"]}
    assert got[("burn-fix", "float_exp", "F64")] == ("blank", "panics", "regressed")
    assert got[("burn-fix", "float_exp", "F32")] == ("blank", "handled", "changed")
    assert got[("burn-fix", "int_abs", "I64")] == ("handled", "not implemented", "regressed")
    assert got[("burn-fix", "int_abs", "U8")] == ("panics", "not implemented", "changed")
    assert {v[2] for k, v in got.items() if k[1].startswith("conv_transpose")} == {"fixed"}
    assert not [k for k in got if k[1] == "float_floor"]  # a row only head has: its sites are new


def test_the_same_cells_flip_cold_and_from_the_results_cache(revisions):  # noqa: F811
    repo, base, head = revisions
    cold = history(repo, base, head, "--no-cache")["cells"]
    ok("coverage", "--repo", str(repo.path), "--sha", base, "--format", "json")  # keeps base's matrix only
    assert history(repo, base, head)["cells"] == cold
    assert history(repo, base, head)["cells"] == cold  # every revision's table kept now


def test_a_regression_names_the_sites_behind_it(revisions):  # noqa: F811
    from analyzer.features.history.revisions import plan
    from analyzer.features.history.run import build_history
    from analyzer.source.repository import open_repository

    repo, base, head = revisions
    git_repo = open_repository(str(repo.path), "tracel-ai/burn")
    result = build_history(git_repo, plan(git_repo, revs=[base, head]))
    (flip,) = [f for f in result.flips if (f.operation, f.dtype) == ("float_exp", "F64")]
    assert [ln.state.message for ln in result.sites_of(flip)] == ["float_exp: unsupported dtype {other:?}"]


def test_a_kept_table_of_another_shape_is_built_again(revisions):  # noqa: F811
    import os
    import sqlite3
    from pathlib import Path

    from analyzer.pipeline.cache import encode

    repo, base, head = revisions
    first = history(repo, base, head)["cells"]
    flat = {"shown": [["burn-fix", "float_exp", "F64", "handled"]], "dtypes": ["F64"], "enums": {}, "sites": []}
    db = sqlite3.connect(Path(os.environ["BURN_ERRORS_CACHE"]) / "facts.sqlite3")
    with db:
        changed = db.execute("UPDATE results SET data = ? WHERE key LIKE 'history-cells|%'", (encode(flat),)).rowcount
    db.close()
    assert changed == 2
    assert history(repo, base, head)["cells"] == first


def test_a_kept_matrix_that_fails_its_checks_is_warned_about_as_coverage_does(revisions):  # noqa: F811
    from test_coverage_cache import _poison_kept_matrices, drop_documents, rewrite_matrices

    repo, base, head = revisions
    cold = history(repo, base, head, "--no-cache")["cells"]
    for sha in (base, head):
        ok("coverage", "--repo", str(repo.path), "--sha", sha, "--format", "json")
    drop_documents()
    rewrite_matrices(_poison_kept_matrices)
    res = run_cli("history", "--repo", str(repo.path), "--revs", f"{base},{head}", "--format", "json")
    assert res.code == 0, res.stderr
    said = [line for line in res.stderr.splitlines() if "was not used" in line]
    assert said == [f"warning: the results cache's coverage of tracel-ai/burn@{sha[:12]} was not used: it links "
                    f"outside tracel-ai/burn@{sha[:12]}; it was built again" for sha in (base, head)]
    assert json.loads(res.stdout)["cells"] == cold  # built again, not served the tampered rows
