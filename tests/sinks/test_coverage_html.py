from sink_inputs import matrix

from analyzer import sinks


def test_the_page_is_one_html_document_naming_both_backends():
    page = sinks.get("coverage", "html").render(matrix())
    assert page.lstrip().lower().startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "burn-a" in page and "burn-b" in page and "float_exp" in page
