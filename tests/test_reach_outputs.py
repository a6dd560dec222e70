"""The reach verdict where users read it: pages say which error a user meets first, the
annotation prompt tells the annotator, and `diff`, `history` and `extract --previous` carry a
change of verdict (a refusal that becomes reachable is news)."""

from __future__ import annotations

import json

import pytest

from conftest import read_records

TRAITS_RS = "pub trait ModuleOps<B: Backend> {}\n"


def ops(forward_handles: bool) -> str:
    exact = ("InterpolateMode::NearestExact => nearest_exact(x),"
             if forward_handles else 'InterpolateMode::NearestExact => panic!("nearest exact is not supported"),')
    return f"""\
impl ModuleOps<Self> for Stone {{
    fn interpolate(x: FloatTensor<Self>, options: InterpolateOptions) -> FloatTensor<Self> {{
        match options.mode {{
            InterpolateMode::Nearest => nearest(x),
            {exact}
        }}
    }}
    fn interpolate_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>, options: InterpolateOptions) -> FloatTensor<Self> {{
        match options.mode {{
            InterpolateMode::Nearest => nearest_grad(x, grad),
            InterpolateMode::NearestExact => panic!("nearest exact backward is not supported"),
        }}
    }}
}}
"""


BACKWARD = "nearest exact backward is not supported"
FORWARD = "nearest exact is not supported"


@pytest.fixture
def lifted(git_repo):
    """base: the forward refuses NearestExact first; head: it handles it, so the backward's
    refusal is what a user meets."""
    git_repo.write("crates/burn-std/src/traits.rs", TRAITS_RS)
    git_repo.crate("burn-stone", {"src/module.rs": ops(False)})
    base = git_repo.commit("base")
    git_repo.write("crates/burn-stone/src/module.rs", ops(True), dedent=False)
    head = git_repo.commit("head")
    return git_repo, base, head


def _extract(cli, repo, sha, out, *extra) -> dict[str, dict]:
    r = cli("extract", "--repo", str(repo.path), "--sha", sha, "--out", str(out), *extra)
    assert r.code == 0, r.stderr
    return {d["record"]["errorMessage"]: d for d in read_records(out)}


def test_pages_and_prompt_say_which_error_comes_first(cli, lifted, tmp_path):
    repo, base, _ = lifted
    records = _extract(cli, repo, base, tmp_path / "base")
    backward, forward = records[BACKWARD], records[FORWARD]
    assert backward["analysis"]["reach"] == "preempted"
    assert backward["analysis"]["preemptedBy"] == [{"id": forward["record"]["id"], "why": "forward"}]
    assert forward["analysis"]["reach"] == "reachable" and "preemptedBy" not in forward["analysis"]

    pages = tmp_path / "pages"
    assert cli("render", str(tmp_path / "base" / "records.jsonl"), "--out", str(pages)).code == 0
    back_page = (pages / f"{backward['record']['slug']}.md").read_text()
    when = back_page.split("## When it happens", 1)[1]
    assert "**Met first:**" in when and f"[{FORWARD}]({forward['record']['slug']}.md" in when
    assert "the forward operation refuses the same choice first" in when
    assert "## When it happens" not in (pages / f"{forward['record']['slug']}.md").read_text()

    html = tmp_path / "html"
    assert cli("render", str(tmp_path / "base" / "records.jsonl"), "--out", str(html), "--format", "html").code == 0
    back_html = (html / f"{backward['record']['slug']}.html").read_text()
    assert f'<a href="{forward["record"]["slug"]}.html"' in back_html.split('id="when-it-happens"', 1)[1]

    ann = tmp_path / "ann"
    assert cli("annotate", "export", str(tmp_path / "base" / "records.jsonl"), "--out", str(ann)).code == 0
    prompt = (ann / f"{backward['record']['id']}.prompt.md").read_text()
    assert "## Which error a user meets first" in prompt and f"`{FORWARD}`" in prompt
    assert "## Which error a user meets first" not in (ann / f"{forward['record']['id']}.prompt.md").read_text()


def test_a_refusal_that_becomes_reachable_is_news(cli, lifted, tmp_path):
    repo, base, head = lifted
    before = _extract(cli, repo, base, tmp_path / "base")
    after = _extract(cli, repo, head, tmp_path / "head", "--previous", str(tmp_path / "base" / "records.jsonl"))
    rid = before[BACKWARD]["record"]["id"]
    assert after[BACKWARD]["record"]["id"] == rid and after[BACKWARD]["analysis"]["reach"] == "reachable"
    # The verdict is content: the annotation a preempted record had would say the wrong error comes first.
    assert after[BACKWARD]["analysis"]["annotationStatus"] == "changed"
    assert after[BACKWARD]["analysis"]["contentHash"] != before[BACKWARD]["analysis"]["contentHash"]

    md = cli("diff", base, head, "--repo", str(repo.path))
    assert md.code == 0, md.stderr
    section = md.stdout.split("#### Now reachable (1)", 1)[1].split("####", 1)[0]
    assert BACKWARD in section and "preempted: forward" in section
    assert "reach preempted: forward → reachable" in md.stdout

    doc = json.loads(cli("diff", base, head, "--repo", str(repo.path), "--format", "json").stdout)
    assert doc["nowReachable"] == [rid]
    (change,) = [c for c in doc["changed"] if c["id"] == rid]
    assert "reach" in change["fields"] and change["base"]["preemptedBy"] == [
        {"id": before[FORWARD]["record"]["id"], "why": "forward"}] and change["head"]["reach"] == "reachable"

    hist = cli("history", "--repo", str(repo.path), "--revs", f"{base},{head}", "--format", "json")
    assert hist.code == 0, hist.stderr
    (lineage,) = [ln for ln in json.loads(hist.stdout)["lineages"] if ln["site"]["message"] == BACKWARD]
    (changed,) = [e for e in lineage["events"] if e["kind"] == "changed"]
    assert changed["fields"] == ["reach"] and changed["after"] == {"reach": "reachable"}
