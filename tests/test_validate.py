"""`burn-errors validate`: each record against the schema and as a whole, ids and slugs across
the file, and JSON no other command could read or write. Every problem names its line."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from analyzer.records.model import github_url, slug
from targets import BURN

FIXTURE = Path(__file__).parent / "fixtures" / "envelope" / "published.json"
PUBLISHED = json.loads(FIXTURE.read_text(encoding="utf-8"))

# What the extractor would know about the fixture's site (made-up values, consistent with it).
ANALYSIS = {
    "category": "unsupported-mode", "macro": "panic", "crate": "tensor-cpu", "function": "forward",
    "impl": "impl Resize", "itemPath": "impl Resize::fn forward", "context": "match-arm",
    "scrutinee": "self.mode", "pattern": "ResizeMode::Cubic", "enum": None, "handled": [], "rejected": [],
    "partial": [], "messageRegex": "^resize:\\ cubic\\ mode\\ is\\ not\\ supported.*$", "operation": "resize",
    "inMacro": "", "column": 17, "rule": "mode/unsupported-message", "rules": ["mode/unsupported-message"],
    "contentHash": "0123456789abcdef", "annotationStatus": "new",
}


def good_line(record_id: str = PUBLISHED["record"]["id"]) -> dict:
    """A records line built from the published-shape fixture, with its own id (and slug)."""
    record = copy.deepcopy(PUBLISHED["record"])
    record["id"] = record_id
    record["slug"] = slug(record["errorMessage"], record_id)
    return {"record": record, "analysis": copy.deepcopy(ANALYSIS)}


def nth_id(n: int) -> str:
    """A distinct id whose first 6 digits (and so slug) differ from every other n's."""
    return hashlib.sha256(str(n).encode()).hexdigest()[:16]


def relink(record: dict) -> dict:
    """Make githubUrl agree with the record's other fields again after a test changed them."""
    record["githubUrl"] = github_url(BURN, record["repo"], record["analyzedSha"], record["filePath"],
                                     record["sourceCodeStart"], record["sourceCodeEnd"])
    return record


def write(tmp_path: Path, *lines: dict | str) -> Path:
    """A records file of these lines: a dict as JSON (non-ASCII as \\u escapes), a str as is."""
    path = tmp_path / "records.jsonl"
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines),
                    encoding="utf-8")
    return path


def validate_third_line(cli, tmp_path, broken: dict | str):
    """Two good records, then the broken one on line 3: validate exits 1 and names only line 3."""
    path = write(tmp_path, good_line("1111111111111111"), good_line("2222222222222222"), broken)
    res = cli("validate", str(path))
    assert res.code == 1, (res.stdout, res.stderr)
    assert "Traceback" not in res.stdout + res.stderr
    assert f"{path}:1:" not in res.stdout and f"{path}:2:" not in res.stdout, res.stdout
    return path, res


def test_the_fixture_and_records_built_from_it_are_valid(cli, tmp_path):
    assert cli("validate", str(FIXTURE)).code == 0
    path = write(tmp_path, good_line("1111111111111111"), good_line("2222222222222222"), good_line())
    res = cli("validate", str(path))
    assert res.code == 0, res.stdout
    assert "3 records" in res.stdout


def _short_source(r):  # one line fewer than the window
    r["sourceCode"] = r["sourceCode"].rsplit("\n", 1)[0]


def _end_before_start(r):
    r["sourceCodeEnd"] = r["sourceCodeStart"] - 1
    relink(r)


def _line_outside(r):
    r["lineNumber"] = r["sourceCodeEnd"] + 1


def _window_off_center(r):  # starts 2 lines late: 16 lines above the panic instead of 18
    r["sourceCodeStart"] += 2
    r["sourceCode"] = r["sourceCode"].split("\n", 2)[2]
    relink(r)


def _window_too_long(r):  # 2 more lines below: past lineNumber + 18
    r["sourceCodeEnd"] += 2
    r["sourceCode"] += "\n}\n"
    relink(r)


def _slug_suffix(r):
    r["slug"] = r["slug"][:-6] + "000000"


def _slug_not_from_message(r):
    r["slug"] = "some-other-message-" + r["id"][:6]


def _slug_characters(r):
    r["slug"] = "Resize_Cubic-" + r["id"][:6]


def _link_other_sha(r):
    r["githubUrl"] = r["githubUrl"].replace(r["analyzedSha"], "f" * 40)


def _link_other_lines(r):
    r["githubUrl"] = r["githubUrl"].rsplit("#", 1)[0] + f"#L1-L{r['sourceCodeEnd']}"


def _pattern_not_message(r):
    r["messagePattern"] = "resize: .* mode is not supported"


def _tag_against_category(r):
    r["backgroundTag"] = "unsupported-dtype"


