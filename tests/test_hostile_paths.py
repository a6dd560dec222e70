"""Hostile output and input paths: what is already at an --out path (a device, a FIFO, a link, a
folder holding someone's files) and files to read that never end or block. One policy each
(analyzer/core/outputs.py, analyzer/core/inputs.py), one line and exit 2 when refused."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import _command, one_record, run_cli, run_cli_subprocess, subprocess_env

@pytest.fixture(scope="module")
def records(tmp_path_factory) -> Path:
    return one_record(tmp_path_factory.mktemp("paths"))


def one_line_refusal(res, *words: str) -> None:
    assert res.code == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in lines[0], lines[0]


def coverage_to(records: Path, out: str | Path):
    return run_cli("coverage", "--records", str(records), "--format", "json", "--out", str(out))


# --- outputs -----------------------------------------------------------------------------------

def test_a_symlink_at_the_output_path_is_refused_and_its_target_untouched(records, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "coverage.json"
    link.symlink_to(victim)
    one_line_refusal(coverage_to(records, link), "symbolic link", "not a regular file")
    assert link.is_symlink() and victim.read_text() == "keep me\n"


def test_a_fifo_at_the_output_path_is_refused_and_kept(records, tmp_path):
    fifo = tmp_path / "coverage.json"
    os.mkfifo(fifo)
    one_line_refusal(coverage_to(records, fifo), "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_character_device_is_written_through_not_replaced(records, tmp_path):
    """`--out /dev/null` is a common CI idiom: the device node must stay a device. A private null
    device is made where the system allows it, so the system's own is never at stake."""
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        device = Path(os.devnull)  # written through, never replaced, by the code under test
    res = coverage_to(records, device)
    assert res.code == 0, res.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert not [p for p in device.parent.glob(f".{device.name}.*.tmp")]


@pytest.mark.parametrize("name", ["/proc/self/fd/1", "/dev/fd/1"])
def test_the_process_s_own_stdout_named_as_a_path_is_written_through(records, name):
    res = run_cli_subprocess("coverage", "--records", str(records), "--format", "json", "--out", name)
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["tool"] == "burn-errors"


def test_an_export_folder_holding_other_files_is_refused_not_swapped_out(records, tmp_path):
    site = tmp_path / "site"
    assert run_cli("export", str(records), "--out", str(site)).code == 0
    (site / "README.md").write_text("mine\n")
    (site / ".git").mkdir()
    one_line_refusal(run_cli("export", str(records), "--out", str(site)), "did not write", "README.md")
    assert (site / "README.md").read_text() == "mine\n" and (site / ".git").is_dir()
    assert (site / "index.json").is_file()
    (site / "README.md").unlink()
    (site / ".git").rmdir()
    assert run_cli("export", str(records), "--out", str(site)).code == 0  # an export alone: replaced


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_export_s_staging_folder_is_swept(records, tmp_path):
    stale = tmp_path / f".site.{_dead_pid()}.abc123.tmp"
    stale.mkdir()
    (stale / "0000000000000000.json").write_text("{}" * 1000)
    live = tmp_path / f".site.{os.getpid()}.def456.tmp"  # a writer still running keeps its own
    live.mkdir()
    assert run_cli("export", str(records), "--out", str(tmp_path / "site")).code == 0
    assert not stale.exists() and live.is_dir()


# --- inputs ------------------------------------------------------------------------------------

def test_a_fifo_as_a_records_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "records.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.run([*_command(), "validate", str(fifo)], capture_output=True, text=True,
                          env=subprocess_env(), timeout=60)  # a hang fails here, not the whole run
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "FIFO" in proc.stderr and "not a regular file" in proc.stderr


def test_a_link_to_dev_zero_as_an_answer_manifest_is_refused(records, tmp_path):
    out = tmp_path / "ann"
    assert run_cli("annotate", "export", str(records), "--out", str(out)).code == 0
    (out / "export.json").unlink()
    (out / "export.json").symlink_to("/dev/zero")
    (rid,) = [p.stem for p in out.glob("*.json") if p.name != "export.json"]
    answer = out / f"{rid}.json"
    answer.unlink()
    os.mkfifo(answer)
    res = run_cli_subprocess("annotate", "export", str(records), "--out", str(out))
    assert res.code in (0, 2) and "Traceback" not in res.stderr, res.stderr
    assert stat.S_ISFIFO(os.lstat(answer).st_mode)  # not ours to overwrite
    res = run_cli_subprocess("annotate", "import", str(records), str(out), "--out", str(tmp_path / "r.jsonl"))
    assert "Traceback" not in res.stderr and res.code in (0, 2), res.stderr


def test_a_file_that_would_block_is_refused(tmp_path):
    from analyzer.core.errors import UserError
    from analyzer.core.inputs import read_text

    r, w = os.pipe()
    try:
        with pytest.raises(UserError, match="not a regular file"):
            read_text(f"/proc/self/fd/{r}", "records file")
    finally:
        os.close(r)
        os.close(w)


def test_a_file_past_the_limit_is_refused_unread(tmp_path):
    from analyzer.core.errors import UserError
    from analyzer.core.inputs import read_bytes

    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(UserError, match="larger than the 4,096-byte limit"):
        read_bytes(big, "records file", limit=4096)
    assert read_bytes(big, "records file", limit=5000) == b"x" * 5000


