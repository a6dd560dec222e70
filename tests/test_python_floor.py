"""The oldest Python pyproject.toml declares is the one the package works on: the lint and type
gates target it, and no module imports a standard-library module that Python lacks except behind
a version test with its fallback."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from analyzer.core.toml import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# Standard-library modules newer than some Python the project could declare, with the version
# that added each and the package that stands in for it before.
NEWER = {"tomllib": ((3, 11), "tomli")}


def _floor() -> tuple[int, int]:
    m = re.fullmatch(r">=\s*(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert m, "requires-python is a floor: >=X.Y"
    return int(m.group(1)), int(m.group(2))


def _version_test(node: ast.If) -> bool:
    return "sys.version_info" in ast.unparse(node.test)


def _unguarded_imports(tree: ast.AST) -> set[str]:
    """The top-level names of modules imported outside an `if sys.version_info ...` block."""
    found: set[str] = set()

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _version_test(node):
            return
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            walk(child)
    walk(tree)
    return found


def test_the_gates_target_the_declared_floor():
    major, minor = _floor()
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py{major}{minor}"
    assert PYPROJECT["tool"]["mypy"]["python_version"] == f"{major}.{minor}"


def test_no_module_imports_what_the_floor_lacks_without_its_fallback():
    floor = _floor()
    dependencies = " ".join(PYPROJECT["project"]["dependencies"])
    for folder in ("analyzer", "tests", "tools", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in _unguarded_imports(ast.parse(path.read_text(), str(path))):
                if name in NEWER and NEWER[name][0] > floor:
                    raise AssertionError(f"{path.relative_to(ROOT)} imports {name}, which Python "
                                         f"{floor[0]}.{floor[1]} lacks: import it from analyzer.core.toml")
    for name, (added, fallback) in NEWER.items():
        if added > floor:
            assert re.search(rf"\b{fallback}\b[^,]*python_version\s*<\s*'{added[0]}\.{added[1]}'", dependencies), \
                f"{fallback} stands in for {name} below Python {added[0]}.{added[1]}: a dependency there"