def _changed_after_analysed(r):
    r["contentChangedAt"] = "2026-03-04T05:06:07.090Z"  # 1 ms after analyzedAt


def _path_outside(r):
    r["filePath"] = "crates/../../etc/resize.rs"
    relink(r)


CROSS_FIELD = {
    "sourceCode lines": (_short_source, "record.sourceCode: has 35 lines, the window 10-45 has 36"),
    "end before start": (_end_before_start, "record.sourceCodeEnd: 9 is before sourceCodeStart 10"),
    "line outside window": (_line_outside, "record.lineNumber: line 46 is outside the window 10-45"),
    "window not centered": (_window_off_center, "record.sourceCodeStart: the window around line 28 starts at line 10"),
    "window too long": (_window_too_long, "record.sourceCodeEnd: the window around line 28 ends at line 46 at most"),
    "slug suffix": (_slug_suffix, "record.slug: must end in '-5e0c4a'"),
    "slug from message": (_slug_not_from_message, "record.slug: is not made from errorMessage"),
    "slug characters": (_slug_characters, "record.slug: the part before '-5e0c4a' must be at most 50 characters"),
    "githubUrl sha": (_link_other_sha, "record.githubUrl: must be the window pinned to analyzedSha"),
    "githubUrl lines": (_link_other_lines, "record.githubUrl: must be the window pinned to analyzedSha"),
    "messagePattern": (_pattern_not_message, "record.messagePattern: must be the same text as errorMessage"),
    "backgroundTag": (_tag_against_category,
                      "record.backgroundTag: must be 'unsupported-op-backend' for analysis.category unsupported-mode"),
    "dates": (_changed_after_analysed, "record.contentChangedAt: 2026-03-04T05:06:07.090Z is after analyzedAt"),
    "filePath": (_path_outside, "record.filePath: must be a path inside the repository"),
}


@pytest.mark.parametrize("case", CROSS_FIELD)
def test_each_cross_field_rule_names_its_line(cli, tmp_path, case):
    breaks, rule = CROSS_FIELD[case]
    line = good_line()
    breaks(line["record"])
    path, res = validate_third_line(cli, tmp_path, line)
    problems = [ln for ln in res.stdout.splitlines() if ln.startswith(f"{path}:")]
    # The one rule broken, on line 3, and nothing else: each rule is checked on its own.
    assert problems == [ln for ln in problems if ln.startswith(f"{path}:3: {rule}")] and problems, res.stdout


def test_a_kept_slug_is_fine_once_the_message_is_edited(cli, tmp_path):
    """A record carried over from an earlier run keeps its slug (the page's address) when its
    message changes; only a new record must have the slug made from its message."""
    line = good_line()
    line["record"]["errorMessage"] = line["record"]["messagePattern"] = "resize: cubic mode needs the gpu backend"
    line["analysis"]["annotationStatus"] = "changed"
    assert cli("validate", str(write(tmp_path, line))).code == 0
    line["analysis"]["annotationStatus"] = "new"
    res = cli("validate", str(write(tmp_path, line)))
    assert res.code == 1 and "record.slug: is not made from errorMessage" in res.stdout


@pytest.mark.parametrize(("where", "value", "field"), [
    ("record", ("handlingStrategy", "pray"), "record.handlingStrategy: Input should be 'validation', 'conversion'"),
    ("record", ("errorType", "exception"), "record.errorType: Input should be 'panic'"),
    ("record", ("backgroundTag", "unsupported-thing"), "record.backgroundTag: Input should be"),
    ("analysis", ("macro", "debug_assert"),
     "analysis.macro: Input should be 'panic', 'unimplemented', 'todo', 'assert', 'assert_eq', 'assert_ne' or 'expect'"),
    ("analysis", ("context", "lambda"), "analysis.context: Input should be 'match-arm'"),
    ("analysis", ("annotationStatus", "reviewed"), "analysis.annotationStatus: Input should be 'new'"),
])
def test_values_outside_the_schemas_sets(cli, tmp_path, where, value, field):
    line = good_line()
    line[where][value[0]] = value[1]
    path, res = validate_third_line(cli, tmp_path, line)
    assert f"{path}:3: {field}" in res.stdout, res.stdout


def test_every_declared_strategy_is_accepted(cli, tmp_path):
    from typing import get_args

    from analyzer.records.model import HandlingStrategy

    lines = []
    for i, strategy in enumerate(get_args(HandlingStrategy)):
        line = good_line(nth_id(i))
        line["record"]["handlingStrategy"] = strategy
        lines.append(line)
    assert cli("validate", str(write(tmp_path, *lines))).code == 0


