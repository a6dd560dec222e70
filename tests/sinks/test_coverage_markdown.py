from sink_inputs import matrix

from analyzer import sinks


def test_markdown_marks_the_panicking_cell_and_the_handled_one():
    text = sinks.get("coverage", "markdown").render(matrix())
    assert text.startswith("#") and "float_exp" in text
    assert "❌" in text and "✅" in text
