"""The pipeline: source (git) -> parse (tree-sitter) -> classify (rules) -> record (pydantic).

Sinks (jsonl, manifest, coverage, pages, diff) take the `Extraction` this returns.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple
from collections.abc import Callable

from analyzer.decisions.catalog import DtypeCatalog
from analyzer.decisions.categories import CATEGORIES
from analyzer.decisions.classify import classify
from analyzer.decisions.model import Decision
from analyzer.decisions.rules import EXCLUSIONS
from analyzer.core.collector import no_cycle_collection
from analyzer.core.errors import UserError
from analyzer.records.ids import assign, position_key
from analyzer.facts.model import FileFacts, SiteFacts
from analyzer.facts.parse import parse_file, read_off_bytes
from analyzer.facts.prefilter import has_enum_hint, has_panic_hint, plain_aliases
from analyzer.records.macro_lists import handed_decisions
from analyzer.pipeline.workers import start_pool
from analyzer.profiles import Profile
from analyzer.profiles.run import Run
from analyzer.source.crates import crates_of
from analyzer.source.repository import GitRepository
from analyzer.core.timestamps import utc_now

if TYPE_CHECKING:  # the record stage (pydantic) is imported when it runs
    from analyzer.records.model import RecordLine



@dataclass
class AuditEntry:
    """One panic-family call and what the classifier decided (for `--all-sites`)."""

    path: str
    site: SiteFacts
    crate: str
    decision: Decision
    id: str | None = None


@dataclass
class Extraction:
    repo: str
    sha: str
    run: Run  # the run it was made in: the target whose conventions read the tree
    lines: list[RecordLine]
    audit: list[AuditEntry]
    catalog: DtypeCatalog
    files_scanned: int
    files_parsed: int
    parse_errors: list[str]
    not_utf8: list[str]
    cache_hits: int
    cache_misses: int
    timings: dict[str, float]
    carry: dict[str, int] = field(default_factory=dict)  # with --previous: annotation status counts
    lineage: dict | None = None  # with --previous: records per lineage tier, and those not found
    # With --previous: the earlier records whose annotations were not handed on, and why
    # (analyzer/lineage/carry.py, not_carried_entry).
    not_carried: list[dict] = field(default_factory=list)
    # What this run did with each Rust file (path): its facts came from the cache, or it was
    # parsed, or the byte prefilter found no panic-family call and no enum in it, so it was not
    # parsed. The three add up to files_scanned.
    scan: dict[str, int] = field(default_factory=dict)
    # (path, crate, facts) of every file with code facts (functions, ops traits or impls, macro
    # definitions), for the coverage audit's call graph; empty unless extract() was asked for them.
    code: list[tuple[str, str, FileFacts]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # files not read: {path, reason}
    partly_read: list[dict[str, str]] = field(default_factory=list)  # files read in part: {path, reason}
    # With extract(sources=True): the bytes of every file this run read for a parse, by path, which
    # the coverage build reads some of again (pipeline/coverage.py); empty otherwise.
    sources: dict[str, bytes] = field(default_factory=dict)

    def unread(self) -> list[dict]:
        """Every file this run could not read whole, skipped or read in part: {path, reason, whole}
        (`whole` true when nothing of it was read), by path."""
        entries: list[dict] = [{**e, "whole": True} for e in self.skipped]
        entries += [{**e, "whole": False} for e in self.partly_read]
        return sorted(entries, key=lambda e: e["path"])

    def counts(self) -> dict[str, int]:
        out = {c: 0 for c in CATEGORIES}
        for line in self.lines:
            out[line.facts.category] += 1
        return out

    def exclusion_counts(self) -> dict[str, int]:
        out = {r: 0 for r in EXCLUSIONS}
        for a in self.audit:
            if not a.decision.record:
                out[a.decision.reason] = out.get(a.decision.reason, 0) + 1
        return out


# -- parse stage: blobs to facts, across processes --------------------------------------------
#
# Cold, the parent streams the blobs from one `git cat-file --batch`, keeps back every file that
# holds no panic-family call and no enum (nor, for the coverage audit, an ops trait or impl: the
# hint regexes, tried only where their words occur; most of the tree; its plain type aliases, if
# any, are read with another regex), and hands the rest to parser processes in chunks as it reads,
# biggest files first so they finish together. A parser reads only the items of a file that hold
# a call or an enum (analyzer/facts/regions.py). A worker returns each file's encoded cache rows only;
# the parent decodes them into FileFacts as a cached run does, so a cold run sees exactly what a
# cached run sees.
# Contents are not kept but for the files that may hold a panic-family call (a fraction of the
# tree; with `sources`, every file parsed): the record stage reads its source windows from those,
# and coverage's build the functions it reads again, with no second read from git.

# Below this many bytes of files to read, one process does it all: starting the pool costs more
# than it saves on so little (bench/README.md, "Parser processes", has the measurements).
PARALLEL_MIN_BYTES = 500_000
# A chunk is about this many bytes of files to parse: the whole-tree parse is flat from 128 KB to
# 512 KB (same section).
CHUNK_BYTES = 256_000
CHUNK_FILES = 64


def _prefilter(code: bool, profile: Profile) -> Callable[[bytes], tuple[bool, bool]]:
    """(whether a file may hold a panic-family call or an enum, or (with `code`, for the coverage
    audit) an ops trait or impl or a claims method; whether it may hold a panic-family call, the
    verdict the parse then reuses instead of scanning again). Plain aliases are read without a
    parse. PANIC_HINT and ENUM_HINT are tried only where one of the words they match occurs (see
    matches_at_a_word: a regex over every byte cost ~8 ns a byte); the target's ops hint starts
    with a literal, which the regex engine finds by a fast scan."""
    others: Callable[[bytes], bool] = has_enum_hint
    if code:
        others = lambda data: has_enum_hint(data) or profile.wants_code(data)  # noqa: E731

    def verdict(data: bytes) -> tuple[bool, bool]:
        panic_hint = has_panic_hint(data)
        return panic_hint or others(data), panic_hint
    return verdict


class Parsed(NamedTuple):
    """One blob's facts and cache rows: its site facts, and with `code` its code facts."""

    sites: FileFacts
    sites_row: bytes
    code: FileFacts | None = None
    code_row: bytes | None = None


