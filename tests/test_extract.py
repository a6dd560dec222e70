"""`burn-errors extract` end to end on fixture repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import subprocess

import pytest
from conftest import read_records

# One record as the published dataset serves it (invented values): the shape records must keep.
PUBLISHED = Path(__file__).resolve().parent / "fixtures" / "envelope" / "published.json"

FLEX_OPS = r'''
use burn_std::DType;

pub struct Flex;

impl ModuleOps<Flex> for Flex {
    fn conv3d(x: Tensor) -> Tensor {
        match x.dtype() {
            DType::F32 => conv3d_f32(x),
            DType::F64 => conv3d_f64(x),
            dtype => panic!("conv3d: unsupported dtype {:?}", dtype),
        }
    }

    fn interpolate_backward(x: Tensor, options: InterpolateOptions) -> Tensor {
        match options.mode {
            InterpolateMode::Nearest => nearest(x),
            InterpolateMode::NearestExact => {
                panic!(
                    "nearest exact interpolation backward is not supported by this backend"
                )
            }
        }
    }
}
'''


def _extract(cli, repo, out, *extra):
    res = cli("extract", "--repo", str(repo.path), "--sha", "HEAD", "--out", str(out), *extra)
    assert res.code == 0, res.stderr
    return read_records(out)


def test_records_have_the_published_shape(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    sha = git_repo.commit()
    lines = _extract(cli, git_repo, tmp_path / "out")
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))["record"]
    by_msg = {ln["record"]["errorMessage"]: ln for ln in lines}
    assert set(by_msg) == {"conv3d: unsupported dtype {:?}",
                           "nearest exact interpolation backward is not supported by this backend"}
    conv = by_msg["conv3d: unsupported dtype {:?}"]
    rec, an = conv["record"], conv["analysis"]
    assert list(rec) == list(published)  # same 32 keys, same order, same JSON types
    for k, v in published.items():
        if v is not None and rec[k] is not None:
            assert type(rec[k]) is type(v), k
    assert len(rec) == 32
    assert re.fullmatch(r"[0-9a-f]{16}", rec["id"])
    assert rec["slug"] == "conv3d-unsupported-dtype--" + rec["id"][:6]
    assert rec["repo"] == "tracel-ai/burn"  # from the origin remote
    assert rec["filePath"] == "crates/burn-flex/src/ops/module.rs"
    assert rec["lineNumber"] == 11
    n_lines = FLEX_OPS.count("\n")  # the text ends with a newline: that many lines
    assert n_lines < 29
    assert rec["sourceCodeStart"] == 1 and rec["sourceCodeEnd"] == n_lines
    assert rec["sourceCode"] == FLEX_OPS[:-1]
    assert rec["githubUrl"] == f"https://github.com/tracel-ai/burn/blob/{sha}/crates/burn-flex/src/ops/module.rs#L1-L{n_lines}"
    assert rec["analyzedSha"] == sha
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", rec["analyzedAt"])
    assert rec["contentChangedAt"] == rec["analyzedAt"]
    assert rec["backgroundTag"] == "unsupported-dtype" and rec["tags"][:4] == ["rust", "burn", "flex", "unsupported-dtype"]
    assert rec["errorType"] == "panic" and rec["severity"] == "error" and rec["schemaVersion"] == 2
    assert all(rec[k] is None for k in ("documentation", "solutions", "exampleFix", "errorCode", "httpStatus"))
    assert an["category"] == "dtype-dispatch" and an["crate"] == "burn-flex" and an["function"] == "conv3d"
    assert an["scrutinee"] == "x.dtype()" and an["pattern"] == "dtype"
    assert an["handled"] == ["F64", "F32"]
    assert an["rejected"] == ["F16", "BF16", "I64", "I32", "U8", "Bool(Native)", "Bool(U8)", "Bool(U32)", "QFloat"]
    assert re.fullmatch(an["messageRegex"], "conv3d: unsupported dtype I8", re.DOTALL)
    mode = by_msg["nearest exact interpolation backward is not supported by this backend"]
    assert mode["record"]["lineNumber"] == 19  # where `panic` starts, not the string's line
    assert mode["record"]["backgroundTag"] == "unsupported-op-backend"
    assert mode["analysis"]["category"] == "unsupported-mode"
    assert mode["analysis"]["pattern"] == "InterpolateMode::NearestExact"


def test_window_is_cut_at_both_ends_of_the_file(cli, git_repo, tmp_path):
    body = "fn f(d: DType) {\n    match d {\n        DType::F32 => 1,\n        _ => panic!(\"top\"),\n    };\n}\n"
    filler = "".join(f"// filler {i}\n" for i in range(40))
    tail = "fn g(d: DType) {\n    match d {\n        DType::F32 => 1,\n        _ => panic!(\"bottom\"),\n    };\n}"
    text = body + filler + tail
    git_repo.crate("burn-x", {"src/lib.rs": text})
    git_repo.commit()
    lines = {ln["record"]["errorMessage"]: ln["record"] for ln in _extract(cli, git_repo, tmp_path / "o")}
    file_lines = text.split("\n")
    top = lines["top"]
    assert (top["lineNumber"], top["sourceCodeStart"], top["sourceCodeEnd"]) == (4, 1, 22)
    assert top["sourceCode"] == "\n".join(file_lines[0:22])
    bottom = lines["bottom"]
    n = len(file_lines)
    assert bottom["lineNumber"] == n - 2
    assert (bottom["sourceCodeStart"], bottom["sourceCodeEnd"]) == (n - 2 - 18, n)
    assert bottom["sourceCode"] == "\n".join(file_lines[n - 2 - 18 - 1:])


# Each macro call form, and what rustc prints for it.
MESSAGE_FORMS = [
    ('unimplemented!("mode A")', "not implemented: mode A"),
    ("unimplemented!()", "not implemented"),
    ('todo!("mode C")', "not yet implemented: mode C"),
    ("todo!()", "not yet implemented"),
    ("panic!()", "explicit panic"),
    (r'panic!("tab\there \"quoted\" \u{e9}\x41")', 'tab\there "quoted" \u00e9A'),
    (r'panic!(r#"raw "{}" \n"#)', r'raw "{}" \n'),  # no escapes in raw strings
    ('panic!("continued \\\n                 line")', "continued line"),  # backslash-newline
    ('std::panic!("{other:?} reduction")', "{other:?} reduction"),
    ('core::panic!("braces {{literal}} {}", 1)', "braces {literal} {}"),
    ('unimplemented!("multi-line {}",\n            "args")', "not implemented: multi-line {}"),
]


def test_every_message_form_is_decoded_as_rustc_does(cli, git_repo, tmp_path):
    src = "".join(f"fn f{i}(x: Tensor) {{\n    match x.dtype() {{\n        DType::F32 => 1,\n"
                  f"        _ => {call},\n    }};\n}}\n" for i, (call, _) in enumerate(MESSAGE_FORMS))
    git_repo.crate("burn-x", {"src/lib.rs": src})
    git_repo.commit()
    got = [ln["record"]["errorMessage"] for ln in _extract(cli, git_repo, tmp_path / "o")]
    assert got == [want for _, want in MESSAGE_FORMS]


def test_revisions_are_read_from_git_objects(cli, git_repo, tmp_path):
    git_repo.crate("burn-x", {"src/lib.rs": "fn f(d: DType) { match d { DType::F32 => 1, _ => panic!(\"one\") }; }\n"})
    first = git_repo.commit("one")
    git_repo.git("tag", "v1")
    git_repo.write("crates/burn-x/src/lib.rs", "fn f(d: DType) { match d { DType::F32 => 1, _ => panic!(\"two\") }; }\n")
    git_repo.commit("two")
    # The work tree is left dirty: extraction must not read it.
    git_repo.write("crates/burn-x/src/lib.rs", "garbage")
    for rev in ("v1", first[:7], first):
        res = cli("extract", "--repo", str(git_repo.path), "--sha", rev, "--out", str(tmp_path / rev))
        assert res.code == 0, res.stderr
        recs = read_records(tmp_path / rev)
        assert [r["record"]["errorMessage"] for r in recs] == ["one"]
        assert recs[0]["record"]["analyzedSha"] == first
    recs = _extract(cli, git_repo, tmp_path / "head")
    assert [r["record"]["errorMessage"] for r in recs] == ["two"]


def test_ids_stay_put_when_lines_are_inserted_above(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    before = {r["record"]["errorMessage"]: r["record"] for r in _extract(cli, git_repo, tmp_path / "a")}
    git_repo.write("crates/burn-flex/src/ops/module.rs", "// a new comment\n// and another\n" + FLEX_OPS)
    git_repo.commit()
    after = {r["record"]["errorMessage"]: r["record"] for r in _extract(cli, git_repo, tmp_path / "b")}
    assert set(before) == set(after)
    for msg in before:
        assert before[msg]["id"] == after[msg]["id"]
        assert after[msg]["lineNumber"] == before[msg]["lineNumber"] + 2
    assert len({r["id"] for r in after.values()}) == len(after)


CLOSURE_STUBS = """\
impl TransactionOps<Self> for Fusion {
    fn tr_execute(tx: Transaction) -> Data {
        let floats = tx.read_floats.into_iter().map(|t| read(t)).collect();
        let qfloats = tx.read_qfloats.into_iter().map(|_t| todo!("Quantized reads are not supported yet")).collect();
        let bools = tx.read_bools.into_iter().map(|_t| todo!("Bool reads not supported yet")).collect();
        Data::new(floats, qfloats, bools)
    }
}
"""


def test_a_closure_that_is_only_a_stub_is_a_closure_record_whose_id_holds(cli, git_repo, tmp_path):
    git_repo.crate("burn-fusion", {"src/ops/transaction.rs": CLOSURE_STUBS})
    git_repo.commit()
    before = _extract(cli, git_repo, tmp_path / "a")
    assert [(r["analysis"]["context"], r["analysis"]["category"], r["record"]["lineNumber"]) for r in before] == [
        ("closure", "unsupported-op", 4), ("closure", "unsupported-op", 5)]
    assert len({r["record"]["id"] for r in before}) == 2
    git_repo.write("crates/burn-fusion/src/ops/transaction.rs", "// moved down\n" + CLOSURE_STUBS)
    git_repo.commit()
    after = _extract(cli, git_repo, tmp_path / "b")
    assert [r["record"]["id"] for r in after] == [r["record"]["id"] for r in before]


def test_records_are_sorted_by_file_then_line(cli, git_repo, tmp_path):
    src = "fn f(d: DType) {{ match d {{ DType::F32 => 1, _ => panic!(\"{}\") }}; }}\n"
    git_repo.crate("burn-b", {"src/lib.rs": src.format("b1") + src.format("b2")})
    git_repo.crate("burn-a", {"src/lib.rs": src.format("a1")})
    git_repo.commit()
    recs = _extract(cli, git_repo, tmp_path / "o")
    keys = [(r["record"]["filePath"], r["record"]["lineNumber"]) for r in recs]
    assert keys == sorted(keys) and len(keys) == 3


def test_manifest_says_what_run_made_the_file(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    sha = git_repo.commit()
    _extract(cli, git_repo, tmp_path / "o")
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert m["sha"] == sha and m["repo"] == "tracel-ai/burn"
    assert m["counts"] == {"dtype-dispatch": 1, "unsupported-mode": 1, "unsupported-op": 0}
    assert m["filesScanned"] == 2 and m["filesWithParseErrors"] == []
    assert re.fullmatch(r"[0-9a-f]{16}", m["rulesHash"])
    assert set(m["timings"]) >= {"parse", "classify", "total"}
    assert "DType" in m["dtypeEnums"] and "BoolStore" in m["dtypeEnums"]


def test_repo_name_comes_from_origin_or_flag(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    git_repo.git("remote", "set-url", "origin", "git@github.com:someone/burn-fork.git")
    recs = _extract(cli, git_repo, tmp_path / "a")
    assert recs[0]["record"]["repo"] == "someone/burn-fork"
    assert recs[0]["record"]["githubUrl"].startswith("https://github.com/someone/burn-fork/blob/")
    recs = _extract(cli, git_repo, tmp_path / "b", "--repo-name", "me/mine")
    assert recs[0]["record"]["repo"] == "me/mine"


def test_a_repository_with_no_origin_is_named_as_the_default_target_with_a_warning(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    git_repo.git("remote", "remove", "origin")
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "a"))
    assert res.code == 0, res.stderr
    assert read_records(tmp_path / "a")[0]["record"]["repo"] == "tracel-ai/burn"
    (warning,) = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert "no origin remote" in warning and "--repo-name OWNER/NAME" in warning
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b"),
              "--repo-name", "me/mine")
    assert res.code == 0 and "warning:" not in res.stderr


def _warnings(res) -> list[str]:
    return [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]


def test_the_guessed_name_is_warned_of_once_per_repository(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    git_repo.git("remote", "remove", "origin")
    args = ("extract", "--repo", str(git_repo.path), "--sha", "HEAD")
    assert len(_warnings(cli(*args, "--out", str(tmp_path / "a")))) == 1
    res = cli(*args, "--out", str(tmp_path / "b"))
    assert res.code == 0 and _warnings(res) == []
    assert len(_warnings(cli(*args, "--out", str(tmp_path / "c"), "--no-cache"))) == 1  # nowhere to remember it
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", "--bare", str(git_repo.path), str(other)], check=True)
    subprocess.run(["git", f"--git-dir={other}", "remote", "remove", "origin"], check=True)
    assert len(_warnings(cli("extract", "--repo", str(other), "--sha", "HEAD", "--out", str(tmp_path / "d")))) == 1


def test_a_failed_run_keeps_the_warning_for_the_next(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    git_repo.git("remote", "remove", "origin")
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "no-such-rev", "--out", str(tmp_path / "a"))
    assert res.code == 2 and _warnings(res) == []
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "a"))
    assert len(_warnings(res)) == 1


def _bare_snapshot(git_repo, path):
    """A bare copy of a one-backend tree at `path`, with no origin remote (as the snapshot mirrors are)."""
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    path.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(git_repo.path), str(path)], check=True)
    subprocess.run(["git", f"--git-dir={path}", "remote", "remove", "origin"], check=True)
    return path


# Folders whose owner part is no GitHub owner (a `+`), so the origin names no repository by itself.
@pytest.mark.parametrize("folder, warned", [("tracel-ai+burn/repo", False), ("mirrors+all/burn.git", False),
                                            ("tracel-ai+tensors/repo", True)])
def test_a_clone_whose_local_origin_spells_the_name_is_not_warned_of(cli, git_repo, tmp_path, folder, warned):
    source = _bare_snapshot(git_repo, tmp_path / "snapshots" / folder)
    clone = tmp_path / "work" / "clone"
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
    res = cli("extract", "--repo", str(clone), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 0, res.stderr
    assert read_records(tmp_path / "o")[0]["record"]["repo"] == "tracel-ai/burn"
    assert len(_warnings(res)) == warned
    if warned:
        assert f"origin remote {source} does not name it" in _warnings(res)[0]


@pytest.mark.parametrize("folder, warned", [("tracel-ai+burn/repo", False), ("burn.git", False),
                                            ("tensors.git", True)])
def test_a_repository_without_origin_whose_folders_spell_the_name_is_not_warned_of(cli, git_repo, tmp_path,
                                                                                    folder, warned):
    snapshot = _bare_snapshot(git_repo, tmp_path / "snapshots" / folder)
    res = cli("extract", "--repo", str(snapshot), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 0, res.stderr
    assert read_records(tmp_path / "o")[0]["record"]["repo"] == "tracel-ai/burn"
    assert len(_warnings(res)) == warned
    if warned:
        assert "no origin remote" in _warnings(res)[0]


@pytest.mark.parametrize("folder, as_url, warned", [("src/burn", False, False), ("src/burn", True, False),
                                                    ("src/tensors", False, True), ("src/tensors", True, True)])
def test_a_clone_of_a_local_path_is_not_named_after_its_folders(cli, git_repo, tmp_path, folder, as_url, warned):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    source = tmp_path / folder
    source.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(git_repo.path), str(source)], check=True)
    clone = tmp_path / "work" / "clone"
    subprocess.run(["git", "clone", "-q", source.as_uri() if as_url else str(source), str(clone)], check=True)
    res = cli("extract", "--repo", str(clone), "--sha", "HEAD", "--out", str(tmp_path / "o"))
    assert res.code == 0, res.stderr
    assert read_records(tmp_path / "o")[0]["record"]["repo"] == "tracel-ai/burn"
    assert len(_warnings(res)) == warned
    if warned:
        assert "does not name it" in _warnings(res)[0]


def test_which_origins_are_on_this_machine():
    from analyzer.source.urls import local_origin_path

    for url in ("https://github.com/a/b.git", "ssh://git@example.com/a/b", "git@github.com:a/b.git", "github.com:a/b"):
        assert local_origin_path(url) is None, url
    for url, path in (("/home/me/src/burn", "/home/me/src/burn"), ("../burn", "../burn"),
                      ("file:///srv/burn.git", "/srv/burn.git"), ("C:\\src\\burn", "C:\\src\\burn")):
        assert local_origin_path(url) == path, url


def test_which_local_paths_spell_a_repository_name():
    from analyzer.cli.common import _path_names

    for path in ("../burn", "/home/me/src/burn/", "/srv/burn.git", "/m/tracel-ai+burn/repo", "C:\\src\\burn"):
        assert _path_names(path, "tracel-ai/burn"), path
    for path in ("/home/me/tensors", "/m/someone+burn/repo", "/burn/a/b", "/srv/burnt"):
        assert not _path_names(path, "tracel-ai/burn"), path


def test_operation_is_the_message_prefix_else_the_function(cli, git_repo, tmp_path):
    src = '''
impl Ops for Flex {
    fn float_add(x: Tensor) {
        match x.dtype() { DType::F32 => 1, d => panic!("add: unsupported dtype {d:?}") };
    }
    fn float_sub(x: Tensor) {
        match x.dtype() { DType::F32 => 1, d => panic!("unsupported dtype {d:?}") };
    }
}
impl From<DType> for FloatDType {
    fn from(value: DType) -> Self {
        match value { DType::F32 => FloatDType::F32, _ => panic!("Unsupported float dtype {value:?}") }
    }
}
'''
    git_repo.crate("burn-x", {"src/lib.rs": src})
    git_repo.commit()
    ops = [r["analysis"]["operation"] for r in _extract(cli, git_repo, tmp_path / "o")]
    assert ops == ["add", "float_sub", "FloatDType::from"]


def test_outputs_get_the_permissions_of_any_new_file(cli, git_repo, tmp_path):
    import os
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    _extract(cli, git_repo, tmp_path / "o")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "o" / "records.jsonl").stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize("command", ["extract", "coverage"])
def test_help_shows_the_pinned_sha_and_how_to_move_it(cli, command):
    """An installed user cannot open the profile file: --help names the commit itself."""
    from analyzer.profiles import load

    pin = load("burn").repository.pin
    res = cli(command, "--help")
    assert res.code == 0
    text = " ".join(res.stdout.split())
    assert f"Default: the target's pinned commit (burn: {pin})." in text
    assert "pass --sha REV" in text
    assert ("edit repository.pin in analyzer/profiles/burn.toml in a clone of this tool's source and install "
            "that clone") in text


# ---------------------------------------------------------------------------------------------
# What the closing lines say: counts that add up, and the README example in step with them

BROKEN_RS = '''\
pub fn pad(x: Tensor, mode: PadMode) -> Tensor {
    match mode {
        PadMode::Constant => constant(x),
        other => panic!("pad: {:?} is not supported", other),
    }
}

fn half_written( {
'''


def _scan_line(res) -> str:
    return res.stderr.splitlines()[0]


def test_scan_counts_add_up_to_the_files_scanned(cli, git_repo, tmp_path):
    """Every Rust file is counted once: parsed, from the cache, or left out by the prefilter."""
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS, "src/util.rs": "pub fn one() -> u8 { 1 }\n",
                                 "src/copy.rs": "pub fn two() -> u8 { 2 }\n"})
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "a"))
    # dtype.rs (an enum) and module.rs are parsed; util.rs and copy.rs hold neither a call nor an enum.
    assert _scan_line(res).endswith(": 2 panic-family calls in 4 Rust files (2 parsed, 0 from the cache, "
                                    "2 without a panic-family call or enum, not parsed)")
    m = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert m["scan"] == {"cached": 0, "parsed": 2, "prefiltered": 2}
    git_repo.write("crates/burn-flex/src/util.rs", "pub fn one() -> u8 { 3 }\n")
    git_repo.commit()
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "b"))
    assert _scan_line(res).endswith("in 4 Rust files (0 parsed, 3 from the cache, 1 without a panic-family "
                                    "call or enum, not parsed)")
    m = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert sum(m["scan"].values()) == m["filesScanned"] == 4


def test_annotations_kept_counts_records_that_had_annotations(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    git_repo.commit()
    first = tmp_path / "first"
    _extract(cli, git_repo, first)
    lines = [json.loads(raw) for raw in (first / "records.jsonl").read_text().splitlines()]
    lines[0]["record"]["solutions"] = ["Cast to F32"]
    (first / "records.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(tmp_path / "second"),
              "--previous", str(first / "records.jsonl"))
    assert res.code == 0, res.stderr
    # Two records unchanged, but only one had an annotation to keep.
    assert (f"Compared with {first / 'records.jsonl'}: 2 unchanged, 0 changed, 0 new, 0 dropped; annotations "
            f"kept on 1 record, not carried on 0; changed and new records go to annotation") in res.stderr


def _readme_example() -> list[str]:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = re.search(r"```console\n\$ (burn-errors extract [^\n]*)\n(.*?)```", readme, re.DOTALL)
    assert block, "README.md has an extract example"
    return block.group(2).splitlines()


def _shape(line: str) -> str:
    """A README example line as a pattern: figures and SHAs vary, the words do not."""
    out = []
    for token in re.split(r"([0-9a-f]{12}|\d+(?:\.\d+)?s?)", line):
        if re.fullmatch(r"\d+\.\d+s", token):
            out.append(r"\d+\.\d+s")
        elif re.fullmatch(r"[0-9a-f]{12}", token):
            out.append("[0-9a-f]{12}")
        elif re.fullmatch(r"\d+", token):
            out.append(r"\d+")
        else:
            out.append(re.escape(token))
    return "".join(out)


def test_readme_example_has_the_shape_of_real_output(cli, git_repo, tmp_path):
    """The README's extract example, figures aside, is what the tool prints."""
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS, "src/ops/pad.rs": BROKEN_RS,
                                 "src/util.rs": "pub fn one() -> u8 { 1 }\n"})
    sha = git_repo.commit()
    # By its SHA, as the example names it (a tag or branch is named beside the SHA).
    res = cli("extract", "--repo", str(git_repo.path), "--sha", sha[:12], "--out", "output/", cwd=tmp_path)
    assert res.code == 0, res.stderr
    printed = res.stderr.splitlines() + res.stdout.splitlines()
    example = _readme_example()
    assert len(printed) == len(example), (printed, example)
    for want, got in zip(example, printed):
        assert re.fullmatch(_shape(want), got), (want, got)


