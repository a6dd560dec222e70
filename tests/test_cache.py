"""The parse stage's speed paths give the same answers as the plain ones: parser processes and
one process, a cold run and a cached run; and the cache survives damage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analyzer import __version__
from analyzer.pipeline import extract as ex
from analyzer.pipeline.cache import FactsCache, encode
from analyzer.pipeline.extract import extract
from analyzer.facts.model import FileFacts
from analyzer.facts.parse import parse_file
from analyzer.pipeline.ruleset import rules_hash
from analyzer.source.repository import open_repository
from analyzer.profiles import load
from targets import BURN, RUN

DISPATCH_RS = """\
use burn_std::DType;

pub fn conv{n}(dtype: DType) {{
    match dtype {{
        DType::F32 => run(),
        DType::F16 => {{ unimplemented!("conv{n} for f16") }}
        other => panic!("conv{n}: unsupported dtype {{other:?}}"),
    }}
}}

macro_rules! dispatch{n} {{
    ($d:expr) => {{
        match $d {{
            DType::F32 => 1,
            _ => todo!("dispatch{n}"),
        }}
    }};
}}
"""

PLAIN_RS = "pub fn add(a: u32, b: u32) -> u32 {{ a + b + {n} }}\n"


@pytest.fixture
def many_files(git_repo):
    """A tree with files to parse and files the prefilter skips, spread over several chunks."""
    files = {f"src/ops{n}.rs": DISPATCH_RS.format(n=n) for n in range(40)}
    files.update({f"src/plain{n}.rs": PLAIN_RS.format(n=n) for n in range(40)})
    git_repo.crate("burn-flex", files)
    git_repo.write_bytes("crates/burn-flex/src/latin1.rs", b"// caf\xe9\npub fn f() {}\n")
    git_repo.write("crates/burn-flex/src/ops.rs", OPS_RS)  # an ops trait and impl, no call, no enum
    sha = git_repo.commit("many")
    return open_repository(str(git_repo.path), None), sha


def _summary(result):
    return ([(a.path, a.site, a.decision) for a in result.audit],
            [line.model_dump() for line in result.lines],
            result.parse_errors, result.not_utf8, result.files_parsed)


def test_parser_processes_give_what_one_process_gives(many_files, monkeypatch):
    repo, sha = many_files
    monkeypatch.setattr(ex, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(ex, "CHUNK_BYTES", 2_000)  # many chunks, finishing in any order
    one = extract(repo, sha, RUN, jobs=1, now="2026-01-01T00:00:00.000Z")
    two = extract(repo, sha, RUN, jobs=2, now="2026-01-01T00:00:00.000Z")
    assert _summary(one) == _summary(two)
    assert len(one.lines) == 120 and one.not_utf8 == ["crates/burn-flex/src/latin1.rs"]


def test_a_cached_run_gives_what_a_cold_run_gives(many_files, tmp_path):
    repo, sha = many_files
    cold_cache = FactsCache(tmp_path / "c", rules_hash(), __version__)
    cold = extract(repo, sha, RUN, cache=cold_cache, jobs=1, now="2026-01-01T00:00:00.000Z")
    cold_cache.close()
    warm_cache = FactsCache(tmp_path / "c", rules_hash(), __version__)
    warm = extract(repo, sha, RUN, cache=warm_cache, jobs=1, now="2026-01-01T00:00:00.000Z")
    assert (warm.cache_hits, warm.cache_misses) == (cold.cache_misses, 0)
    assert _summary(cold) == _summary(warm)


OPS_RS = """\
pub trait FloatTensorOps<B: Backend> {
    fn float_add(lhs: u8) -> u8;
}