def _rows(facts: FileFacts, code: bool) -> tuple[bytes, bytes | None]:
    from analyzer.pipeline.cache import encode
    return encode(facts.site_part().to_json()), encode(facts.code_part().to_json()) if code else None


def _parsed(site_row: bytes, code_row: bytes | None) -> Parsed:
    """Facts rebuilt from the rows, so a cold run and a cached run see the very same values."""
    from analyzer.pipeline.cache import decode
    return Parsed(FileFacts.from_json(decode(site_row)), site_row,
                  FileFacts.from_json(decode(code_row)) if code_row is not None else None, code_row)


def _parse_blob(data: bytes, code: bool, panic_hint: bool, profile: Profile) -> Parsed:
    return _parsed(*_rows(parse_file(data, profile, code, panic_hint), code))


def _parse_chunk(items: list[tuple[str, bytes, bool]], code: bool,
                 profile: Profile) -> list[tuple[str, bytes, bytes | None]]:
    """A worker's part: the cache rows of each file, which is all it sends back. The parent turns
    the rows into facts as a cached run does; pickling the facts objects instead cost more than
    parsing the rows again (~100 ms against ~60 ms of CPU on burn). Each file comes with the
    prefilter's has_panic_hint verdict, which the parse would otherwise scan the file for again.
    The target's profile comes with each chunk: a worker holds no target of its own."""
    return [(oid, *_rows(parse_file(data, profile, code, panic_hint), code)) for oid, data, panic_hint in items]


