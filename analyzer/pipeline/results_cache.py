"""The results cache: whole outputs of an earlier run, kept as rows of the cache's `results` table
(analyzer/pipeline/cache.py), so a rerun at the same commit neither reads blobs nor parses nor classifies.

A row is found by its key. The cache's tag already holds the tool version and the rules hash; the
key adds the commit, the options that change the outputs, and `code_hash()`, a hash of the code
that shapes them, so editing the record stage, the manifest or audit sink or any other module
without bumping the version can never serve outputs the new code would not write.

Kept lines were written by the record stage; a hit re-dates them as JSON and writes them back in
the one form of a records line (analyzer/core/jsonlines.py), without loading the schema (pydantic).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: a hit is served without importing the parser
    from analyzer.pipeline.cache import FactsCache
    from analyzer.profiles import Profile

_PACKAGE = Path(__file__).resolve().parent.parent

# The files `extract` writes, by what they hold.
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"
SITES_FILE = "sites.jsonl"
# With --previous: every earlier record whose annotations were not handed on, with them.
NOT_CARRIED_FILE = "annotations-not-carried.jsonl"


@cache
def code_hash() -> str:
    """A hash of every Python module of the package (names and bytes). Every module, not a list
    kept by hand: outputs are shaped by the record stage, the sinks, the classifier, the parser and
    what they import, and a module added later is covered without anyone remembering to list it."""
    digest = hashlib.sha256()
    for parts in _modules(_PACKAGE):
        with open(os.path.join(_PACKAGE, *parts), "rb") as fh:
            digest.update("/".join(parts).encode() + b"\0")
            digest.update(fh.read() + b"\0")
    return digest.hexdigest()[:16]


def _modules(package) -> list[tuple[str, ...]]:
    """The package-relative paths of its `.py` files, as folder parts, in the order sorting their
    paths gives (every run of a served command walks the package: plain strings, not Path objects)."""
    found = []
    for folder, _, names in os.walk(package):
        rel = os.path.relpath(folder, package)
        base = () if rel == "." else tuple(rel.split(os.sep))
        found += [(*base, name) for name in names if name.endswith(".py")]
    return sorted(found)


def key(kind: str, *parts: object) -> str:
    """The key of a row: what made it (`kind`), the code hash, then what it was made from."""
    return "|".join([kind, code_hash(), *(str(p) for p in parts)])


def extract_key(repo_name: str, sha: str, all_sites: bool) -> str:
    return key("extract", repo_name, sha, int(all_sites))


def put_extract(cache: FactsCache, row_key: str, records_text: str, sites_text: str | None, manifest: dict) -> None:
    """Keep the outputs of an extraction that read no earlier records (those shape the output too)."""
    cache.put_result(row_key, {"records": records_text.splitlines(), "sites": sites_text, "manifest": manifest})


def _served_line(line: str, repo: str, sha: str, prefix: str) -> bool:
    """Whether a kept records line may be served: one JSON object whose record is of `repo` at
    `sha` and links only to that commit's files on the target's host (`prefix`). The cache folder
    is trusted only when nobody else could write it, and a row is still checked: a row must never
    put in records.jsonl what the record stage would not write (a `javascript:` link)."""
    import json

    from analyzer.core.safe import https_url

    value = json.loads(line)
    record = value.get("record") if isinstance(value, dict) else None
    if not isinstance(record, dict) or record.get("repo") != repo or record.get("analyzedSha") != sha:
        return False
    url = record.get("githubUrl")
    return (isinstance(url, str) and https_url(url) == url
            and url.startswith(prefix))


def served_extract(row: dict, origin: str, out: Path, all_sites: bool, command: list[str],
                   seconds: float, repo: str, sha: str, profile: Profile,
                   rev: str | None = None) -> tuple[dict[Path, str], dict] | None:
    """The files of an earlier run kept in `row` for `repo` at `sha` of `profile`'s target, with
    this run's dates, source, command and timings: (files, manifest). None for a row of another
    shape or one that does not pass the checks (it is then made again)."""
    import json

    from analyzer.core.jsonlines import string_members
    from analyzer.pipeline import manifest
    from analyzer.core.timestamps import utc_now

    # Kept lines are re-dated as text: each holds the three dates once, all set by the run that
    # kept them (parsing and writing every line again as JSON would be a large part of a hit).
    # firstSeenAt too: first seen by this run, as in the run that made the row.
    stamp = json.dumps(utc_now())
    dates = string_members("analyzedAt", "contentChangedAt", "firstSeenAt")
    prefix = profile.blob_prefix(repo, sha)
    try:
        lines = []
        for raw in row["records"]:
            line, n = dates.subn(lambda m: f'"{m.group(1)}":{stamp}', raw)
            if n != 3 or not _served_line(line, repo, sha, prefix):
                return None
            lines.append(line)
        kept = dict(row["manifest"])
        scanned = int(kept["filesScanned"])
        sites = row["sites"]
        # What the closing summary reads, so a damaged row fails here and not after the writes.
        if kept.get("repo") != repo or kept.get("sha") != sha or not isinstance(kept.get("panicCalls"), int):
            return None
        counts = kept["counts"]
        if not (isinstance(counts, dict) and all(isinstance(n, int) for n in counts.values())):
            return None
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
        return None
    if all_sites and not isinstance(sites, str):
        return None
    kept.update(source=origin, command=command, rev=rev if rev is not None else sha,
                cache={"hits": scanned, "misses": 0, "result": "hit"},
                scan={"cached": scanned, "parsed": 0, "prefiltered": 0}, timings={"total": round(seconds, 3)})
    files = {out / RECORDS_FILE: "".join(line + "\n" for line in lines),
             out / MANIFEST_FILE: manifest.dumps(kept)}
    if all_sites:
        files[out / SITES_FILE] = sites
    return files, kept
