"""How the tool's time grows with hostile input: each case timed at n and at 4n (the least CPU
time of a few rounds), and the ratio printed. A step linear in its input takes about 4 times as long at 4n, a
quadratic one 16 times, a cubic one 64: `--check` exits 1 when a ratio passes `--max-ratio`
(default 8, room for noise on a loaded machine, far below what a quadratic step gives).

The cases are the inputs a fork's pull request or a records file can make (docs/hostile-input.md):
matches nested in match arms, an `else if` chain, a site after many comment lines, a wide
or-pattern (the parse of one file), two long repetitive messages (lineage's similarity), and
records spread over many crates (the coverage matrix `diff` builds from records).

    python bench/scaling.py            # the table
    python bench/scaling.py --check    # and exit 1 past the ratio
    python bench/scaling.py --small    # quicker sizes (the test suite runs this)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def nested_matches(n: int) -> bytes:
    body = 'panic!("deep")'
    for i in range(n):
        body = f'match x{i} {{ DType::F32 => {body}, _ => panic!("no {i}"), }}'
    return f"fn f() {{ {body}; }}\n".encode()


def else_if_chain(n: int) -> bytes:
    arms = "".join(f' else if a{i} {{ panic!("x{i}") }}' for i in range(1, n))
    return f'fn f() {{ if a0 {{ panic!("x") }}{arms} }}\n'.encode()


def comment_lines(n: int) -> bytes:
    return ("// padding\n" * n + 'fn f(x: E) { match x { E::A => 1, _ => panic!("no") }; }\n').encode()


def wide_or_pattern(n: int) -> bytes:
    alternatives = " | ".join(["DType::F64"] * n)
    return f'fn f(x: DType) {{ match x {{ {alternatives} => 1, d => panic!("{{d:?}}"), }}; }}\n'.encode()


def parse_case(make: Callable[[int], bytes]) -> Callable[[int], Callable[[], object]]:
    from analyzer.facts.parse import parse_file
    from analyzer.profiles import DEFAULT, load

    profile = load(DEFAULT)

    def at(n: int) -> Callable[[], object]:
        source = make(n)
        return lambda: parse_file(source, profile)
    return at


def message_case(n: int) -> Callable[[], object]:
    from analyzer.lineage.link import message_ratio
    a, b = "a" * n, ("a" * 7 + "b") * (n // 8)
    return lambda: message_ratio(a, b)


def _template_line():
    """One real records line, from an extraction of a one-file repository made here."""
    from analyzer.pipeline.extract import extract
    from analyzer.profiles import DEFAULT, load
    from analyzer.profiles.run import Run
    from analyzer.source.repository import open_repository

    folder = Path(tempfile.mkdtemp(prefix="scaling-"))
    (folder / "crates/burn-x/src").mkdir(parents=True)
    (folder / "crates/burn-x/Cargo.toml").write_text('[package]\nname = "burn-x"\nversion = "0.1.0"\n')
    (folder / "crates/burn-x/src/lib.rs").write_text(
        "pub enum DType { F32, F64, I32 }\n"
        "pub fn conv(x: Tensor) {\n    match x.dtype() {\n        DType::F32 => 1,\n"
        '        d => panic!("conv: unsupported dtype {d:?}"),\n    };\n}\n')
    git = ["git", "-C", str(folder), "-c", "user.email=b@example.invalid", "-c", "user.name=b"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run(git + args, check=True)
    repo = open_repository(str(folder), None, "tracel-ai/burn")
    return extract(repo, repo.resolve("HEAD"), Run(load(DEFAULT))).lines[0]


def crates_case(n: int) -> Callable[[], object]:
    from analyzer.features.coverage.matches import build

    template = _template_line()
    lines = []
    for i in range(n):
        line = template.model_copy(deep=True)
        line.record.id = f"{i:016x}"
        assert line.analysis is not None
        line.analysis.crate = f"burn-c{i}"
        lines.append(line)
    return lambda: build(lines, collapse=True)


CASES: dict[str, tuple[Callable[[int], Callable[[], object]], int, int]] = {
    # name: (make the timed call at n, n, the smaller n of --small)
    "nested matches": (parse_case(nested_matches), 250, 100),
    "else-if chain": (parse_case(else_if_chain), 2_000, 500),
    "comment lines": (parse_case(comment_lines), 100_000, 25_000),
    "wide or-pattern": (parse_case(wide_or_pattern), 2_000, 500),
    "message length": (message_case, 50_000, 10_000),
    "crates x records": (crates_case, 2_000, 400),
}


# CPU time of this process, not wall time: other processes on a loaded machine take the cores
# from it between calls, which wall time counts and CPU time does not.
CLOCK = time.process_time
MIN_SECONDS = 0.02  # a timed unit this long at n, so the clock's grain and a stray pause are small beside it


def repetitions(call: Callable[[], object]) -> int:
    """How many calls at n make one timed unit of at least MIN_SECONDS (the same count is timed at
    4n, so the ratio is of equal work)."""
    reps = 1
    while True:
        t0 = CLOCK()
        for _ in range(reps):
            call()
        if CLOCK() - t0 >= MIN_SECONDS or reps >= 1024:
            return reps
        reps *= 2


def best_of(call: Callable[[], object], rounds: int, reps: int = 1) -> float:
    """The least CPU time of `rounds` timings of `reps` calls, per call."""
    best = float("inf")
    for _ in range(rounds):
        t0 = CLOCK()
        for _ in range(reps):
            call()
        best = min(best, CLOCK() - t0)
    return best / reps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a ratio passes --max-ratio")
    parser.add_argument("--max-ratio", type=float, default=8.0)
    parser.add_argument("--small", action="store_true", help="the quicker sizes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    rows = []
    for name, (make, n, small) in CASES.items():
        n = small if args.small else n
        at_n = make(n)
        reps = repetitions(at_n)
        t1 = best_of(at_n, args.rounds, reps)
        t4 = best_of(make(4 * n), args.rounds, reps)
        ratio = t4 / max(t1, 1e-6)
        rows.append({"case": name, "n": n, "seconds": round(t1, 4), "seconds4n": round(t4, 4),
                     "ratio": round(ratio, 2)})
        print(f"{name:18} n={n:<8} {t1:8.4f}s  4n={4 * n:<8} {t4:8.4f}s  ratio {ratio:5.2f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    over = [r for r in rows if r["ratio"] > args.max_ratio]
    if args.check and over:
        print("superlinear: " + ", ".join(f"{r['case']} ({r['ratio']}x at 4n)" for r in over), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
