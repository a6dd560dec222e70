from sink_inputs import lines

from analyzer import sinks


def test_one_page_per_record_and_the_index():
    records = lines()
    pages = sinks.get("pages", "md").render(records, sinks.Options(issues_url="https://example.com/new"))
    assert "index.md" in pages
    assert len([n for n in pages if n.endswith(".md")]) == len(records) + 1
    assert all(any(n.endswith(f"{ln.record.slug[-6:]}.md") for n in pages) for ln in records)
    assert any("https://example.com/new" in text for text in pages.values())
