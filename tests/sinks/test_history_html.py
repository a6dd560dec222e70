from sink_inputs import history

from analyzer import sinks


def test_the_page_is_one_html_document_naming_each_revision():
    page = sinks.get("history", "html").render(history())
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "v0.1.0" in page and "v0.2.0" in page
