"""Lineage across a split: a function that served several node types split into one function per
node type in new files (each message gaining a clause), a catch-all narrowed into explicit arms
(its message kept in spirit), arms rewritten as a closure. The earlier record is carried when
what the refusal says is the same, and never onto another refusal."""

from __future__ import annotations

from conftest import extract_by_message

CONV = '''\
pub fn conv_config(node: &Node) -> ConvConfig {
    let padding = node.attr("pads");
    match padding {
        PaddingMode::Valid => ConvConfig::valid(),
        PaddingMode::Same => ConvConfig::same(),
        other => panic!("Conv: padding mode {:?} is not supported", other),
    }
}
'''


def _per_node(n: str, extra: str) -> str:
    return f'''\
pub fn conv{n}d_config(node: &Node) -> Conv{n}dConfig {{
    let padding = node.attr("pads");
    match padding {{
        PaddingMode::Valid => Conv{n}dConfig::valid(),
        PaddingMode::Same => Conv{n}dConfig::same(),
        other => panic!("Conv{n}d: padding mode {{:?}} is not supported, only Valid and Same{extra} are", other),
    }}
}}
'''


OLD_CONV = "Conv: padding mode {:?} is not supported"


def _after(cli, git_repo, tmp_path, before_files: dict, after_files: dict, removed: list[str]):
    git_repo.crate("onnx-ir", before_files)
    git_repo.commit()
    before = extract_by_message(cli, git_repo, tmp_path / "a")
    for rel in removed:
        git_repo.remove(f"crates/onnx-ir/{rel}")
    git_repo.crate("onnx-ir", after_files)
    git_repo.commit()
    after = extract_by_message(cli, git_repo, tmp_path / "b", previous=tmp_path / "a" / "records.jsonl")
    return before, after


def test_a_function_split_per_node_type_carries_the_record_to_one_of_them(cli, git_repo, tmp_path):
    before, after = _after(cli, git_repo, tmp_path, {"src/node/conv.rs": CONV},
                           {"src/node/conv1d.rs": _per_node("1", ""), "src/node/conv2d.rs": _per_node("2", " and Explicit")},
                           ["src/node/conv.rs"])
    old_id = before[OLD_CONV]["record"]["id"]
    heirs = {msg: ln for msg, ln in after.items() if ln["record"]["id"] == old_id}
    # The closest heir (the message that added the fewest words) continues it; the other is new.
    assert list(heirs) == ["Conv1d: padding mode {:?} is not supported, only Valid and Same are"]
    [heir] = heirs.values()
    assert heir["analysis"]["lineage"] == "message" and heir["analysis"]["annotationStatus"] == "changed"
    other = after["Conv2d: padding mode {:?} is not supported, only Valid and Same and Explicit are"]
    assert other["analysis"]["lineage"] == "new" and other["record"]["id"] != old_id


RESIZE = '''\
pub fn resize_config(node: &Node) -> ResizeConfig {
    match node.mode() {
        InterpolationMode::Linear => ResizeConfig::linear(),
        mode => panic!("Resize: interpolation mode {:?} is not supported", mode),
    }
}
'''
NARROWED = '''\
pub fn resize_config(node: &Node) -> ResizeConfig {
    match node.mode() {
        InterpolationMode::Linear => ResizeConfig::linear(),
        InterpolationMode::Cubic => panic!("Resize: cubic interpolation mode is not supported yet"),
    }
}
'''


def test_a_catch_all_narrowed_into_an_arm_keeps_its_record(cli, git_repo, tmp_path):
    before, after = _after(cli, git_repo, tmp_path, {"src/node/resize.rs": RESIZE},
                           {"src/node/resize.rs": NARROWED}, [])
    old = before["Resize: interpolation mode {:?} is not supported"]
    new = after["Resize: cubic interpolation mode is not supported yet"]
    assert new["record"]["id"] == old["record"]["id"]
    assert new["analysis"]["lineage"] == "message" and new["analysis"]["annotationStatus"] == "changed"


PAD = '''\
pub fn pad_config(node: &Node) -> PadConfig {
    match node.pad_mode() {
        PadMode::Constant(v) => PadConfig::constant(v),
        _ => unimplemented!("Pad: reflect and edge modes are not supported by this importer"),
    }
}
'''
PAD_CLOSURE = '''\
pub fn pad_config(node: &Node) -> PadConfig {
    node.pad_mode()
        .constant()
        .map(PadConfig::constant)
        .unwrap_or_else(|| unimplemented!("Pad: reflect and edge modes are not supported by the ONNX importer"))
}
'''


