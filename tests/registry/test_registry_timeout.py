"""`--timeout` (issue 37): a registry that accepts the connection and then never answers.

Without a total deadline such a registry holds a check for minutes (each of several retried reads waits
the 60 s read timeout) and, in a CI log, silently. The server here is a real listening socket on
loopback that accepts every connection and never sends a byte."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

from imgcheck import api
from imgcheck.deadline import Deadline, DeadlineExceeded, parse_duration
from imgcheck.errors import EXIT_UNAVAILABLE, EXIT_USAGE, UsageError
from imgcheck.sources.read_options import ReadOptions


@pytest.fixture
def silent_registry():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    held, stop = [], threading.Event()

    def accept_forever():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)  # accepted, read nothing, answer nothing

    thread = threading.Thread(target=accept_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


def test_cli_timeout_ends_the_read_with_one_line_and_exit_3(silent_registry, tmp_path):
    env = {**os.environ, "IMGCHECK_HOME": str(tmp_path), "IMGCHECK_SLOW_NOTICE_SECONDS": "0.5"}
    proc = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "inspect", f"{silent_registry}/team/trainer:1", "--timeout", "3s"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,  # the test's own guard, far above --timeout
    )
    assert proc.returncode == EXIT_UNAVAILABLE, proc.stderr
    lines = proc.stderr.splitlines()
    errors = [line for line in lines if line.startswith("imgcheck: error:")]
    assert len(errors) == 1 and "--timeout 3s passed" in errors[0] and "Traceback" not in proc.stderr
    # stderr is a pipe here, as in CI: the slow read said so once before the deadline
    notices = [line for line in lines if line.startswith("imgcheck: still reading")]
    assert len(notices) == 1 and silent_registry in notices[0]


@pytest.mark.parametrize(
    "command", [["check", "--node-facts", "NODE"], ["diff", "IMG"], ["recommend", "--like"], ["triage"]]
)
def test_every_command_that_reads_images_takes_timeout(command, silent_registry, tmp_path):
    node = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "engine_nodes", "cpu-no-rdma.json")
    image = f"{silent_registry}/team/trainer:1"
    argv = [a.replace("NODE", node).replace("IMG", image) for a in command]
    if command[0] == "check":
        argv = ["check", image] + argv[1:]
    elif command[0] == "diff":
        argv = ["diff", image, image]
    elif command[0] == "triage":
        log = tmp_path / "rank0.log"
        log.write_text("NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument\n")
        argv = ["triage", str(log), "--image", image]
    else:
        argv = ["recommend", "--node-facts", node, "--like", image]
    env = {**os.environ, "IMGCHECK_HOME": str(tmp_path), "IMGCHECK_SLOW_NOTICE_SECONDS": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", *argv, "--timeout", "2"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == EXIT_UNAVAILABLE, proc.stderr
    assert "--timeout 2s passed" in proc.stderr and proc.stderr.count("\n") == 1


def test_the_deadline_in_read_options_bounds_the_registry_client(silent_registry, tmp_path, monkeypatch):
    """The library path (the service, other callers): no signal, the client itself stops at the deadline."""
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    with pytest.raises(DeadlineExceeded) as info:
        api.inspect_image(f"{silent_registry}/team/trainer:1", ReadOptions(deadline=Deadline(2.0), use_cache=False))
    assert "waiting for registry" in str(info.value)


@pytest.mark.parametrize("text, seconds", [("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1.5h", 5400.0)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "-1", "abc", "1d", "25h", "nan"])
def test_bad_durations_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_duration(text)


def test_bad_timeout_on_the_command_line_is_exit_2(capsys):
    from imgcheck.cli.main import main

    assert main(["inspect", "x:1", "--timeout", "soon"]) == EXIT_USAGE
    assert capsys.readouterr().err.count("\n") == 1


def test_the_notice_timer_leaves_layer_reads_in_worker_processes(registry, tmp_path):
    """The notice and the --timeout backstop use one SIGALRM timer, not a thread: layer reader processes
    are forked only while imgcheck has one thread, so a timer thread would have read every layer in-process."""
    from imagebuild import build_oci, make_layer
    from registrypush import Pusher

    layers = [
        make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "opt/a.bin": os.urandom(1_000_000)}),
        make_layer({"etc/nccl.conf": b"NCCL_IB_HCA=mlx5_0\n", "opt/b.bin": os.urandom(1_000_000)}),
    ]
    Pusher(registry.url).push_image("test/timer-procs", "v1", build_oci(layers))
    env = {**os.environ, "IMGCHECK_HOME": str(tmp_path), "IMGCHECK_SLOW_NOTICE_SECONDS": "60"}
    proc = subprocess.run(
        [sys.executable, "-m", "imgcheck.cli.main", "inspect", f"{registry.host}/test/timer-procs:v1", "-q", "--stats"]
        + ["--timeout", "10m", "-o", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "in 2 worker processes" in proc.stderr
