#!/usr/bin/env python3
"""Draw a blind labelling sample of panic-family calls at a revision, straight from git.

    python tools/sample_calls.py REPO REV --n 120 --seed 20261205 > sample.tsv

Every `panic!`, `unimplemented!` and `todo!` (also `std::`/`core::` paths) in the revision's `.rs`
files is listed with `git grep` (not with the tool, so the sample does not depend on what the tool
sees), files under `tests/` or `benches/` folders left out, and N are drawn at random with the
seed. Prints `path<TAB>line<TAB>macro`, sorted, for a reader to add a label and a reason.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys

CALL = re.compile(r"\b(panic|unimplemented|todo)!")
TEST_FOLDER = re.compile(r"(^|/)(tests|benches)/")


def calls(repo: str, rev: str) -> list[tuple[str, int, str]]:
    out = subprocess.run(
        ["git", "-C", repo, "grep", "-n", "-I", "-E", r"\b(panic|unimplemented|todo)!", rev, "--", "*.rs"],
        capture_output=True, text=True, check=True,
    ).stdout
    found = []
    for line in out.splitlines():
        # REV:path:line:text
        _, path, number, text = line.split(":", 3)
        if TEST_FOLDER.search(path):
            continue
        code = text.split("//", 1)[0]
        for m in CALL.finditer(code):
            found.append((path, int(number), m.group(1)))
            break
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("rev")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args()
    every = calls(args.repo, args.rev)
    drawn = sorted(random.Random(args.seed).sample(every, min(args.n, len(every))))
    print(f"# {len(every)} calls at {args.rev}; {len(drawn)} drawn with seed {args.seed}", file=sys.stderr)
    for path, number, macro in drawn:
        print(f"{path}\t{number}\t{macro}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
