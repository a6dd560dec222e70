from sink_inputs import answer

from analyzer import sinks


def test_the_text_lists_the_match_with_its_place():
    a = answer()
    text = sinks.get("lookup", "text").render(a)
    best = a.result.matches[0].line.record
    assert f"1. {best.errorMessage}" in text and f"{best.filePath}:{best.lineNumber}" in text
