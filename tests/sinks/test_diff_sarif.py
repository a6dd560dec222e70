import json

from sink_inputs import diff, lines

from analyzer import sinks


def test_sarif_has_one_result_per_added_site(tmp_path):
    doc = json.loads(sinks.get("diff", "sarif").render(diff(tmp_path)))
    assert doc["version"] == "2.1.0"
    assert len(doc["runs"][0]["results"]) == len(lines())
