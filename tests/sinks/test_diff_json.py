import json

from sink_inputs import diff, lines

from analyzer import sinks


def test_json_counts_the_added_sites_and_the_kinds_that_fail(tmp_path):
    sink = sinks.get("diff", "json")
    doc = json.loads(sink.render(diff(tmp_path), sinks.Options(fail_on=("added",))))
    assert len(doc["added"]) == len(lines())
    assert doc["failed"] == ["added"]
    assert json.loads(sink.render(diff(tmp_path)))["failed"] == []
