"""Records in the published dataset's form, built by hand for tests: an envelope
`{"record": {32 keys}, "datasetVersion": "..."}` per record, no `analysis`, with an id that is the
publisher's (not the tool's structural id), annotations and tags an annotator added."""

from __future__ import annotations

import json
from pathlib import Path

RADIUS = 18  # lines of source each side of the call, as published


def line_of(text: str, needle: str) -> int:
    """1-based number of the only line of `text` holding `needle`."""
    hits = [i for i, line in enumerate(text.split("\n"), start=1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def published_record(*, rid: str, text: str, path: str, needle: str, message: str, sha: str,
                     background: str, tags: list[str], annotated_at: str = "2026-08-14T09:30:00.000Z",
                     annotation: dict | None = None) -> dict:
    """The 32 keys, in the published order and JSON types, for the call on the line holding `needle`."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    line = line_of(text, needle)
    start, end = max(1, line - RADIUS), min(len(lines), line + RADIUS)
    slug_text = "".join(c if c.isalnum() else "-" for c in message.lower())
    while "--" in slug_text:  # runs of other characters become one dash
        slug_text = slug_text.replace("--", "-")
    record = {
        "id": rid, "repo": "tracel-ai/burn", "slug": slug_text[:50] + "-" + rid[:6], "errorCode": None,
        "errorMessage": message, "messagePattern": message, "errorType": "panic", "errorClass": None,
        "httpStatus": None, "severity": "error", "filePath": path, "lineNumber": line,
        "sourceCode": "\n".join(lines[start - 1:end]), "sourceCodeStart": start, "sourceCodeEnd": end,
        "githubUrl": f"https://github.com/tracel-ai/burn/blob/{sha}/{path}#L{start}-L{end}",
        "documentation": None, "triggerScenarios": None, "commonSituations": None, "solutions": None,
        "exampleFix": None, "handlingStrategy": None, "validationCode": None, "typeGuard": None,
        "tryCatchPattern": None, "preventionTips": None, "tags": tags, "backgroundTag": background,
        "analyzedSha": sha, "analyzedAt": annotated_at, "contentChangedAt": annotated_at, "schemaVersion": 2,
    }
    record.update(annotation or {})
    return record


def annotation_for(topic: str) -> dict:
    """A complete, distinct annotation (so a mix-up between records shows)."""
    return {
        "documentation": f"The backend has no kernel for {topic}; the call panics.",
        "triggerScenarios": f"Calling {topic} with a dtype the backend lacks.",
        "commonSituations": "Half-precision models; integer inputs fed straight in.",
        "solutions": [f"Cast before {topic}", "Use another backend"],
        "exampleFix": "// before\nlet y = f(x);\n// after\nlet y = f(x.cast(DType::F32));",
        "handlingStrategy": "conversion",
        "validationCode": "fn check(x: &Tensor) { assert!(x.dtype() == DType::F32); }",
        "typeGuard": None,
        "tryCatchPattern": None,
        "preventionTips": [f"Test {topic} with every dtype you ship"],
    }


def envelope(record: dict, version: str = "2026-09-01T12:00:00.000Z") -> dict:
    return {"record": record, "datasetVersion": version}


def write_envelope_folder(folder: Path, records: list[dict]) -> Path:
    """One pretty-printed envelope file per record, named by slug, as the dataset is published."""
    folder.mkdir(parents=True, exist_ok=True)
    for r in records:
        (folder / f"{r['slug']}.json").write_text(json.dumps(envelope(r), indent=2) + "\n", encoding="utf-8")
    return folder
