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
