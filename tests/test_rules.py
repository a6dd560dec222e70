"""Rule tests: every rule in queries/ and in the classifier against its valid/invalid snippets
(tests/rules/*.toml, in the manner of ast-grep's rule tests)."""

from __future__ import annotations

import inspect
import re
from analyzer.core.toml import tomllib
from pathlib import Path

import pytest

from analyzer.decisions.catalog import DtypeCatalog
from analyzer.decisions.classify import classify
from analyzer.decisions import registry_docs
from analyzer.decisions.data import RuleData
from analyzer.profiles import load
from analyzer.decisions.rules import EVERY_POSITION, RULE_ORDER
from analyzer.facts.parse import parse_file
from analyzer.pipeline.ruleset import hashed_files
from analyzer.profiles.run import Run
from targets import RUN

RULE_DIR = Path(__file__).parent / "rules"
CONTEXT = (RULE_DIR / "context.rs").read_bytes()
USERS = (RULE_DIR / "users.rs").read_bytes()
QUERY_RULES = {"query/panic_calls", "query/token_trees"}


def _cases():
    for f in sorted(RULE_DIR.glob("*.toml")):
        data = tomllib.loads(f.read_text())
        for kind in ("invalid", "valid"):
            for i, case in enumerate(data.get(kind, [])):
                yield pytest.param(data["rule"], kind, case, id=f"{f.stem}-{kind}-{i}")


ELSEWHERE = "crates/burn-other/src/lib.rs"


def decisions(code: str, path: str = "crates/burn-x/src/lib.rs", elsewhere: str = "", run: Run = RUN):
    """Parse a snippet with context.rs beside it in the same crate, and users.rs and `elsewhere`
    (code of other crates) in the tree too; classify every call of the snippet under `run`'s target."""
    crate = path.split("/")[1] if path.startswith("crates/") else ""
    profile = run.profile
    files = [("crates/burn-x/src/context.rs", crate, parse_file(CONTEXT, profile)),
             (path, crate, parse_file(code.encode(), profile)),
             ("crates/burn-user/src/lib.rs", "burn-user", parse_file(USERS, profile))]
    if elsewhere:
        files.append((ELSEWHERE, "burn-other", parse_file(elsewhere.encode(), profile)))
    catalog = DtypeCatalog.build(files, profile)
    facts = files[1][2]
    return [(s, classify(s, path, crate, catalog, run)) for s in facts.sites]


def _fires(rule: str, site, decision) -> bool:
    if rule == "query/panic_calls":
        return site.in_macro == ""
    if rule == "query/token_trees":
        return site.in_macro != ""
    if rule.startswith("exclude/"):
        return decision.reason == rule
    return rule in decision.rules


def test_every_rule_has_its_test_file_with_valid_and_invalid_examples():
    files = {f.name: tomllib.loads(f.read_text()) for f in RULE_DIR.glob("*.toml")}
    for rule in RULE_ORDER:
        assert rule.test in files, f"{rule.id}: its test file tests/rules/{rule.test} is missing"
        data = files[rule.test]
        assert data["rule"] == rule.id, f"tests/rules/{rule.test} tests {data['rule']}, not {rule.id}"
        assert data.get("valid") and data.get("invalid"), f"{rule.id} needs valid and invalid examples"
    tested = {data["rule"] for data in files.values()}
    assert tested == {r.id for r in RULE_ORDER} | QUERY_RULES, "a rule-test file for no rule"


def test_rule_ids_are_unique_and_the_walk_ends_in_an_exclusion():
    ids = [r.id for r in RULE_ORDER]
    assert len(ids) == len(set(ids))
    assert RULE_ORDER[-1].decides == "none"
    # One category's rules stand together: the walk decides when it leaves the group.
    groups = [r.decides for r in RULE_ORDER if r.decides != "none"]
    assert all(groups.index(g) == i or groups[i - 1] == g for i, g in enumerate(groups))


def test_the_rubric_lists_the_rules_in_the_order_the_classifier_walks_them():
    rubric = (Path(__file__).parent.parent / "docs" / "classifier-rubric.md").read_text()
    section = rubric.split("## The order the rules are checked in", 1)[1].split("\n## ", 1)[0]
    generated = section.split("<!-- end rule-list -->", 1)[0]
    listed = re.findall(r"^\d+\. `([a-z-]+/[a-z-]+)`", generated, flags=re.MULTILINE)
    assert listed == [r.id for r in RULE_ORDER]
    by_rubric = re.findall(r"^\d+\. `([a-z-]+/[a-z-]+)`", section.split("<!-- end rule-list -->", 1)[1],
                           flags=re.MULTILINE)
    assert by_rubric == [r.id for r in RULE_ORDER], "the rubric's cross-reference list follows the registry"


