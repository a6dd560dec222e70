#!/usr/bin/env python3
"""Where a cold `burn-errors extract` spends its time, stage by stage, in one process, against the
floor: reading every Rust blob of the revision plus tree-sitter parsing exactly what has to be
parsed (the planned items of files that may hold a panic-family call, see analyzer/facts/regions.py;
the enum items of files that only define enums). Nothing else is timed in the floor: no lexer, no
regex beyond the prefilter that picks those files, no query, no facts.

    python bench/floor.py --repo ../burn --sha 2c06be351006 --rounds 5

Each figure is the fastest of the rounds, in CPU seconds of this process, so that other programs
on a shared machine disturb it less than they disturb wall time; what git does (listing the tree,
inflating the blobs) is wall time, git's CPU being outside this process. `start-up` is measured
in child interpreters: `python -c pass`, and the imports the extract command makes before it reads
anything.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from analyzer.facts import enums, regions, syntax
from analyzer.facts import parse as P
from analyzer.facts.model import FileFacts
from analyzer.facts.prefilter import plain_aliases
from analyzer.pipeline.cache import decode, encode
from analyzer.decisions.catalog import DtypeCatalog
from analyzer.decisions.classify import classify
from analyzer.pipeline.extract import _prefilter, extract
from analyzer.profiles import DEFAULT, load
from analyzer.profiles.run import Run
from analyzer.source.crates import crates_of
from analyzer.source.repository import GitRepository

IMPORTS = ("import analyzer.cli, analyzer.pipeline.extract, analyzer.sinks.audit, analyzer.records.reader, "
           "analyzer.pipeline.manifest")


def best(rounds: int, fn, clock=time.process_time) -> float:
    """The fastest of `rounds` calls of fn: CPU seconds of this process, or wall with perf_counter."""
    out = float("inf")
    for _ in range(rounds):
        t = clock()
        fn()
        out = min(out, clock() - t)
    return out


def best_wall(rounds: int, fn) -> float:
    return best(rounds, fn, time.perf_counter)


def child_wall(rounds: int, code: str) -> float:
    return best_wall(rounds, lambda: subprocess.run([sys.executable, "-c", code], check=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--sha", default="HEAD")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    git_dir = Path(subprocess.run(["git", "-C", args.repo, "rev-parse", "--absolute-git-dir"], check=True,
                                  capture_output=True, text=True).stdout.strip())
    repo = GitRepository(git_dir, "tracel-ai/burn", args.repo)
    run = Run(load(DEFAULT))
    sha = repo.resolve(args.sha)
    rust = [b for b in repo.tree(sha) if b.path.endswith(".rs")]
    oids = sorted({b.oid for b in rust})
    blobs = dict(repo.read_blobs(oids))
    prefilter = _prefilter(False, run.profile)
    verdict = {o: prefilter(blobs[o]) for o in oids}  # (worth parsing, has a call)
    calls = [o for o in oids if all(verdict[o])]
    enum_only = [o for o in oids if verdict[o] == (True, False)]
    parser = syntax._parser()
    ranged = P._ranged_parser()
    for name in ("panic_calls.scm", "token_trees.scm", "enums.scm"):
        syntax.query(name)
    r = args.rounds
    rows: list[tuple[str, float]] = []

    def hits(data: bytes) -> list[int]:
        return P.site_hits(data)

    plans = {o: regions.plan(blobs[o], hits(blobs[o])) for o in calls}
    planned = {o: P._points(blobs[o], p.ranges) for o, p in plans.items() if p is not None and p.ranges}

    def parse_planned() -> None:
        for o in calls:
            if o in planned:
                ranged.included_ranges = planned[o]
                ranged.parse(blobs[o])
            else:  # no plan: the whole file, as parse_file does
                parser.parse(blobs[o])

    rows.append(("start-up: python -c pass (wall)", child_wall(r, "pass")))
    rows.append(("start-up: the imports extract makes (wall, with the interpreter)", child_wall(r, IMPORTS)))
    rows.append(("git ls-tree (wall)", best_wall(r, lambda: repo.tree(sha))))
    rows.append((f"read {len(oids)} blobs ({sum(map(len, blobs.values())) / 1e6:.1f} MB) from git cat-file (wall)",
                 best_wall(r, lambda: list(repo.read_blobs(oids)))))
    rows.append(("prefilter + plain aliases of every blob",
                 best(r, lambda: [(prefilter(d), plain_aliases(d)) for d in blobs.values()])))
    calls_mb = sum(len(blobs[o]) for o in calls) / 1e6
    planned_mb = sum(plans[o].size if o in planned else len(blobs[o]) for o in calls) / 1e6
    rows.append((f"for comparison: tree-sitter parse of the {len(calls)} files with a call, whole ({calls_mb:.2f} MB)",
                 best(r, lambda: [parser.parse(blobs[o]) for o in calls])))
    rows.append(("brace lexer + plan of those files", best(r, lambda: [regions.plan(blobs[o], hits(blobs[o]))
                                                                          for o in calls])))
    parse_items = best(r, parse_planned)
    rows.append((f"tree-sitter parse of their planned items ({planned_mb:.2f} MB; {len(calls) - len(planned)} whole)",
                 parse_items))
    enum_items = best(r, lambda: [enums._enum_items(blobs[o]) for o in enum_only])
    rows.append((f"enum items of {len(enum_only)} files with enums only (parse + facts)", enum_items))
    rows.append(("site facts of the files with a call (parse_file: plan + parse + sites + enums)",
                 best(r, lambda: [P.parse_file(blobs[o], run.profile) for o in calls])))
    facts = {o: P.parse_file(blobs[o], run.profile) for o in oids}
    rows.append(("cache rows of those files: encode + decode",
                 best(r, lambda: [FileFacts.from_json(decode(encode(facts[o].to_json()))) for o in calls])))
    crate_roots: list[str] = []
    crates = crates_of([b.path for b in rust], crate_roots)

    def classify_all() -> None:
        catalog = DtypeCatalog.build(((b.path, crates[b.path], facts[b.oid]) for b in rust), run.profile)
        for b in rust:
            for s in facts[b.oid].sites:
                classify(s, b.path, crates[b.path], catalog, run)
    rows.append(("classify (catalog + every site)", best(r, classify_all)))
    rows.append(("extract() in one process (--jobs 1, no cache), all stages",
                 best(min(r, 3), lambda: extract(repo, sha, run, jobs=1))))

    floor = rows[3][1] + parse_items + enum_items
    width = max(len(label) for label, _ in rows)
    print(f"{args.repo} @ {sha[:12]}: {len(rust)} Rust files, {len(oids)} blobs")
    for label, secs in rows:
        print(f"{label:<{width}}  {secs:6.3f} s")
    print(f"{'floor: read + parse of what must be parsed (one core)':<{width}}  {floor:6.3f} s")
    print(f"{'floor on two cores (parse split evenly, read alongside)':<{width}}  "
          f"{max(rows[3][1], floor / 2):6.3f} s")


if __name__ == "__main__":
    main()