def test_arms_rewritten_as_a_closure_in_a_new_file_keep_their_record(cli, git_repo, tmp_path):
    before, after = _after(cli, git_repo, tmp_path, {"src/node/pad.rs": PAD}, {"src/node/pad/config.rs": PAD_CLOSURE},
                           ["src/node/pad.rs"])
    [old] = before.values()
    [new] = after.values()
    assert new["record"]["errorMessage"].endswith("by the ONNX importer")
    assert new["record"]["id"] == old["record"]["id"] and new["analysis"]["lineage"] == "message"


def _refusal_pairs(cli, git_repo, tmp_path, before_files: dict, after_files: dict, removed: list[str]):
    """What the refusal tier alone pairs between the two revisions' records (every record
    left to it), by message."""
    from analyzer.lineage.refusal import pairs
    from analyzer.records import reader

    _after(cli, git_repo, tmp_path, before_files, after_files, removed)
    prev = reader.read(str(tmp_path / "a" / "records.jsonl"))
    cur = reader.read(str(tmp_path / "b" / "records.jsonl"))
    found = pairs(prev, cur, set(range(len(prev))), set(range(len(cur))), lambda r: r.facts.crate)
    return [(prev[p].record.errorMessage, cur[c].record.errorMessage) for p, c in found]


def test_another_refusal_in_another_function_is_not_merged(cli, git_repo, tmp_path):
    """The conv refusal is gone and a pooling one comes in another function: they share words
    (padding, mode), not the refusal."""
    pool = CONV.replace("conv_config", "pool_config").replace("ConvConfig", "PoolConfig").replace("Conv:", "Pool:")
    assert _refusal_pairs(cli, git_repo, tmp_path, {"src/node/conv.rs": CONV}, {"src/node/pool.rs": pool},
                          ["src/node/conv.rs"]) == []


def test_a_message_with_no_distinctive_word_is_not_merged(cli, git_repo, tmp_path):
    """`unimplemented!()` says nothing of what it refuses: one gone and another come elsewhere are
    two refusals as far as the words go."""
    gone = "pub fn squeeze_config(node: &Node) -> SqueezeConfig {\n    unimplemented!()\n}\n"
    come = "pub fn unsqueeze_config(node: &Node) -> UnsqueezeConfig {\n    unimplemented!()\n}\n"
    assert _refusal_pairs(cli, git_repo, tmp_path, {"src/node/squeeze.rs": gone}, {"src/node/unsqueeze.rs": come},
                          ["src/node/squeeze.rs"]) == []


def test_a_fixed_arm_and_a_new_refusal_beside_it_are_two_sites(cli, git_repo, tmp_path):
    """The catch-all is implemented away and another mode's arm refuses something else: the words
    of the old refusal are not all in the new one."""
    fixed = RESIZE.replace('        mode => panic!("Resize: interpolation mode {:?} is not supported", mode),\n',
                           '        InterpolationMode::Nearest => ResizeConfig::nearest(),\n'
                           '        InterpolationMode::Cubic => panic!("Resize: cubic antialiasing is not supported"),\n')
    assert _refusal_pairs(cli, git_repo, tmp_path, {"src/node/resize.rs": RESIZE}, {"src/node/resize.rs": fixed},
                          []) == []


def test_two_equal_heirs_take_nothing(cli, git_repo, tmp_path):
    """Split into two functions whose refusals say the same with the same added words: nothing
    tells which continues it, so neither does (by this tier)."""
    a = _per_node("1", "")
    b = a.replace("conv1d_config", "conv1d_transpose_config").replace("Conv1dConfig", "Conv1dTransposeConfig")
    assert _refusal_pairs(cli, git_repo, tmp_path, {"src/node/conv.rs": CONV},
                          {"src/node/conv1d.rs": a, "src/node/conv1d_t.rs": b}, ["src/node/conv.rs"]) == []


def test_the_split_pairs_by_the_refusal_tier(cli, git_repo, tmp_path):
    assert _refusal_pairs(cli, git_repo, tmp_path, {"src/node/conv.rs": CONV},
                          {"src/node/conv1d.rs": _per_node("1", ""), "src/node/conv2d.rs": _per_node("2", " and Explicit")},
                          ["src/node/conv.rs"]) == [(OLD_CONV, "Conv1d: padding mode {:?} is not supported, only Valid and Same are")]
