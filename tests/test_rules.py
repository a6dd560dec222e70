"""Rule tests: every rule in queries/ and in the classifier against its valid/invalid snippets
(tests/rules/*.toml, in the manner of ast-grep's rule tests)."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import pytest

from analyzer.decisions.classify import RULE_ORDER, DtypeCatalog, classify
from analyzer.facts.parse import parse_file
from analyzer.pipeline.ruleset import HASHED_MODULES

RULE_DIR = Path(__file__).parent / "rules"
CONTEXT = (RULE_DIR / "context.rs").read_bytes()
QUERY_RULES = {"query/panic_calls", "query/token_trees"}


def _cases():
    for f in sorted(RULE_DIR.glob("*.toml")):
        data = tomllib.loads(f.read_text())
        for kind in ("invalid", "valid"):
            for i, case in enumerate(data.get(kind, [])):
                yield pytest.param(data["rule"], kind, case, id=f"{f.stem}-{kind}-{i}")


def decisions(code: str, path: str = "crates/burn-x/src/lib.rs"):
    """Parse a snippet with context.rs beside it in the same crate; classify every call."""
    crate = path.split("/")[1] if path.startswith("crates/") else ""
    facts = parse_file(code.encode())
    ctx = parse_file(CONTEXT)
    catalog = DtypeCatalog.build(
        [("crates/burn-x/src/context.rs", crate, e) for e in ctx.enums] + [(path, crate, e) for e in facts.enums],
        [("crates/burn-x/src/context.rs", crate, a, t) for a, t in ctx.aliases]
        + [(path, crate, a, t) for a, t in facts.aliases])
    return [(s, classify(s, path, crate, catalog)) for s in facts.sites]


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
    listed = re.findall(r"^\d+\. `([a-z-]+/[a-z-]+)`", section, flags=re.MULTILINE)
    assert listed == [r.id for r in RULE_ORDER]


def test_every_rule_is_code_the_rules_hash_covers():
    """A rule's check lives in a module the rules hash reads, so changing a rule changes the
    hash and no cached result made by the old rule is reused."""
    for rule in RULE_ORDER:
        source = Path(inspect.getsourcefile(rule.applies)).resolve()
        module = source.relative_to(Path(__file__).resolve().parents[1] / "analyzer").as_posix()
        assert module in HASHED_MODULES, f"{rule.id} is checked in {module}, which the rules hash does not read"


def _line_list(case: dict, key: str) -> set[int]:
    value = case.get(key, [])
    assert isinstance(value, list) and all(isinstance(n, int) for n in value), f"{key} must be a list of line numbers"
    return set(value)


@pytest.mark.parametrize("rule,kind,case", list(_cases()))
def test_rule(rule, kind, case):
    """The rule fires on exactly the case's `lines` (none for a valid case), those calls get the
    case's `category`, and the snippet's records are exactly `records` (for an invalid case of a
    record rule, by default its `lines`; otherwise none)."""
    found = decisions(case["code"], case.get("path", "crates/burn-x/src/lib.rs"))
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