@pytest.mark.parametrize("document", ["docs/classifier-rubric.md", "docs/rules.md"])
def test_the_lists_generated_from_the_registry_are_up_to_date(document):
    text = (Path(__file__).parent.parent / document).read_text()
    assert registry_docs.sync(text) == text, "run python tools/sync_docs.py"
    for name in ("rule-list", "exclusion-list"):
        if registry_docs.BEGIN.format(name=name) in text:
            assert registry_docs.section(name) in text


def test_the_rules_page_lists_every_exclusion_the_registry_has():
    readme = (Path(__file__).parent.parent / "docs" / "rules.md").read_text()
    listed = readme.split("<!-- exclusion-list", 1)[1].split("<!-- end exclusion-list -->", 1)[0]
    assert re.findall(r"^- `([a-z-]+/[a-z-]+)`", listed, flags=re.MULTILINE) == [
        r.id for r in RULE_ORDER if r.decides == "none"]


def test_every_rule_names_only_positions_and_rule_data_that_exist():
    read = set(RuleData.keys().values())
    for rule in RULE_ORDER:
        assert rule.positions and set(rule.positions) <= set(EVERY_POSITION), rule.id
        for key in rule.reads:
            section, name = key.split(".")
            if section == "target":
                assert hasattr(RUN.profile.dtypes, name) or hasattr(RUN.profile.audience, name), \
                    f"{rule.id} reads {key}, which a target profile lacks"
                continue
            assert key in read, f"{rule.id} reads {key}, which queries/classifier.toml lacks"
        assert rule.example.startswith("`"), f"{rule.id}: the example is Rust code"


def test_every_category_has_one_entry_the_schema_accepts():
    from typing import get_args

    from analyzer.decisions.categories import CATEGORY_LIST, BackgroundTag, CategoryId
    from analyzer.sinks.diff_sarif import _rule

    assert [c.id for c in CATEGORY_LIST] == list(get_args(CategoryId))
    assert {c.background_tag for c in CATEGORY_LIST} == set(get_args(BackgroundTag))
    for c in CATEGORY_LIST:
        rule = _rule(c.id)
        assert rule["id"] == f"burn-errors/{c.id}" and rule["name"] == c.sarif_name
        assert c.background_tag in rule["properties"]["tags"]
    decided = {r.decides for r in RULE_ORDER} - {"none"}
    assert decided == {c.id for c in CATEGORY_LIST}, "every category is decided by some rule"


def test_every_rule_is_code_the_rules_hash_covers():
    """A rule's check lives in a module the rules hash reads, so changing a rule changes the
    hash and no cached result made by the old rule is reused."""
    for rule in RULE_ORDER:
        source = Path(inspect.getsourcefile(rule.applies)).resolve()
        module = source.relative_to(Path(__file__).resolve().parents[1] / "analyzer").as_posix()
        assert module in hashed_files(), f"{rule.id} is checked in {module}, which the rules hash does not read"


def _line_list(case: dict, key: str) -> set[int]:
    value = case.get(key, [])
    assert isinstance(value, list) and all(isinstance(n, int) for n in value), f"{key} must be a list of line numbers"
    return set(value)


@pytest.mark.parametrize("rule,kind,case", list(_cases()))
def test_rule(rule, kind, case):
    """The rule fires on exactly the case's `lines` (none for a valid case), those calls get the
    case's `category`, and the snippet's records are exactly `records` (for an invalid case of a
    record rule, by default its `lines`; otherwise none)."""
    found = decisions(case["code"], case.get("path", "crates/burn-x/src/lib.rs"), case.get("elsewhere", ""),
                      Run(load(case.get("target", "burn"))))
    if kind == "invalid" or rule not in QUERY_RULES:
        assert found, "the snippet holds no panic-family call"
    want = case.get("category")
    lines = _line_list(case, "lines")
    if kind == "invalid":
        assert lines, "an invalid case names the lines (1-based, in `code`) the rule fires on"
        assert want is not None, "an invalid case names the category its lines get (`none`: not a record)"
    else:
        assert not lines, "a valid case fires nowhere; name its records with `records`"
    firing = {s.line for s, d in found if _fires(rule, s, d)}
    assert firing == lines, (f"{rule} fires on lines {sorted(firing)}, the case names {sorted(lines)}: "
                             f"{[(s.line, d.reason) for s, d in found]}")
    if "records" in case:
        record_lines = _line_list(case, "records")
    else:
        record_lines = lines if kind == "invalid" and want != "none" else set()
    got_records = {s.line for s, d in found if d.record}
    assert got_records == record_lines, (f"records on lines {sorted(got_records)}, the case names "
                                         f"{sorted(record_lines)}: {[(s.line, d.reason) for s, d in found]}")
    checked = lines if kind == "invalid" else record_lines
    for s, d in found:
        if s.line in checked and want is not None:
            assert (d.category or "none") == want, (s.line, s.message, d.category, d.reason)
    for line, (handled, rejected) in _dtype_sets(case, checked).items():
        d = next(d for s, d in found if s.line == line)
        assert (d.handled, d.rejected) == (handled, rejected), (
            f"line {line} handles {d.handled} and rejects {d.rejected}, the case names {handled} and {rejected}")