def test_readme_example_figures_add_up():
    """The README's example figures are one run's: the records are the sum of the categories, and
    the files the sum of parsed, cached and prefiltered, as the tool's own lines are."""
    text = "\n".join(_readme_example())
    found = re.search(r"Found (\d+) records \((\d+) dtype-dispatch, (\d+) unsupported-mode, (\d+) unsupported-op\)",
                      text)
    scan = re.search(r"in (\d+) Rust files \((\d+) parsed, (\d+) from the cache, (\d+) without", text)
    assert found and scan
    total, *parts = map(int, found.groups())
    assert total == sum(parts)
    files, *kinds = map(int, scan.groups())
    assert files == sum(kinds)


@pytest.mark.parametrize("message, words", [
    ("resize: no kernel for {:?}", "resize-no-kernel-for--"),  # the published rule, ends kept
    ("{mode:?} resampling is not available", "-mode-resampling-is-not-available-"),
    ("x" * 60, "x" * 50 + "-"),
    ("", ""), ("{:?}", ""), (" -- ", ""),  # nothing to show: the id's 6 characters alone
])
def test_slug_rule(message, words):
    from analyzer.records.model import slug

    assert slug(message, "82d02b0123456789") == words + "82d02b"


EMPTY_RS = '''\
use burn_std::DType;

pub fn cumprod(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => cumprod_f32(x),
        _ => panic!(""),
    }
}
'''


