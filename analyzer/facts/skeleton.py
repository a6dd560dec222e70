"""The bytes the coverage audit's code facts need parsed: a file without its function bodies.

The code facts (analyzer/facts/code.py) walk items only: the top level and the bodies of
modules, impls and traits. Of a function they read its name, attributes and signature from the
tree, and of its body only where it starts and ends (the calls in it are found by a regex over
its bytes). So the parser is given the file with the inside of every function body left out:
`fn f(x: u8) -> u8 {` and the closing `}`, in the file's own offsets, rows and columns
(`Parser.included_ranges`), and reads an empty block where the body was.

The bodies are found with the braces lexer.py finds in code, at each level of items: a brace
pair whose header (the text since the previous item at that level, less attributes, comments
and `;`-ended items) names an impl, module or trait is a level of its own; one whose header
names a function is left out; any other (a struct, an enum, a macro call or definition, a const)
is kept whole. A file that does not lex gives no skeleton. The caller checks that the parse has
no error and that every body left out is the body of a function at a level the walk reads, and
else parses the file whole: a skeleton can only save work, never change a fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.facts import regions
from analyzer.facts.regions import _CONTAINER, _past_semicolon

# A function's header once the noise is skipped: visibility, qualifiers, an ABI, then `fn`.
_FUNCTION = re.compile(rb'(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:default|const|async|unsafe|safe)\s+)*'
                       rb'(?:extern\s+(?:"[^"\\]*"\s*)?)?fn\b')


@dataclass
class Skeleton:
    """Byte ranges to parse, in order; and the function bodies left out, as (`{` offset, `}` offset)."""

    ranges: list[tuple[int, int]]
    bodies: list[tuple[int, int]]


def _close(source: bytes, marks) -> int:
    """The offset of the `}` that closes the `{` just read from `marks`, or -1 when none does."""
    depth = 1
    for at in marks:
        if source[at] == 0x7B:
            depth += 1
        else:
            depth -= 1
            if not depth:
                return at
    return -1


def skeleton(source: bytes) -> Skeleton | None:
    """The file less the inside of its function bodies, or None when it does not lex or has no
    function body to leave out."""
    # Per open level (the file, and each impl, module or trait body): where the next item's
    # header starts. A pair that is not a level is run through to its closing brace at once:
    # nothing inside it is a level.
    lexed = regions.braces(source)
    if lexed is None:
        return None
    stack: list[int] = [0]
    bodies: list[tuple[int, int]] = []
    marks = iter(lexed.marks)
    for at in marks:
        if source[at] == 0x7D:  # }
            if len(stack) == 1:
                return None  # a `}` that closes nothing
            stack.pop()
            stack[-1] = _past_semicolon(source, at + 1)
            continue
        # The header's keyword, past its attributes and comments: an impl, module or trait is a
        # level; a function's body is left out.
        keyword = regions.keyword_at(source, stack[-1], at)
        if _CONTAINER.match(source, keyword, at) is not None:
            stack.append(at + 1)
            continue
        close = _close(source, marks)
        if close < 0:
            return None
        if close > at + 1 and _FUNCTION.match(source, keyword, at) is not None:
            bodies.append((at, close))
        stack[-1] = _past_semicolon(source, close + 1)
    if len(stack) != 1 or not bodies:
        return None
    return Skeleton(ranges_without(bodies, len(source)), bodies)


def ranges_without(bodies: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The ranges of a file of `n` bytes less the inside of `bodies` (sorted `{`, `}` offsets)."""
    ranges = []
    start = 0
    for open_at, close in bodies:
        ranges.append((start, open_at + 1))
        start = close
    ranges.append((start, n))
    return ranges


def without_hits(bodies: list[tuple[int, int]], hits: list[int]) -> list[tuple[int, int]]:
    """The bodies (sorted) that hold none of the offsets `hits` (sorted)."""
    out = []
    k = 0
    for open_at, close in bodies:
        while k < len(hits) and hits[k] <= open_at:
            k += 1
        if k == len(hits) or hits[k] >= close:
            out.append((open_at, close))
    return out
