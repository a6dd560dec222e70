"""The rule registry written out as Markdown: the rubric's list of rules in the order the
classifier walks them, and the README's list of exclusions. tools/sync_docs.py writes them into
the documents between their markers; a test holds the documents to them."""

from __future__ import annotations

from analyzer.decisions.rules import NONE, RULE_ORDER

# The markers around a generated list in a Markdown document.
BEGIN = "<!-- {name}: generated from the rule registry by tools/sync_docs.py -->"
END = "<!-- end {name} -->"


def rule_list() -> str:
    lines = []
    for n, rule in enumerate(RULE_ORDER, start=1):
        outcome = "leaves the call out" if rule.decides == NONE else f"makes it `{rule.decides}`"
        lines.append(f"{n}. `{rule.id}` ({outcome}): {rule.checks}. Example: {rule.example}. "
                     f"Cases: `tests/rules/{rule.test}`.")
    return "\n".join(lines)


def exclusion_list() -> str:
    return "\n".join(f"- `{r.id}`: {r.checks}" for r in RULE_ORDER if r.decides == NONE)


GENERATED = {"rule-list": rule_list, "exclusion-list": exclusion_list}


def section(name: str) -> str:
    """The generated list `name` with its markers, as it stands in a document."""
    return f"{BEGIN.format(name=name)}\n{GENERATED[name]()}\n{END.format(name=name)}"


def sync(text: str) -> str:
    """`text` with every generated section it marks written anew; text outside markers is kept."""
    for name in GENERATED:
        begin, end = BEGIN.format(name=name), END.format(name=name)
        start = text.find(begin)
        if start < 0:
            continue
        stop = text.find(end, start)
        if stop < 0:
            raise ValueError(f"{name}: a begin marker without its end marker")
        text = text[:start] + section(name) + text[stop + len(end):]
    return text
