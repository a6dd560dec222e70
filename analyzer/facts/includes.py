"""The files a Rust file pulls in by name: `#[path = "x"] mod m;` and `include!("x")`. A file
so named that is not a `.rs` file is Rust all the same (rustc reads whatever it is pointed at),
and the tree listing alone would never read it: extract lists each as not read, so no site can
hide in one (pipeline/extract.py). Read from the bytes, without a parse; literals and comments
count too, which can only add a name."""

from __future__ import annotations

import re

_PATH_ATTRIBUTE = re.compile(rb'#\s*\[\s*path\s*=\s*"([^"\\\n]{1,4096})"\s*\]')
_INCLUDE = re.compile(rb'include!\s*[(\[{]\s*"([^"\\\n]{1,4096})"')


def included(source: bytes) -> list[str]:
    """The file names the file's `#[path]` attributes and `include!` calls give, in order, each once."""
    names: dict[str, None] = {}
    for pattern in (_PATH_ATTRIBUTE, _INCLUDE):
        if pattern is _INCLUDE and b"include!" not in source:
            continue
        for m in pattern.finditer(source):
            names.setdefault(m.group(1).decode("utf-8", "replace"))
    return list(names)
