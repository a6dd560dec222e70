#!/usr/bin/env python3
"""Where a cold `burn-errors extract` spends its time, stage by stage, in one process, against the
floor: reading every Rust blob of the revision plus tree-sitter parsing exactly what has to be
parsed (whole files that may hold a panic-family call or an ops trait or impl; the enum items of
files that only define enums). Nothing else is timed in the floor: no regex beyond the prefilter
that picks those files, no query, no facts.

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

from analyzer import parse as P
from analyzer.cache import decode, encode
from analyzer.classify import DtypeCatalog, classify
from analyzer.extract import _prefilter, crates_of, extract
from analyzer.source import GitRepository

IMPORTS = "import analyzer.cli, analyzer.extract, analyzer.sinks.audit, analyzer.sinks.jsonl, analyzer.sinks.manifest"


def best(rounds: int, fn) -> float:
    out = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        fn()
        out = min(out, time.process_time() - t)
    return out


def best_wall(rounds: int, fn) -> float:
    out = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def child_wall(rounds: int, code: str) -> float:
    out = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        out = min(out, time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--sha", default="HEAD")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    git_dir = Path(subprocess.run(["git", "-C", args.repo, "rev-parse", "--absolute-git-dir"], check=True,
                                  capture_output=True, text=True).stdout.strip())
    repo = GitRepository(git_dir, "tracel-ai/burn", args.repo)
    sha = repo.resolve(args.sha)
    rust = [b for b in repo.tree(sha) if b.path.endswith(".rs")]
    oids = sorted({b.oid for b in rust})
    blobs = dict(repo.read_blobs(oids))
    worth = _prefilter()
    whole = [o for o in oids if worth(blobs[o]) and (P.has_panic_hint(blobs[o]) or P.OPS_HINT.search(blobs[o]))]
    enum_only = [o for o in oids if worth(blobs[o]) and o not in set(whole)]
    parser = P._parser()
    for name in ("panic_calls.scm", "token_trees.scm", "enums.scm"):
        P.query(name)
    r = args.rounds
    rows: list[tuple[str, float]] = []

    rows.append(("start-up: python -c pass (wall)", child_wall(r, "pass")))
    rows.append(("start-up: the imports extract makes (wall, with the interpreter)", child_wall(r, IMPORTS)))
    rows.append(("git ls-tree (wall)", best_wall(r, lambda: repo.tree(sha))))
    rows.append((f"read {len(oids)} blobs ({sum(map(len, blobs.values())) / 1e6:.1f} MB) from git cat-file (wall)",
                 best_wall(r, lambda: list(repo.read_blobs(oids)))))
    rows.append(("prefilter + plain aliases of every blob",
                 best(r, lambda: [(worth(d), P.plain_aliases(d)) for d in blobs.values()])))
    whole_mb = sum(len(blobs[o]) for o in whole) / 1e6
    parse_whole = best(r, lambda: [parser.parse(blobs[o]) for o in whole])
    rows.append((f"tree-sitter parse of {len(whole)} files with a call or ops hint ({whole_mb:.2f} MB)", parse_whole))
    enum_items = best(r, lambda: [P._enum_items(blobs[o]) for o in enum_only])
    rows.append((f"enum items of {len(enum_only)} files with enums only (parse + facts)", enum_items))
    facts_all = best(r, lambda: [P.parse_file(blobs[o]) for o in whole])
    rows.append(("facts of those files (parse_file: parse + sites + enums + code facts)", facts_all))
    facts = {o: P.parse_file(blobs[o]) for o in oids}
    rows.append(("cache rows of those files: encode + decode",
                 best(r, lambda: [P.FileFacts.from_json(decode(encode(facts[o].to_json()))) for o in whole])))
    crate_roots: list[str] = []
    crates = crates_of([b.path for b in rust], crate_roots)

    def classify_all() -> None:
        catalog = DtypeCatalog.build([(b.path, crates[b.path], e) for b in rust for e in facts[b.oid].enums],
                                     [(b.path, crates[b.path], a, t) for b in rust for a, t in facts[b.oid].aliases])
        for b in rust:
            for s in facts[b.oid].sites:
                classify(s, b.path, crates[b.path], catalog)
    rows.append(("classify (catalog + every site)", best(r, classify_all)))
    rows.append(("extract() in one process (--jobs 1, no cache), all stages",
                 best(min(r, 3), lambda: extract(repo, sha, jobs=1))))

    floor = rows[3][1] + parse_whole + enum_items
    width = max(len(label) for label, _ in rows)
    print(f"{args.repo} @ {sha[:12]}: {len(rust)} Rust files, {len(oids)} blobs")
    for label, secs in rows:
        print(f"{label:<{width}}  {secs:6.3f} s")
    print(f"{'floor: read + parse of what must be parsed (one core)':<{width}}  {floor:6.3f} s")
    print(f"{'floor on two cores (parse split evenly, read alongside)':<{width}}  "
          f"{max(rows[3][1], floor / 2):6.3f} s")


if __name__ == "__main__":
    main()
