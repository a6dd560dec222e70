"""manifest.json: what run made records.jsonl."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from analyzer import __version__
from analyzer.core.config import SCHEMA_VERSION
from analyzer.pipeline.ruleset import rules_hash

if TYPE_CHECKING:  # a type only: the results-cache path writes manifests without the parser
    from analyzer.pipeline.extract import Extraction


def build(ex: Extraction, origin: str, command: list[str] | None = None, rev: str | None = None) -> dict:
    """What run made the records; `rev` is the revision as the user named it (a tag, a branch, a
    short SHA), kept beside the full SHA it resolved to."""
    return {
        "tool": "burn-errors",
        "toolVersion": __version__,
        "schemaVersion": SCHEMA_VERSION,
        "repo": ex.repo,
        "source": origin,
        "sha": ex.sha,
        "rev": rev if rev is not None else ex.sha,
        "rulesHash": rules_hash(),
        "records": len(ex.lines),
        "counts": ex.counts(),
        "excluded": ex.exclusion_counts(),
        "panicCalls": len(ex.audit),
        "filesScanned": ex.files_scanned,
        "filesParsed": ex.files_parsed,
        # This run: files whose facts came from the cache, were parsed, or were left unparsed by
        # the byte prefilter (no panic-family call, no enum); they add up to filesScanned.
        "scan": ex.scan,
        "filesWithParseErrors": ex.parse_errors,
        "filesNotUtf8": ex.not_utf8,
        "skipped": ex.skipped,
        "partlyRead": ex.partly_read,
        "dtypeEnums": ex.catalog.to_json(),
        "annotation": ex.carry or None,
        "lineage": ex.lineage,
        # With --previous: how many earlier records' annotations were not handed on (each is a
        # line of annotations-not-carried.jsonl, beside the records).
        "annotationsNotCarried": len(ex.not_carried) if ex.lineage is not None else None,
        "cache": {"hits": ex.cache_hits, "misses": ex.cache_misses},
        "timings": ex.timings,
        "command": command,
    }


def dumps(manifest: dict) -> str:
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
