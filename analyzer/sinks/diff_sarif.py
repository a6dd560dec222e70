"""`burn-errors diff --format sarif`: SARIF 2.1.0 for GitHub code scanning.

One result per added site (a new panic a user can hit), under one rule per category
(`burn-errors/dtype-dispatch`, `burn-errors/unsupported-mode`, `burn-errors/unsupported-op`).
Each result points at the file and
line in the head revision, relative to the repository root (`%SRCROOT%`), and carries
`partialFingerprints` made from the record id, so code scanning recognises the same site across
runs even when lines above it move.
"""

from __future__ import annotations

import json
from functools import lru_cache

from analyzer import __version__
from analyzer.decisions.categories import CATEGORIES
from analyzer.features.diff import DiffResult
from analyzer.profiles import current
from analyzer.records.model import RecordLine
from analyzer.core.safe import https_url, url_path, visible_values
from analyzer.sinks import Options

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "burnErrorsId/v1"
AUTOMATION_ID = "burn-errors-diff/"

def rule_id(category: str) -> str:
    return f"burn-errors/{category}"


@lru_cache(maxsize=1)
def information_uri() -> str | None:
    """The tool's homepage from its installed metadata (pyproject's [project.urls]); None when
    it names none (the property is optional in SARIF, and no address is made up)."""
    try:
        from importlib.metadata import metadata
        meta = metadata("burn-errors")
        for entry in meta.get_all("Project-URL") or []:
            _, _, url = entry.partition(",")
            if https_url(url.strip()):
                return https_url(url.strip())
        home = meta["Home-page"] if "Home-page" in meta else None
        if home and https_url(home):
            return https_url(home)
    except Exception:
        pass
    return None


def _rule(category: str) -> dict:
    c = CATEGORIES[category]
    rule = {
        "id": rule_id(category),
        "name": c.sarif_name,
        "shortDescription": {"text": c.sarif_short},
        "fullDescription": {"text": c.sarif_full},
        "help": {"text": c.sarif_help, "markdown": c.sarif_help},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": [current().name, "panic", c.background_tag], "precision": "high"},
    }
    home = information_uri()
    if home is not None:
        rule["helpUri"] = home
    return rule


def _message(line: RecordLine) -> str:
    r, a = line.record, line.facts
    where = f"{a.crate}::{a.function}" if a.function else a.crate
    said = f": \"{r.errorMessage}\"" if r.errorMessage.strip() else " with an empty panic message"
    text = f"New panic site in {where}{said}"
    if a.rejected:
        text += f"; panics for {', '.join(a.rejected)}"
    elif a.pattern:
        text += f"; panics for `{a.pattern}`"
    return text + "."


def _result(line: RecordLine, index: dict[str, int]) -> dict:
    r, a = line.record, line.facts
    return {
        "ruleId": rule_id(a.category),
        "ruleIndex": index[a.category],
        "level": "warning",
        "message": {"text": _message(line)},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": url_path(r.filePath), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": r.lineNumber},
        }}],
        "partialFingerprints": {FINGERPRINT: r.id},
        "properties": {"recordId": r.id, "crate": a.crate, "function": a.function,
                       "operation": a.operation, "macro": a.macro, "pattern": a.pattern,
                       "rejected": list(a.rejected), "githubUrl": https_url(r.pinned_url)},
    }


UNREAD_RULE = "burn-errors/unread-file"


def _unread_rule() -> dict:
    text = ("A Rust file of the head revision could not be read whole (past a budget, or nested "
            "past what is read), so a panic site in it may be missing from this analysis.")
    return {"id": UNREAD_RULE, "name": "UnreadFile", "shortDescription": {"text": "File not read whole"},
            "fullDescription": {"text": text}, "help": {"text": text, "markdown": text},
            "defaultConfiguration": {"level": "error"}, "properties": {"tags": [current().name, "coverage"]}}


def _location(path: str) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": url_path(path), "uriBaseId": "%SRCROOT%"}}}


def _unread_result(entry: dict, index: int) -> dict:
    how = "was skipped" if entry["whole"] else "was read only in part"
    return {"ruleId": UNREAD_RULE, "ruleIndex": index, "level": "error",
            "message": {"text": f"This file {how} ({entry['reason']}); panic sites in it may be missing."},
            "locations": [_location(entry["path"])],
            "partialFingerprints": {FINGERPRINT: "unread:" + entry["path"]}}


def build(result: DiffResult) -> dict:
    categories = list(CATEGORIES)
    index = {c: i for i, c in enumerate(categories)}
    driver: dict = {"name": "burn-errors", "version": __version__, "semanticVersion": __version__}
    home = information_uri()
    if home is not None:
        driver["informationUri"] = home
    driver["rules"] = [_rule(c) for c in categories]
    invocation: dict = {"executionSuccessful": True}
    results = [_result(line, index) for line in result.added]
    if result.unread:
        # Said twice: as the tool's notifications (SARIF's place for what it could not analyse),
        # and as results, which code scanning shows as alerts.
        driver["rules"].append(_unread_rule())
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": f"{e['path']}: not read whole ({e['reason']})"},
             "locations": [_location(e["path"])]} for e in result.unread]
        results += [_unread_result(e, len(categories)) for e in result.unread]
    run: dict = {
        "tool": {"driver": driver},
        "automationDetails": {"id": AUTOMATION_ID},
        "invocations": [invocation],
        "results": results,
        "properties": {"base": result.base.sha or result.base.label,
                       "head": result.head.sha or result.head.label,
                       "summary": result.counts()},
    }
    if result.repo and result.head.sha:
        run["versionControlProvenance"] = [{"repositoryUri": current().link("repository", repo=url_path(result.repo)),
                                            "revisionId": result.head.sha}]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(result: DiffResult, options: Options) -> str:
    # Every text of an alert is shown to a person by code scanning: no control character or
    # bidirectional override in any of them (core/safe.py's one policy).
    return json.dumps(visible_values(build(result)), indent=2, ensure_ascii=False) + "\n"
