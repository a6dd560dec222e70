"""The calls beyond the panic-family macros: assertions with a message and `.expect("..")`, as
sites (what Rust prints, where the name stands) and as records lookup finds from the message."""

from __future__ import annotations

import json
import re

from analyzer.facts.parse import parse_file
from analyzer.facts.prefilter import has_panic_hint
from conftest import read_records
from targets import BURN

CANDLE_OPS = r'''
pub struct Candle;

impl ModuleOps<Candle> for Candle {
    fn max_pool2d(x: Tensor, options: PoolOptions) -> Tensor {
        assert!(!options.ceil_mode, "Candle has no support for pooling ceil_mode");
        assert_eq!(
            options.dilation, 1,
            "Candle does not support dilation {} in pooling", options.dilation
        );
        core::assert_ne!(options.padding, Padding::Same, r"same padding is not supported");
        debug_assert!(x.is_contiguous(), "contiguous input is not supported");
        assert!(options.stride > 0);
        pool(x)
    }

    fn read(x: Tensor) -> Data {
        try_read_sync(x.into_data_async())
            .expect("Reading back is not supported until this backend has a blocking reader")
    }
}
'''


def _sites(code: str):
    return {s.line: s for s in parse_file(code.encode(), BURN).sites}


def test_each_form_prints_its_message_and_stands_at_its_name():
    sites = _sites(CANDLE_OPS)
    assert sorted(sites) == [6, 7, 11, 19]  # debug_assert! and the message-less assert are no sites
    assert sites[6].message == "Candle has no support for pooling ceil_mode"
    assert sites[7].message == "assertion `left == right` failed: Candle does not support dilation {} in pooling"
    assert sites[11].message == "assertion `left != right` failed: same padding is not supported"
    assert sites[19].message == "Reading back is not supported until this backend has a blocking reader"
    assert [sites[n].macro for n in (6, 7, 11, 19)] == ["assert", "assert_eq", "assert_ne", "expect"]
    assert sites[11].macro_path == "core::assert_ne"
    # `.expect` on the chain's last line: its line and column are the method name's.
    assert sites[19].column == CANDLE_OPS.split("\n")[18].index("expect") + 1
    # The condition is the guard: what must hold (`left == right` for assert_eq!).
    assert (sites[6].context, sites[6].branch, sites[6].condition) == ("guard", "assert", "!options.ceil_mode")
    assert sites[7].condition == "options.dilation == 1"
    assert sites[11].condition == "options.padding != Padding::Same"
    assert (sites[19].context, sites[19].branch) == ("guard", "expect")
    assert sites[19].condition == "try_read_sync(x.into_data_async())"


def test_a_call_that_refuses_nothing_in_words_is_no_site_and_no_reason_to_parse():
    # Assertions and expects check values everywhere; only the refusal wording of the rule data
    # in their message makes one worth reading.
    quiet = b'fn f(x: u32) { assert!(x > 1, "x must be large"); y.expect("a value"); }\n'
    assert not has_panic_hint(quiet) and parse_file(quiet, BURN).sites == []
    loud = b'fn f(x: u32) { assert!(x > 1, "small x is not supported"); }\n'
    assert has_panic_hint(loud) and [s.line for s in parse_file(loud, BURN).sites] == [1]
    computed = b'fn f(m: &str) { y.expect(m); y.expect(&format!("{m} is not supported")); }\n'
    assert parse_file(computed, BURN).sites == []


def test_an_expect_of_a_name_reads_the_literal_bound_to_it():
    # A message written once for a chain of expects (`let msg = ".."; ...expect(msg).expect(msg)`).
    code = b'''const LIMIT: &str = "blocking reads are not supported on this platform";
fn sort(t: T) -> D {
    let msg = "This op is not supported before the backend gains a sorting kernel on the GPU.";
    let data = try_read_sync(t.into_data_async())
        .expect(msg)
        .expect(msg);
    read(t).expect(LIMIT);
    let msg = format!("{} is not supported", t);
    t.other().expect(msg);
    data
}
'''
    sites = {s.line: s for s in parse_file(code, BURN).sites}
    assert sorted(sites) == [5, 6, 7]  # the shadowing `format!` binding is no literal
    assert sites[5].message == sites[6].message == (
        "This op is not supported before the backend gains a sorting kernel on the GPU.")
    assert sites[7].message == "blocking reads are not supported on this platform"
    assert sites[6].condition == "try_read_sync(t.into_data_async()) .expect(msg)"


