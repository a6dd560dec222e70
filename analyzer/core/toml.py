"""TOML reading on every Python the project supports: the standard library's `tomllib` from 3.11,
its original, `tomli` (the same parser and interface), before."""

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 CI run covers it
    import tomli as tomllib

__all__ = ["tomllib"]
