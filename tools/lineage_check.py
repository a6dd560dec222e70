"""Measure how well record ids survive from one revision to the next (analyzer/lineage/).

For each pair of consecutive revisions A, B of a repository:

- extract at A, then at B with A's records as `--previous` would give them;
- count the sites whose (crate, function, message) is unique among A's records and among B's,
  present on both sides, and how many of them kept A's id at B;
- diff A..B (by lineage, as `burn-errors diff` does) and count the sites listed both as removed
  and as added (the same crate, function and message on both lists): it should be none.

With `--as-published`, A's records are first turned into the published form: no `analysis`,
and ids that are not the structural ones (so the `id` tier cannot match); with `--sha-absent`
their `analyzedSha` is also one the repository does not have (no `history` tier either).

In that mode a last column compares its links with those found from the tool's own records:
how many pair the same earlier record with the same site / with another site / link a record
the tool's records left unmatched.

Prints a markdown table of counts only (no messages or source).

    python tools/lineage_check.py --repo ../burn v0.18.0 v0.19.0 v0.20.0
    python tools/lineage_check.py --repo ../burn --as-published --sha-absent v0.22.0-pre.2 main
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from collections import Counter
from pathlib import Path

from analyzer import __version__
from analyzer.pipeline.cache import FactsCache
from analyzer.features.diff import Side, compare
from analyzer.pipeline.extract import extract, records_at
from analyzer.lineage.carry import carry_over
from analyzer.lineage.link import link
from analyzer.pipeline.ruleset import rules_hash
from analyzer.source.repository import open_repository


def _key(line) -> tuple[str, str, str]:
    return (line.facts.crate, line.facts.function, line.record.errorMessage)


def _unique(lines) -> dict[tuple[str, str, str], object]:
    n = Counter(_key(ln) for ln in lines)
    return {_key(ln): ln for ln in lines if n[_key(ln)] == 1}


def as_published(lines, sha_absent: bool):
    """The records as the published dataset holds them: no analysis, the publisher's own ids."""
    from analyzer.records.model import RecordLine, slug

    out = []
    for ln in lines:
        rid = hashlib.sha256(("published:" + ln.record.id).encode()).hexdigest()[:16]
        update = {"id": rid, "slug": slug(ln.record.errorMessage, rid)}
        if sha_absent:
            update["analyzedSha"] = "0" * 40
        out.append(RecordLine(record=ln.record.model_copy(update=update), datasetVersion="2026-01-01T00:00:00.000Z"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="local clone or bare repository")
    ap.add_argument("revs", nargs="+", help="revisions, oldest first")
    ap.add_argument("--as-published", action="store_true", help="give the earlier records in the published form")
    ap.add_argument("--sha-absent", action="store_true", help="with --as-published: an analyzedSha not in the repo")
    args = ap.parse_args()
    repo = open_repository(args.repo, None)
    print("| from | to | records (from → to) | unique crate+function+message on both sides | kept their id "
          "| lineage: id / history / function / message / window / new / not found "
          "| diff: added / removed / changed / moved | removed and added |"
          + (" links agree / differ / extra |" if args.as_published else ""))
    print("|---|---|---|---|---|---|---|---|" + ("---|" if args.as_published else ""))
    with tempfile.TemporaryDirectory() as tmp:
        cache = FactsCache(Path(tmp), rules_hash(), __version__)
        try:
            for a_rev, b_rev in zip(args.revs, args.revs[1:]):
                a_sha, b_sha = repo.resolve(a_rev), repo.resolve(b_rev)
                tool_a = extract(repo, a_sha, cache=cache).lines
                a = as_published(tool_a, args.sha_absent) if args.as_published else tool_a
                b = extract(repo, b_sha, cache=cache).lines
                lineage = link(a, b, repo=repo, sha=b_sha, records_at=records_at(repo, cache))
                carried = carry_over(a, b, lineage).lines
                # Keys from the tool's own records on both sides (crate and function as parsed);
                # an earlier record keeps its id when the site's new record has that earlier id.
                earlier_id = {id(t): x.record.id for t, x in zip(tool_a, a)}
                ua, ub = _unique(tool_a), _unique(carried)
                both = ua.keys() & ub.keys()
                kept = sum(1 for k in both if earlier_id[id(ua[k])] == ub[k].record.id)  # type: ignore[attr-defined]
                c = lineage.counts()
                tiers = " / ".join(str(c[t]) for t in ("id", "history", "function", "message", "window", "new",
                                                        "notFound"))
                d = compare(a, b, Side(a_rev, "git", repo.name, a_sha, len(a)),
                            Side(b_rev, "git", repo.name, b_sha, len(b)), git_repo=repo)
                tool_of = {x.record.id: t for t, x in zip(tool_a, a)}
                twice = {_key(tool_of[x.record.id]) for x in d.removed} & {_key(x) for x in d.added}
                n = d.counts()
                row = (f"| {a_rev} | {b_rev} | {len(a)} → {len(b)} | {len(both)} | {kept} | {tiers} "
                       f"| {n['added']} / {n['removed']} / {n['changed']} / {n['moved']} | {len(twice)} |")
                if args.as_published:
                    ref = {k.previous: k.current for k in link(tool_a, b, repo=repo, sha=b_sha).links}
                    same = sum(1 for k in lineage.links if ref.get(k.previous) == k.current)
                    extra = sum(1 for k in lineage.links if k.previous not in ref)
                    row += f" {same} / {len(lineage.links) - same - extra} / {extra} |"
                print(row)
                sys.stdout.flush()
        finally:
            cache.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
