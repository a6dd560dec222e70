"""The rules of the classifier: one module per category (exclusions, dtype, mode, op), the shape
they share (base) and the registry that orders them, one entry per rule."""

from analyzer.decisions.rules.base import ARM_POSITIONS, EVERY_POSITION, NONE, Rule
from analyzer.decisions.rules.registry import EXCLUSIONS, RULE_ORDER, RULES

__all__ = ["ARM_POSITIONS", "EVERY_POSITION", "EXCLUSIONS", "NONE", "RULES", "RULE_ORDER", "Rule"]
