from sink_inputs import history

from analyzer import sinks


def test_markdown_names_each_revision():
    text = sinks.get("history", "markdown").render(history())
    assert "v0.1.0" in text and "v0.2.0" in text
