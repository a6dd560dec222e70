"""What the coverage matrix answers of each backend (its operations, its cells by status, its
column groups) comes from one index of the cells and operations: these pin the answers on a small
matrix with every case the sinks meet (a backend with operations but no cell, one whose cells in
an enum are all n/a, one known from its cells alone)."""

from __future__ import annotations

from analyzer.features.coverage.model import Cell, Group, Matrix, Operation


def _matrix() -> Matrix:
    def cell(crate, op, dtype, status, enum="DType"):
        return Cell(crate, op, dtype, status, enum=enum)

    cells = [cell("burn-a", "float_add", "F32", "handled"), cell("burn-a", "float_add", "I32", "n/a"),
             cell("burn-a", "int_add", "I32", "panics"), cell("burn-a", "float_add", "Kind::Half", "n/a", "Kind"),
             cell("burn-b", "float_add", "Kind::Half", "partial", "Kind"),
             cell("burn-b", "float_add", "F32", "n/a"), cell("burn-c", "m", "F32", "unknown")]
    ops = {("burn-a", "float_add"): Operation("burn-a", "float_add", "FloatTensorOps", "float", "a.rs", 1),
           ("burn-a", "float_exp"): Operation("burn-a", "float_exp", "FloatTensorOps", "float", "a.rs", 9),
           ("burn-d", "float_sin"): Operation("burn-d", "float_sin", "FloatTensorOps", "float", "d.rs", 3)}
    groups = [Group("DType", ["F32", "I32"]), Group("Kind", ["Kind::Half"])]
    return Matrix({c.key: c for c in cells}, ["F32", "I32", "Kind::Half"], groups, ops=ops)


def test_each_backend_is_answered_from_its_cells_and_operations():
    m = _matrix()
    assert m.crates() == ["burn-a", "burn-b", "burn-c", "burn-d"]
    assert m.operations("burn-a") == ["float_add", "float_exp", "int_add"]
    assert m.operations("burn-b") == ["float_add"] and m.operations("burn-d") == ["float_sin"]
    assert m.operations("burn-z") == []
    assert m.counts("burn-a") == {"handled": 1, "panics": 1, "partial": 0, "n/a": 2, "unknown": 0}
    assert m.counts("burn-b") == {"handled": 0, "panics": 0, "partial": 1, "n/a": 1, "unknown": 0}
    assert m.counts() == {"handled": 1, "panics": 1, "partial": 1, "n/a": 3, "unknown": 1}
    assert m.counts("burn-z") == {"handled": 0, "panics": 0, "partial": 0, "n/a": 0, "unknown": 0}
    assert list(m.counts()) == ["handled", "panics", "partial", "n/a", "unknown"]


def test_a_backends_groups_are_those_with_a_cell_not_n_a_and_with_operations_the_first():
    m = _matrix()
    dtype, kind = m.groups
    assert m.groups_of("burn-a") == [dtype]  # its Kind cells are n/a
    assert m.groups_of("burn-b") == [kind]  # no operation, and its DType cells are n/a
    assert m.groups_of("burn-c") == [dtype]  # no operation of the view, an unknown DType cell
    assert m.groups_of("burn-d") == [dtype]  # operations only: the first group
    assert m.groups_of("burn-z") == []


def test_an_answer_is_a_copy_the_caller_may_change():
    m = _matrix()
    m.operations("burn-a").append("x")
    m.counts("burn-a")["handled"] = 99
    assert m.operations("burn-a") == ["float_add", "float_exp", "int_add"]
    assert m.counts("burn-a")["handled"] == 1