def test_unknown_analysis_keys_are_refused(cli, tmp_path):
    line = good_line()
    line["analysis"]["reviewer"] = "someone"
    path, res = validate_third_line(cli, tmp_path, line)
    assert f"{path}:3: analysis.reviewer: Extra inputs are not permitted" in res.stdout


def test_annotation_time_is_declared_and_checked(cli, tmp_path):
    line = good_line()
    line["analysis"]["annotatedAt"] = "2026-03-06T00:00:00.000Z"
    assert cli("validate", str(write(tmp_path, line))).code == 0
    line["analysis"]["annotatedAt"] = "yesterday"
    path, res = validate_third_line(cli, tmp_path, line)
    assert f"{path}:3: analysis.annotatedAt: String should match pattern" in res.stdout


def test_duplicate_ids_name_every_line(cli, tmp_path):
    a, b = good_line("aaaaaaaaaaaaaaaa"), good_line("bbbbbbbbbbbbbbbb")
    path = write(tmp_path, a, b, a, a)
    res = cli("validate", str(path))
    assert res.code == 1
    assert f"{path}:1: record.id: aaaaaaaaaaaaaaaa appears 3 times, on lines 1, 3, 4" in res.stdout
    for n in (3, 4):
        assert f"{path}:{n}: record.id: aaaaaaaaaaaaaaaa appears 3 times, first on line 1" in res.stdout
    assert f"{path}:2:" not in res.stdout


def test_duplicate_slugs_name_every_line(cli, tmp_path):
    """Two ids that share their first 6 digits and their message share a slug: one page each is
    impossible."""
    path = write(tmp_path, good_line("abcdef0000000001"), good_line("abcdef0000000002"))
    res = cli("validate", str(path))
    assert res.code == 1
    want = f"record.slug: {slug(PUBLISHED['record']['errorMessage'], 'abcdef')} appears 2 times"
    assert f"{path}:1: {want}, on lines 1, 2" in res.stdout and f"{path}:2: {want}, first on line 1" in res.stdout