def _unparsed(data: bytes, code: bool, shared: dict[tuple, Parsed], profile: Profile) -> Parsed:
    """The facts of a file with nothing to parse for: its plain aliases, variant uses, ops impls
    and the types it builds from text, read without a parse. Most such files have none and share one row."""
    facts = read_off_bytes(FileFacts([], [], False, _not_utf8(data), plain_aliases(data)), data, profile)
    if facts.ops_impls or facts.built_from or facts.remaps or facts.proc_macros or facts.includes or facts.partial:
        return _direct(facts, code)  # facts of its own, never shared
    key = (facts.not_utf8, tuple(facts.aliases), tuple(facts.variant_uses), tuple(facts.trait_names))
    if key not in shared:
        shared[key] = _direct(facts, code)
    return shared[key]


def _direct(facts: FileFacts, code: bool) -> Parsed:
    """The rows of facts read without a parse, and the facts themselves: their fields are lists of
    strings and tuples, the very values FileFacts.from_json gives back from the rows, so the rows
    need not be decoded."""
    site_row, code_row = _rows(facts, code)
    return Parsed(facts.site_part(), site_row, facts.code_part() if code else None, code_row)


def _parse_all(repo: GitRepository, oids: list[str], sizes: dict[str, int], jobs: int, profile: Profile,
               progress: Callable[[str], None] | None = None,
               prefiltered: set[str] | None = None, code: bool = False,
               kept: dict[str, bytes] | None = None, keep_all: bool = False) -> dict[str, Parsed]:
    """Read and parse the blobs `oids`: facts and cache rows per blob. Across `jobs` processes
    when there is enough to read to pay for them. The blobs the prefilter kept from the parser
    are added to `prefiltered`, and the contents of those that may hold a panic-family call (the
    only ones a record can come from), or with `keep_all` of every file parsed, to `kept`."""
    order = sorted(oids, key=lambda o: (-sizes.get(o, 0), o))  # biggest first
    total = sum(sizes.get(o, 0) for o in oids)
    pool = start_pool(jobs) if jobs > 1 and total >= PARALLEL_MIN_BYTES else None
    if pool is not None:
        # The record stage needs pydantic (~0.1 s to import): import it on a thread while git and
        # the parsers work. Only after the fork: a child forked while a thread holds the import
        # lock would deadlock on its first import.
        threading.Thread(target=_import_record_stage, daemon=True).start()
    prefilter = _prefilter(code, profile)
    out: dict[str, Parsed] = {}
    unparsed: dict[tuple, Parsed] = {}
    futures = []
    chunk: list[tuple[str, bytes, bool]] = []
    chunk_bytes = 0
    n_parse = 0
    try:
        if progress:
            progress(f"reading {len(oids)} files")
        for oid, data in repo.read_blobs(order):
            worth_parsing, panic_hint = prefilter(data)
            if not worth_parsing:
                if prefiltered is not None:
                    prefiltered.add(oid)
                out[oid] = _unparsed(data, code, unparsed, profile)
                continue
            n_parse += 1
            if kept is not None and (panic_hint or keep_all):
                kept[oid] = data
            if pool is None:
                out[oid] = _parse_blob(data, code, panic_hint, profile)
                continue
            chunk.append((oid, data, panic_hint))
            chunk_bytes += len(data)
            if chunk_bytes >= CHUNK_BYTES or len(chunk) >= CHUNK_FILES:
                futures.append(pool.submit(_parse_chunk, chunk, code, profile))
                chunk, chunk_bytes = [], 0
        if pool is not None:
            if chunk:
                futures.append(pool.submit(_parse_chunk, chunk, code, profile))
            if progress:
                progress(f"parsing {n_parse} files")
            for f in futures:
                for oid, site_row, code_row in f.result():
                    out[oid] = _parsed(site_row, code_row)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return out


def _within_budget(oids: list[str], sizes: dict[str, int], facts: dict[str, FileFacts],
                   code_facts: dict[str, FileFacts] | None) -> list[str]:
    """The blobs of `oids` within the parser's size budget. The others get facts that say so,
    from their size in the tree listing, without a byte of them read (a 1 GiB blob would
    otherwise be read into memory to be skipped); they are not cached, since the listing is
    cheap and the verdict is not checked against the content."""
    from analyzer.facts.parse import MAX_BLOB_BYTES

    keep = []
    for oid in oids:
        if sizes.get(oid, 0) > MAX_BLOB_BYTES:
            skipped = FileFacts([], [], False, False, [],
                                skipped=f"larger than the {MAX_BLOB_BYTES:,}-byte budget per file")
            facts[oid] = skipped
            if code_facts is not None:
                code_facts[oid] = skipped
        else:
            keep.append(oid)
    return keep


