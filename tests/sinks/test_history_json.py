import json

from sink_inputs import history

from analyzer import sinks


def test_json_lists_the_revisions_in_order_with_their_records():
    doc = json.loads(sinks.get("history", "json").render(history()))
    assert [(r["label"], r["records"]) for r in doc["revisions"]] == [("v0.1.0", 1), ("v0.2.0", 2)]