impl FloatTensorOps<Self> for Flex {
    fn float_add(lhs: u8) -> u8 {
        conv1(lhs)
    }
}
"""


def test_code_facts_are_a_cache_facet_only_the_coverage_audit_fills(many_files, tmp_path):
    repo, sha = many_files
    now = "2026-01-01T00:00:00.000Z"
    cache = FactsCache(tmp_path / "c", rules_hash(), __version__)
    plain = extract(repo, sha, RUN, cache=cache, jobs=1, now=now)
    blobs = plain.cache_misses
    assert plain.code == [] and plain.cache_hits == 0
    # The site facts are cached; the code facts are not, so every blob is read again, once.
    with_code = extract(repo, sha, RUN, cache=cache, jobs=1, now=now, code=True)
    assert (with_code.cache_hits, with_code.cache_misses) == (0, blobs)
    again = extract(repo, sha, RUN, cache=cache, jobs=1, now=now, code=True)
    assert (again.cache_hits, again.cache_misses) == (blobs, 0)
    uncached = extract(repo, sha, RUN, jobs=1, now=now, code=True)
    for run in (with_code, again, uncached):
        assert _summary(run)[:2] == _summary(plain)[:2]  # the same sites, decisions and records
        assert run.code == uncached.code
    assert "crates/burn-flex/src/ops.rs" in [path for path, _, _ in uncached.code]
    assert extract(repo, sha, RUN, cache=cache, jobs=1, now=now).cache_hits == blobs


def test_facts_survive_the_json_the_cache_keeps():
    source = DISPATCH_RS.format(n=1).encode()
    facts = parse_file(source, BURN)
    assert FileFacts.from_json(facts.to_json()) == facts


@pytest.mark.parametrize("change", ["site-extra", "site-missing", "arm-extra", "arm-missing"])
def test_a_row_whose_sites_or_arms_lack_a_field_or_hold_another_is_refused(change, tmp_path):
    row = parse_file(DISPATCH_RS.format(n=1).encode(), BURN).to_json()
    site = row["sites"][0]
    arm = site["arms"][0]
    target = site if change.startswith("site") else arm
    if change.endswith("extra"):
        target["colour"] = "red"
    else:
        del target["line"]
    with pytest.raises(TypeError):
        FileFacts.from_json(row)
    cache = FactsCache(tmp_path, "rules", "v")
    cache.put_encoded({"a" * 40: encode(row)})
    assert cache.get_many(["a" * 40], FileFacts.from_json) == {}  # a miss: the file is parsed again


def test_identical_rows_are_decoded_once_and_counted_per_blob(tmp_path):
    cache = FactsCache(tmp_path, "rules", "v")
    empty = FileFacts([], [], False, False).to_json()
    cache.put_encoded({f"{i:040x}": encode(empty) for i in range(10)})
    built = []
    got = cache.get_many([f"{i:040x}" for i in range(12)], lambda d: built.append(d) or FileFacts.from_json(d))
    assert len(got) == 10 and len(built) == 1
    assert (cache.hits, cache.misses) == (10, 2)


def test_rows_written_behind_are_there_for_the_next_read(tmp_path):
    """The writer thread waits on another connection's write lock; a read made meanwhile waits
    for the writer, so it sees every row, never a half-written cache."""
    import sqlite3
    import threading

    cache = FactsCache(tmp_path, "rules", "v")
    other = sqlite3.connect(tmp_path / "facts.sqlite3", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, other.rollback)
    release.start()
    rows = {f"{i:040x}": encode({"i": i}) for i in range(50)}
    cache.put_encoded_behind([(rows, ""), ({"d" * 40: encode({"code": 1})}, "+code")])
    assert cache.get_many(list(rows)) == {b: {"i": i} for i, b in enumerate(rows)}
    assert cache.get_many(["d" * 40], facet="+code") == {"d" * 40: {"code": 1}}
    release.join()
    other.close()
    cache.close()


def test_what_the_writer_behind_raises_is_raised_at_the_next_use(tmp_path, monkeypatch):
    cache = FactsCache(tmp_path, "rules", "v")

    def fail(items, facet):
        raise MemoryError("no room")
    monkeypatch.setattr(cache, "_put_rows", fail)
    cache.put_encoded_behind([({"a" * 40: encode({})}, "")])
    with pytest.raises(MemoryError):
        cache.get_many(["a" * 40])
    assert cache.get_many(["a" * 40]) == {}  # raised once; the cache goes on
    cache.close()


def test_a_row_that_does_not_decode_is_a_miss(tmp_path):
    cache = FactsCache(tmp_path, "rules", "v")
    cache.put_encoded({"a" * 40: b"not zlib", "b" * 40: encode({"sites": "wrong shape"})})
    assert cache.get_many(["a" * 40, "b" * 40], FileFacts.from_json) == {}
    assert cache.misses == 2


def test_a_cache_with_damaged_pages_is_moved_aside_and_rebuilt(tmp_path):
    cache = FactsCache(tmp_path, "rules", "v")
    cache.put_many({f"{i:040x}": {"i": i, "pad": "x" * 200} for i in range(3000)})
    cache.close()
    path = tmp_path / "facts.sqlite3"
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle:middle + 20_000] = os.urandom(20_000)
    path.write_bytes(bytes(data))

    cache = FactsCache(tmp_path, "rules", "v")  # opening is cheap: no whole-file check
    assert cache.get_many([f"{i:040x}" for i in range(3000)]) == {}
    assert cache.misses == 3000
    assert any(p.name.startswith("facts.sqlite3.corrupt-") for p in tmp_path.iterdir())
    cache.put_many({"c" * 40: {"ok": 1}})
    cache.close()
    assert FactsCache(tmp_path, "rules", "v").get_many(["c" * 40]) == {"c" * 40: {"ok": 1}}


def test_a_rerun_at_the_same_commit_is_served_whole_from_the_results_cache(git_repo, tmp_path):
    from conftest import read_records, run_cli

    git_repo.crate("burn-x", {"src/lib.rs": "fn f(x: T) { match x.dtype() { DType::F32 => 1, _ => panic!(\"no\") }; }\n"})
    git_repo.commit()
    args = ["extract", "--repo", str(git_repo.path), "--sha", "HEAD"]
    first = run_cli(*args, "--out", str(tmp_path / "a"), "--all-sites")
    second = run_cli(*args, "--out", str(tmp_path / "b"), "--all-sites")
    assert first.code == second.code == 0, second.stderr
    ma = json.loads((tmp_path / "a" / "manifest.json").read_text())
    mb = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert "result" not in ma["cache"] and mb["cache"]["result"] == "hit"
    assert "results cache" in second.stderr
    for k in ("counts", "excluded", "filesScanned", "rulesHash", "sha", "dtypeEnums"):
        assert ma[k] == mb[k]

    def undated(folder):
        recs = read_records(folder)
        for r in recs:
            r["record"]["analyzedAt"] = r["record"]["contentChangedAt"] = None
            r["analysis"]["firstSeenAt"] = None  # first seen by this run: its time too
        return recs
    assert undated(tmp_path / "a") == undated(tmp_path / "b")
    assert read_records(tmp_path / "a")[0]["record"]["analyzedAt"] < read_records(tmp_path / "b")[0]["record"]["analyzedAt"]
    assert (tmp_path / "a" / "sites.jsonl").read_text() == (tmp_path / "b" / "sites.jsonl").read_text()
    # Another option set, --previous, --no-cache or a new commit are not served from it.
    third = run_cli(*args, "--out", str(tmp_path / "c"))
    assert third.code == 0, third.stderr
    assert "result" not in json.loads((tmp_path / "c" / "manifest.json").read_text())["cache"]
    assert not (tmp_path / "c" / "sites.jsonl").exists()
    prev = run_cli(*args, "--out", str(tmp_path / "d"), "--previous", str(tmp_path / "a" / "records.jsonl"))
    assert prev.code == 0 and "result" not in json.loads((tmp_path / "d" / "manifest.json").read_text())["cache"]
    uncached = run_cli(*args, "--out", str(tmp_path / "n"), "--all-sites", "--no-cache")
    assert uncached.code == 0, uncached.stderr
    assert json.loads((tmp_path / "n" / "manifest.json").read_text())["cache"] == {"hits": 0, "misses": 2}
    git_repo.write("crates/burn-x/src/other.rs", "fn g() {}\n")
    git_repo.commit()
    fourth = run_cli(*args, "--out", str(tmp_path / "e"))
    assert fourth.code == 0, fourth.stderr
    assert "result" not in json.loads((tmp_path / "e" / "manifest.json").read_text())["cache"]



def test_a_served_rerun_redates_only_the_dates_even_where_a_message_spells_one(git_repo, tmp_path):
    """Kept lines are re-dated as text: a message holding the words of a date member keeps them."""
    from conftest import read_records, run_cli

    git_repo.crate("burn-x", {"src/lib.rs": "fn f(x: T) { match x.dtype() { DType::F32 => 1, "
                                            "_ => panic!(\"bad \\\"analyzedAt\\\":\\\"1999\\\" {:?}\", x) }; }\n"})
    git_repo.commit()
    args = ["extract", "--repo", str(git_repo.path), "--sha", "HEAD"]
    first = run_cli(*args, "--out", str(tmp_path / "a"))
    second = run_cli(*args, "--out", str(tmp_path / "b"))
    assert first.code == second.code == 0, second.stderr
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["cache"]["result"] == "hit"
    [a], [b] = read_records(tmp_path / "a"), read_records(tmp_path / "b")
    assert b["record"]["errorMessage"] == a["record"]["errorMessage"] == 'bad "analyzedAt":"1999" {:?}'
    assert b["record"]["analyzedAt"] == b["record"]["contentChangedAt"] == b["analysis"]["firstSeenAt"]
    assert b["record"]["analyzedAt"] > a["record"]["analyzedAt"]
    text_a = (tmp_path / "a" / "records.jsonl").read_text()
    text_b = (tmp_path / "b" / "records.jsonl").read_text()
    assert text_b == text_a.replace(a["record"]["analyzedAt"], b["record"]["analyzedAt"])


def test_a_kept_line_without_its_three_dates_is_not_served(tmp_path):
    from analyzer.pipeline.results_cache import served_extract

    sha = "a" * 40
    manifest = {"filesScanned": 1, "repo": "o/r", "sha": sha, "panicCalls": 1, "counts": {"dtype-dispatch": 1}}
    line = ('{"record":{"repo":"o/r","analyzedSha":"' + sha + '","githubUrl":"https://github.com/o/r/blob/' + sha
            + '/x.rs#L1-L2","analyzedAt":"2020-01-01T00:00:00.000Z","contentChangedAt":"2020-01-01T00:00:00.000Z"},'
            '"analysis":{}}')
    row = {"records": [line], "manifest": manifest, "sites": None}
    assert served_extract(row, "o", tmp_path, False, [], 0.1, "o/r", sha, load("burn")) is None
    full = line.replace('"analysis":{}', '"analysis":{"firstSeenAt":"2020-01-01T00:00:00.000Z"}')
    row = {"records": [full], "manifest": manifest, "sites": None}
    files, _ = served_extract(row, "o", tmp_path, False, [], 0.1, "o/r", sha, load("burn"))
    assert "2020" not in files[tmp_path / "records.jsonl"]


def test_a_change_to_code_that_shapes_the_outputs_is_a_results_cache_miss(git_repo, tmp_path, monkeypatch):
    """The results-cache key holds a hash of the package's modules: with another hash (as after
    an edit of the manifest sink), the same commit, rules and version are analysed afresh."""
    from conftest import run_cli

    from analyzer.pipeline import results_cache

    git_repo.crate("burn-x", {"src/lib.rs": "fn f(x: T) { match x.dtype() { DType::F32 => 1, _ => panic!(\"no\") }; }\n"})
    git_repo.commit()
    args = ["extract", "--repo", str(git_repo.path), "--sha", "HEAD"]

    def served(out: str) -> bool:
        res = run_cli(*args, "--out", str(tmp_path / out))
        assert res.code == 0, res.stderr
        return json.loads((tmp_path / out / "manifest.json").read_text())["cache"].get("result") == "hit"

    assert not served("a") and served("b")
    with monkeypatch.context() as patch:
        patch.setattr(results_cache, "code_hash", lambda: "edited-module")
        assert not served("c") and served("d")
    assert served("e")  # the rows of the first code are still there


def test_the_code_hash_changes_with_any_module_of_the_package(tmp_path, monkeypatch):
    import shutil

    from analyzer.pipeline import results_cache

    package = tmp_path / "analyzer"
    shutil.copytree(Path(results_cache.__file__).parent.parent, package,
                    ignore=shutil.ignore_patterns("__pycache__", "templates", "queries"))
    monkeypatch.setattr(results_cache, "_PACKAGE", package)

    def code_hash() -> str:
        results_cache.code_hash.cache_clear()
        return results_cache.code_hash()

    before = code_hash()
    assert code_hash() == before
    for module in ("pipeline/manifest.py", "sinks/audit.py", "records/model.py"):
        path = package / module
        original = path.read_bytes()
        path.write_bytes(original + b"\n# edited\n")
        assert code_hash() != before, module
        path.write_bytes(original)
        assert code_hash() == before
    (package / "sinks" / "new_stage.py").write_text("X = 1\n")
    assert code_hash() != before
    results_cache.code_hash.cache_clear()


def test_cached_facts_are_exactly_what_dataclasses_give():
    """FileFacts.to_json is a hand-written walk (for speed); it must equal dataclasses.asdict."""
    import dataclasses
    from analyzer.core.toml import tomllib

    from analyzer.facts.model import FileFacts
    from analyzer.facts.parse import parse_file

    rules = Path(__file__).parent / "rules"
    snippets = [(rules / "context.rs").read_text()]
    for f in sorted(rules.glob("*.toml")):
        data = tomllib.loads(f.read_text())
        snippets += [c["code"] for kind in ("valid", "invalid") for c in data.get(kind, [])]
    for code in snippets:
        facts = parse_file(code.encode(), BURN, code=True)
        as_json = json.loads(json.dumps(facts.to_json()))
        assert as_json == json.loads(json.dumps(dataclasses.asdict(facts)))
        assert FileFacts.from_json(as_json) == facts


def test_enums_of_a_file_without_panics_are_read_item_by_item_as_a_whole_parse_reads_them():
    from analyzer.facts import enums, parse, syntax

    src = b'''//! An enum of dtypes { not code }
/// The enum Shape describes { stuff }
pub enum DType<T: Clone> where T: Copy {
    /// "braces" { in docs }
    F32,
    Bool(BoolStore),
    Named { a: u8, b: [u8; 2] },
    Tagged = 3,
}
const X: &str = "enum Fake { A, B }";
const C: char = '{';
mod inner {
    pub(crate) enum Inner { A /* } */, B }
}
fn f() -> std::mem::Discriminant<u8> { todo_not_a_macro() }
'''
    items = enums._enum_items(src)
    tree = syntax._parser().parse(src)
    whole = enums._enums(tree.root_node, src)
    assert [(e.name, e.variants, e.line) for e in items] == [(e.name, e.variants, e.line) for e in whole]
    assert [e.name for e in items] == ["DType", "Inner"]
    assert parse.parse_file(src, BURN).enums == items


def test_a_row_decodes_to_what_the_standard_library_reads():
    """Rows are written and read by orjson where it can: values it refuses (a lone surrogate, an
    integer past 64 bits) are still written and read, and a row the standard library wrote (an
    older cache) reads as json.loads reads it."""
    import zlib

    from analyzer.pipeline.cache import decode, encode
    for value in ({"message": "dtype \udcff", "line": 3}, {"n": 2 ** 70}, {"text": "é → ok", "xs": [1, 2.5, None]}):
        assert decode(encode(value)) == json.loads(json.dumps(value)) == value
        assert decode(zlib.compress(json.dumps(value, separators=(",", ":")).encode())) == value



_PARSE_CHUNK = ex._parse_chunk


def _chunk_without_the_collector(items, code, profile):
    """A parser process's part, failing when the cycle collector runs there."""
    import gc
    assert not gc.isenabled(), "the cycle collector runs in a parser process"
    return _PARSE_CHUNK(items, code, profile)