# The records of a tree are bounded by its size: each holds a window of 37 lines, so a dense file
# of long lines would give records many times its size (11.5 MB of crafted Rust made a 615 MB
# records.jsonl and took 4 GB). Past OUTPUT_PER_INPUT_BYTE times the Rust bytes (plus a floor),
# the run stops with an error before the memory is spent; burn's records are a fraction of its size.
OUTPUT_PER_INPUT_BYTE = 16
OUTPUT_FLOOR_BYTES = 64_000_000
RECORD_OVERHEAD = 2_000  # the rest of a records line: its other fields, the analysis


def output_budget(input_bytes: int) -> int:
    return OUTPUT_PER_INPUT_BYTE * input_bytes + OUTPUT_FLOOR_BYTES


def extract(repo: GitRepository, sha: str, run: Run, *, cache=None, previous: list[RecordLine] | None = None,
            now: str | None = None, jobs: int | None = None,
            progress: Callable[[str], None] | None = None, code: bool = False, sources: bool = False) -> Extraction:
    """The records at `sha`. With `code`, also the code facts the coverage audit's call graph
    reads (`Extraction.code`), which cost a parse of every file with a panic-family call or an
    ops trait or impl, less its function bodies; extract itself parses only the items that hold
    its sites. With `sources`, the bytes of the files read for a parse are kept
    (`Extraction.sources`). `run` says the target whose conventions the tree is read by."""
    with no_cycle_collection():
        return _extract(repo, sha, run, cache=cache, previous=previous, now=now, jobs=jobs, progress=progress,
                        code=code, sources=sources)


