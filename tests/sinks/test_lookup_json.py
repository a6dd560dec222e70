import json

from sink_inputs import answer

from analyzer import sinks


def test_json_gives_the_query_and_the_matches_shown():
    a = answer()
    doc = json.loads(sinks.get("lookup", "json").render(a))
    assert doc["query"]["message"] == a.result.panic.message
    assert doc["total"] == len(a.result.matches) == len(doc["matches"]) >= 1


def test_on_a_terminal_every_character_beyond_ascii_is_escaped():
    a = answer()
    sink = sinks.get("lookup", "json")
    assert sink.render(a, sinks.Options(to_terminal=True)).isascii()
