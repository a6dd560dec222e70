"""Sites sharing a structural key (the same function, scrutinee and arm in two files of a crate):
each keeps its own id however the other comes or goes, and the lineage's `id` tier never hands one
site's record to the other."""

from __future__ import annotations

import json

from conftest import extract_by_message, read_records

from analyzer.records.ids import assign, site_key

MESSAGE = "launch: dtype {:?} has no kernel here"

KERNEL = '''\
use burn_std::DType;

impl Kernel {
    fn launch(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => launch_f32(x),
            other => panic!("launch: dtype {:?} has no kernel here", other),
        }
    }
}
'''
FIXED = KERNEL.replace('            other => panic!("launch: dtype {:?} has no kernel here", other),\n',
                       "            _ => launch_any(x),\n")
SHALLOW = "crates/burn-fusion/src/kernel.rs"
DEEP = "crates/burn-fusion/src/ops/kernel.rs"
DEEPER = "crates/burn-fusion/src/ops/more/kernel.rs"


def _by_path(out) -> dict[str, dict]:
    return {ln["record"]["filePath"]: ln for ln in read_records(out)}


def _manifest(out) -> dict:
    return json.loads((out / "manifest.json").read_text())


def test_the_copy_left_when_the_first_goes_keeps_its_own_id(cli, git_repo, tmp_path):
    git_repo.crate("burn-fusion", {"src/ops/kernel.rs": KERNEL, "src/ops/more/kernel.rs": KERNEL})
    base = git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    before = _by_path(tmp_path / "a")
    assert before[DEEP]["record"]["id"] != before[DEEPER]["record"]["id"]
    git_repo.write(DEEP, FIXED, dedent=False)
    head = git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    after = _by_path(tmp_path / "b")
    assert set(after) == {DEEPER}
    assert after[DEEPER]["record"]["id"] == before[DEEPER]["record"]["id"]
    assert after[DEEPER]["analysis"]["lineage"] == "id"
    lost = _manifest(tmp_path / "b")["lineage"]["notFoundRecords"]
    assert [r["id"] for r in lost] == [before[DEEP]["record"]["id"]]
    res = cli("diff", base, head, "--repo", str(git_repo.path), "--format", "json")
    assert res.code == 0, res.stderr
    d = json.loads(res.stdout)
    assert [r["filePath"] for r in d["removed"]] == [DEEP]
    assert d["added"] == [] and d["changed"] == [] and d["moved"] == []


def test_a_shallower_copy_that_appears_does_not_take_the_original_record(cli, git_repo, tmp_path):
    git_repo.crate("burn-fusion", {"src/ops/kernel.rs": KERNEL})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    before = _by_path(tmp_path / "a")
    git_repo.write(SHALLOW, KERNEL, dedent=False)
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    after = _by_path(tmp_path / "b")
    assert after[DEEP]["record"]["id"] == before[DEEP]["record"]["id"]
    assert after[DEEP]["analysis"]["lineage"] == "id"
    assert after[SHALLOW]["analysis"]["lineage"] == "new"
    assert after[SHALLOW]["record"]["id"] != before[DEEP]["record"]["id"]


def test_alternate_ids_of_a_site_do_not_depend_on_the_other_sites():
    key = site_key("burn-fusion", "impl Kernel::fn launch", "x.dtype()", "_")
    ids, alternates = assign([key, key], [DEEP, DEEPER], [7, 7])
    assert ids[1] in alternates[1]
    alone_ids, alone_alternates = assign([key], [DEEPER], [7])
    # Alone, the site takes the plain id; its alternates are the same as with its copy.
    assert alone_alternates[0] == alternates[1] and alone_ids[0] != ids[1]
    assert alternates[0][0] == alternates[1][0] == alone_ids[0]
