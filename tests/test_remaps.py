"""The variants a file remaps before passing a value on (facts/remaps.py), and what extract makes
of them: a catch-all left with only a variant its crate remaps is no record, even when the remap
stands in a file with no panic-family call (read without a parse)."""

from __future__ import annotations

import json

from analyzer.facts.model import FileFacts
from analyzer.facts.parse import parse_file
from analyzer.facts.remaps import remaps
from targets import BURN

REMAP_RS = """\
impl Builder {
    pub fn input(&mut self, precision: Precision) -> Precision {
        // Bool tensors are stored at the builder's bool precision.
        let precision = match precision {
            Precision::Bool => self.bool_precision,
            _ => precision,
        };
        precision
    }
}
"""

ENUM_RS = """\
pub enum Precision {
    F32,
    I32,
    Bool,
}
"""

READ_RS = """\
pub fn read(precision: Precision, pos: u32) -> u32 {
    match precision {
        Precision::F32 => read_f32(pos),
        Precision::I32 => read_i32(pos),
        _ => panic!("Precision {precision:?} is unsupported"),
    }
}
"""


def test_a_match_that_maps_one_variant_and_hands_the_rest_back_remaps_it():
    assert remaps(REMAP_RS.encode()) == [("Precision", "Bool")]
    deref = b"let p = match *p {\n    Kind::Half => Kind::Float,\n    _ => *p,\n};"
    assert remaps(deref) == [("Kind", "Half")]
    assert remaps(b"match self.kind { Kind::A => b, _ => self.kind }") == [("Kind", "A")]


def test_a_value_that_is_a_macro_the_same_variant_or_a_catch_all_of_another_value_remaps_nothing():
    assert remaps(b"match p { Precision::Bool => panic!(\"no\"), _ => p }") == []
    assert remaps(b"match p { Precision::Bool => Precision::Bool, _ => p }") == []
    assert remaps(b"match p { Precision::Bool => q, _ => other }") == []
    assert remaps(b"match p { Precision::Bool => q, Precision::F32 => r, _ => p }") == []


def test_the_remaps_survive_the_cache_rows():
    facts = parse_file(ENUM_RS.encode() + REMAP_RS.encode() + READ_RS.encode(), BURN)
    assert facts.remaps == [("Precision", "Bool")]
    again = FileFacts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again.remaps == facts.remaps
    assert facts.site_part().remaps == facts.remaps


def test_extract_reads_a_remap_from_a_file_with_no_panic(cli, git_repo, tmp_path):
    # The builder holds no panic and no enum: it is read without a parse. Another file read so,
    # with the same variant uses but no remap, is read first (biggest first): the two must not
    # share one row of facts.
    plain = "fn bool_precision() -> Precision { Precision::Bool }\n" + "// a long comment\n" * 200
    git_repo.crate("burn-fuse", {"src/a.rs": plain,
                                 "src/builder.rs": REMAP_RS, "src/read.rs": READ_RS, "src/lib.rs": ENUM_RS})
    git_repo.crate("burn-other", {"src/read.rs": READ_RS.replace("Precision", "Width")
                                  + "pub enum Width { F32, I32, Bool }\n"})
    git_repo.commit("a fuser")
    out = tmp_path / "out"
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out), "--all-sites", "--no-cache")
    assert res.code == 0, res.stderr
    sites = {(s["crate"], s["lineNumber"]): s for s in map(json.loads, (out / "sites.jsonl").read_text().splitlines())}
    assert sites[("burn-fuse", 5)]["rule"] == "exclude/kind-fixed-catch-all"
    assert sites[("burn-fuse", 5)]["record"] is False
    # The same catch-all in a crate that remaps nothing stays a record.
    assert sites[("burn-other", 5)]["category"] == "dtype-dispatch"
