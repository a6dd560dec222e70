from sink_inputs import lines

from analyzer import sinks


def test_one_html_page_per_record_and_the_index():
    records = lines()
    pages = sinks.get("pages", "html").render(records)
    assert "index.html" in pages
    assert len([n for n in pages if n.endswith(".html")]) == len(records) + 1
    assert all(any(n.endswith(f"{ln.record.slug[-6:]}.html") for n in pages) for ln in records)
    assert all(text.lstrip().lower().startswith("<!doctype html>") for name, text in pages.items()
               if name.endswith(".html"))