def _string_fields(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _string_fields(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _string_fields(v, f"{path}.{i}")
    elif isinstance(value, str):
        yield path


def _with_surrogate(line: dict, field: str) -> dict:
    line = copy.deepcopy(line)
    *parents, last = field.split(".")
    holder = line
    for p in parents:
        holder = holder[int(p)] if isinstance(holder, list) else holder[p]
    key = int(last) if isinstance(holder, list) else last
    holder[key] = holder[key] + "\ud800"
    return line


def test_a_lone_surrogate_in_any_string_is_refused_with_its_line(cli, tmp_path):
    """Other commands cannot write text holding a lone surrogate as UTF-8, so validate refuses it,
    in every string of the record and the analysis."""
    fields = list(_string_fields(good_line()))
    assert len(fields) > 30
    lines = [_with_surrogate(good_line(nth_id(i)), f) for i, f in enumerate(fields)]
    path = write(tmp_path, *lines)
    res = cli("validate", str(path))
    assert res.code == 1 and "Traceback" not in res.stderr
    for n, f in enumerate(fields, start=1):
        assert f"{path}:{n}: {f}: text that cannot be written as UTF-8 (lone surrogate \\ud800" in res.stdout, f


def test_the_message_with_a_lone_surrogate(cli, tmp_path):
    line = good_line()
    r = line["record"]
    r["errorMessage"] = r["messagePattern"] = "resize: \ud83d mode is not supported"
    r["slug"] = slug(r["errorMessage"], r["id"])
    path, res = validate_third_line(cli, tmp_path, line)
    assert f"{path}:3: record.errorMessage: text that cannot be written as UTF-8 (lone surrogate \\ud83d at " \
           f"character 9)" in res.stdout


def test_a_lone_surrogate_in_a_key(cli, tmp_path):
    line = good_line()
    line["analysis"]["x\udc00"] = 1
    path, res = validate_third_line(cli, tmp_path, line)
    assert f"{path}:3: analysis.x\\udc00: key text that cannot be written as UTF-8" in res.stdout


def test_deep_nesting_names_the_line(cli, tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    path, res = validate_third_line(cli, tmp_path, deep)
    assert f"{path}:3: JSON nested 100000 levels deep, too deep to read" in res.stdout
    assert "RecursionError" not in res.stdout + res.stderr


def test_deep_nesting_inside_a_record(cli, tmp_path):
    text = json.dumps(good_line()).replace('"solutions": [', '"solutions": [' + "{\"a\": [" * 50_000 + "]}" * 50_000 + ", ", 1)
    path, res = validate_third_line(cli, tmp_path, text)
    assert f"{path}:3: JSON nested" in res.stdout


def test_a_5000_digit_integer_names_the_line(cli, tmp_path):
    text = json.dumps(good_line()).replace('"lineNumber": 28', '"lineNumber": ' + "9" * 5000, 1)
    assert "9" * 5000 in text
    path, res = validate_third_line(cli, tmp_path, text)
    assert f"{path}:3: a number too long to read" in res.stdout


@pytest.mark.parametrize(("text", "why"), [
    ('{"record": {}, "record": {}}', 'key "record" appears twice in one object'),
    ('{"record": NaN}', "not JSON (NaN is not a JSON number)"),
    ("not json", "not JSON (Expecting value at column 1)"),
    ("[1, 2]", "not an object holding a record: Input should be a valid dictionary"),
])
def test_json_other_commands_cannot_read(cli, tmp_path, text, why):
    path, res = validate_third_line(cli, tmp_path, text)
    assert f"{path}:3: {why}" in res.stdout


def test_control_characters_never_reach_the_terminal(cli, tmp_path):
    line = good_line()
    line["analysis"]["\x1b[2J\x1b]0;title\x07"] = 1
    path, res = validate_third_line(cli, tmp_path, line)
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert f"{path}:3: analysis.\\x1b[2J\\x1b]0;title\\x07: Extra inputs are not permitted" in res.stdout


def test_an_envelope_line_is_read_too(cli, tmp_path):
    """The published form, with or without analysis beside it, on a line of a records file."""
    envelope = copy.deepcopy(PUBLISHED)
    with_analysis = {**copy.deepcopy(PUBLISHED), "analysis": copy.deepcopy(ANALYSIS)}
    with_analysis["record"] = good_line("3333333333333333")["record"]
    assert cli("validate", str(write(tmp_path, envelope, with_analysis))).code == 0
    envelope["datasetVersion"] = "2026-03-05"
    path, res = validate_third_line(cli, tmp_path, envelope)
    assert f"{path}:3: datasetVersion: String should match pattern" in res.stdout


def test_exit_codes(cli, tmp_path):
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b"\xff\xfe not utf-8\n")
    res = cli("validate", str(bad))
    assert res.code == 2 and len(res.stderr.strip().splitlines()) == 1 and "not UTF-8" in res.stderr
    res = cli("validate", str(write(tmp_path, good_line(), "{")))
    assert res.code == 1 and "Found 1 problem on 1 line of" in res.stderr


def test_every_problem_of_a_line_is_listed_in_one_round(cli, tmp_path):
    line = good_line()
    line["record"]["severity"] = "fatal"  # refused by the schema
    line["record"]["lineNumber"] = 9999  # a valid number, outside the record's window
    line["record"]["messagePattern"] = "something else"
    path, res = validate_third_line(cli, tmp_path, line)
    start, end = line["record"]["sourceCodeStart"], line["record"]["sourceCodeEnd"]
    assert res.stdout.splitlines()[:3] == [
        f"{path}:3: record.severity: Input should be 'error'",
        f"{path}:3: record.lineNumber: line 9999 is outside the window {start}-{end}",
        f"{path}:3: record.messagePattern: must be the same text as errorMessage, is 'something else'"]
    assert "Found 3 problems on 1 line" in res.stderr


def test_a_check_that_reads_a_refused_field_is_left_out(cli, tmp_path):
    line = good_line()
    line["record"]["lineNumber"] = "12"  # the wrong type: the window check cannot read it
    line["record"]["bogus"] = 1
    line["analysis"]["category"] = "typo"  # the tag check reads the analysis: left out
    line["record"]["backgroundTag"] = "unsupported-dtype"  # against the category, were it read
    path, res = validate_third_line(cli, tmp_path, line)
    problems = [ln for ln in res.stdout.splitlines() if ln.startswith(f"{path}:3:")]
    assert [p.split(": ")[1] for p in problems] == ["record.lineNumber", "record.bogus", "analysis.category"]


def test_each_field_is_named_once_with_the_rest_of_its_errors_counted(cli, tmp_path):
    line = good_line()
    line["record"]["tags"] = [1, 2, 3]
    for key in ("one", "two", "three", "four", "five", "six"):
        line["record"][key] = 0
    path, res = validate_third_line(cli, tmp_path, line)
    assert f"{path}:3: record.tags.0: Input should be a valid string (and 2 more in record.tags)" in res.stdout
    assert all(f"{path}:3: record.{key}: Extra inputs" in res.stdout for key in ("one", "six"))


def test_a_refused_line_still_counts_for_duplicate_ids(cli, tmp_path):
    a = good_line("aaaaaaaaaaaaaaaa")
    refused = copy.deepcopy(a)
    refused["record"]["severity"] = "fatal"
    path = write(tmp_path, a, refused)
    res = cli("validate", str(path))
    assert f"{path}:1: record.id: aaaaaaaaaaaaaaaa appears 2 times, on lines 1, 2" in res.stdout
