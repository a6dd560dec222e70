#!/usr/bin/env python3
"""Draw a blind labelling sample of the calls that can refuse at a revision, straight from git.

    python tools/sample_calls.py REPO REV --n 120 --seed 20261205 > sample.tsv

Every call of one of these forms in the revision's `.rs` files is listed, files under `tests/` or
`benches/` folders left out: `panic!`, `unimplemented!` and `todo!` (also `std::`/`core::`
paths); `assert!`, `assert_eq!` and `assert_ne!` with a message (not `debug_assert!`); and
`.expect("..")` handed a string literal. They are found with `git grep` and a scan of the files it
names, not with the tool, so the sample does not depend on what the tool sees. N are drawn at
random with the seed; `--forms` keeps only some forms. Prints `path<TAB>line<TAB>form`, sorted,
for a reader to add a label and a reason (the form stands where a labels file has its `macro`).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys

PANICS = ("panic", "unimplemented", "todo")
ASSERTIONS = {"assert": 1, "assert_eq": 2, "assert_ne": 2}  # the message's place among the arguments
FORMS = (*PANICS, *ASSERTIONS, "expect")
CALL = re.compile(r"(?<![\w$])(?:(panic|unimplemented|todo|assert_eq|assert_ne|assert)\s*!\s*([(\[{])?"
                  r"|\.\s*(expect)\s*\(\s*(?:r#*)?\")")
TEST_FOLDER = re.compile(r"(^|/)(tests|benches)/")
# What a scan of a call's arguments steps over as a whole: strings, chars, comments.
_SKIP = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\\n]|\\.[^\']*)\'|//[^\n]*|/\*.*?\*/', re.S)


def _commas(text: str, open_at: int) -> int | None:
    """How many top-level commas separate the arguments of the call whose delimiter opens at
    `open_at`, a trailing comma not counted; None when it does not close."""
    depth, commas, last = 0, 0, ""
    i = open_at
    while i < len(text):
        m = _SKIP.match(text, i)
        if m is not None:
            i, last = m.end(), "x"
            continue
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return commas - (last == ",")
        elif ch == "," and depth == 1:
            commas += 1
        if not ch.isspace():
            last = ch if depth == 1 or ch in ")]}" else "x"
        i += 1
    return None


def _file_calls(path: str, text: str) -> list[tuple[str, int, str]]:
    found = []
    for m in CALL.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "//" in text[line_start:m.start()]:
            continue  # in a line comment
        form = m.group(1) or m.group(3)
        if form in ASSERTIONS:
            if m.group(2) is None:
                continue
            commas = _commas(text, m.end() - 1)
            if commas is None or commas < ASSERTIONS[form]:
                continue  # no message
        line = text.count("\n", 0, m.start(3) if form == "expect" else m.start()) + 1
        found.append((path, line, form))
    return found


def calls(repo: str, rev: str, forms: tuple[str, ...] = FORMS) -> list[tuple[str, int, str]]:
    listed = subprocess.run(
        ["git", "-C", repo, "grep", "-l", "-I", "-E", r"\b(panic|unimplemented|todo|assert(_eq|_ne)?)!|expect\(",
         rev, "--", "*.rs"],
        capture_output=True, text=True, check=True,
    ).stdout
    paths = [line.split(":", 1)[1] for line in listed.splitlines() if not TEST_FOLDER.search(line.split(":", 1)[1])]
    if not paths:
        return []
    wanted = "".join(f"{rev}:{p}\n" for p in paths).encode()
    blobs = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input=wanted, capture_output=True,
                           check=True).stdout
    found: list[tuple[str, int, str]] = []
    at = 0
    for path in paths:
        header_end = blobs.index(b"\n", at)
        size = int(blobs[at:header_end].split()[2])
        text = blobs[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        at = header_end + 1 + size + 1
        found.extend(c for c in _file_calls(path, text) if c[2] in forms)
    return list(dict.fromkeys(found))  # two calls of one form on a line are one line to label


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("rev")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--seed", type=int, default=20261205)
    ap.add_argument("--forms", default=",".join(FORMS),
                    help=f"comma-separated forms to draw from (default: all of {', '.join(FORMS)})")
    args = ap.parse_args()
    forms = tuple(f.strip() for f in args.forms.split(",") if f.strip())
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        print(f"sample_calls: unknown form {unknown[0]!r}; use some of {', '.join(FORMS)}", file=sys.stderr)
        return 2
    try:
        every = calls(args.repo, args.rev, forms)
    except subprocess.CalledProcessError as e:
        print(f"sample_calls: git failed on {args.repo} at {args.rev}: {(e.stderr or b'').strip()[:200]!r}",
              file=sys.stderr)
        return 2
    drawn = sorted(random.Random(args.seed).sample(every, min(args.n, len(every))))
    print(f"# {len(every)} calls at {args.rev}; {len(drawn)} drawn with seed {args.seed}", file=sys.stderr)
    for path, number, form in drawn:
        print(f"{path}\t{number}\t{form}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
