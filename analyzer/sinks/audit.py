"""sites.jsonl (`extract --all-sites`): every panic-family call with the category it got or the
rule that left it out, so anyone can review the classifier's decisions."""

from __future__ import annotations

import json

from analyzer.decisions.rules import RULES
from analyzer.pipeline.extract import Extraction


def dumps(ex: Extraction, with_repo: bool = False) -> str:
    """One line per call; `with_repo` starts each with the repository's name, for a file that
    holds the calls of several (`extract --with-dependencies`)."""
    out = []
    for a in ex.audit:
        d, s = a.decision, a.site
        out.append(json.dumps({
            **({"repo": ex.repo} if with_repo else {}),
            "filePath": a.path, "lineNumber": s.line, "crate": a.crate, "macro": s.macro,
            "message": s.message, "context": s.context, "scrutinee": s.scrutinee,
            "pattern": s.arms[s.arm_index].pattern if 0 <= s.arm_index < len(s.arms) else "",
            "function": s.function, "inMacro": s.in_macro,
            "record": d.record, "category": d.category, "rule": d.reason, "why": RULES.get(d.reason, ""),
            "rules": d.rules, "id": a.id,
        }, ensure_ascii=False))
    return "".join(line + "\n" for line in out)
