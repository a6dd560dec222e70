"""One definition of a crate: from the tree's Cargo.toml folders, and from a path alone for a
record read without its tree; the two agree on the layouts cargo uses."""

from __future__ import annotations

import pytest

from analyzer.source.crates import crate_from_path, crate_of, crates_of

ROOTS = ["", "crates/burn-flex", "crates/burn-import/onnx-tests", "examples/mnist"]


@pytest.mark.parametrize("path,crate", [
    ("crates/burn-flex/src/ops/module.rs", "burn-flex"),
    ("crates/burn-flex/src/tests/ops.rs", "burn-flex"),  # a tests module inside src
    ("crates/burn-flex/lib.rs", "burn-flex"),  # a crate without src/
    ("crates/burn-flex/tests/conv.rs", "burn-flex"),
    ("crates/burn-flex/benches/conv.rs", "burn-flex"),
    ("examples/mnist/src/main.rs", "mnist"),
])
def test_a_path_alone_names_the_crate_its_cargo_toml_does(path, crate):
    assert crate_from_path(path) == crate
    assert crate_of(path, ROOTS) == crate


def test_the_deepest_cargo_toml_folder_wins_and_folders_share_one_answer():
    path = "crates/burn-import/onnx-tests/src/lib.rs"
    assert crate_of(path, ROOTS) == "onnx-tests"
    assert crates_of([path, "crates/burn-import/onnx-tests/src/x.rs"], ROOTS) == {
        path: "onnx-tests", "crates/burn-import/onnx-tests/src/x.rs": "onnx-tests"}


@pytest.mark.parametrize("path,crate", [
    ("crates/burn-flexible/src/a.rs", "crates"),  # a folder whose name only starts like a crate's
    ("tools/gen/src/main.rs", "tools"),  # under no crate folder but the top one
    ("build.rs", ""),
    ("examples/mnist/src/deep/er/x.rs", "mnist"),
])
def test_a_file_under_no_crate_folder_takes_its_top_folder(path, crate):
    assert crate_of(path, ROOTS) == crate
    assert crates_of([path], ROOTS) == {path: crate}
