"""The classifier's rule data (queries/classifier.toml): word lists and name shapes, read and
compiled once into a `RuleData`, whose fields name the key of the file they hold."""

from __future__ import annotations

import re
from analyzer.core.toml import tomllib
from dataclasses import dataclass, field, fields
from functools import cache


def _key(name: str):
    """A field read from the file's `section.key`; a `str` field annotated `re.Pattern` is compiled."""
    return field(metadata={"key": name})


@dataclass(frozen=True)
class RuleData:
    """Every key of classifier.toml, by name: a key read by the wrong field cannot happen by
    position, and a key the file lacks (or a field the file does not hold) fails at load."""

    enum_name: re.Pattern = _key("dtype.enum_name")
    payload_share: float = _key("dtype.payload_share")
    derived_suffixes: tuple[str, ...] = _key("dtype.derived_suffixes")
    all_min: int = _key("dtype.all_min")
    scrutinee_ident: re.Pattern = _key("dtype.scrutinee_ident")
    # Kept as text: rules splice it into a larger pattern (`\bname\s*\.\s*(?:PREDICATE)\s*\(`).
    binding_predicate: str = _key("dtype.binding_predicate")
    kind_enum: re.Pattern = _key("dtype.kind_enum")
    mixed_kinds: tuple[str, ...] = _key("dtype.mixed_kinds")
    foreign_like_min: int = _key("dtype.foreign_like_min")
    element_format: re.Pattern = _key("dtype.element_format")
    element_format_min: int = _key("dtype.element_format_min")
    validation: re.Pattern = _key("dtype.validation")
    required: re.Pattern = _key("dtype.required")
    macros: tuple[str, ...] = _key("mode.macros")
    unsupported: re.Pattern = _key("mode.unsupported")
    variant_cannot: re.Pattern = _key("mode.variant_cannot")
    internal_enum: re.Pattern = _key("mode.internal_enum")
    inferred_output: re.Pattern = _key("mode.inferred_output")
    transient_state: re.Pattern = _key("mode.transient_state")
    expectation: re.Pattern = _key("mode.expectation")
    kernel_constant: re.Pattern = _key("mode.kernel_constant")
    runtime_variant: re.Pattern = _key("mode.runtime_variant")
    operand_kind: re.Pattern = _key("mode.operand_kind")
    reads_input: re.Pattern = _key("protocol.reads_input")
    conversion_fn: re.Pattern = _key("element_kind.conversion_fn")
    misuse: re.Pattern = _key("device.misuse")
    input_count: re.Pattern = _key("count.condition")
    input_derives: tuple[str, ...] = _key("own_form.input_derives")
    outside_value: re.Pattern = _key("kind_fixed.outside_value")

    @staticmethod
    def keys() -> dict[str, str]:
        """`section.key` of the file per field name."""
        return {f.name: f.metadata["key"] for f in fields(RuleData)}

    @classmethod
    def from_toml(cls, data: dict) -> RuleData:
        values: dict = {}
        for f in fields(cls):
            section, name = f.metadata["key"].split(".")
            raw = data[section][name]
            if f.type == "re.Pattern":
                values[f.name] = re.compile(raw)
            elif isinstance(raw, list):
                values[f.name] = tuple(raw)
            else:
                values[f.name] = raw
        return cls(**values)


def read_rule_data(text: str) -> RuleData:
    return RuleData.from_toml(tomllib.loads(text))


@cache
def rule_data() -> RuleData:
    """The rule data of this installation's queries/classifier.toml."""
    from analyzer.core.queries import queries_root
    return read_rule_data(queries_root().joinpath("classifier.toml").read_text(encoding="utf-8"))
