#!/usr/bin/env python3
"""Benchmark `burn-errors extract` against ast-grep on one revision of a repository.

    python bench/bench.py --repo PATH --sha REV [--rounds N] [--base REV] [--half] [--json FILE]

It exports the tree at REV once (git archive into a temporary folder) for ast-grep, which needs
files on disk, then times, in every round:

  cold     `burn-errors extract` with a fresh, empty BURN_ERRORS_CACHE
  cached   `burn-errors extract` again with a warm cache (primed once before the rounds)
  ast-grep `ast-grep scan --rule bench/astgrep-rule.yml --json=stream` on the exported tree
  diff     `burn-errors diff BASE REV` (BASE about a week earlier), with a cache warm at REV only,
           so BASE parses the files that differ; skipped with a note when there is no `diff`
  coverage `burn-errors coverage --format json` with a fresh cache (cold), and again with the
           warm one, where the results cache serves the matrix (cached)
  lookup   `burn-errors lookup PANIC --repo REPO --sha REV` with the warm cache, after one untimed
           lookup there: the served lookup, against an absolute target in seconds

`--lookup-only` times the served lookup alone (no export, no ast-grep).

Wall time comes from time.perf_counter around each child; CPU time and peak memory (max RSS of
the child or of its largest descendant, e.g. a parser process) from os.wait4. It prints medians,
min and max, the ratios cold/ast-grep and cached/ast-grep (of extract and of coverage) against
the targets, and the number of
matches each tool found, as a check that both looked at the same tree. `--half` also runs cold
extract and ast-grep on a tree holding about half of the Rust bytes (a commit built in a
throwaway repository that borrows the objects), to show how peak memory grows with the tree.

`--history FROM` also times `burn-errors history` over the release tags from FROM to REV (cold
cache, then warm), against one cold extract at REV, and what ast-grep takes for the same
revisions (one `git archive` checkout and one scan each).

Nothing is written into the repository; all outputs go to a temporary folder that is removed.
Exit code 2 with one line on stderr when something needed is missing (ast-grep, git, the rev).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULE = HERE / "astgrep-rule.yml"
TARGETS = {"cold": 0.8, "cached": 0.1}  # at most this many times ast-grep's wall time
# `coverage --repo --format json`: the audit parses whole files and builds the call graph, so
# its cold target is looser; a repeat is served by the results cache.
COVERAGE_TARGETS = {"coverage cold": 1.5, "coverage cached": 0.15}
# History over many revisions, at most this many times one cold extract at REV: wall time for a
# cold and a warm cache, and peak memory.
HISTORY_TARGETS = {"cold": 12.0, "warm": 1.5, "memory": 1.5}
# A second `burn-errors lookup` at a revision already extracted is served from the results cache:
# at most this many seconds of wall time (a person waits for it at a terminal).
LOOKUP_TARGET = 0.3
# What the timed lookup is given: a panic as Rust prints it, whose path names no release (so the
# answer comes from --sha), and a message many records share.
LOOKUP_PANIC = ("thread 'main' panicked at src/lib.rs:1:5:\nnot implemented\n"
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")


class BenchError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Running one child


@dataclass
class Run:
    wall: float
    cpu: float  # user + sys of the child and its descendants
    rss_kb: int  # max RSS of the child or of its largest descendant


@dataclass
class Series:
    label: str
    runs: list[Run] = field(default_factory=list)
    matches: str = ""
    note: str = ""

    def median(self) -> float:
        return statistics.median(r.wall for r in self.runs)


def run_child(cmd: list[str], *, env: dict | None = None, cwd: Path | None = None,
              stdout: Path | None = None, ok=(0,)) -> Run:
    """Run `cmd` to the end; wall time around it, rusage of exactly that child from wait4."""
    out = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL
    err = tempfile.TemporaryFile()
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
            # Linux reports KiB, macOS bytes.
            rss = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
        else:  # pragma: no cover - Windows: no per-child rusage
            proc.wait()
            wall, cpu, rss = time.perf_counter() - t0, float("nan"), 0
        if proc.returncode not in ok:
            err.seek(0)
            text = err.read().decode("utf-8", "replace").strip().splitlines()
            raise BenchError(f"{shlex.join(cmd)} exited with {proc.returncode}: "
                             f"{text[-1] if text else 'no message'}")
        return Run(wall, cpu, rss)
    finally:
        err.close()
        if stdout is not None:
            out.close()


def git(repo: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, input=input, env=env)
    except FileNotFoundError:
        raise BenchError("git not found on PATH") from None
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        raise BenchError(f"git {' '.join(args)} failed in {repo}: {lines[-1] if lines else 'no message'}")
    return proc.stdout


def resolve(repo: Path, rev: str) -> str:
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}").decode().strip()
    except BenchError:
        raise BenchError(f"unknown revision '{rev}' in {repo}; give a commit, tag or branch") from None


# ---------------------------------------------------------------------------------------------
# Tools


def find_ast_grep(given: str | None) -> str:
    """ast-grep from --ast-grep, next to this Python (the venv's `bench` extra), or on PATH.
    Never `sg`: on many systems that name is an unrelated program (shadow-utils)."""
    candidates = [given] if given else [str(Path(sys.executable).parent / "ast-grep"), shutil.which("ast-grep")]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    if given:
        raise BenchError(f"--ast-grep {given} is not an executable file")
    raise BenchError("ast-grep not found; install it with `pip install -e '.[bench]'` (the ast-grep-cli "
                     "package) or pass --ast-grep PATH")


def find_burn_errors(given: str | None) -> list[str]:
    if given:
        return shlex.split(given)
    sibling = Path(sys.executable).parent / "burn-errors"
    if sibling.is_file():
        return [str(sibling)]
    found = shutil.which("burn-errors")
    return [found] if found else [sys.executable, "-m", "analyzer"]


def tool_version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return out.splitlines()[0] if out else "?"


def has_diff_command(burn_errors: list[str]) -> bool:
    proc = subprocess.run([*burn_errors, "diff", "--help"], capture_output=True)
    return proc.returncode == 0


# ---------------------------------------------------------------------------------------------
# Trees


def export_tree(repo: Path, sha: str, dest: Path) -> None:
    """`git archive` of the revision, unpacked into dest (what ast-grep scans). A repository that
    lacks some blob of the revision (a snapshot or partial clone often keeps old images out) gives
    the Rust files alone, which is all ast-grep's rule reads, with a note."""
    try:
        _archive(repo, sha, dest)
    except (BenchError, tarfile.TarError):
        shutil.rmtree(dest, ignore_errors=True)
        _archive(repo, sha, dest, ":(glob)**/*.rs")
        print(f"note: {repo} lacks some files of {sha[:12]}; ast-grep scans its Rust files alone", file=sys.stderr)


def _archive(repo: Path, sha: str, dest: Path, *pathspec: str) -> None:
    dest.mkdir(parents=True)
    proc = subprocess.Popen(["git", "-C", str(repo), "archive", "--format=tar", sha, "--", *pathspec],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(dest, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                tar.extractall(dest)
    finally:
        proc.stdout.close()  # git, if still writing, ends on the closed pipe
        if proc.wait() != 0:
            raise BenchError(f"git archive {sha} failed in {repo}")


def rust_stats(repo: Path, sha: str) -> tuple[int, int]:
    """(number of .rs files, their total bytes) at the revision."""
    out = git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", sha)
    n = size = 0
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        parts = meta.split()
        if parts[1] == b"blob" and path.endswith(b".rs"):
            n += 1
            size += int(parts[3])
    return n, size


def week_before(repo: Path, sha: str) -> str | None:
    """The last first-parent commit at least seven days older than `sha`."""
    date = git(repo, "show", "-s", "--format=%cI", sha).decode().strip()
    when = datetime.fromisoformat(date) - timedelta(days=7)
    out = git(repo, "rev-list", "-1", "--first-parent", f"--before={when.isoformat()}", sha).decode().strip()
    return out or None


def half_commit(repo: Path, sha: str, work: Path) -> tuple[Path, str, str]:
    """A commit holding about half of the Rust bytes of `sha`: whole top-level folders of the
    biggest crate folder, in path order, until half the bytes. It lives in a throwaway bare
    repository whose object store borrows the original's (alternates), so nothing is written
    into the original. Returns (git dir, commit, folder list)."""
    out = git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", sha)
    sizes: dict[str, int] = {}
    total = 0
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        parts = meta.split()
        p = path.decode("utf-8", "surrogateescape")
        if parts[1] != b"blob" or not p.endswith(".rs"):
            continue
        top = "/".join(p.split("/")[:2]) if p.startswith("crates/") else p.split("/")[0]
        sizes[top] = sizes.get(top, 0) + int(parts[3])
        total += int(parts[3])
    keep, acc = [], 0
    for top in sorted(sizes):
        if acc >= total / 2:
            break
        keep.append(top)
        acc += sizes[top]
    objects = Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path", "objects").decode().strip())
    gdir = work / "half.git"
    subprocess.run(["git", "init", "-q", "--bare", str(gdir)], check=True)
    (gdir / "objects" / "info" / "alternates").write_text(str(objects) + "\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}

    def entries(treeish: str) -> list[tuple[bytes, bytes]]:
        """(`mode type oid`, name) of one tree level."""
        out = []
        for entry in git(gdir, "ls-tree", "-z", treeish).split(b"\0"):
            if entry:
                meta, name = entry.split(b"\t", 1)
                out.append((meta, name))
        return out

    def mktree(rows: list[tuple[bytes, bytes]]) -> str:
        data = b"".join(meta + b"\t" + name + b"\0" for meta, name in rows)
        return git(gdir, "mktree", "-z", input=data).decode().strip()

    # Top-level files (the workspace Cargo.toml), the chosen top-level folders, and `crates/`
    # cut down to the chosen crates. Trees are written into the throwaway repository only.
    crates = {k.split("/", 1)[1].encode() for k in keep if k.startswith("crates/")}
    root = []
    for meta, name in entries(sha):
        kind = meta.split()[1]
        if kind == b"blob" or name.decode("utf-8", "surrogateescape") in keep:
            root.append((meta, name))
        elif name == b"crates" and crates:
            sub = mktree([(m, n) for m, n in entries(f"{sha}:crates") if n in crates])
            root.append((b"040000 tree " + sub.encode(), name))
    tree = mktree(root)
    commit = git(gdir, "commit-tree", tree, "-m", f"half of {sha[:12]}", env=env).decode().strip()
    return gdir, commit, ", ".join(keep)


# ---------------------------------------------------------------------------------------------
# Match counts (untimed)


def count_astgrep(path: Path) -> tuple[int, set[tuple[str, int]]]:
    sites = set()
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            m = json.loads(line)
            n += 1
            sites.add((m["file"].removeprefix("./"), m["range"]["start"]["line"] + 1))
    return n, sites


def burn_errors_counts(out_dir: Path) -> tuple[dict, set[tuple[str, int]] | None]:
    """The manifest's counts, and from sites.jsonl the calls in ast-grep's shape: a panic!,
    unimplemented! or todo! that is the unconditional body of a match arm, outside macro token
    trees (which ast-grep cannot see into)."""
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    sites_file = out_dir / "sites.jsonl"
    if not sites_file.exists():
        return manifest, None
    same = set()
    for line in sites_file.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        if s.get("context") == "match-arm" and s.get("macro") != "unreachable" and not s.get("inMacro") \
                and s.get("rule") != "exclude/conditional":
            same.add((s["filePath"], s["lineNumber"]))
    return manifest, same


# ---------------------------------------------------------------------------------------------
# History over many revisions


@dataclass
class HistoryBench:
    series: list[Series]  # history cold, history warm, ast-grep over the same revisions
    note: str
    ratios: dict[str, float]


def run_history_bench(args, ast_grep: str, burn_errors: list[str], repo: Path, sha: str, work: Path,
                      jobs: list[str], log) -> HistoryBench:
    """`burn-errors history --from FROM --to SHA` with an empty cache and with a warm one, and
    ast-grep on the same revisions: `git archive` of each one's Rust files into a fresh folder,
    then one scan."""
    out = work / "history.json"

    def history_cmd() -> list[str]:
        return [*burn_errors, "history", "--repo", str(repo), "--from", args.history, "--to", sha,
                "--format", "json", "--out", str(out), *jobs]

    warm = work / "cache-history-warm"
    log(f"history from {args.history}: warming up (untimed)")
    run_child(history_cmd(), env={**os.environ, "BURN_ERRORS_CACHE": str(warm)})
    doc = json.loads(out.read_text(encoding="utf-8"))
    revisions = [(r["label"], r["sha"]) for r in doc["revisions"]]
    afresh = sum(r["filesReadAfresh"] for r in doc["revisions"])
    scanned = sum(r["filesScanned"] for r in doc["revisions"])

    h_cold = Series(f"history, {len(revisions)} revisions, cold cache")
    h_warm = Series(f"history, {len(revisions)} revisions, warm cache")
    h_astg = Series(f"ast-grep, {len(revisions)} checkouts + scans")
    found = doc.get("summary") or {}
    h_cold.matches = (f"{found.get('lineages', '?')} sites, {found.get('fixed', '?')} fixed, "
                      f"{found.get('regressions', '?')} regressions")
    h_warm.matches = h_cold.matches

    def cold_round(i: int) -> None:
        fresh = work / f"cache-history-cold-{i}"
        h_cold.runs.append(run_child(history_cmd(), env={**os.environ, "BURN_ERRORS_CACHE": str(fresh)}))
        shutil.rmtree(fresh, ignore_errors=True)

    def warm_round(i: int) -> None:
        h_warm.runs.append(run_child(history_cmd(), env={**os.environ, "BURN_ERRORS_CACHE": str(warm)}))

    git_dir = git(repo, "rev-parse", "--absolute-git-dir").decode().strip()

    def astgrep_round(i: int) -> None:
        total = Run(0.0, 0.0, 0)
        matches = 0
        for _label, rev in revisions:
            tree = work / f"history-tree-{i}"
            tree.mkdir()
            # The Rust files only: what ast-grep's rule scans (and a mirror may lack big blobs
            # such as images in old revisions).
            checkout = run_child(["sh", "-c", 'git --git-dir="$1" archive --format=tar "$2" -- ":(glob)**/*.rs" '
                                  '| tar -x -C "$3"', "sh", git_dir, rev, str(tree)])
            scan = run_child([ast_grep, "scan", "--rule", str(RULE), "--json=stream", str(tree)],
                             stdout=work / "astgrep-history.json")
            matches += count_astgrep(work / "astgrep-history.json")[0]
            total = Run(total.wall + checkout.wall + scan.wall, total.cpu + checkout.cpu + scan.cpu,
                        max(total.rss_kb, checkout.rss_kb, scan.rss_kb))
            shutil.rmtree(tree, ignore_errors=True)
        h_astg.runs.append(total)
        h_astg.matches = f"{matches} matches over the revisions"

    tasks = [cold_round, warm_round, astgrep_round]
    for i in range(args.history_rounds):
        log(f"history round {i + 1}/{args.history_rounds}")
        for task in tasks[i % len(tasks):] + tasks[:i % len(tasks)]:
            task(i)
    labels = [label[:12] if len(label) == 40 else label for label, _ in revisions]  # --to is a full SHA
    note = (f"history: {labels[0]} .. {labels[-1]} ({len(labels)} revisions: {', '.join(labels)}); "
            f"cold, {afresh} of {scanned} Rust files were read afresh over all revisions (the rest came from "
            f"the per-file cache the earlier revisions filled); warm, every revision is one results-cache row")
    return HistoryBench([h_cold, h_warm, h_astg], note, {})


# ---------------------------------------------------------------------------------------------
# Report


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except (AttributeError, OSError):  # pragma: no cover - Windows
        return "?"


def _busy_cpu_seconds() -> float | None:
    """CPU time the whole machine has spent busy since boot (Linux /proc/stat), else None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def fmt_s(x: float) -> str:
    return f"{x:.2f}s" if x == x else "?"


def table(series: list[Series]) -> list[str]:
    rows = [("run", "median", "min", "max", "cpu", "peak RSS", "matches")]
    for s in series:
        if not s.runs:
            rows.append((s.label, "-", "-", "-", "-", "-", s.note))
            continue
        walls = [r.wall for r in s.runs]
        rows.append((s.label, fmt_s(statistics.median(walls)), fmt_s(min(walls)), fmt_s(max(walls)),
                     fmt_s(statistics.median(r.cpu for r in s.runs)),
                     f"{max(r.rss_kb for r in s.runs) / 1024:.0f} MB", s.matches))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:-1], widths[1:-1])] + [r[-1]]
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True, help="local clone or bare repository")
    ap.add_argument("--sha", default="HEAD", help="revision to analyse (default HEAD)")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per tool (default 5)")
    ap.add_argument("--base", help="BASE revision for the diff run (default: a week before --sha)")
    ap.add_argument("--half", action="store_true",
                    help="also measure cold extract and ast-grep on about half of the tree")
    ap.add_argument("--jobs", type=int, help="pass --jobs to burn-errors extract")
    ap.add_argument("--history", metavar="FROM",
                    help="also time `burn-errors history --from FROM --to REV` (cold and warm cache) and "
                         "ast-grep on the same revisions")
    ap.add_argument("--history-rounds", type=int, default=3, metavar="N",
                    help="timed rounds of each history run (default 3)")
    ap.add_argument("--ast-grep", dest="ast_grep", help="ast-grep executable (default: the venv's, then PATH)")
    ap.add_argument("--burn-errors", dest="burn_errors", help="burn-errors command (default: the venv's)")
    ap.add_argument("--lookup-only", action="store_true",
                    help="time only the served lookup (a second lookup at an extracted revision)")
    ap.add_argument("--json", dest="json_out", help="also write every measurement to this JSON file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    ap.add_argument("--compile-each-run", action="store_true",
                    help="leave PYTHONDONTWRITEBYTECODE as it is: without bytecode files, every run "
                         "compiles the analyzer's modules again (an installed package has them)")
    args = ap.parse_args(argv)
    try:
        return bench(args)
    except BenchError as e:
        print(f"bench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130


def bench(args) -> int:
    if args.rounds < 1:
        raise BenchError("--rounds must be at least 1")
    if not RULE.exists():
        raise BenchError(f"the ast-grep rule file {RULE} is missing")
    # The user's inputs first, then the tools: a wrong revision is named even where ast-grep is missing.
    repo = Path(args.repo).expanduser()
    if not repo.exists():
        raise BenchError(f"no such repository: {args.repo}")
    sha = resolve(repo, args.sha)
    if args.history:
        resolve(repo, args.history)
        if args.history_rounds < 1:
            raise BenchError("--history-rounds must be at least 1")
    n_rs, rs_bytes = rust_stats(repo, sha)
    if n_rs == 0:
        raise BenchError(f"no Rust files at {sha[:12]} in {repo}")
    if args.lookup_only:
        return lookup_bench(args, find_burn_errors(args.burn_errors), repo, sha)
    ast_grep = find_ast_grep(args.ast_grep)
    burn_errors = find_burn_errors(args.burn_errors)
    base = None
    diff_ok = has_diff_command(burn_errors)
    if diff_ok:
        base = resolve(repo, args.base) if args.base else week_before(repo, sha)

    work = Path(tempfile.mkdtemp(prefix="burn-errors-bench-"))
    try:
        return _bench(args, ast_grep, burn_errors, repo, sha, base, diff_ok, n_rs, rs_bytes, work)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def _bench(args, ast_grep, burn_errors, repo, sha, base, diff_ok, n_rs, rs_bytes, work: Path) -> int:  # noqa: C901 (the whole benchmark run, read top to bottom by whoever runs it)
    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    # An installed package has its bytecode written at install time. Where the environment forbids
    # bytecode files (PYTHONDONTWRITEBYTECODE), each run would compile every module again, which
    # an installed user never pays: the burn-errors runs get a bytecode folder of their own that
    # the untimed warm-up fills, and every timed run reads it.
    bytecode_note = "bytecode: as the environment has it (--compile-each-run)"
    if not args.compile_each_run:
        pycache = work / "pycache"
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(pycache)
        bytecode_note = (f"bytecode: the burn-errors runs read compiled modules from {pycache.name}/ "
                         "(PYTHONPYCACHEPREFIX), filled by the untimed warm-up, as an installed package "
                         "has them; --compile-each-run to compile at every run instead")

    tree = work / "tree"
    log(f"exporting {sha[:12]} to {tree}")
    export_tree(repo, sha, tree)
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []

    def extract_cmd(out: Path, rev: str = sha, repo_path: Path = repo, extra: tuple = ()) -> list[str]:
        return [*burn_errors, "extract", "--repo", str(repo_path), "--sha", rev, "--out", str(out), *jobs, *extra]

    def env_with(cache: Path) -> dict:
        return {**os.environ, "BURN_ERRORS_CACHE": str(cache)}

    def coverage_cmd(out: Path) -> list[str]:
        return [*burn_errors, "coverage", "--repo", str(repo), "--sha", sha, "--format", "json", "--out", str(out)]

    def astgrep_cmd(path: Path) -> list[str]:
        return [ast_grep, "scan", "--rule", str(RULE), "--json=stream", str(path)]

    def lookup_cmd() -> list[str]:
        return lookup_command(burn_errors, repo, sha)

    # Warm-up, untimed: the OS file cache for both tools, the warm burn-errors cache, and the
    # outputs the match counts come from.
    warm = work / "cache-warm"
    log("warming up (untimed)")
    run_child(extract_cmd(work / "out-warm", extra=("--all-sites",)), env=env_with(warm))
    manifest, be_sites = burn_errors_counts(work / "out-warm")
    run_child([ast_grep, "scan", "--rule", str(RULE), "--json=stream", "."], cwd=tree,
              stdout=work / "astgrep-rel.json")
    ag_n, ag_sites = count_astgrep(work / "astgrep-rel.json")

    cold = Series("burn-errors extract, cold cache")
    cached = Series("burn-errors extract, warm cache")
    astg = Series("ast-grep scan")
    cov_cold = Series("burn-errors coverage, cold cache")
    cov_cached = Series("burn-errors coverage, results cache")
    log("warming up coverage (untimed)")
    run_child(coverage_cmd(work / "coverage-warm.json"), env=env_with(warm))
    look = Series("burn-errors lookup, served")
    log("warming up lookup (untimed)")
    run_child(lookup_cmd(), env=env_with(warm), ok=(0, 1))
    diff = Series("burn-errors diff BASE HEAD")
    if base is None:
        diff.note = ("skipped: this burn-errors has no `diff` command" if not diff_ok
                     else "skipped: no commit a week before --sha; pass --base")
    diff_warm = work / "cache-diff-template"
    if base is not None:
        shutil.copytree(warm, diff_warm)

    def run_cold(i: int) -> None:
        fresh = work / f"cache-cold-{i}"
        cold.runs.append(run_child(extract_cmd(work / "out-cold"), env=env_with(fresh)))
        shutil.rmtree(fresh, ignore_errors=True)

    def run_cached(i: int) -> None:
        cached.runs.append(run_child(extract_cmd(work / "out-cached"), env=env_with(warm)))

    def run_coverage_cold(i: int) -> None:
        fresh = work / f"cache-coverage-{i}"
        cov_cold.runs.append(run_child(coverage_cmd(work / "coverage-cold.json"), env=env_with(fresh)))
        shutil.rmtree(fresh, ignore_errors=True)

    def run_coverage_cached(i: int) -> None:
        cov_cached.runs.append(run_child(coverage_cmd(work / "coverage-cached.json"), env=env_with(warm)))

    def run_lookup(i: int) -> None:
        look.runs.append(run_child(lookup_cmd(), env=env_with(warm), ok=(0, 1)))

    def run_astgrep(i: int) -> None:
        astg.runs.append(run_child(astgrep_cmd(tree), stdout=work / "astgrep.json"))

    def run_diff(i: int) -> None:
        dcache = work / f"cache-diff-{i}"
        shutil.copytree(diff_warm, dcache)
        diff.runs.append(run_child([*burn_errors, "diff", base, sha, "--repo", str(repo), "--format", "json",
                                    "--out", str(work / "diff.json"), *jobs], env=env_with(dcache), ok=(0, 1)))
        shutil.rmtree(dcache, ignore_errors=True)

    tasks = [run_cold, run_cached, run_astgrep, run_coverage_cold, run_coverage_cached, run_lookup] + \
        ([run_diff] if base is not None else [])
    load_before = _load()
    busy0, wall0, self0 = _busy_cpu_seconds(), time.perf_counter(), sum(os.times()[:2])
    for i in range(args.rounds):
        log(f"round {i + 1}/{args.rounds}")
        # Rotate the order each round, so a burst of load elsewhere does not always hit one tool.
        for task in tasks[i % len(tasks):] + tasks[:i % len(tasks)]:
            task(i)
    load_after = _load()
    busy1, wall1, self1 = _busy_cpu_seconds(), time.perf_counter(), sum(os.times()[:2])
    others = None  # share of the cores other programs used while the rounds ran
    if busy0 is not None and busy1 is not None:
        ours = sum(r.cpu for s in (cold, cached, astg, diff, cov_cold, cov_cached, look) for r in s.runs) + \
            (self1 - self0)
        others = max(0.0, (busy1 - busy0) - ours) / ((wall1 - wall0) * (os.cpu_count() or 1))

    records = manifest.get("records", "?")
    calls = manifest.get("panicCalls", "?")
    cold.matches = f"{records} records of {calls} panic-family calls"
    cached.matches = cold.matches
    astg.matches = f"{ag_n} matches"
    try:
        cov = json.loads((work / "coverage-cold.json").read_text(encoding="utf-8"))
        cov_cold.matches = f"{len(cov.get('operations') or [])} operations, {len(cov.get('cells') or [])} cells"
        cov_cached.matches = cov_cold.matches
    except (OSError, ValueError, AttributeError):
        pass
    diff_note = ""
    if base is not None:
        try:
            d = json.loads((work / "diff.json").read_text(encoding="utf-8"))
            summary = d.get("summary") or {}
            diff.matches = ", ".join(f"{summary[k]} {k}" for k in ("added", "removed", "changed", "moved")
                                     if isinstance(summary.get(k), int))
        except (OSError, ValueError, AttributeError):
            pass
        changed = sum(1 for ln in git(repo, "diff", "--name-only", base, sha).decode().splitlines()
                      if ln.endswith(".rs"))
        diff_note = (f"diff: BASE {base[:12]} .. HEAD {sha[:12]}, {changed} .rs files differ; each round starts "
                     f"from a cache warm at HEAD only, so BASE parses the files that differ")
    half: list[Series] = []
    half_note = ""
    if args.half:
        gdir, hsha, folders = half_commit(repo, sha, work)
        hn, hbytes = rust_stats(gdir, hsha)
        htree = work / "half-tree"
        export_tree(gdir, hsha, htree)
        hc = Series("half tree: extract, cold cache")
        ha = Series("half tree: ast-grep scan")
        for i in range(args.rounds):
            log(f"half tree round {i + 1}/{args.rounds}")
            fresh = work / f"cache-half-{i}"
            hc.runs.append(run_child(extract_cmd(work / "out-half", hsha, gdir), env=env_with(fresh)))
            shutil.rmtree(fresh, ignore_errors=True)
            ha.runs.append(run_child(astgrep_cmd(htree), stdout=work / "astgrep-half.json"))
        hm = json.loads((work / "out-half" / "manifest.json").read_text(encoding="utf-8"))
        hc.matches = f"{hm.get('records', '?')} records of {hm.get('panicCalls', '?')} panic-family calls"
        ha.matches = f"{count_astgrep(work / 'astgrep-half.json')[0]} matches"
        half = [hc, ha]
        names = folders.split(", ")
        shown = folders if len(names) <= 3 else f"{names[0]} .. {names[-1]}, {len(names)} folders"
        half_note = f"half tree: {hn} .rs files, {hbytes / 1e6:.1f} MB ({shown})"

    hist = HistoryBench([], "", {}) if not args.history else \
        run_history_bench(args, ast_grep, burn_errors, repo, sha, work, jobs, log)

    # -- report -------------------------------------------------------------------------
    be_version = tool_version([*burn_errors, "--version"])
    ag_version = tool_version([ast_grep, "--version"])
    print(f"burn-errors benchmark: {repo} @ {sha[:12]}, {n_rs} .rs files ({rs_bytes / 1e6:.1f} MB), "
          f"{args.rounds} round{'s' if args.rounds != 1 else ''}")
    print(f"{be_version}; {ag_version}; Python {platform.python_version()}; {os.cpu_count()} cores; "
          f"{platform.system()} {platform.machine()}; load average {load_before} before, {load_after} after"
          + (f"; other programs used {others:.0%} of the cores meanwhile" if others is not None else ""))
    print(bytecode_note)
    print()
    for line in table([cold, cached, astg, diff, cov_cold, cov_cached, look, *half]):
        print(line)
    print("(wall: time.perf_counter around the child; cpu: user+sys of the child and its processes; "
          "peak RSS: its largest single process)")
    if diff_note:
        print(diff_note)
    print()
    ag_med = astg.median()
    if others is not None and others > 0.10:
        print(f"warning: other programs used {others:.0%} of the cores while the rounds ran; every tool was "
              f"slowed by chance and the ratios below are unreliable; run again on an idle machine")
    print("ratio (median wall time)   value   target")
    results = {}
    for name, s in (("cold", cold), ("cached", cached)):
        ratio = s.median() / ag_med
        results[name] = ratio
        verdict = "ok" if ratio <= TARGETS[name] else "MISSED"
        print(f"{name + '/ast-grep':<26} {ratio:5.2f}x  <= {TARGETS[name]:.1f}x  {verdict}")
    for name, s in (("coverage cold", cov_cold), ("coverage cached", cov_cached)):
        ratio = s.median() / ag_med
        results[name] = ratio
        verdict = "ok" if ratio <= COVERAGE_TARGETS[name] else "MISSED"
        print(f"{name + '/ast-grep':<26} {ratio:5.2f}x  <= {COVERAGE_TARGETS[name]:.2f}x  {verdict}")
    print(lookup_verdict(look))
    if hist.series:
        print()
        for line in table(hist.series):
            print(line)
        print(hist.note)
        print("history ratio (to one cold extract at REV)   value   target")
        base_wall = cold.median()
        base_rss = max(r.rss_kb for r in cold.runs)
        h_cold, h_warm, h_astg = hist.series
        for name, value in (("cold", h_cold.median() / base_wall), ("warm", h_warm.median() / base_wall),
                            ("memory", max(r.rss_kb for r in h_cold.runs + h_warm.runs) / base_rss)):
            hist.ratios[name] = value
            verdict = "ok" if value <= HISTORY_TARGETS[name] else "MISSED"
            what = "peak RSS" if name == "memory" else f"{name} wall"
            print(f"{'history ' + what:<44} {value:5.2f}x  <= {HISTORY_TARGETS[name]:.1f}x  {verdict}")
        hist.ratios["ast-grep"] = h_astg.median() / base_wall
        print(f"{'ast-grep, checkout + scan per revision':<44} {hist.ratios['ast-grep']:5.2f}x  "
              f"(history cold/ast-grep {h_cold.median() / h_astg.median():.2f}x, "
              f"warm/ast-grep {h_warm.median() / h_astg.median():.2f}x)")
    if half:
        print()
        print(half_note)

        def rss(series: Series) -> float:
            return max(r.rss_kb for r in series.runs) / 1024
        print(f"peak RSS, half tree -> whole tree: burn-errors cold {rss(half[0]):.0f} -> {rss(cold):.0f} MB, "
              f"ast-grep {rss(half[1]):.0f} -> {rss(astg):.0f} MB")
    print()
    print(f"files scanned: burn-errors {manifest.get('filesScanned', '?')}, ast-grep {n_rs} .rs files in the export")
    if be_sites is not None:
        both = len(be_sites & ag_sites)
        print(f"sanity: ast-grep found {ag_n} matches; burn-errors saw {len(be_sites)} calls of the same shape "
              f"(match-arm body, outside macro token trees); {both} at the same file:line")
        only_ag = sorted(ag_sites - be_sites)[:3]
        only_be = sorted(be_sites - ag_sites)[:3]
        if only_ag or only_be:
            print(f"  e.g. only ast-grep: {only_ag}; only burn-errors: {only_be}")
    cmd = ["python", "bench/bench.py", "--repo", str(args.repo), "--sha", args.sha, "--rounds", str(args.rounds)]
    if args.base:
        cmd += ["--base", args.base]
    if args.half:
        cmd.append("--half")
    if args.history:
        cmd += ["--history", args.history, "--history-rounds", str(args.history_rounds)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    if args.compile_each_run:
        cmd.append("--compile-each-run")
    print(f"command: {shlex.join(cmd)}")
    print(f"(the served lookup alone: python bench/bench.py --repo {shlex.quote(str(args.repo))} --sha "
          f"{shlex.quote(args.sha)} --lookup-only)")
    if args.json_out:
        data = {
            "repo": str(repo), "sha": sha, "base": base, "rounds": args.rounds, "rustFiles": n_rs,
            "rustBytes": rs_bytes, "cpus": os.cpu_count(), "burnErrors": be_version, "astGrep": ag_version,
            "ratios": results, "historyRatios": hist.ratios, "lookupServed": look.median(),
            "load": [load_before, load_after],
            "othersCpuShare": others, "bytecode": bytecode_note,
            "series": {s.label: {"wall": [r.wall for r in s.runs], "cpu": [r.cpu for r in s.runs],
                                 "rssKb": [r.rss_kb for r in s.runs], "matches": s.matches, "note": s.note}
                       for s in (cold, cached, astg, diff, cov_cold, cov_cached, look, *half, *hist.series)},
        }
        Path(args.json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


def lookup_command(burn_errors: list[str], repo: Path, sha: str) -> list[str]:
    return [*burn_errors, "lookup", LOOKUP_PANIC, "--repo", str(repo), "--sha", sha, "--format", "json"]


def lookup_verdict(look: Series) -> str:
    value = look.median()
    verdict = "ok" if value <= LOOKUP_TARGET else "MISSED"
    return f"{'lookup served (wall)':<26} {value:5.2f}s  <= {LOOKUP_TARGET:.2f}s  {verdict}"


def lookup_bench(args, burn_errors: list[str], repo: Path, sha: str) -> int:
    """`--lookup-only`: one untimed lookup at REV (it extracts there, or is served already), then
    the rounds of the served lookup, each a fresh process with the same cache."""
    work = Path(tempfile.mkdtemp(prefix="burn-errors-bench-"))
    try:
        env = {**os.environ, "BURN_ERRORS_CACHE": str(work / "cache")}
        if not args.compile_each_run:
            os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        cmd = lookup_command(burn_errors, repo, sha)
        first = run_child(cmd, env=env, ok=(0, 1))
        look = Series("burn-errors lookup, served")
        for _ in range(args.rounds):
            look.runs.append(run_child(cmd, env=env, ok=(0, 1)))
        print(f"burn-errors lookup at {repo} @ {sha[:12]}: the first lookup (one extract) {fmt_s(first.wall)}, "
              f"then {args.rounds} served")
        for line in table([look]):
            print(line)
        print(lookup_verdict(look))
        if args.json_out:
            Path(args.json_out).write_text(json.dumps({"repo": str(repo), "sha": sha, "firstLookup": first.wall,
                                                       "lookupServed": look.median(),
                                                       "wall": [r.wall for r in look.runs]}, indent=2) + "\n",
                                           encoding="utf-8")
        return 0
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
