"""The text of an indented JSON document: two spaces, non-ASCII characters as they are, keys in
the order given, exactly what `json.dumps(value, indent=2, ensure_ascii=False)` writes.

The standard library writes indented JSON with its pure-Python encoder (its C encoder serves only
compact output), which makes a large document (the coverage matrix of a whole tree) cost seconds.
orjson writes the same text in compiled code. It refuses what JSON cannot carry faithfully as
UTF-8 (a lone surrogate, which only a hand-edited records file can bring in) and integers beyond
64 bits; those documents are written by the standard library, as before. Floats are the one
value the two spell differently (orjson writes `1e16` and NaN as `null`): the documents written
here hold none.
"""

from __future__ import annotations

import json

import orjson


def dumps_indented(value: object) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, indent=2, ensure_ascii=False)
