"""Small results of each family for the sink tests, built in memory: a two-backend matrix, the
pages fixture's records, a diff that adds them, a lookup of one of their messages, and a history
of two revisions."""

from __future__ import annotations

from pathlib import Path

from analyzer.features.coverage.model import HANDLED, PANICS, Cell, Group, Matrix, Operation

RECORDS = Path(__file__).resolve().parents[1] / "fixtures" / "pages" / "records.jsonl"
REPO, SHA = "fixture/tensors", "c0ffee" + "0" * 34


def matrix() -> Matrix:
    """burn-a panics on F16 in float_exp, burn-b handles it."""
    cells = {("burn-a", "float_exp", "F16"): Cell("burn-a", "float_exp", "F16", PANICS, enum="DType"),
             ("burn-b", "float_exp", "F16"): Cell("burn-b", "float_exp", "F16", HANDLED, enum="DType")}
    ops = {(c, "float_exp"): Operation(c, "float_exp", "FloatTensorOps", "float", "src/ops.rs", 1)
           for c in ("burn-a", "burn-b")}
    return Matrix(cells, ["F16"], [Group("DType", ["F16"])], ops=ops, repo=REPO, sha=SHA)


def lines():
    from analyzer.records import reader
    return reader.read(str(RECORDS))


def diff(tmp_path: Path):
    """Every fixture record added to an empty records file."""
    from analyzer.features.diff import diff_records
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    return diff_records(str(empty), str(RECORDS))


def answer():
    """A lookup of the first fixture record's message."""
    from analyzer.features import lookup as lk
    records = lines()
    result = lk.lookup(lk.Panic(records[0].record.errorMessage), records)
    return lk.Answer(result, result.matches)


def history():
    from analyzer.features.history.model import History, Revision
    revisions = [Revision(i, label, sha, f"2024-01-0{i + 1}", True, n, {"dtype": n}, {"burn-a": {"dtype": n}},
                          3, 3, False, 0.0) for i, (label, sha, n) in enumerate([("v0.1.0", "a" * 40, 1),
                                                                                   ("v0.2.0", "b" * 40, 2)])]
    return History(REPO, revisions, [], [], [])
