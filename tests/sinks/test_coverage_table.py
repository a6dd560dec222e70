from sink_inputs import matrix

from analyzer import sinks


def test_the_table_shows_each_backend_and_its_cells():
    text = sinks.get("coverage", "table").render(matrix())
    assert "burn-a" in text and "burn-b" in text and "float_exp" in text
    row = next(ln for ln in text.splitlines() if "float_exp" in ln and "✗" in ln)
    assert "✓" not in row  # burn-a's table: its one cell panics


def test_the_terminal_drawing_is_the_table(capsys):
    sinks.get("coverage", "table").draw(matrix())
    assert "float_exp" in capsys.readouterr().out
