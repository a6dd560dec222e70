"""Write the lists generated from the rule registry into the documents that show them
(docs/classifier-rubric.md, docs/rules.md), between their markers.

    python tools/sync_docs.py          # rewrite the documents
    python tools/sync_docs.py --check  # exit 1 if a document is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.decisions.registry_docs import sync

DOCUMENTS = ("docs/classifier-rubric.md", "docs/rules.md")


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    stale = []
    for name in DOCUMENTS:
        path = root / name
        text = path.read_text(encoding="utf-8")
        new = sync(text)
        if new != text:
            stale.append(name)
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print("out of date: " + ", ".join(stale) + " (run python tools/sync_docs.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
