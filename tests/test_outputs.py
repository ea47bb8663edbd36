"""`-o FMT=PATH` writes the way a shell redirection would: through FIFOs, devices and symlinks
(never replacing /dev/stdout or /dev/null with a regular file), atomically for regular files,
with the umask's permissions; `-` is standard output."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading

import pytest
from formats_sample import bookworm_facts

from imgcheck.cli.main import main
from imgcheck.model.serde import to_dict


@pytest.fixture
def facts_file(tmp_path):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(to_dict(bookworm_facts())))
    return f"facts:{path}"


def test_dash_is_stdout(facts_file, capsys):
    assert main(["inspect", facts_file, "-o", "json=-"]) == 0
    assert json.loads(capsys.readouterr().out)["image"]["os"]["id"] == "debian"


def test_new_file_honours_the_umask(tmp_path, facts_file):
    old = os.umask(0o027)
    try:
        assert main(["inspect", facts_file, "-o", f"json={tmp_path / 'r.json'}"]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.json").st_mode) == 0o640


def test_existing_file_keeps_its_mode_and_is_replaced(tmp_path, facts_file):
    out = tmp_path / "r.json"
    out.write_text("old")
    os.chmod(out, 0o604)
    assert main(["inspect", facts_file, "-o", f"json={out}"]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o604 and json.loads(out.read_text())


def test_symlink_to_a_file_stays_a_symlink(tmp_path, facts_file):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert main(["inspect", facts_file, "-o", f"json={link}"]) == 0
    assert link.is_symlink() and json.loads(target.read_text())


@pytest.mark.parametrize("via_symlink", [False, True])
def test_fifo_is_written_through(tmp_path, facts_file, via_symlink):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    path = fifo
    if via_symlink:
        path = tmp_path / "alias"
        path.symlink_to(fifo)
    assert main(["inspect", facts_file, "-o", f"json={path}"]) == 0
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and json.loads(got[0])


def test_magic_link_to_stdout_is_written_through(tmp_path, facts_file):
    """What /dev/stdout is (a link to /proc/self/fd/1), under a private name: replacing it with a
    regular file is the bug that, as root, destroyed /dev/stdout."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    proc = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "inspect", facts_file, "-o", f"json={link}"],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["image"]["os"]["id"] == "debian"
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"


def test_directory_is_a_usage_error(tmp_path, facts_file, capsys):
    assert main(["inspect", facts_file, "-o", f"json={tmp_path}"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def _run_with_stdout(args, stdout, **kw):
    return subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, **kw
    )


@pytest.mark.parametrize("spelling", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", "-", "SAME-FILE"])
def test_stdout_redirected_for_append_keeps_its_earlier_lines(tmp_path, facts_file, spelling):
    """Issue 37: `imgcheck ... -o json=/dev/stdout >> build.log` (a CI log, $GITHUB_STEP_SUMMARY) must add to
    build.log, not rename a new file over it (new inode, every earlier line gone)."""
    log = tmp_path / "build.log"
    log.write_text("step 1: built the image\n")
    inode = os.stat(log).st_ino
    target = str(log) if spelling == "SAME-FILE" else spelling
    with open(log, "a") as out:  # what `>> build.log` gives the process as fd 1
        out.write("step 2: checking\n")
        out.flush()
        proc = _run_with_stdout(["inspect", facts_file, "-o", f"json={target}"], out)
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert text.startswith("step 1: built the image\nstep 2: checking\n")
    assert json.loads(text.split("step 2: checking\n", 1)[1])["image"]["os"]["id"] == "debian"
    assert os.stat(log).st_ino == inode


def test_another_fd_opened_for_append_is_appended_to(tmp_path, facts_file):
    """/dev/fd/N of any open file is written in place through that file, never replaced or truncated."""
    log = tmp_path / "summary.md"
    log.write_text("# earlier step\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "imgcheck.cli.main", "inspect", facts_file, "-o", f"json=/dev/fd/{fd}"],
            capture_output=True,
            text=True,
            pass_fds=(fd,),
        )
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().startswith("# earlier step\n{")


@pytest.mark.parametrize("second", ["json=/dev/stdout", "json=/dev/fd/1", "json=/proc/self/fd/1", "json=-", "json"])
def test_two_formats_on_stdout_are_refused_however_spelled(tmp_path, facts_file, second):
    log = tmp_path / "build.log"
    with open(log, "a") as out:
        proc = _run_with_stdout(["inspect", facts_file, "-o", "table", "-o", second], out)
    assert proc.returncode == 2
    assert "only one -o format can go to stdout" in proc.stderr and proc.stderr.count("\n") == 1
    assert log.read_text() == ""  # refused before anything was written


def test_the_file_stdout_is_redirected_to_counts_as_stdout(tmp_path, facts_file):
    log = tmp_path / "build.log"
    with open(log, "a") as out:
        proc = _run_with_stdout(["inspect", facts_file, "-o", "table", "-o", f"json={log}"], out)
    assert proc.returncode == 2 and "only one -o format" in proc.stderr


def test_without_o_a_pipe_gets_the_concise_report_not_json(facts_file):
    """Issue 37: a CI log (stdout not a terminal) gets the readable report by default; -o json is explicit."""
    proc = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "inspect", facts_file], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert not proc.stdout.lstrip().startswith("{")
    assert "debian" in proc.stdout.lower()
    explicit = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "inspect", facts_file, "-o", "json"], capture_output=True, text=True
    )
    assert json.loads(explicit.stdout)["image"]["os"]["id"] == "debian"


def test_dev_null_as_stdout_and_as_a_path_is_no_conflict(facts_file):
    """`... -o table -o sarif=/dev/null > /dev/null` (cron, a dry run): /dev/null is not "stdout twice"."""
    with open(os.devnull, "w") as null:
        proc = _run_with_stdout(["inspect", facts_file, "-o", "table", "-o", "json=/dev/null"], null)
    assert proc.returncode == 0, proc.stderr