def test_an_extraction_pauses_the_cycle_collector_and_restores_it(many_files, monkeypatch):
    """The cycle collector is off while an extraction builds its facts (they hold no cycles,
    and each collection would walk them again), in the parser processes too, and back as it
    was afterwards, also when the run fails."""
    import gc

    repo, sha = many_files
    monkeypatch.setattr(ex, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(ex, "_parse_chunk", _chunk_without_the_collector)
    seen: list[bool] = []
    assert gc.isenabled()
    gc.unfreeze()
    result = extract(repo, sha, RUN, jobs=2, progress=lambda _: seen.append(gc.isenabled()))
    assert len(result.lines) == 120
    assert seen and not any(seen) and gc.isenabled()
    # What the extraction left alive is out of the collector's reach, so the caller's next
    # collections do not walk it again.
    assert gc.get_freeze_count() > 0
    gc.unfreeze()
    monkeypatch.setattr(ex, "_parse_all", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        extract(repo, sha, RUN, jobs=2)
    assert gc.isenabled()


def test_a_row_kept_soon_waits_for_the_facts_written_behind(tmp_path):
    """The two background writers share one connection: a results row handed over while the facts
    writer is still at work is written after it, never inside its transaction, and both are there."""
    import threading

    cache = FactsCache(tmp_path, "rules", "v")
    order: list[str] = []
    go = threading.Event()
    put_rows, put_row = cache._put_rows, cache._put_result_row

    def slow_rows(items, facet):
        go.wait(5)
        put_rows(items, facet)
        order.append("facts")

    def row(key, data):
        order.append("row")
        put_row(key, data)
    cache._put_rows, cache._put_result_row = slow_rows, row  # type: ignore[method-assign]
    rows = {f"{i:040x}": encode({"i": i}) for i in range(50)}
    cache.put_encoded_behind([(rows, "")])
    threading.Timer(0.2, go.set).start()
    cache.put_raw_result_soon("doc", b"kept whole")
    assert cache.get_raw_result("doc") == b"kept whole"
    assert cache.get_many(list(rows)) == {b: {"i": i} for i, b in enumerate(rows)}
    assert order == ["facts", "row"]
    cache.close()
