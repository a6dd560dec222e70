"""The stages import downwards only: a module of a stage imports modules of its own stage or of
a lower one (the order below, docs/architecture.md), and the package's imports form no cycle
between stages. The few upward imports still standing are listed by name, so no new one appears
unnoticed and each one removed is taken off the list."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "analyzer"
# Lowest first. profiles: what a target is (data); facts and decisions read it.
ORDER = ["core", "profiles", "source", "facts", "decisions", "records", "lineage", "pipeline", "features",
         "sinks", "app", "cli"]
# Upward imports not yet removed: (importing module, imported module).
KNOWN_UPWARD = {
    ("facts/prefilter.py", "analyzer.decisions.data"),
    ("decisions/preemption.py", "analyzer.records.operation"),
    *(("pipeline/coverage.py", f"analyzer.features.coverage.{m}")
      for m in ("model", "claims", "operations", "settings")),
    ("pipeline/coverage.py", "analyzer.features.coverage"),
}


def _stage_imports() -> list[tuple[str, str, str, str]]:
    """(module path, its stage, imported module, that module's stage) for every import of a stage
    of the package by a module of a stage, at any depth of the module (lazy imports count)."""
    rank = set(ORDER)
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        stage = rel.split("/", 1)[0]
        if stage not in rank:
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names] if node.module == "analyzer" \
                    else [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "analyzer" and len(parts) > 1 and parts[1] in rank:
                    out.append((rel, stage, name, parts[1]))
    return out


def test_no_stage_imports_a_higher_one_beyond_the_known_few():
    upward = {(rel, name) for rel, stage, name, target in _stage_imports() if ORDER.index(target) > ORDER.index(stage)}
    assert upward - KNOWN_UPWARD == set(), "an import from a lower stage up to a higher one"
    assert KNOWN_UPWARD - upward == set(), "an upward import was removed: take it off KNOWN_UPWARD"


def test_the_stages_import_one_another_without_a_cycle_beyond_the_known_few():
    graph: dict[str, set[str]] = {s: set() for s in ORDER}
    for rel, stage, name, target in _stage_imports():
        if target != stage and (rel, name) not in KNOWN_UPWARD:
            graph[stage].add(target)
    state: dict[str, int] = {}

    def visit(s: str, path: list[str]) -> None:
        state[s] = 1
        for t in sorted(graph[s]):
            assert state.get(t) != 1, f"an import cycle between stages: {' -> '.join([*path, s, t])}"
            if t not in state:
                visit(t, [*path, s])
        state[s] = 2
    for s in ORDER:
        if s not in state:
            visit(s, [])
