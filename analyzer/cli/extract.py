"""`burn-errors extract`: analyse a revision and write records.jsonl and manifest.json (and
sites.jsonl with --all-sites)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from .common import _STARTED, analyse, debug_option, opened, repo_options, sha_option

@click.command()
@repo_options
@sha_option
@click.option("--out", "out_dir", default="output", show_default=True, type=click.Path(file_okay=False),
              help="Folder for records.jsonl and manifest.json.")
@click.option("--previous", type=click.Path(exists=True),
              help="Earlier records (records.jsonl, the published envelopes, or a folder of them): each "
                   "site found again keeps its id, slug, tags and first-seen revision, and its "
                   "annotations and contentChangedAt while its content is unchanged.")
@click.option("--all-sites", is_flag=True,
              help="Also write sites.jsonl: every panic-family call with its category or the rule that "
                   "left it out (an audit of the classifier).")
@click.option("--jobs", type=click.IntRange(1, 64), help="Parser processes (default: one per core).")
@debug_option
def extract(repo, rev, out_dir, previous, all_sites, no_cache, repo_name, jobs):
    """Find the sites and write OUT/records.jsonl and OUT/manifest.json.

    \b
    Examples:
      burn-errors extract                                  # burn at the pin, from GitHub
      burn-errors extract --repo ../burn --sha HEAD --out output/
      burn-errors extract --repo ../burn --previous old/records.jsonl --all-sites
    """
    from ..outputs import ensure_writable_dir, write_files
    from ..ui import summary

    out = Path(out_dir)
    ensure_writable_dir(out)
    command = ["extract", *sys.argv[2:]]
    prev = None
    if previous:
        from ..sinks import jsonl
        prev = jsonl.read(previous)
    with opened(repo, rev, repo_name, no_cache) as (git_repo, sha, cache):
        key = _results_key(git_repo.name, sha, all_sites)
        hit = cache.get_result(key) if cache is not None and prev is None else None
        if hit is not None:
            files, man = _files_from_result(hit, git_repo.origin, out, all_sites, command)
            write_files(files)
            summary(man, [str(p) for p in files])
            return
        from ..sinks import audit, jsonl, manifest

        ex = analyse(git_repo, sha, cache, jobs, prev)
        man = manifest.build(ex, git_repo.origin, command)
        records_text = jsonl.dumps(ex.lines)
        audit_text = audit.dumps(ex) if all_sites else None
        files = {out / "records.jsonl": records_text, out / "manifest.json": manifest.dumps(man)}
        if audit_text is not None:
            files[out / "sites.jsonl"] = audit_text
        write_files(files)
        # Records whose annotations were carried over: unchanged ones that had any to keep.
        kept = sum(1 for ln in ex.lines if ln.analysis.annotationStatus == "unchanged" and ln.record.is_annotated())
        summary(man, [str(p) for p in files], previous=previous, annotations_kept=kept)
        if cache is not None and prev is None:
            cache.put_result(key, {"records": records_text.splitlines(), "sites": audit_text, "manifest": man})


def _results_key(name: str, sha: str, all_sites: bool) -> str:
    return f"extract|{name}|{sha}|{int(all_sites)}"


def _files_from_result(hit: dict, origin: str, out: Path, all_sites: bool, command: list[str]):
    """The outputs of an earlier run at the same commit with the same rules, tool version and
    options (a results-cache row), with this run's dates: (files, manifest)."""
    import json

    from ..sinks import manifest
    from ..timestamps import utc_now

    now = utc_now()
    lines = []
    for raw in hit["records"]:
        line = json.loads(raw)
        line["record"]["analyzedAt"] = line["record"]["contentChangedAt"] = now
        if "firstSeenAt" in line["analysis"]:
            line["analysis"]["firstSeenAt"] = now
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    man = dict(hit["manifest"])
    man.update(source=origin, command=command, cache={"hits": man["filesScanned"], "misses": 0, "result": "hit"},
               scan={"cached": man["filesScanned"], "parsed": 0, "prefiltered": 0},
               timings={"total": round(time.perf_counter() - _STARTED, 3)})
    files = {out / "records.jsonl": "".join(ln + "\n" for ln in lines),
             out / "manifest.json": manifest.dumps(man)}
    if all_sites:
        files[out / "sites.jsonl"] = hit["sites"]
    return files, man

