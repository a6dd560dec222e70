"""`extract --previous` of another repository's records is refused unless asked for
(`--allow-other-repo`), and `validate` notices records that mix repositories."""

from __future__ import annotations

import json

from conftest import GitRepo, extract_by_message, read_records

OPS = r'''
use burn_std::DType;

pub fn cumsum(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => cumsum_f32(x),
        other => panic!("cumsum: unsupported dtype {:?}", other),
    }
}
'''


def _cubecl(tmp_path) -> GitRepo:
    repo = GitRepo(tmp_path / "cubecl")
    repo.git("remote", "set-url", "origin", "https://github.com/tracel-ai/cubecl.git")
    repo.crate("cubecl-cuda", {"src/ops.rs": OPS})
    repo.commit()
    return repo


def test_another_repositorys_records_are_refused_as_previous(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops.rs": OPS})
    git_repo.commit()
    extract_by_message(cli, _cubecl(tmp_path), tmp_path / "cubecl-out")
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b"),
              "--previous", str(tmp_path / "cubecl-out" / "records.jsonl"))
    assert res.code == 2
    [line] = res.stderr.strip().splitlines()
    assert "holds 1 records of tracel-ai/cubecl, not of tracel-ai/burn" in line and "--allow-other-repo" in line
    assert not (tmp_path / "b").exists()


def test_allow_other_repo_lets_a_fork_continue_the_originals_records(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops.rs": OPS})
    git_repo.commit()
    upstream = extract_by_message(cli, git_repo, tmp_path / "a")
    fork = GitRepo(tmp_path / "fork")
    fork.git("remote", "set-url", "origin", "https://github.com/someone/burn-fork.git")
    fork.crate("burn-flex", {"src/ops.rs": OPS})
    fork.commit()
    res = cli("extract", "--repo", str(fork.path), "--sha", "HEAD", "--out", str(tmp_path / "b"),
              "--previous", str(tmp_path / "a" / "records.jsonl"), "--allow-other-repo")
    assert res.code == 0, res.stderr
    [rec] = read_records(tmp_path / "b")
    [old] = upstream.values()
    assert rec["record"]["id"] == old["record"]["id"] and rec["record"]["repo"] == "someone/burn-fork"
    # The tags are the fork's own: the original's name its repository, which validate refuses.
    assert rec["record"]["tags"][:2] == ["rust", "burn-fork"]
    assert cli("validate", str(tmp_path / "b" / "records.jsonl")).code == 0


def test_allow_other_repo_needs_previous(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops.rs": OPS})
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b"),
              "--allow-other-repo")
    assert res.code == 2 and "needs --previous" in res.stderr


def _lines(path):
    return [json.loads(raw) for raw in path.read_text().splitlines() if raw]


def test_validate_notices_a_record_carrying_another_repositorys_tags(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops.rs": OPS})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "a")
    path = tmp_path / "a" / "records.jsonl"
    [ln] = _lines(path)
    ln["record"]["tags"][1] = "cubecl"
    path.write_text(json.dumps(ln) + "\n")
    res = cli("validate", str(path))
    assert res.code == 1
    assert "tagged 'cubecl', the tag of tracel-ai/cubecl's records, on a record of tracel-ai/burn" in res.stdout + res.stderr


def test_validate_notices_repositories_interleaved_in_one_file(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops.rs": OPS})
    git_repo.commit()
    extract_by_message(cli, git_repo, tmp_path / "burn")
    extract_by_message(cli, _cubecl(tmp_path), tmp_path / "cubecl")
    burn_line = (tmp_path / "burn" / "records.jsonl").read_text()
    cubecl_line = (tmp_path / "cubecl" / "records.jsonl").read_text()
    together = tmp_path / "together.jsonl"
    together.write_text(burn_line + cubecl_line)  # one repository after the other, as extract writes them
    assert cli("validate", str(together)).code == 0
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(burn_line + cubecl_line + burn_line.replace('"cumsum', '"cumsum2'))
    res = cli("validate", str(mixed))
    assert res.code == 1
    assert f"{mixed}:3" in res.stdout + res.stderr
    assert "tracel-ai/burn's records come back after tracel-ai/cubecl's" in res.stdout + res.stderr