@pytest.mark.parametrize("command", ["render", "annotate-export", "diff"])
def test_lone_surrogates_are_refused_when_the_records_are_read(records, tmp_path, command):
    line = json.loads(records.read_text().splitlines()[0])
    line["record"]["errorMessage"] = "conv: \ud800 dtype"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line) + "\n")  # ensure_ascii: the surrogate as a \ud800 escape
    args = {"render": ["render", str(bad), "--out", str(tmp_path / "pages")],
            "annotate-export": ["annotate", "export", str(bad), "--out", str(tmp_path / "ann")],
            "diff": ["diff", str(records), str(bad), "--out", str(tmp_path / "d.md")]}[command]
    one_line_refusal(run_cli(*args), "lone surrogate")


# --- extract --previous ------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, words", [
    ("slug", "<script>x</script>", "record.slug"),
    ("contentChangedAt", "2999-01-01T00:00:00.000Z", "contentChangedAt"),
    ("githubUrl", "javascript:alert(1)", "record.githubUrl"),
])
def test_extract_previous_refuses_what_validate_refuses(records, tmp_path, field, value, words):
    line = json.loads(records.read_text().splitlines()[0])
    line["record"][field] = value
    previous = tmp_path / "previous.jsonl"
    previous.write_text(json.dumps(line) + "\n")
    assert run_cli("validate", str(previous)).code == 1  # validate refuses it
    repo = records.parent.parent / "repo"
    res = run_cli("extract", "--repo", str(repo), "--sha", "HEAD", "--out", str(tmp_path / "o"),
                  "--previous", str(previous))
    one_line_refusal(res, "does not pass `burn-errors validate`", words)
    assert not (tmp_path / "o" / "records.jsonl").exists()


# --- terminals ---------------------------------------------------------------------------------

def _on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the command with stdout on a pseudo-terminal: (exit code, what the terminal got)."""
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen([*_command(), *args], stdout=slave, stderr=subprocess.DEVNULL,
                            env=subprocess_env({"COLUMNS": "200"}))
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


HOSTILE_TEXT = "conv\u009b31m\u202eevil: unsupported dtype"


@pytest.mark.parametrize("command", [["diff", "--format", "json"], ["diff", "--format", "sarif"],
                                     ["coverage", "--format", "json"]])
def test_json_on_a_terminal_carries_no_c1_control_or_bidi_override(records, tmp_path, command):
    line = json.loads(records.read_text().splitlines()[0])
    line["record"]["errorMessage"] = HOSTILE_TEXT
    line["record"]["messagePattern"] = HOSTILE_TEXT
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(json.dumps(line, ensure_ascii=False) + "\n")
    if command[0] == "diff":
        empty = tmp_path / "empty.jsonl"
        empty.write_text("")
        args = [*command[:1], str(empty), str(hostile), *command[1:]]
    else:
        args = [*command, "--records", str(hostile)]
    code, shown = _on_a_terminal(*args)
    assert code in (0, 1), shown
    assert "\u009b" not in shown and "\u202e" not in shown
    to_file = tmp_path / "out.json"
    assert run_cli(*args, "--out", str(to_file)).code in (0, 1)
    exact = to_file.read_text()
    assert json.loads(shown).keys() == json.loads(exact).keys()  # still JSON, the text escaped
    if command[-1] == "sarif":
        # SARIF's texts are alerts a person reads: the characters are gone from the document itself.
        assert "\u009b" not in exact and "\\u009b" not in shown and "evil" in exact
        return
    assert "\u009b" in exact  # a file gets the exact document
    assert "\\u009b" in shown


def test_annotate_import_prints_file_names_and_keys_escaped(records, tmp_path):
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "x\u009b31m\u202e.json").write_text(json.dumps({"id": "0" * 16, "k\u009b2J\u202e": 1}))
    res = run_cli("annotate", "import", str(records), str(answers), "--out", str(tmp_path / "r.jsonl"))
    assert res.code == 2
    assert "\u009b" not in res.stderr and "\u202e" not in res.stderr and "\x1b" not in res.stderr
    assert "unknown field" in res.stderr


# --- folders the tool writes pages into ---------------------------------------------------------

def test_render_owns_its_folder_and_refuses_one_holding_other_files(records, tmp_path):
    pages = tmp_path / "pages"
    assert run_cli("render", str(records), "--out", str(pages)).code == 0
    assert run_cli("render", str(records), "--out", str(pages)).code == 0  # its own: replaced
    (pages / "README.md").write_text("mine\n")  # beside the pages: the folder is no longer render's
    one_line_refusal(run_cli("render", str(records), "--out", str(pages)), "not pages burn-errors rendered")
    assert (pages / "README.md").read_text() == "mine\n"
    other = tmp_path / "site"
    other.mkdir()
    (other / "index.md").write_text("my site's index\n")
    one_line_refusal(run_cli("render", str(records), "--out", str(other)), "not pages burn-errors rendered")
    assert (other / "index.md").read_text() == "my site's index\n"


def test_annotate_export_replaces_only_the_files_it_wrote(records, tmp_path):
    out = tmp_path / "ann"
    out.mkdir()
    (out / "export.json").write_text('{"mine": true}\n')
    one_line_refusal(run_cli("annotate", "export", str(records), "--out", str(out)), "export.json")
    assert (out / "export.json").read_text() == '{"mine": true}\n'
    (out / "export.json").unlink()
    rid = json.loads(records.read_text().splitlines()[0])["record"]["id"]
    (out / f"{rid}.prompt.md").write_text("my notes\n")
    one_line_refusal(run_cli("annotate", "export", str(records), "--out", str(out)), f"{rid}.prompt.md")
    assert (out / f"{rid}.prompt.md").read_text() == "my notes\n"
    (out / f"{rid}.prompt.md").unlink()
    assert run_cli("annotate", "export", str(records), "--out", str(out)).code == 0
    assert run_cli("annotate", "export", str(records), "--out", str(out)).code == 0  # its own: replaced
