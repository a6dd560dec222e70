"""The indented JSON writer: the standard library's text, byte for byte, and its fallback for what
the compiled writer refuses."""

from __future__ import annotations

import json

import pytest

from analyzer.core.jsontext import dumps_indented

DOCUMENTS = [
    {},
    [],
    {"empty": [], "none": {}, "nested": [[], [{}], {"a": [1, -2, 0]}]},
    {"text": "é — ü 中 \u2028\u2029 \x7f", "controls": "\x00\x01\x1f\t\n\r\b\f", "quotes": "\"\\/"},
    {"flags": [True, False, None], "big": 2**63 - 1, "small": -(2**63), "order": {"z": 1, "a": 2, "m": 3}},
    [{"crate": "burn-x", "cells": {"handled": 3, "n/a": 0}, "sites": [{"id": "r1", "url": ""}]}] * 3,
]


@pytest.mark.parametrize("value", DOCUMENTS)
def test_same_text_as_the_standard_library(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [{"message": "half of a pair \ud800 here"}, {"n": 2**70}, {1: "int key"},
                                   {"tuple": (1, 2), "x": "\udcff"}])
def test_what_the_compiled_writer_refuses_is_written_as_before(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)