def _extract(repo: GitRepository, sha: str, run: Run, *, cache, previous: list[RecordLine] | None, now: str | None,
             jobs: int | None, progress: Callable[[str], None] | None, code: bool, sources: bool) -> Extraction:
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    now = now or utc_now()
    profile = run.profile
    tree, submodules = repo.tree_and_submodules(sha)
    rust, bad_names = _rust_files(tree, repo, sha)
    crate_roots = sorted(posixpath.dirname(b.path) for b in tree if posixpath.basename(b.path) == "Cargo.toml")
    timings["source"] = time.perf_counter() - t0

    # -- parse (cached per blob) ---------------------------------------------------------
    t1 = time.perf_counter()
    oids = sorted({b.oid for b in rust})
    facts: dict[str, FileFacts] = {}
    code_facts: dict[str, FileFacts] = {}
    if cache is not None:
        from analyzer.pipeline.cache import CODE, SITES
        facts = cache.get_many(oids, FileFacts.from_json)
        if code:
            code_facts = cache.get_many(oids, FileFacts.from_json, facet=CODE)
    missing = [o for o in oids if o not in facts or (code and o not in code_facts)]
    from_cache = set(oids) - set(missing)
    prefiltered: set[str] = set()
    contents: dict[str, bytes] = {}  # what the record stage reads its windows from
    if missing:
        sizes = {b.oid: b.size for b in rust}
        missing = _within_budget(missing, sizes, facts, code_facts if code else None)
    if missing:
        fresh = _parse_all(repo, missing, sizes, jobs if jobs is not None else (os.cpu_count() or 1), profile, progress,
                           prefiltered, code, contents, sources)
        facts.update((oid, p.sites) for oid, p in fresh.items())
        if cache is not None:
            # Written on a thread while the classifier runs; the cache's next use waits for it.
            batches = [({oid: p.sites_row for oid, p in fresh.items()}, SITES)]
            if code:
                batches.append(({oid: p.code_row for oid, p in fresh.items() if p.code_row is not None}, CODE))
            cache.put_encoded_behind(batches)
        if code:
            code_facts.update((oid, p.code) for oid, p in fresh.items() if p.code is not None)
    timings["parse"] = time.perf_counter() - t1

    # -- classify ------------------------------------------------------------------------
    t2 = time.perf_counter()
    crates = crates_of([b.path for b in rust], crate_roots)
    catalog = DtypeCatalog.build(((b.path, crates[b.path], facts[b.oid]) for b in rust), profile)
    audit: list[AuditEntry] = []
    for b in sorted(rust, key=lambda b: b.path):
        for s in facts[b.oid].sites:
            audit.append(AuditEntry(b.path, s, crates[b.path], classify(s, b.path, crates[b.path], catalog, run)))
    timings["classify"] = time.perf_counter() - t2

    # -- records -------------------------------------------------------------------------
    t3 = time.perf_counter()
    kept = [a for a in audit if a.decision.record]
    ids, alternates = assign([position_key(a.crate, a.site.item_path, a.site.context, a.site.scrutinee,
                                           a.decision.pattern, a.decision.catch_all, a.site.branch) for a in kept],
                     [a.path for a in kept], [a.site.line for a in kept])
    for a, i in zip(kept, ids):
        a.id = i
    from analyzer.records.build import file_lines, record_line

    by_path = {b.path: b for b in rust}
    need = {by_path[a.path].oid for a in kept}
    kept_sources = {b.path: contents[b.oid] for b in rust if b.oid in contents} if sources else {}
    # A dispatch macro's record lists what its crate's invocations hand it: read before the
    # parsed bytes are freed, so a cold run reads no file twice.
    handed = handed_decisions(kept, lambda crate: [b.path for b in rust if crates[b.path] == crate],
                              lambda paths: _read_paths(repo, [by_path[p] for p in paths], contents))
    # Which of the kept refusals a user can reach today: a decision over all of them at once, on
    # the decisions the records are built from.
    from analyzer.decisions.preemption import refusals, verdicts
    reach = verdicts(refusals(kept, profile, [handed.get(n, a.decision) for n, a in enumerate(kept)]),
                     catalog, profile)
    contents = {oid: data for oid, data in contents.items() if oid in need}  # the others freed now
    contents.update(repo.read_blobs(sorted(need - set(contents))))
    text_lines: dict[str, list[str]] = {}
    lines: list[RecordLine] = []
    budget = output_budget(sum(b.size for b in rust))
    written = 0
    for n, (a, alternate, verdict) in enumerate(zip(kept, alternates, reach)):
        oid = by_path[a.path].oid
        if oid not in text_lines:
            text_lines[oid] = file_lines(contents[oid])
        line = record_line(profile, repo.name, sha, now, a.path, a.crate, a.site, handed.get(n, a.decision), a.id,
                           text_lines[oid], alternate, catalog.inheriting(a.site, profile), verdict)
        written += len(line.record.sourceCode) + len(line.record.errorMessage) + RECORD_OVERHEAD
        if written > budget:
            raise UserError(f"the records at {sha[:12]} would pass {budget // 1_000_000:,} MB, more than "
                            f"{OUTPUT_PER_INPUT_BYTE} times the Rust read ({a.path} among the last): a generated "
                            f"or crafted tree, not analysed; nothing was written")
        lines.append(line)
    lines.sort(key=lambda ln: (ln.record.filePath, ln.record.lineNumber, ln.facts.column))
    carry: dict[str, int] = {}
    lineage_counts = None
    not_carried: list[dict] = []
    if previous is not None:
        # Each earlier record found again hands on its id, slug, tags and first-seen revision,
        # and its annotations while the content is unchanged (analyzer/lineage/).
        from analyzer.lineage.carry import carry_over
        from analyzer.lineage.link import link
        carried = carry_over(previous, lines, link(previous, lines, run=run, repo=repo, sha=sha,
                                                   records_at=records_at(repo, run, cache), catalog=catalog))
        lines, carry, lineage_counts = carried.lines, carried.annotation, carried.lineage
        not_carried = carried.not_carried
    timings["record"] = time.perf_counter() - t3
    timings["total"] = time.perf_counter() - t0

    code_files = _code_files(rust, crates, code_facts) if code else []
    parsed = [b for b in rust if facts[b.oid].sites or facts[b.oid].enums or facts[b.oid].parse_errors
              or (code and _holds_code(code_facts[b.oid]))]
    return Extraction(
        repo=repo.name, sha=sha, run=run, lines=lines, audit=audit, catalog=catalog,
        files_scanned=len(rust), files_parsed=len(parsed),
        parse_errors=sorted(b.path for b in rust if facts[b.oid].parse_errors),
        not_utf8=sorted(b.path for b in rust if facts[b.oid].not_utf8),
        # Per blob: served whole from the cache (every facet this run needs), or read again.
        cache_hits=len(from_cache) if cache is not None else 0,
        cache_misses=len(missing),
        timings={k: round(v, 3) for k, v in timings.items()}, carry=carry, lineage=lineage_counts, code=code_files,
        not_carried=not_carried,
        scan=_scan_counts(rust, from_cache, prefiltered), sources=kept_sources,
        skipped=sorted([{"path": b.path, "reason": facts[b.oid].skipped} for b in rust if facts[b.oid].skipped]
                       + [{"path": b.path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"),
                           "reason": "its file name is not UTF-8"} for b in bad_names]
                       + _read_by_rustc_only(tree, repo) + _included_not_rust(tree, rust, facts)
                       + _submodules(submodules),
                       key=lambda e: e["path"]),
        partly_read=sorted(({"path": b.path, "reason": facts[b.oid].partial} for b in rust if facts[b.oid].partial),
                           key=lambda e: e["path"]))


