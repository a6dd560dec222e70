"""Rows kept on a thread (`put_raw_result_soon`): compressed and written while the caller goes on,
in the order given, before any later use of the cache; a row that fails to be made is simply not
kept, and neither the cache nor the run's output suffers for it."""

from __future__ import annotations

import json
import threading
import time
import zlib

import pytest
from conftest import run_cli
from test_coverage import fix_backend_repo
from test_coverage_cache import SERVED, drop_documents

# A keeping thread that raises would print a traceback in a real run: here, a failure.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


@pytest.fixture
def cache(tmp_path):
    from analyzer.pipeline.cache import FactsCache

    made = FactsCache(tmp_path / "cache", "rules", "1.0")
    yield made
    made.close()


def _keeping() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "cache-keeping" and t.is_alive()]


def _compress_slowly_for(monkeypatch, slow: bytes) -> None:
    """zlib.compress as the cache calls it, taking its time over `slow`: a row handed over after
    it would be written first if the order were not kept."""
    from analyzer.pipeline import cache as module

    real = zlib.compress

    def compress(data, level=-1):
        if data == slow:
            time.sleep(0.3)
        return real(data, level)

    monkeypatch.setattr(module.zlib, "compress", compress)


def test_rows_are_written_in_the_order_given_before_the_cache_is_read(cache, monkeypatch):
    _compress_slowly_for(monkeypatch, b"first")
    cache.put_raw_result_soon("k", b"first")
    cache.put_raw_result_soon("k", b"second")
    cache.put_raw_result_soon("other", b"third")
    assert cache.get_raw_result("k") == b"second"
    assert not _keeping()  # every row handed over was written before the read
    assert cache.get_raw_result("other") == b"third"


def test_a_drop_after_a_row_handed_over_forgets_it(cache, monkeypatch):
    _compress_slowly_for(monkeypatch, b"row")
    cache.put_raw_result_soon("k", b"row")
    cache.drop_result("k")
    assert cache.get_raw_result("k") is None


def test_close_writes_the_rows_still_being_kept(tmp_path, monkeypatch):
    from analyzer.pipeline.cache import FactsCache

    _compress_slowly_for(monkeypatch, b"late")
    first = FactsCache(tmp_path / "cache", "rules", "1.0")
    first.put_raw_result_soon("k", b"late")
    first.close()
    again = FactsCache(tmp_path / "cache", "rules", "1.0")
    try:
        assert again.get_raw_result("k") == b"late"
    finally:
        again.close()


def test_a_row_that_cannot_be_compressed_is_not_kept_and_the_cache_goes_on(cache, monkeypatch):
    from analyzer.pipeline import cache as module

    real = zlib.compress

    def compress(data, level=-1):
        if data == b"bad":
            raise zlib.error("out of luck")
        return real(data, level)

    monkeypatch.setattr(module.zlib, "compress", compress)
    cache.put_raw_result_soon("good", b"before")
    cache.put_raw_result_soon("bad", b"bad")
    cache.put_raw_result_soon("after", b"after")
    assert cache.get_raw_result("bad") is None
    assert (cache.get_raw_result("good"), cache.get_raw_result("after")) == (b"before", b"after")
    cache.put_raw_result("bad", b"fine now")
    assert cache.get_raw_result("bad") == b"fine now"


def test_a_coverage_run_whose_rows_cannot_be_kept_writes_its_output_and_keeps_nothing(tmp_path, monkeypatch):
    from analyzer.pipeline import cache as module

    repo = fix_backend_repo(tmp_path / "repo")
    args = ("coverage", "--repo", str(repo.path), "--sha", "HEAD", "--format", "json")
    genuine = run_cli(*args, "--no-cache")
    real = zlib.compress
    threads: set[str] = set()

    def failing(data, level=-1):
        if threading.current_thread() is not threading.main_thread():
            threads.add(threading.current_thread().name)
            raise zlib.error("out of luck")
        return real(data, level)

    monkeypatch.setattr(module.zlib, "compress", failing)
    res = run_cli(*args, "--out", str(tmp_path / "cov.json"))
    assert res.code == 0 and "Traceback" not in res.stderr, res.stderr
    assert threads == {"cache-keeping"}
    assert (tmp_path / "cov.json").read_text() == genuine.stdout
    monkeypatch.setattr(module.zlib, "compress", real)
    rebuilt = run_cli(*args)  # neither the document nor the matrix was kept
    assert SERVED not in rebuilt.stderr and rebuilt.stdout == genuine.stdout
    drop_documents()
    served = run_cli(*args)  # this time both were: the matrix serves the run
    assert SERVED in served.stderr and json.loads(served.stdout) == json.loads(genuine.stdout)
