"""Reach verdicts: every case of tests/reach/*.toml extracted from a real git repository, each
record's verdict and earlier refusals pinned by line."""

from __future__ import annotations

from analyzer.core.toml import tomllib
from pathlib import Path

import pytest

from analyzer.pipeline.extract import extract
from analyzer.source.repository import open_repository
from conftest import DTYPE_RS, GitRepo
from targets import BURN, RUN

REACH_DIR = Path(__file__).parent / "reach"
# The backend operation traits, in burn's shape: a backend's impl of a trait no file of the tree
# defines implements another library's protocol, which is not a record.
TRAITS_RS = """\
pub trait FloatTensorOps<B: Backend> {}
pub trait IntTensorOps<B: Backend> {}
pub trait BoolTensorOps<B: Backend> {}
pub trait QTensorOps<B: Backend> {}
pub trait ModuleOps<B: Backend> {}
"""


def _cases():
    for f in sorted(REACH_DIR.glob("*.toml")):
        data = tomllib.loads(f.read_text())
        for i, case in enumerate(data["case"]):
            yield pytest.param(data["why"], case, id=f"{f.stem}-{i}")


def _extract(tmp_path: Path, files: dict[str, str]):
    repo = GitRepo(tmp_path / "repo")
    repo.crate("burn-std", {"src/dtype.rs": DTYPE_RS, "src/traits.rs": TRAITS_RS})
    crates = {p.split("/")[1] for p in files if p.startswith("crates/")}
    for name in crates:
        repo.write(f"crates/{name}/Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.1.0"\n', dedent=False)
    for path, text in files.items():
        repo.write(path, text.lstrip("\n"), dedent=False)
    sha = repo.commit()
    return extract(open_repository(str(repo.path), None), sha, RUN, jobs=1).lines


@pytest.mark.parametrize("why,case", list(_cases()))
def test_reach(tmp_path, why, case):
    lines = _extract(tmp_path, case["files"])
    at = {f"{ln.record.filePath}:{ln.record.lineNumber}": ln for ln in lines}
    ids = {place: ln.record.id for place, ln in at.items()}
    expected = {e["at"]: e for e in case["expect"]}
    assert sorted(at) == sorted(expected), "every record of the case is pinned, and only those"
    for place, e in expected.items():
        a = at[place].analysis
        got = [(p.id, p.why) for p in a.preemptedBy]
        want = [(ids[ref] if ref else None, w) for ref, w in e.get("by", [])]
        assert (a.reach, got) == (e["reach"], want), place


def test_every_reason_has_its_cases():
    from analyzer.decisions.preemption import WHYS

    files = [tomllib.loads(f.read_text()) for f in REACH_DIR.glob("*.toml")]
    have = {d["why"] for d in files}
    # `exhaustive` is pinned by the direct case below; `caller` is not decided by extract.
    assert set(WHYS) - {"caller", "exhaustive"} <= have and "" in have
    for d in files:  # each file pins its reason somewhere, beside the cases that must not get it
        pinned = {w for case in d["case"] for e in case["expect"] for _, w in e.get("by", [])}
        assert d["why"] in pinned or not d["why"], d["why"]


EXHAUSTIVE_RS = """\
fn channels(image: &DynamicImage) -> usize {
    match image.color() {
        ColorType::L8 => 1,
        ColorType::Rgb8 => 3,
        _ => panic!("Image color type not recognised"),
    }
}
fn depth(image: &DynamicImage) -> usize {
    match image.color() {
        ColorType::L8 => 1,
        ColorType::Rgb8 if wide(image) => 3,
        _ => panic!("Image color type not recognised"),
    }
}
"""


def test_exhaustive_a_catch_all_after_every_declared_variant():
    """The catch-all after arms taking every variant the target declares for a foreign
    non-exhaustive enum is preempted (`exhaustive`, no earlier refusal); one after a guarded arm is
    not. The classifier leaves the first out of the records (exclude/unreachable), so the verdict
    is asked of the site directly."""
    from dataclasses import replace
    from types import SimpleNamespace

    from analyzer.decisions.catalog import DtypeCatalog
    from analyzer.decisions.model import Decision
    from analyzer.decisions.preemption import refusals, verdicts
    from analyzer.facts.parse import parse_file
    from analyzer.profiles import current

    profile = current()
    profile = replace(profile, dtypes=replace(profile.dtypes, foreign_non_exhaustive=(("ColorType", ("L8", "Rgb8")),)))
    facts = parse_file(EXHAUSTIVE_RS.encode(), BURN)
    catalog = DtypeCatalog.build([], BURN)
    entries = [SimpleNamespace(id=f"{n:016x}", path="crates/burn-data/src/lib.rs", crate="burn-data", site=s,
                               decision=Decision(True, "dtype-dispatch", "dtype/element-formats", []))
               for n, s in enumerate(facts.sites)]
    got = [(r.verdict, r.to_json()) for r in verdicts(refusals(entries, profile), catalog, profile)]
    assert [s.line for s in facts.sites] == [5, 12]
    assert got == [("preempted", [{"id": None, "why": "exhaustive"}]), ("reachable", [])]