def _included_not_rust(tree: list, rust: list, facts: dict[str, FileFacts]) -> list[dict[str, str]]:
    """The files of the tree that Rust files pull in by name (`#[path = ".."]`, `include!("..")`)
    but that are not `.rs` files, so not read: each listed as skipped, with who names it. The name
    is taken from the including file's folder (and, for a `#[path]` inside an inline module, the
    folder named after the file)."""
    names = {b.path for b in tree}
    out: dict[str, str] = {}
    for b in rust:
        folder = posixpath.dirname(b.path)
        stem = posixpath.splitext(posixpath.basename(b.path))[0]
        for name in facts[b.oid].includes:
            for candidate in (posixpath.join(folder, name), posixpath.join(folder, stem, name)):
                path = posixpath.normpath(candidate)
                if path in names and not path.endswith(".rs") and path not in out:
                    out[path] = f"Rust code includes it ({b.path}) but it is not a .rs file; not read"
    return [{"path": p, "reason": why} for p, why in out.items()]


def _submodules(paths: list[str]) -> list[dict[str, str]]:
    """Each git submodule of the tree, listed as skipped: a gitlink names a commit of another
    repository, whose files (Rust a crate of this tree may build: `path = "vendor/x"`) the tree
    does not hold, so a site in them is never read."""
    return [{"path": p.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"),
             "reason": "a git submodule (a commit of another repository, whose files this tree does not hold); "
                       "not read"} for p in paths]


def records_at(repo: GitRepository, run: Run, cache=None) -> Callable[[str], list[RecordLine] | None]:
    """The tool's records at a commit of `repo` (None when it lacks the commit): how the lineage
    gives a published record, which has no analysis, the one its commit would have."""
    def at(sha: str) -> list[RecordLine] | None:
        if repo.try_resolve(sha) is None:
            return None
        return extract(repo, sha, run, cache=cache).lines
    return at


def _rust_files(tree: list, repo: GitRepository, sha: str) -> tuple[list, list]:
    """The tree's Rust files, and those of them whose path is not UTF-8 (git keeps bytes): those
    cannot be written into a record, and are listed as skipped, their bytes shown as \\xNN escapes."""
    rust = [b for b in tree if b.path.endswith(".rs") and not b.link]
    bad_names = [b for b in rust if not _is_utf8_name(b.path)]
    rust = [b for b in rust if _is_utf8_name(b.path)]
    if not rust and bad_names:
        raise UserError(f"the Rust files at {sha[:12]} in {repo.origin} all have file names that are not "
                        f"UTF-8; records cannot name them")
    if not rust:
        raise UserError(f"no Rust files at {sha[:12]} in {repo.origin}; is this the right repository "
                        f"and revision?")
    return rust, bad_names


