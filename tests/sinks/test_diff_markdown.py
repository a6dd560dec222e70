from sink_inputs import diff, lines

from analyzer import sinks
from analyzer.sinks.diff_markdown import MARKER


def test_the_comment_lists_the_added_sites_and_links_the_artifacts(tmp_path):
    sink = sinks.get("diff", "markdown")
    text = sink.render(diff(tmp_path), sinks.Options(artifacts_url="https://example.com/run/1"))
    assert MARKER in text and "https://example.com/run/1" in text
    assert lines()[0].record.filePath in text
    assert "https://example.com/run/1" not in sink.render(diff(tmp_path))
