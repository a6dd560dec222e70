"""The classifier's rule data (queries/classifier.toml): word lists and name shapes, read and
compiled once."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from typing import NamedTuple


@cache
def rule_data() -> dict:
    from analyzer.pipeline.ruleset import queries_root
    text = queries_root().joinpath("classifier.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


class Patterns(NamedTuple):
    enum_name: re.Pattern
    scrutinee_ident: re.Pattern
    unsupported: re.Pattern
    variant_cannot: re.Pattern
    transient_state: re.Pattern
    element_format: re.Pattern
    internal_enum: re.Pattern
    validation: re.Pattern
    inferred_output: re.Pattern
    outside_value: re.Pattern
    input_count: re.Pattern
    kind_enum: re.Pattern
    required: re.Pattern


@cache
def patterns() -> Patterns:
    """The regexes of classifier.toml, compiled once."""
    d = rule_data()
    return Patterns(re.compile(d["dtype"]["enum_name"]), re.compile(d["dtype"]["scrutinee_ident"]),
                     re.compile(d["mode"]["unsupported"]), re.compile(d["mode"]["variant_cannot"]),
                     re.compile(d["mode"]["transient_state"]), re.compile(d["dtype"]["element_format"]),
                     re.compile(d["mode"]["internal_enum"]), re.compile(d["dtype"]["validation"]),
                     re.compile(d["mode"]["inferred_output"]), re.compile(d["kind_fixed"]["outside_value"]),
                     re.compile(d["count"]["condition"]), re.compile(d["dtype"]["kind_enum"]),
                     re.compile(d["dtype"]["required"]))