_TARGET_PATH = re.compile(rb'\bpath\s*=\s*"([^"\\\n]{1,4096})"')


def _read_by_rustc_only(tree: list, repo: GitRepository) -> list[dict[str, str]]:
    """The Rust code of the tree the listing of `.rs` files never reads, each listed as skipped so
    no site can hide in it: a symbolic link named `.rs` or pointing at a folder that holds Rust
    files (rustc follows it; the tool reads git's objects, where a link is the path it names), and
    a file a Cargo.toml names as a target (`[lib] path = "src/lib.txt"`) that is not a `.rs` file."""
    links = [b for b in tree if b.link]
    manifests = [b for b in tree if posixpath.basename(b.path) == "Cargo.toml" and not b.link]
    if not links and not manifests:
        return []
    paths = {b.path for b in tree}
    folders = {posixpath.dirname(b.path) for b in tree if b.path.endswith(".rs")}
    folders |= {f for d in list(folders) for f in _parents(d)}
    text = dict(repo.read_blobs(sorted({b.oid for b in links + manifests})))
    out: dict[str, str] = {}
    for b in links:
        target = text.get(b.oid, b"").decode("utf-8", "replace")
        to = posixpath.normpath(posixpath.join(posixpath.dirname(b.path), target))
        if b.path.endswith(".rs") or to in folders:
            out.setdefault(b.path, f"a symbolic link to {target!r} that rustc follows; not read")
    for b in manifests:
        for m in _TARGET_PATH.finditer(text.get(b.oid, b"")):
            name = m.group(1).decode("utf-8", "replace")
            to = posixpath.normpath(posixpath.join(posixpath.dirname(b.path), name))
            if to in paths and not to.endswith(".rs"):
                out.setdefault(to, f"{b.path} names it as a target (path = {name!r}) but it is not a .rs file; "
                                   f"not read")
    return [{"path": p, "reason": why} for p, why in out.items()]


def _parents(folder: str) -> list[str]:
    parts = folder.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _read_paths(repo: GitRepository, blobs: list, contents: dict[str, bytes]) -> dict[str, bytes]:
    """{path: bytes} of some files, from the bytes already read where they are."""
    missing = sorted({b.oid for b in blobs} - set(contents))
    extra = dict(repo.read_blobs(missing)) if missing else {}
    return {b.path: contents[b.oid] if b.oid in contents else extra[b.oid] for b in blobs}


def _holds_code(f: FileFacts) -> bool:
    return bool(f.functions or f.traits or f.impls)


def _code_files(rust: list, crates: dict[str, str],
                code_facts: dict[str, FileFacts]) -> list[tuple[str, str, FileFacts]]:
    """(path, crate, code facts) of every file with functions, ops traits or impls, or macro
    definitions: what the coverage audit's call graph reads."""
    return [(b.path, crates[b.path], code_facts[b.oid]) for b in sorted(rust, key=lambda b: b.path)
            if _holds_code(code_facts[b.oid]) or code_facts[b.oid].macro_defs]


def _scan_counts(rust: list, from_cache: set[str], prefiltered: set[str]) -> dict[str, int]:
    """Per Rust file (two paths may share a blob): facts from the cache, parsed by this run, or
    kept from the parser by the prefilter; the three add up to the files scanned."""
    cached = sum(1 for b in rust if b.oid in from_cache)
    skipped = sum(1 for b in rust if b.oid in prefiltered)
    return {"cached": cached, "parsed": len(rust) - cached - skipped, "prefiltered": skipped}


def _is_utf8_name(path: str) -> bool:
    """Whether a tree path (decoded with surrogateescape) was UTF-8 in git."""
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def _import_record_stage() -> None:
    from analyzer.records import model as record  # noqa: F401