def _dtype_sets(case: dict, lines: set[int]) -> dict[int, tuple[list[str], list[str]]]:
    """Per line, the (handled, rejected) dtypes a case pins: `handled`/`rejected` for each of its
    lines, or `dtype_sets` rows naming their line."""
    if "handled" in case or "rejected" in case:
        assert "dtype_sets" not in case, "a case pins its dtypes by `handled`/`rejected` or by `dtype_sets`, not both"
        return {line: (case.get("handled", []), case.get("rejected", [])) for line in lines}
    rows = case.get("dtype_sets", [])
    sets = {row["line"]: (row.get("handled", []), row.get("rejected", [])) for row in rows}
    assert set(sets) <= lines, f"dtype_sets names lines {sorted(set(sets) - lines)} the case does not check"
    return sets


def test_every_dtype_case_pins_the_dtypes_it_handles_and_rejects():
    """A dtype record says which dtypes the function handles and which it rejects: every case a
    dtype rule makes a dtype-dispatch record names both, for each of its lines."""
    for f in sorted(RULE_DIR.glob("dtype-*.toml")):
        for i, case in enumerate(tomllib.loads(f.read_text()).get("invalid", [])):
            if case.get("category") != "dtype-dispatch":
                continue
            pinned = _dtype_sets(case, set(case["lines"]))
            assert set(pinned) == set(case["lines"]), \
                f"{f.name}: invalid case {i} does not pin `handled` and `rejected` for each of its lines"


def test_the_rule_data_reads_every_key_of_the_file_by_name():
    """Each field of RuleData names the key of classifier.toml it holds: the file has no key the
    classifier leaves unread, and a field cannot take its neighbour's value by position."""
    from analyzer.decisions.data import read_rule_data
    from analyzer.core.queries import queries_root

    text = (queries_root() / "classifier.toml").read_text()
    raw = tomllib.loads(text)
    assert set(RuleData.keys().values()) == {f"{s}.{k}" for s, keys in raw.items() for k in keys}
    data = read_rule_data(text)
    for name, key in RuleData.keys().items():
        section, k = key.split(".")
        # A field is named after its key; the one exception says what the rule uses it for.
        assert name == k or (name, key) == ("input_count", "count.condition"), (name, key)
        value = getattr(data, name)
        assert (value.pattern if isinstance(value, re.Pattern) else list(value) if isinstance(value, tuple)
                else value) == raw[section][k], name


def test_each_rule_module_stays_short():
    package = Path(__file__).resolve().parents[1] / "analyzer" / "decisions" / "rules"
    for module in package.glob("*.py"):
        assert len(module.read_text().splitlines()) < 400, f"{module.name}: split it by category"


def test_a_dtype_the_panicking_arm_names_is_rejected_not_handled_though_a_catch_all_takes_the_rest():
    """A catch-all beside the panicking arm handles every dtype of the enum but the ones that arm
    names: those are rejected, and a dtype is never both."""
    [(_, d)] = decisions("fn size(d: X) -> usize {\n    match d {\n        DType::F32 => 4,\n"
                         "        DType::QFloat(_) => panic!(\"quantized has no fixed size\"),\n        _ => 8,\n    }\n}\n")
    assert d.rejected == ["QFloat"]
    assert "QFloat" not in d.handled and {"F32", "F16", "I64"} <= set(d.handled)


@pytest.mark.parametrize("condition,excluded", [
    ("!= 1", True), ("> 1", True), (">= 2", True), ("< 2", True),
    ("> 2", False), (">= 3", False), (">= 4", False),
])
def test_the_input_count_exclusion_stops_where_more_than_one_input_is_allowed(condition, excluded):
    """A count test that allows at most one input fixes the count (a malformed node fails it); one
    that allows two or more rejects an optional trailing input a valid model may hold: a record."""
    code = (f"fn config(node: &Node) {{\n    if node.inputs.len() {condition} {{\n"
            f"        panic!(\"the extra input is not supported\")\n    }}\n}}\n")
    [(_, d)] = decisions(code)
    assert (d.reason == "exclude/input-count") is excluded, (condition, d.reason)
    assert d.record is not excluded
