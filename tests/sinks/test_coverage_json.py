import json

from sink_inputs import REPO, SHA, matrix

from analyzer import sinks


def test_json_lists_the_cells_with_their_status():
    doc = json.loads(sinks.get("coverage", "json").render(matrix()))
    assert (doc["repo"], doc["sha"]) == (REPO, SHA)
    assert {(c["crate"], c["status"]) for c in doc["cells"]} == {("burn-a", "panics"), ("burn-b", "handled")}


def test_full_is_read_from_the_options():
    sink = sinks.get("coverage", "json")
    assert json.loads(sink.render(matrix(), sinks.Options(full=True)))["naCells"] != \
        json.loads(sink.render(matrix()))["naCells"]