def test_a_call_inside_a_macro_rules_body_is_read_from_its_shadow_parse():
    code = '''macro_rules! read_sync {
    ($b:ident, $t:expr) => {
        try_read_sync($b::into_data($t)).expect("This platform does not support blocking reads")
    };
}
'''
    (site,) = parse_file(code.encode(), BURN).sites
    assert (site.line, site.macro, site.in_macro) == (3, "expect", "macro_rules! read_sync")


def test_records_of_the_new_forms_carry_the_form_and_a_regex_for_what_rust_prints(cli, git_repo, tmp_path):
    git_repo.crate("burn-candle", {"src/ops/module.rs": CANDLE_OPS})
    git_repo.commit()
    out = tmp_path / "out"
    assert cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out)).code == 0
    by_line = {ln["record"]["lineNumber"]: ln for ln in read_records(out)}
    assert sorted(by_line) == [6, 7, 11, 19]
    for line, macro in ((6, "assert"), (7, "assert_eq"), (11, "assert_ne"), (19, "expect")):
        rec, an = by_line[line]["record"], by_line[line]["analysis"]
        assert an["macro"] == macro and an["context"] == "guard" and an["category"] == "unsupported-mode"
        assert rec["messagePattern"] == rec["errorMessage"] and macro in rec["tags"]
    expect = by_line[19]["analysis"]["messageRegex"]
    # On an Option `.expect` prints the message; on a Result, `message: <the error>`.
    text = "Reading back is not supported until this backend has a blocking reader"
    assert re.fullmatch(expect, text, re.S) and re.fullmatch(expect, text + ': Os { code: 2 }', re.S)
    assert not re.fullmatch(expect, text + " and more", re.S)
    eq = by_line[7]["analysis"]["messageRegex"]
    printed = "assertion `left == right` failed: Candle does not support dilation 2 in pooling\n  left: 2\n right: 1"
    assert re.fullmatch(eq, printed, re.S) and re.fullmatch(eq, printed.split("\n")[0], re.S)
    assert cli("validate", str(out / "records.jsonl")).code == 0
    # lookup finds each from the message as Rust prints it.
    for message, line in ((text + ": Os { code: 2 }", 19), (printed.split("\n")[0], 7),
                          ("Candle has no support for pooling ceil_mode", 6)):
        res = cli("lookup", message, "--records", str(out / "records.jsonl"), "--format", "json")
        assert res.code == 0, res.stderr
        found = json.loads(res.stdout)
        assert [m["record"]["lineNumber"] for m in found["matches"]][:1] == [line], found


def test_validate_refuses_an_assert_eq_record_without_the_prefix_rust_prints(cli, git_repo, tmp_path):
    git_repo.crate("burn-candle", {"src/ops/module.rs": CANDLE_OPS})
    git_repo.commit()
    out = tmp_path / "out"
    assert cli("extract", "--repo", str(git_repo.path), "--sha", "HEAD", "--out", str(out)).code == 0
    lines = (out / "records.jsonl").read_text().splitlines()
    bad = []
    for text in lines:
        ln = json.loads(text)
        if ln["analysis"]["macro"] == "assert_eq":
            message = ln["record"]["errorMessage"].split(": ", 1)[1]
            ln["record"]["errorMessage"] = ln["record"]["messagePattern"] = message
            ln["analysis"]["annotationStatus"] = "unchanged"  # the slug stays as it was
        bad.append(json.dumps(ln))
    (out / "bad.jsonl").write_text("\n".join(bad) + "\n")
    res = cli("validate", str(out / "bad.jsonl"))
    assert res.code == 1 and "assert_eq! prints" in res.stdout + res.stderr
