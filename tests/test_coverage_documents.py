"""`coverage --repo` keeps each rendered document in the results cache, per format and filters: a
repeated run of one command is served the very bytes it would write, a changed option is an entry
of its own, and a document that is not whole, names another revision or links outside the commit
is dropped with a warning and made again."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import GitRepo, run_cli
from test_coverage import fix_backend_repo
from test_hostile_cache import cache_dir

from analyzer import sinks
from analyzer.profiles import load

BURN = load("burn")
JSON = sinks.get("coverage", "json").link_syntax
MARKDOWN = sinks.get("coverage", "markdown").link_syntax

SERVED = "unchanged since the last run (results cache)"
FORMATS = ("json", "markdown", "html", "table")


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    return fix_backend_repo(tmp_path / "repo")


def coverage(repo: GitRepo, *args: str):
    res = run_cli("coverage", "--repo", str(repo.path), "--sha", "HEAD", *args)
    assert res.code == 0, res.stderr
    return res


def _db() -> sqlite3.Connection:
    return sqlite3.connect(cache_dir() / "facts.sqlite3")


def document_rows() -> int:
    db = _db()
    (n,) = db.execute("SELECT count(*) FROM results WHERE key LIKE 'coverage-document|%'").fetchone()
    db.close()
    return n


def drop_matrices() -> None:
    """Forget the kept matrices, so only a kept document can serve a run."""
    db = _db()
    db.execute("DELETE FROM results WHERE key LIKE 'coverage|%'")
    db.commit()
    db.close()


def rewrite_documents(change, keep_facts: bool = False) -> None:
    """Apply `change` to the text of every kept document, as someone with write access could; the
    length and checksum beside it are made again to match unless `keep_facts`."""
    import zlib

    from analyzer.pipeline.coverage import _facts

    db = _db()
    rows = db.execute("SELECT key, tag, data FROM results WHERE key LIKE 'coverage-document|%'").fetchall()
    assert rows
    for key, tag, data in rows:
        line, _, body = zlib.decompress(data).partition(b"\n")
        value = json.loads(line)
        body = change(body.decode()).encode()
        if not keep_facts:
            value.update(_facts(body))
        db.execute("UPDATE results SET data = ? WHERE key = ? AND tag = ?",
                   (zlib.compress(json.dumps(value).encode() + b"\n" + body), key, tag))
    db.commit()
    db.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_served_document_is_the_built_one_byte_for_byte(repo, tmp_path, fmt):
    built = tmp_path / f"built.{fmt}"
    coverage(repo, "--format", fmt, "--out", str(built), "--no-cache")
    first = tmp_path / f"first.{fmt}"
    assert SERVED not in coverage(repo, "--format", fmt, "--out", str(first)).stderr
    assert document_rows() == 1
    drop_matrices()
    served = tmp_path / f"served.{fmt}"
    res = coverage(repo, "--format", fmt, "--out", str(served))
    assert SERVED in res.stderr and "was not used" not in res.stderr
    assert served.read_bytes() == first.read_bytes() == built.read_bytes()
    assert res.stderr.splitlines()[-1].startswith(f"Wrote {served} ({fmt}: ")
    if fmt != "table":  # on stdout a table is drawn for the terminal, not kept
        out = coverage(repo, "--format", fmt)
        assert SERVED in out.stderr and out.stdout.encode() == built.read_bytes()


def _wrong_sha(repo):
    return lambda text: text.replace(repo.sha, "0" * 40).replace(repo.sha[:12], "0" * 12)


def _javascript_link(repo, fmt):
    opener = {"json": '"url": "', "markdown": "](", "html": 'href="'}.get(fmt, "")

    def change(text):
        link = f"{opener}https://github.com/"
        assert link in text
        return text.replace(link, f"{opener}javascript:alert(1)//github.com/", 1)
    return change


def _http_link(text):
    assert "https://github.com/" in text
    return text.replace("https://github.com/", "http://github.com/", 1)


def _foreign_link(text):
    return text.replace("\n", "\nsee https://example.com/\n", 1)


WHY = {"wrong sha": "it is of another revision", "javascript": "it links outside", "http": "it links outside",
       "foreign": "it links outside", "truncated": "it does not hold a whole coverage document"}
# A table holds no links to turn into another: a foreign link added to it covers it.
CASES = [(fmt, tamper) for fmt in FORMATS for tamper in WHY
         if not (fmt == "table" and tamper in ("javascript", "http"))]


@pytest.mark.parametrize("fmt, tamper", CASES)
def test_a_tampered_document_is_not_served(repo, fmt, tamper):
    why = WHY[tamper]
    args = ("--format", fmt) if fmt != "table" else ("--format", fmt, "--out", str(repo.path.parent / "t.txt"))
    res = coverage(repo, *args)
    genuine = res.stdout if fmt != "table" else (repo.path.parent / "t.txt").read_text()
    change = {"wrong sha": _wrong_sha(repo), "javascript": _javascript_link(repo, fmt),
              "http": _http_link, "foreign": _foreign_link, "truncated": lambda text: text[:len(text) // 2]}[tamper]
    rewrite_documents(change, keep_facts=tamper == "truncated")
    res = coverage(repo, *args)
    assert f"coverage of {repo_source(repo)} was not used: {why}" in res.stderr
    out = res.stdout if fmt != "table" else (repo.path.parent / "t.txt").read_text()
    assert out == genuine
    assert document_rows() == 1  # dropped, and kept again from the build
    again = coverage(repo, *args)
    assert SERVED in again.stderr and "was not used" not in again.stderr


def repo_source(repo: GitRepo) -> str:
    return f"tracel-ai/burn@{repo.sha[:12]}"


def test_a_changed_option_is_an_entry_of_its_own(repo):
    whole = coverage(repo, "--format", "json").stdout
    assert document_rows() == 1
    seen = {whole}
    # --backend fix names the fixture's one backend: the same text, still a key of its own.
    for n, args in enumerate([("--op", "float_*"), ("--op", "float_*", "--op", "abs"), ("--expand",),
                              ("--format", "markdown"), ("--backend", "fix")], start=2):
        first = coverage(repo, "--format", "json", *args)
        assert document_rows() == n
        assert first.stdout not in seen or args == ("--backend", "fix")
        seen.add(first.stdout)
        drop_matrices()
        again = coverage(repo, "--format", "json", *args)
        assert SERVED in again.stderr and again.stdout == first.stdout
        assert again.stdout == coverage(repo, "--format", "json", *args, "--no-cache").stdout
    assert SERVED in (served := coverage(repo, "--format", "json")).stderr and served.stdout == whole


def test_no_document_is_kept_without_a_cache_or_for_a_terminal_table(repo):
    coverage(repo, "--format", "json", "--no-cache")
    coverage(repo, "--format", "table")
    assert document_rows() == 0


def test_a_raw_result_row_cut_short_is_a_miss_and_dropped(tmp_path):
    import zlib

    from analyzer.pipeline.cache import FactsCache

    cache = FactsCache(tmp_path / "cache", "rules", "0")
    data = b"header\n" + bytes(range(256)) * 64
    cache.put_raw_result("k", data)
    assert cache.get_raw_result("k") == data
    cut = zlib.compress(data, 1)[:-40]
    with cache.db:
        cache.db.execute("UPDATE results SET data = ? WHERE key = 'k'", (cut,))
    assert cache.get_raw_result("k") is None
    assert cache.db.execute("SELECT count(*) FROM results").fetchone() == (0,)
    cache.close()


def test_a_raw_result_row_is_inflated_in_pieces_to_the_bound(tmp_path, monkeypatch):
    from analyzer.pipeline import cache as facts_cache

    monkeypatch.setattr(facts_cache, "RAW_PIECE", 1000)
    cache = facts_cache.FactsCache(tmp_path / "cache", "rules", "0")
    data = b"header\n" + bytes(range(256)) * 40
    cache.put_raw_result("k", data)
    pieces = cache.get_raw_pieces("k")
    assert pieces is not None and b"".join(pieces) == data
    assert [len(p) for p in pieces] == [1000] * 10 + [247]
    cache.put_raw_result("empty", b"")
    assert cache.get_raw_pieces("empty") == [] and cache.get_raw_result("empty") == b""
    # Past the bound (a decompression bomb, or damage): a miss, and dropped.
    monkeypatch.setattr(facts_cache, "MAX_ROW_BYTES", len(data) - 1)
    assert cache.get_raw_pieces("k") is None
    assert cache.db.execute("SELECT count(*) FROM results WHERE key = 'k'").fetchone() == (0,)
    cache.close()


def test_a_document_in_pieces_is_judged_as_its_bytes_joined_wherever_it_is_cut():
    """The checks count their needles within the pieces and across each seam: every way of
    cutting a document into pieces gives the verdict of its bytes whole."""
    from analyzer.pipeline.coverage import document_fault

    sha = "ab" * 20
    prefix = f"https://github.com/o/r/blob/{sha}/"
    head = f'{{"repo": "o/r", "sha": "{sha}",\n'
    link = f'"url": "{prefix}a.rs#L3"'
    docs = [head + f"{link},\n{link}}}\n", head + f'{link},\n"url": "javascript:x"}}\n',
            head + f'{link},\n"u": "http://x/{prefix}"}}\n', head + f'{link},\n"a": "url"}}\n']
    for text in docs:
        data = text.encode()
        whole = document_fault(data, JSON, "o/r", sha, BURN)
        for cut in range(1, len(data)):
            for second in (cut + 1, cut + len(prefix) + 2):
                pieces = [data[:cut], data[cut:second], data[second:]]
                assert document_fault(pieces, JSON, "o/r", sha, BURN) == whole, (text, cut, second)
    assert [document_fault(d.encode(), JSON, "o/r", sha, BURN) for d in docs] == [None, *["it links outside o/r@ababababab"
                                                                                     "ab"] * 2, None]


def test_a_cut_document_row_is_not_served(repo):
    genuine = coverage(repo, "--format", "markdown").stdout
    drop_matrices()
    db = _db()
    (data,) = db.execute("SELECT data FROM results WHERE key LIKE 'coverage-document|%'").fetchone()
    db.execute("UPDATE results SET data = ? WHERE key LIKE 'coverage-document|%'", (data[: len(data) // 2],))
    db.commit()
    db.close()
    res = coverage(repo, "--format", "markdown")
    assert SERVED not in res.stderr and res.stdout == genuine
    assert document_rows() == 1
    assert SERVED in coverage(repo, "--format", "markdown").stderr


def test_only_a_document_that_passes_the_checks_is_kept(tmp_path):
    from analyzer.pipeline.cache import FactsCache
    from analyzer.pipeline.coverage import keep_document, kept_document

    sha = "ab" * 20
    good = f"# dtype coverage of `o/r` at `{sha[:12]}`\n\n[a.rs:3](https://github.com/o/r/blob/{sha}/a.rs#L3)\n"
    cache = FactsCache(tmp_path / "cache", "rules", "0")
    keep_document(cache, "good", MARKDOWN, good, "o/r", sha, BURN, 1, 1)
    row, why = kept_document(cache, "good", MARKDOWN, "o/r", sha, BURN)
    assert why is None and row is not None
    assert (b"".join(row["data"]), row["operations"], row["backends"]) == (good.encode(), 1, 1)
    keep_document(cache, "bad", MARKDOWN, good.replace("https://github.com/o/r", "https://example.com/o/r"), "o/r",
                  sha, BURN, 1, 1)
    assert cache.get_raw_result("bad") is None
    cache.close()


def test_a_served_run_asks_git_each_thing_once(repo, tmp_path, monkeypatch):
    """Opening the repository, naming it (no origin: the default name, warned of once) and
    resolving the revision: no git process is started twice for the same answer."""
    import subprocess

    repo.git("remote", "remove", "origin")
    coverage(repo, "--format", "json", "--out", str(tmp_path / "first.json"))
    started: list[tuple[str, ...]] = []
    run = subprocess.run

    def recording(args, *rest, **kw):
        if args and args[0] == "git":
            started.append(tuple(args[1:]))
        return run(args, *rest, **kw)

    monkeypatch.setattr(subprocess, "run", recording)
    res = coverage(repo, "--format", "json", "--out", str(tmp_path / "served.json"))
    assert SERVED in res.stderr
    assert started and len(started) == len(set(started)), started
    assert sum("remote.origin.url" in args for args in started) == 1
    # One process finds the repository and resolves the revision; one reads the origin.
    assert len(started) == 2, started


def test_every_json_link_opener_is_checked_whatever_surrounds_it():
    from analyzer.pipeline.coverage import document_fault

    sha = "ab" * 20
    link = f'"url": "https://github.com/o/r/blob/{sha}/a.rs#L3"'
    head = f'{{"repo": "o/r", "sha": "{sha}",\n'

    def fault(*items: str) -> str | None:
        return document_fault((head + ",\n".join(items) + "}\n").encode(), JSON, "o/r", sha, BURN)

    assert fault(link, link) is None
    assert fault(link, '"url": ""', '"url": "#cell"') is None  # empty, and a place in the page
    outside = f"it links outside o/r@{sha[:12]}"
    assert fault(link, '"url": "javascript:alert(1)"') == outside
    assert fault(link, '"url": "a.rs"', link) == outside  # relative: not the commit's files
    # A "url" that is not a key beside the links, or one overlapping the opener before it.
    assert fault(link, '"url"url": "javascript:x"') == outside
    assert fault('"url": "url": "javascript:x"', link) == outside
    assert fault(link, '"name": "url"') is None


def test_a_document_row_that_is_not_utf8_is_not_served(repo, tmp_path):
    import zlib

    coverage(repo, "--format", "json", "--out", str(tmp_path / "first.json"))
    drop_matrices()
    from analyzer.pipeline.coverage import _facts

    db = _db()
    (key, tag, data), = db.execute("SELECT key, tag, data FROM results WHERE key LIKE 'coverage-document|%'")
    line, _, body = zlib.decompress(data).partition(b"\n")
    value = json.loads(line)
    body = body.replace(b"\n", b"\n\xff", 1)
    value.update(_facts(body))
    db.execute("UPDATE results SET data = ? WHERE key = ? AND tag = ?",
               (zlib.compress(json.dumps(value).encode() + b"\n" + body), key, tag))
    db.commit()
    db.close()
    res = coverage(repo, "--format", "json", "--out", str(tmp_path / "again.json"))
    assert "was not used: it does not hold a whole coverage document" in res.stderr
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "first.json").read_bytes()
