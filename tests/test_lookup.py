"""`burn-errors lookup`: which record a runtime panic message comes from."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from conftest import _command, subprocess_env
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzer.features.lookup import Panic, literal_length, message_matcher, parse_panic
from analyzer.facts.messages import build_message

FLEX_POOL = r'''
use burn_std::DType;

pub fn pool3d(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => pool3d_f32(x),
        dtype => panic!("pool3d: unsupported dtype {:?}", dtype),
    }
}
'''

FLEX_GENERIC = r'''
pub fn dispatch(op: &str, x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F32 => run_f32(op, x),
        other => panic!("{}: unsupported dtype {:?}", op, other),
    }
}

pub fn anything(x: Tensor, reason: String) -> Tensor {
    match x.dtype() {
        DType::F64 => run_f64(x),
        _ => panic!("{}", reason),
    }
}

pub fn multi(x: Tensor) -> Tensor {
    match x.dtype() {
        DType::F16 => run_f16(x),
        d => panic!("first line\nsecond line: {:?}", d),
    }
}
'''

TCH_OPS = r'''
impl PoolOps<Self> for LibTorch {
    fn pool3d(x: TchTensor) -> TchTensor {
        match x.dtype() {
            DType::F32 => x.pool3d(),
            d => panic!("pool3d: unsupported dtype {:?}", d),
        }
    }
}
'''

POOL = "pool3d: unsupported dtype {:?}"
GENERIC = "{}: unsupported dtype {:?}"


@pytest.fixture
def records(cli, git_repo, tmp_path):
    git_repo.crate("burn-flex", {"src/ops/pool.rs": FLEX_POOL, "src/ops/generic.rs": FLEX_GENERIC})
    git_repo.crate("burn-tch", {"src/ops.rs": TCH_OPS})
    git_repo.commit()
    out = tmp_path / "out"
    res = cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out))
    assert res.code == 0, res.stderr
    return out / "records.jsonl"


def _json(cli, records, message, *extra):
    res = cli("lookup", message, "--records", str(records), "--format", "json", *extra)
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def _where(match):
    return f"{match['record']['filePath']}:{match['record']['lineNumber']}"


def test_message_alone_ranks_the_record_that_explains_most_of_it_first(cli, records):
    got = _json(cli, records, "pool3d: unsupported dtype I8")
    msgs = [m["record"]["errorMessage"] for m in got["matches"]]
    # both pool3d sites spell out 26 characters, the generic one 20; ties go by file
    assert msgs == [POOL, POOL, GENERIC]
    assert [m["literalChars"] for m in got["matches"]] == [26, 26, 20]
    assert [_where(m) for m in got["matches"][:2]] == ["crates/burn-flex/src/ops/pool.rs:7", "crates/burn-tch/src/ops.rs:6"]
    assert [m["rank"] for m in got["matches"]] == [1, 2, 3]
    assert not any(m["atPanicLocation"] for m in got["matches"])
    # `panic!("{}", reason)` matches any text; it is counted, not listed
    assert got["placeholderOnly"] == 1 and got["total"] == 3
    assert got["query"] == {"message": "pool3d: unsupported dtype I8", "path": None, "line": None, "column": None}


PANICS = {
    "rust 1.73+": "thread 'main' panicked at crates/burn-tch/src/ops.rs:6:18:\npool3d: unsupported dtype I8\n"
                  "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    "before 1.73": "thread 'main' panicked at 'pool3d: unsupported dtype I8', crates/burn-tch/src/ops.rs:6:18\n"
                   "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    "crates.io": "thread 'main' panicked at /home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
                 "burn-tch-0.19.0/src/ops.rs:6:18:\npool3d: unsupported dtype I8",
    "clone": "   Compiling app v0.1.0\nthread '<unnamed>' panicked at /home/me/src/burn/crates/burn-tch/src/ops.rs:6:18:"
             "\npool3d: unsupported dtype I8\nstack backtrace:\n   0: rust_begin_unwind\n",
    "windows": "thread 'main' panicked at C:\\Users\\me\\burn\\crates\\burn-tch\\src\\ops.rs:6:18:\n"
               "pool3d: unsupported dtype I8\r\n",
}


@pytest.mark.parametrize("form", sorted(PANICS))
def test_a_panic_line_ranks_the_record_at_its_file_first(cli, records, form):
    got = _json(cli, records, PANICS[form])
    assert got["query"]["message"] == "pool3d: unsupported dtype I8"
    assert got["query"]["line"] == 6 and got["query"]["column"] == 18
    first = got["matches"][0]
    assert _where(first) == "crates/burn-tch/src/ops.rs:6"
    assert first["atPanicLocation"] is True and first["lineDistance"] == 0
    assert [m["record"]["errorMessage"] for m in got["matches"]] == [POOL, POOL, GENERIC]


def test_the_file_ranks_first_even_when_the_line_moved(cli, records):
    # a newer checkout: the same file, the line 3 further down; still that file's record first
    got = _json(cli, records, "thread 'main' panicked at crates/burn-flex/src/ops/generic.rs:8:14:\n"
                              "pool3d: unsupported dtype I8")
    assert [_where(m) for m in got["matches"]][0] == "crates/burn-flex/src/ops/generic.rs:5"
    assert got["matches"][0]["lineDistance"] == 3


def test_spaces_around_a_pasted_message_do_not_hide_the_match(cli, records):
    got = _json(cli, records, "  pool3d: unsupported dtype I8 \t")
    assert [m["record"]["errorMessage"] for m in got["matches"]] == [POOL, POOL, GENERIC]


def test_a_placeholder_only_record_is_found_at_its_own_location(cli, records):
    got = _json(cli, records, "thread 'main' panicked at crates/burn-flex/src/ops/generic.rs:12:14:\nsomething odd")
    assert [_where(m) for m in got["matches"]] == ["crates/burn-flex/src/ops/generic.rs:12"]
    assert got["matches"][0]["literalChars"] == 0


def test_multi_line_messages_match_across_lines(cli, records):
    got = _json(cli, records, "first line\nsecond line: QFloat(Q8S)")
    assert [m["record"]["errorMessage"] for m in got["matches"]] == ["first line\nsecond line: {:?}"]
    panic = "thread 'main' panicked at crates/burn-flex/src/ops/generic.rs:19:14:\nfirst line\nsecond line: I8\n" \
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    assert _json(cli, records, panic)["matches"][0]["atPanicLocation"] is True


def test_text_output_and_stdin(cli, records):
    proc = subprocess.run([*_command(), "lookup", "-", "--records", str(records), "--limit", "1"],
                          input=PANICS["rust 1.73+"], capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("Understood: file crates/burn-tch/src/ops.rs, line 6, column 18; release not named by "
                          "the path; message \"pool3d: unsupported dtype I8\"\nAnswered from the records in ")
    assert "\n\n3 records match this panic at crates/burn-tch/src/ops.rs:6 (best first):\n" in out
    assert "1. pool3d: unsupported dtype {:?}" in out
    assert "crates/burn-tch/src/ops.rs:6  <- the panic's location" in out
    tch = next(json.loads(raw)["analysis"] for raw in records.read_text().splitlines() if "burn-tch" in raw)
    assert "F16" in tch["rejected"] and "F32" not in tch["rejected"]
    assert f"panics for: {', '.join(tch['rejected'])}\n" in out
    assert "2. " not in out and "... and 2 more (--limit 0 shows all)" in out
    res = cli("lookup", "pool3d: unsupported dtype I8", "--records", str(records), "--limit", "0")
    assert "3. {}: unsupported dtype {:?}" in res.stdout and "more" not in res.stdout
    assert "Tip: give the whole panic" in res.stdout and "Tip:" not in out  # out: the panic had a location


def test_no_match_exits_1_with_one_line(cli, records):
    res = cli("lookup", "the GPU caught fire", "--records", str(records))
    assert res.code == 1 and res.stdout.splitlines()[0].startswith("Understood: no location")
    assert len(res.stdout.splitlines()) == 3 and res.stdout.splitlines()[1].startswith("Answered from the records in")
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "no record" in lines[0] and "the GPU caught fire" in lines[0]
    res = cli("lookup", "the GPU caught fire", "--records", str(records), "--format", "json")
    assert res.code == 1 and json.loads(res.stdout)["matches"] == []


def test_bad_input(cli, records, tmp_path):
    res = cli("lookup", "x", "--records", str(tmp_path / "none.jsonl"))
    assert res.code == 2 and "none.jsonl" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = cli("lookup", "x", "--records", str(records), "--repo", str(tmp_path))
    assert res.code == 2 and "one or the other" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = cli("lookup", "thread 'main' panicked at src/a.rs:1:1:\n", "--records", str(records))
    assert res.code == 2 and "empty" in res.stderr


@pytest.mark.parametrize("text,want", [
    ("conv3d: unsupported dtype I8", Panic("conv3d: unsupported dtype I8")),
    ("conv3d: unsupported dtype I8\n", Panic("conv3d: unsupported dtype I8")),
    ("thread 'main' panicked at src/x.rs:12:5:\na: b\nc", Panic("a: b\nc", "src/x.rs", 12, 5)),
    ("thread 'tokio-runtime-worker' panicked at src/x.rs:1:2:\nnot implemented",
     Panic("not implemented", "src/x.rs", 1, 2)),
    ("thread 'main' panicked at 'it's broken', src/x.rs:3:4", Panic("it's broken", "src/x.rs", 3, 4)),
    ("error: boom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
     Panic("error: boom")),
])
def test_parse_panic(text, want):
    assert parse_panic(text) == want


@pytest.mark.parametrize("macro,fmt", [
    ("panic", "conv3d: unsupported dtype {:?}"), ("panic", "reduction {other:?} is not supported"),
    ("unimplemented", "float_scatter given an {other:?} update"), ("todo", None), ("panic", "{}"),
    ("panic", "braces {{literal}} and a.b*c+d? (x) [y] ^$ \\ {:>8} end"), ("panic", "tab\there"),
])
def test_literal_length_counts_what_the_message_spells_out(macro, fmt):
    msg = build_message(macro, fmt)
    assert literal_length(msg.regex) == msg.literal_length


NOTE = "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"


@pytest.mark.parametrize("text,want", [
    # a panic pasted inside double quotes: its line breaks are the two characters \n
    ("thread 'main' panicked at src/x.rs:12:5:\\na: b\\n" + NOTE, Panic("a: b", "src/x.rs", 12, 5)),
    ("thread 'main' panicked at src/x.rs:12:5:\\r\\na: b", Panic("a: b", "src/x.rs", 12, 5)),
    ("error: boom\\n" + NOTE, Panic("error: boom")),
    # a message that only spells \n (no location, no trailer) is taken as it is
    ("first line\\nsecond", Panic("first line\\nsecond")),
    # with real line breaks, a \n in the message is the message's own
    ("thread 'main' panicked at src/x.rs:1:2:\nsaw \\n here", Panic("saw \\n here", "src/x.rs", 1, 2)),
])
def test_parse_panic_with_literal_line_breaks(text, want):
    assert parse_panic(text) == want


def test_a_panic_pasted_with_literal_line_breaks_finds_its_location(cli, records):
    got = _json(cli, records, "thread 'main' panicked at crates/burn-tch/src/ops.rs:6:18:\\n"
                              "pool3d: unsupported dtype I8\\n" + NOTE)
    assert got["query"] == {"message": "pool3d: unsupported dtype I8", "path": "crates/burn-tch/src/ops.rs",
                            "line": 6, "column": 18}
    assert _where(got["matches"][0]) == "crates/burn-tch/src/ops.rs:6" and got["matches"][0]["lineDistance"] == 0


OLD_RELEASE = ("thread 'main' panicked at /home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
               "burn-tch-0.18.0/src/ops.rs:9:18:\npool3d: no kernel for dtype I8\n" + NOTE)


def test_a_panic_from_an_older_release_suggests_its_file_and_that_release(cli, records):
    res = cli("lookup", OLD_RELEASE, "--records", str(records), "--format", "json")
    assert res.code == 1
    got = json.loads(res.stdout)
    assert got["matches"] == [] and got["release"] == {"crate": "burn-tch", "version": "0.18.0"}
    # the record at the crate-relative path comes first, then the one sharing words with the message
    assert [(_where(n), n["atPanicLocation"], n["lineDistance"]) for n in got["closest"]] == [
        ("crates/burn-tch/src/ops.rs:6", True, 3), ("crates/burn-flex/src/ops/pool.rs:7", False, None)]
    res = cli("lookup", OLD_RELEASE, "--records", str(records))
    assert res.code == 1
    out = res.stdout
    assert "\n\nNo record matches the whole message; the closest (at the panic's file first):\n" in out
    assert "note: the panic comes from tracel-ai/burn v0.18.0 (a registry checkout of burn-tch 0.18.0)" in out
    assert "1. pool3d: unsupported dtype {:?}\n   crates/burn-tch/src/ops.rs:6  <- the panic's file" in out
    assert "the panic comes from burn-tch 0.18.0" in out and "Without --records" in out
    assert len(res.stderr.strip().splitlines()) == 1 and "no record" in res.stderr


def test_no_match_suggests_the_messages_that_share_most_words(cli, records):
    res = cli("lookup", "pool3d: dtype I8 is not supported", "--records", str(records), "--format", "json")
    got = json.loads(res.stdout)
    assert res.code == 1 and got["release"] is None
    assert [_where(n) for n in got["closest"]] == ["crates/burn-flex/src/ops/pool.rs:7", "crates/burn-tch/src/ops.rs:6"]
    assert got["closest"][0]["similarity"] == round(2 / 7, 3)  # pool3d and dtype, of seven words in all
    res = cli("lookup", "pool3d: dtype I8 is not supported", "--records", str(records))
    assert "the closest:" in res.stdout and "Hint:" not in res.stdout and "<- the panic's file" not in res.stdout
@given(st.lists(st.text("ab", max_size=3), min_size=2, max_size=5), st.text("ab", max_size=10))
@settings(deadline=None)  # no wall-time bound: a loaded machine is slow, not wrong
@example(["", "b", "bc"], "bc")  # a middle segment may not reach into the last one
@example(["", "ab", "ba", ""], "aba")  # nor two middle segments share a character
@example(["ab", "ba"], "aba")  # nor the first and the last
def test_message_matcher_is_the_regex_full_match(segments, text):
    """The linear matcher answers as `re.fullmatch` does, for any literal segments: each segment
    takes its own characters of the text, in order, none shared with its neighbours."""
    regex = "^" + ".*?".join(re.escape(s) for s in segments) + "$"
    matcher = message_matcher(regex)
    assert matcher is not None
    assert matcher(text) == (re.fullmatch(regex, text, re.S) is not None), (regex, text)
