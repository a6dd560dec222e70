"""The annotation hand-off: prompts out, validated answers back in.

`export` picks the records that need annotation and writes, per record, a prompt
(`<id>.prompt.md`, from `templates/annotate_prompt.md.j2`) and an answer skeleton (`<id>.json`,
the `Annotation` model with every field null but the id and the record's content hash), plus
`export.json`: which records file, when, and each record's content hash at export time. A filled
answer already in the folder is kept as it is; one written for other content is reported stale.

A record needs annotation when it has no annotation yet, or when `analysis.annotationStatus` is
`new` or `changed` and no answer was imported since that extraction (`analysis.annotatedAt`, set
by `import`, is absent). After `extract --previous`, a record whose content did not change is
`unchanged` and keeps its annotation, so it is not exported again.

`import` reads answers back. Each answer is validated with the same pydantic `Annotation` model
the records use, plus what the model cannot know:

- the file must hold one JSON object (a Markdown ```json fence around it is accepted);
- its `id` must be a record of RECORDS, given by one answer only, and equal to the file's name
  when the file is named `<16 hex>.json`;
- no text may be blank and no list empty (write null instead);
- the content hash the answer holds (`contentHash`, written into the skeleton) must be the
  record's current one, wherever the answer sits (else it describes code that is gone); an answer
  without one is checked against the `export.json` beside it, when that lists the id.

An answer with every field null is a skeleton not filled yet: skipped and counted, not an error.
Any other problem names the file and the field. By default one bad answer stops the import and
nothing is written (exit 2); with `--skip-bad` the good answers are imported and the bad ones
listed. An imported answer replaces all ten annotation fields of its record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from pydantic import ValidationError

from analyzer.profiles import current
from analyzer.decisions.categories import CATEGORIES
from analyzer.core.errors import UserError
from analyzer.core.inputs import read_text
from analyzer.records.model import ANNOTATION_FIELDS, Annotation, HandlingStrategy, RecordLine

EXPORT_MANIFEST = "export.json"
# The record tag that says a model helped write the annotation (`import --ai-assisted`); a page
# says "AI-assisted analysis" only for records that carry it.
AI_TAG = "ai-assisted"
PROMPT_SUFFIX = ".prompt.md"
_ID_NAME = re.compile(r"^[0-9a-f]{16}$")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n(.*)\n[ \t]*```\s*$", re.S)

# An answer or export.json is a few kilobytes; a bigger one is refused unread.
MAX_ANSWER_BYTES = 16 << 20

# What each field of the answer holds: (JSON type, guidance). Keys are the Annotation fields.
FIELD_GUIDE: dict[str, tuple[str, str]] = {
    "documentation": (
        "string",
        "2 to 4 plain sentences: what the code does at this site, which dtype, mode or setting it "
        "does not support, and why it panics instead of returning a result. Say whether this is a "
        "feature the backend does not implement or a wrong input from the caller."),
    "triggerScenarios": (
        "string",
        "1 or 2 sentences: the user-level call and the exact dtype, mode or option value that reaches "
        "this arm (forward or backward pass, which configuration)."),
    "commonSituations": (
        "string",
        "Realistic situations in which users meet it, separated by semicolons (porting a model "
        "between backends, a config file choosing the mode, a mixed-precision or quantization setup)."),
    "solutions": (
        "list of strings",
        "3 to 5 short imperative fixes, the most direct first: change the setting or cast to a "
        "supported dtype, use a supported alternative, run on a backend that supports it, check early."),
    "exampleFix": (
        "string",
        "Rust: the smallest change that avoids the panic, as `// before` lines then `// after` lines."),
    "handlingStrategy": (
        "string",
        "The main way to handle it, one of: " + ", ".join(get_args(HandlingStrategy)) + "."),
    "validationCode": (
        "string or null",
        "Rust: a function that checks the input before the call and fails with a clear message that "
        "names what is supported."),
    "typeGuard": (
        "string or null",
        "Rust: a predicate `fn ...(...) -> bool` that tells whether an input is supported; null when "
        "no such guard makes sense."),
    "tryCatchPattern": (
        "string or null",
        "Rust: catching the panic with `std::panic::catch_unwind` and falling back to something "
        "that works; null when recovering makes no sense."),
    "preventionTips": (
        "list of strings",
        "3 to 5 short imperative tips that keep this panic from happening again."),
}

# The style example: the annotation of the dataset's sample record, told in words.
STYLE_EXAMPLE = (
    "For a panic raised when the LibTorch backend is asked for the backward pass of an interpolation "
    "mode it does not implement, a good answer reads like this. `documentation` says the backend "
    "lacks the backward pass for that mode, that it stops rather than produce wrong gradients, and "
    "that this is a missing feature, not a data or environment problem. `triggerScenarios` names the "
    "backward pass of a resize layer configured with that mode during training. `commonSituations` "
    "lists porting a model from a backend where the mode works, matching an ONNX or PyTorch resize "
    "setting, and shared training code where a config file picks the mode. `solutions` gives four "
    "fixes: switch to the closest supported mode, use other modes with a backward pass, run on a "
    "backend that implements it, reject the mode at startup. `exampleFix` shows the one-line change "
    "of the options as before and after. `handlingStrategy` is `validation`. `validationCode` is a "
    "small function that matches on the mode and panics with a message naming the supported modes. "
    "`typeGuard` is null. `tryCatchPattern` wraps the forward and backward call in `catch_unwind` "
    "with a fallback. `preventionTips` gives four short tips. Every code snippet is short, compiles "
    "in spirit, and uses the names of the code shown, not invented APIs."
)


def needs_annotation(line: RecordLine) -> bool:
    if not line.record.is_annotated():
        return True
    if line.analysis is None:  # a published record: annotated, and no extraction changed it since
        return False
    return line.analysis.annotationStatus in ("new", "changed") and line.analysis.annotatedAt is None


def skeleton(record_id: str, content_hash: str | None = None) -> dict:
    """The answer to fill: the Annotation model's fields, all null but the id and the content
    hash of the record it is for."""
    return Annotation(id=record_id, contentHash=content_hash).model_dump(mode="json")


def skeleton_text(record_id: str, content_hash: str | None = None) -> str:
    return json.dumps(skeleton(record_id, content_hash), indent=2) + "\n"


def prompt_context(line: RecordLine, earlier: dict | None = None,
                   by_id: dict[str, RecordLine] | None = None) -> dict:
    """What the prompt template sees; `by_id` holds the records a preempted one names as the
    refusals met first."""
    from analyzer.features.pages import met_first

    r, a = line.record, line.facts
    width = len(str(r.sourceCodeEnd))
    numbered = "\n".join(f"{'>' if n == r.lineNumber else ' '} {n:>{width}} | {text}".rstrip()
                         for n, text in enumerate(r.sourceCode.split("\n"), start=r.sourceCodeStart))
    fields = [(name, *FIELD_GUIDE[name]) for name in ANNOTATION_FIELDS]
    return {
        "r": r, "a": a, "category": CATEGORIES[a.category],
        "numbered_source": numbered, "fields": fields, "style_example": STYLE_EXAMPLE,
        "skeleton": json.dumps(skeleton(r.id, a.contentHash), indent=2),
        "field_names": ["id", "contentHash", *ANNOTATION_FIELDS],
        "target_kind": current().prompt.kind,  # how the target names itself: "the Rust deep-learning framework"
        "earlier": json.dumps({"id": r.id, "contentHash": a.contentHash, **{
            k: earlier["annotations"].get(k) for k in ANNOTATION_FIELDS}}, indent=2, ensure_ascii=False)
        if earlier else None,
        "earlier_changes": [str(c) for c in earlier.get("changes", [])] if earlier else [],
        "met_first": met_first(line, by_id or {}, {}, "") if a.reach == "preempted" else [],
    }


def read_not_carried(path: Path) -> list[dict]:
    """The lines of an annotations-not-carried.jsonl that `extract --previous` wrote: each earlier
    record's annotations and why they were not carried. A line of another shape is an error that
    names it."""
    out = []
    text = read_text(path, "annotations-not-carried file", MAX_NOT_CARRIED_BYTES)
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            entry = None
        ok = (isinstance(entry, dict) and entry.get("why") in ("changed", "dropped")
              and isinstance(entry.get("annotations"), dict) and isinstance(entry.get("id"), str)
              and (entry["why"] == "dropped" or isinstance((entry.get("now") or {}).get("id"), str))
              and isinstance(entry.get("changes", []), list))
        if not ok:
            raise UserError(f"{path}:{n}: not a line `burn-errors extract --previous` writes to "
                            f"annotations-not-carried.jsonl; pass that file, or leave --drafts out")
        out.append(entry)
    return out


# The not-carried file holds whole records, a few kilobytes each.
MAX_NOT_CARRIED_BYTES = 256 << 20


@dataclass
class Export:
    files: dict[Path, str]
    exported: list[RecordLine]
    kept: list[str]  # answer files already filled in DIR, left as they were
    stale: list[str] = field(default_factory=list)  # of those, answers written for other content
    drafted: list[str] = field(default_factory=list)  # ids whose prompt offers their earlier annotation


def export(lines: list[RecordLine], out: Path, records_path: str, now: str,
           earlier: list[dict] | None = None) -> Export:
    """The prompts and skeletons of the records that need annotation. `earlier` (the lines of an
    annotations-not-carried.jsonl) offers, in the prompt of a record whose content changed, the
    annotation it had before, as a draft to revise (never as the answer itself)."""
    from analyzer.core.rendering import environment

    template = environment().get_template("annotate_prompt.md.j2")
    todo = [ln for ln in lines if needs_annotation(ln)]
    drafts = {e["now"]["id"]: e for e in earlier or () if e["why"] == "changed"}
    by_id = {ln.record.id: ln for ln in lines}
    old_items = {}
    manifest_path = out / EXPORT_MANIFEST
    if manifest_path.exists() or manifest_path.is_symlink():
        try:
            old = json.loads(read_text(manifest_path, EXPORT_MANIFEST, MAX_ANSWER_BYTES))
            ours = isinstance(old, dict) and old.get("tool") == "burn-errors"
            old_items = {i["id"]: i for i in old.get("items", [])} if ours else {}
        except (ValueError, AttributeError, KeyError, TypeError, RecursionError, UserError):
            ours = False
        if not ours:  # the folder is someone else's: its export.json is not ours to replace
            raise UserError(f"{manifest_path} was not written by burn-errors annotate export; move it or "
                            f"choose another --out")
    # Prompts an earlier export listed are ours to replace; a file of that name is not otherwise.
    our_prompts = {i.get("prompt") for i in old_items.values() if isinstance(i, dict)}
    files: dict[Path, str] = {}
    kept: list[str] = []
    stale: list[str] = []
    items = []
    drafted: list[str] = []
    for ln in todo:
        rid = ln.record.id
        answer = out / f"{rid}.json"
        item: dict[str, object] = {"id": rid, "contentHash": ln.facts.contentHash,
                                   "annotationStatus": ln.facts.annotationStatus,
                "message": ln.record.errorMessage, "prompt": f"{rid}{PROMPT_SUFFIX}", "answer": answer.name}
        if (answer.exists() or answer.is_symlink()) and _filled(answer):
            kept.append(str(answer))
            written_for = _answer_hash(answer) or old_items.get(rid, {}).get("contentHash")
            if written_for not in (None, ln.facts.contentHash):
                stale.append(str(answer))
        else:
            files[answer] = skeleton_text(rid, ln.facts.contentHash)
        prompt = out / f"{rid}{PROMPT_SUFFIX}"
        if prompt.name not in our_prompts and (prompt.exists() or prompt.is_symlink()):
            raise UserError(f"{prompt} was not written by burn-errors annotate export; move it or choose "
                            f"another --out")
        draft = drafts.get(rid)
        files[prompt] = template.render(prompt_context(ln, draft, by_id))
        if draft is not None:
            item["draft"] = True
            drafted.append(rid)
        items.append(item)
    if todo:
        files[manifest_path] = json.dumps({"tool": "burn-errors", "records": records_path, "exportedAt": now,
                                           "items": items}, indent=2, ensure_ascii=False) + "\n"
    return Export(files, todo, kept, stale, drafted)


def _answer_hash(path: Path) -> str | None:
    try:
        data = _parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    value = data.get("contentHash") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _filled(path: Path) -> bool:
    """Does an answer file hold anything beyond an empty skeleton (or is it unreadable)?"""
    try:
        data = _parse(read_text(path, "answer file", MAX_ANSWER_BYTES))
    except (UserError, ValueError, RecursionError):
        return True  # not ours to overwrite (a FIFO, a device, a link to one, anything unreadable)
    return not (isinstance(data, dict) and all(data.get(k) is None for k in ANNOTATION_FIELDS))


# ---------------------------------------------------------------------------------------------
# Import

@dataclass
class Answer:
    path: Path
    annotation: Annotation


@dataclass
class Answers:
    good: list[Answer] = field(default_factory=list)
    bad: list[tuple[Path, str]] = field(default_factory=list)
    empty: list[Path] = field(default_factory=list)


def answer_files(paths: list[str]) -> list[Path]:
    """Answer files named on the command line; a folder stands for its `*.json` but `export.json`."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            # Only regular files: a FIFO would block the read, a link to /dev/zero never end it.
            out.extend(sorted(f for f in p.glob("*.json") if f.name != EXPORT_MANIFEST and f.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise UserError(f"no such answer file or folder: {p}; give the files or the folder that "
                            f"`burn-errors annotate export` wrote")
    if not out:
        raise UserError(f"no answer files (*.json) in {', '.join(paths)}; give the folder that "
                        f"`burn-errors annotate export` wrote")
    return list(dict.fromkeys(out))


def _parse(text: str):
    m = _FENCE.match(text)
    return json.loads(m.group(1) if m else text)


def _exported_hashes(folder: Path, cache: dict[Path, dict[str, str]]) -> dict[str, str]:
    if folder not in cache:
        hashes: dict[str, str] = {}
        try:
            data = json.loads(read_text(folder / EXPORT_MANIFEST, EXPORT_MANIFEST, MAX_ANSWER_BYTES))
            hashes = {i["id"]: i["contentHash"] for i in data.get("items", [])}
        except (UserError, ValueError, AttributeError, KeyError, TypeError, RecursionError):
            pass
        cache[folder] = hashes
    return cache[folder]


def read_answers(paths: list[Path], lines: list[RecordLine], records_path: str) -> Answers:
    by_id = {ln.record.id: ln for ln in lines}
    result = Answers()
    first_file: dict[str, Path] = {}
    manifests: dict[Path, dict[str, str]] = {}
    for path in paths:
        try:
            data = _parse(read_text(path, "answer file", MAX_ANSWER_BYTES))
        except UserError as e:
            result.bad.append((path, str(e)))
            continue
        except RecursionError:
            result.bad.append((path, "not an answer: JSON nested too deep"))
            continue
        except json.JSONDecodeError as e:
            result.bad.append((path, f"not JSON ({e.msg} at line {e.lineno} column {e.colno})"))
            continue
        except ValueError as e:  # json's limit on integer digits
            result.bad.append((path, "not an answer: it holds an integer too long to read"
                               if "digits" in str(e) else f"not an answer ({e})"))
            continue
        if not isinstance(data, dict):
            result.bad.append((path, f"expected one JSON object with the keys {', '.join(['id', *ANNOTATION_FIELDS])}"))
            continue
        if ("id" in data and all(data.get(k) is None for k in ANNOTATION_FIELDS)
                and set(data) <= {"id", "contentHash", *ANNOTATION_FIELDS}):
            result.empty.append(path)
            continue
        try:
            ann = Annotation.model_validate(data)
        except ValidationError as e:
            result.bad.append((path, _problems(e, data)))
            continue
        problem = _check(ann, path, by_id, first_file, records_path, manifests)
        if problem:
            result.bad.append((path, problem))
            continue
        first_file[ann.id] = path
        result.good.append(Answer(path, ann))
    return result


def _problems(error: ValidationError, data: dict) -> str:
    """Every problem of an answer, so one round of fixes is enough: what pydantic found, in the
    answer's order, then the blank texts of the fields it had nothing against
    (`field solutions.1: Input should be a valid string; field severity: unknown field`)."""
    out = []
    unknown = False
    wrong = set()
    for err in error.errors():
        wrong.add(err["loc"][0] if err["loc"] else None)
        where = ".".join(str(p) for p in err["loc"]) or "(the object)"
        if err["type"] == "extra_forbidden":
            unknown = True
            out.append(f"field {where}: unknown field")
        else:
            out.append(f"field {where}: {err['msg']}")
    out += _blank_fields({k: v for k, v in data.items() if k in ANNOTATION_FIELDS and k not in wrong})
    if unknown:
        out.append("the answer holds only the id, the content hash and the Annotation fields")
    return "; ".join(out)


def _blank_fields(values: dict) -> list[str]:
    """A problem for each blank text or empty list among the annotation `values` (in field order)."""
    problems = []
    for name in ANNOTATION_FIELDS:
        value = values.get(name)
        if isinstance(value, str) and not value.strip():
            problems.append(f"field {name}: blank text; write null when there is nothing to say")
        if isinstance(value, list):
            if not value:
                problems.append(f"field {name}: empty list; write null when there is nothing to say")
            problems.extend(f"field {name}.{i}: blank text" for i, item in enumerate(value)
                            if isinstance(item, str) and not item.strip())
    return problems


def _check(ann: Annotation, path: Path, by_id: dict[str, RecordLine], first_file: dict[str, Path],
           records_path: str, manifests: dict) -> str | None:
    stem = path.name[:-len(".json")] if path.name.endswith(".json") else ""
    if _ID_NAME.match(stem) and stem != ann.id:
        return f"field id: {ann.id} but the file is named for record {stem}; was the answer pasted into the wrong file?"
    if ann.id not in by_id:
        return f"field id: no record {ann.id} in {records_path}"
    if ann.id in first_file:
        return f"field id: record {ann.id} is already answered by {first_file[ann.id]}"
    problems = _blank_fields({name: getattr(ann, name) for name in ANNOTATION_FIELDS})  # all at once
    if problems:
        return "; ".join(problems)
    now = by_id[ann.id].facts.contentHash
    if ann.contentHash is not None and ann.contentHash != now:
        return (f"field contentHash: record {ann.id} changed since this answer was written (content "
                f"{ann.contentHash} then, {now} now); export it again")
    exported = _exported_hashes(path.parent, manifests).get(ann.id) if ann.contentHash is None else None
    if exported is not None and exported != now:
        return (f"field id: record {ann.id} changed since this answer was exported (content "
                f"{exported} then, {now} now); export it again")
    return None


def merge(lines: list[RecordLine], answers: list[Answer], now: str,
          ai_assisted: bool = False) -> tuple[list[RecordLine], int]:
    """Records with the answers merged in; also how many replaced an earlier annotation. A merged
    record carries the AI_TAG tag when `ai_assisted`, and loses it otherwise (the answer replaces
    the whole annotation, so it also replaces who wrote it)."""
    by_id = {a.annotation.id: a.annotation for a in answers}
    out: list[RecordLine] = []
    replaced = 0
    for ln in lines:
        ann = by_id.get(ln.record.id)
        if ann is None:
            out.append(ln)
            continue
        replaced += ln.record.is_annotated()
        update = {k: getattr(ann, k) for k in ANNOTATION_FIELDS}
        update["tags"] = [t for t in ln.record.tags if t != AI_TAG] + ([AI_TAG] if ai_assisted else [])
        record = ln.record.model_copy(update=update)
        # Revalidate: the merged line must still be a valid records line. A record read without
        # analysis (the published form) stays without one.
        merged = ln.model_copy(update={"record": record, "analysis": (
            ln.analysis.model_copy(update={"annotatedAt": now}) if ln.analysis is not None else None)})
        out.append(RecordLine.model_validate(merged.model_dump(mode="json", exclude_none=False)))
    return out, replaced