def test_an_empty_message_has_one_name_for_slug_and_page(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/cumprod.rs": EMPTY_RS})
    git_repo.commit()
    (line,) = _extract(cli, git_repo, tmp_path / "o")
    rec = line["record"]
    assert rec["errorMessage"] == "" and rec["slug"] == rec["id"][:6]
    assert cli("render", str(tmp_path / "o" / "records.jsonl"), "--out", str(tmp_path / "pages")).code == 0
    assert (tmp_path / "pages" / f"{rec['slug']}.md").exists()


def _manifest() -> dict:
    return {"repo": "tracel-ai/burn", "sha": "2" * 40, "timings": {"total": 0.62}, "panicCalls": 941,
            "filesScanned": 1705, "counts": {"dtype-dispatch": 152, "unsupported-mode": 128},
            "scan": {"parsed": 404, "cached": 0, "prefiltered": 1301}, "filesWithParseErrors": ["a.rs"],
            "skipped": [{"path": "b.rs", "reason": "too large"}]}


@pytest.mark.parametrize("width", [80, 40])
def test_summary_lines_wrap_at_spaces_on_a_terminal(monkeypatch, capsys, width):
    from analyzer.core import ui

    written = ["output/" + "a-long-folder-name/" * 4 + "records.jsonl", "output/manifest.json"]
    ui.summary(_manifest(), written)
    whole = capsys.readouterr()
    monkeypatch.setattr(ui, "_terminal_width", lambda err: width)
    ui.summary(_manifest(), written)
    wrapped = capsys.readouterr()
    for plain, cut in ((whole.err, wrapped.err), (whole.out, wrapped.out)):
        assert cut != plain
        # Every word whole, in its order: the lines joined at their breaks give the plain text back.
        assert cut.replace("\n  ", " ") == plain
        # Only a word longer than the width (the long path) makes a line longer than it.
        assert all(len(ln) <= width or " " not in ln.strip() for ln in cut.splitlines())
    assert written[0] + "," in wrapped.out.split()


def test_summary_lines_stay_whole_in_a_log(capsys):
    from analyzer.core import ui

    ui.summary(_manifest(), ["output/records.jsonl"])
    err = capsys.readouterr().err
    assert err.splitlines()[0].endswith("1301 without a panic-family call or enum, not parsed)")
    assert "note: 1 file was skipped, unread (first: b.rs: too large;" in err


OWN_FORM = '''
pub enum KernelArg {
    Input(usize),
    Output(usize),
}

fn read(arg: KernelArg) -> u32 {
    match arg {
        KernelArg::Input(pos) => load(pos),
        _ => panic!("Not supported"),
    }
}
'''


def test_a_crate_that_names_an_enums_variants_keeps_its_rejection_a_record(cli, git_repo, tmp_path):
    """exclude/own-form reads which crates name an enum's variants, from every file: one of
    another crate that holds no call and no enum (which the parser never reads) counts too."""
    git_repo.crate("burn-gen", {"src/arg.rs": OWN_FORM})
    git_repo.commit()
    assert _extract(cli, git_repo, tmp_path / "alone") == []
    git_repo.crate("burn-user", {"src/lib.rs": "pub fn go() -> u32 { read(KernelArg::Output(1)) }\n"})
    git_repo.commit()
    lines = _extract(cli, git_repo, tmp_path / "used")
    assert [ln["record"]["errorMessage"] for ln in lines] == ["Not supported"]


@pytest.mark.parametrize("name", ["v0.2.0", "release/0.2"])
def test_the_summary_and_manifest_name_the_tag_or_branch_beside_the_sha(cli, git_repo, tmp_path, name):
    git_repo.crate("burn-flex", {"src/ops/module.rs": FLEX_OPS})
    sha = git_repo.commit()
    git_repo.git("tag" if name.startswith("v") else "branch", name)
    for run in ("first", "served from the results cache"):
        res = cli("extract", "--repo", str(git_repo.path), "--sha", name, "--out", str(tmp_path / "o"))
        assert res.code == 0, (run, res.stderr)
        assert f"Analysed tracel-ai/burn@{name} ({sha[:12]}) in " in res.stderr, run
        manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
        assert (manifest["rev"], manifest["sha"]) == (name, sha), run
    # Named by its SHA, full or short: the SHA alone.
    res = cli("extract", "--repo", str(git_repo.path), "--sha", sha[:8], "--out", str(tmp_path / "o"))
    assert f"Analysed tracel-ai/burn@{sha[:12]} in " in res.stderr
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["rev"] == sha[:8]
