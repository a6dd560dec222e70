"""What a Rust file pulls in or renames, read off its bytes for the gate's sake. The files it pulls
in by name: `#[path = "x"] mod m;` and `include!("x")`. A file
so named that is not a `.rs` file is Rust all the same (rustc reads whatever it is pointed at),
and the tree listing alone would never read it: extract lists each as not read, so no site can
hide in one (pipeline/extract.py). And a panic-family macro it renames (`use core::panic as
oops;`): its calls are not read, so the file is listed as read in part. Read from the bytes,
without a parse; literals and comments count too, which can only add a name."""

from __future__ import annotations

import re

from analyzer.facts import lexer

_PATH_ATTRIBUTE = re.compile(rb'#\s*\[\s*path\s*=\s*"([^"\\\n]{1,4096})"\s*\]')
# `#[cfg_attr(feature = "x", path = "other.txt")]`: the same attribute under a build setting.
_CFG_PATH_ATTRIBUTE = re.compile(rb'#\s*\[\s*cfg_attr\s*\([^\]]{0,4096}?\bpath\s*=\s*"([^"\\\n]{1,4096})"')
_INCLUDE = re.compile(rb'include!\s*[(\[{]\s*"([^"\\\n]{1,4096})"')


def included(source: bytes) -> list[str]:
    """The file names the file's `#[path]` attributes and `include!` calls give, in order, each once."""
    names: dict[str, None] = {}
    for pattern in (_PATH_ATTRIBUTE, _CFG_PATH_ATTRIBUTE, _INCLUDE):
        if pattern is _INCLUDE and b"include!" not in source:
            continue
        for m in pattern.finditer(source):
            names.setdefault(m.group(1).decode("utf-8", "replace"))
    return list(names)


# `use core::panic as oops;`, `use std::{todo as later, ..}`: a panic-family macro under a name of
# the file's choosing, whose calls (`oops!(..)`) no walk for the macros' own names finds.
_RENAMED = re.compile(rb"\b(?:std|core|alloc)\s*::\s*(?:\{[^};]*?)?"
                      rb"\b(panic|todo|unimplemented|assert|assert_eq|assert_ne)\s+as\s+([A-Za-z_][A-Za-z0-9_]*)")


def renamed_macros(source: bytes) -> list[tuple[str, str]]:
    """(macro, the name the file gives it) of each `use .. as ..` renaming a panic-family macro."""
    if b" as " not in source:
        return []
    return [(m.group(1).decode(), m.group(2).decode()) for m in _RENAMED.finditer(source)]


# `include!(concat!(env!("OUT_DIR"), "/x.rs"))`, `include!(some_macro!())`: an include whose file
# is computed when the crate builds (often written by its build script into OUT_DIR), so no tree
# file holds what it pulls in. Only a call in code counts (not one a comment or a string names).
_INCLUDE_CALL = re.compile(rb"\binclude!\s*[(\[{]")
_SPACE_OR_COMMENT = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_LITERAL_START = re.compile(rb'r#*"|"')


def computed_include(source: bytes) -> bool:
    """The file calls `include!` with something other than a string literal."""
    if b"include!" not in source:
        return False
    try:
        for at in lexer.marks(source, _INCLUDE_CALL.pattern):
            call = _INCLUDE_CALL.match(source, at)
            if call is None:
                continue
            arg = _SPACE_OR_COMMENT.match(source, call.end()).end()  # type: ignore[union-attr]
            if not _LITERAL_START.match(source, arg):
                return True
    except lexer.LexError:
        pass
    return False
