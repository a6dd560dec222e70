"""No comment, docstring or document names a file of the project that does not exist: every path
like `analyzer/core/safe.py` or `docs/lineage.md` written in the source, the tests, the tools and
the documents, and every relative link of a Markdown document, points at a file that is there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = ("analyzer", "docs", "tools", "bench", "tests", "examples", "queries")
# A project path: one of the top folders, then path parts, ending in a file suffix.
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP)
                  + r")/[\w./-]*\w\.(?:py|md|toml|scm|yml|yaml|j2|json|jsonl|css))(?![\w/])")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
SUFFIXES = (".py", ".md", ".toml", ".scm", ".yml", ".j2", ".css")
# Folders whose files are data a test reads or writes, not the project's own text.
SKIP = ("tests/fixtures/", "docs/labels/")


def _texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "pyproject.toml"]
    for top in TOP:
        files += [p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    ci = ROOT / ".ci" / "run"
    if ci.exists():
        files.append(ci)
    return [p for p in files if not any(str(p.relative_to(ROOT)).startswith(s) for s in SKIP)]


def _prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of what a reader reads as prose: a Python file's comments and docstrings (its
    code's strings are data: a fixture's paths), any other file whole."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return list(enumerate(text.splitlines(), start=1))
    import ast
    import io
    import tokenize

    out = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out += [(first.lineno + i, ln) for i, ln in enumerate(first.value.value.splitlines())]
    return out


def _named(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, line in _prose(path):
        # A part in capitals is a placeholder (`analyzer/profiles/NAME.toml`), not a file.
        out += [(n, m.group(1)) for m in PATH.finditer(line) if not re.search(r"(^|/)[A-Z_]+\.", m.group(1))]
        if path.suffix == ".md":
            out += [(n, m.group(1)) for m in LINK.finditer(line) if "://" not in m.group(1)
                    and not m.group(1).startswith(("mailto:", "/"))]
    return out


def _exists(path: Path, name: str) -> bool:
    if name.startswith(TOP) and (ROOT / name).exists():
        return True
    return (path.parent / name).exists()  # a link relative to its document


def test_every_named_project_file_exists():
    missing = [f"{p.relative_to(ROOT)}:{n}: {name}" for p in _texts() for n, name in _named(p)
               if not _exists(p, name)]
    assert not missing, "\n".join(missing)


def test_the_scan_finds_a_path_that_is_gone(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text("See `analyzer/no_such_module.py` and [the page](no-such-page.md).\n"
                   "`analyzer/core/safe.py` is there.\n")
    named = _named(doc)
    assert [name for _, name in named] == ["analyzer/no_such_module.py", "no-such-page.md", "analyzer/core/safe.py"]
    assert [name for _, name in named if not _exists(doc, name)] == ["analyzer/no_such_module.py", "no-such-page.md"]
