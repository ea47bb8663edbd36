"""Two test runs on one machine fill the same cache entry under /var/cache/imgcheck-rootfs at once
(issue 37): the one that publishes second must succeed with the winner's copy, never fail on
os.replace onto the directory the other just filled, never delete it, never leave its temporary behind.

The real fill functions run in two threads at once; only the slow tool they call (pip, mmdebstrap)
is replaced, by one that waits until both runs have filled their private copy, so both always reach
the publishing step together."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import cachefill
import pytest
import rootfs
import wheelcache
import wheelhouse


def _both(fill):
    """Run fill() in two threads; return both results (or raise the first error)."""
    results, errors = [None, None], []

    def run(i):
        try:
            results[i] = fill()
        except BaseException as exc:  # noqa: B036 - pytest.skip is a BaseException: report it too
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if errors:
        raise errors[0]
    return results


def _tool_that_waits_for_both(monkeypatch, write):
    barrier = threading.Barrier(2, timeout=30)

    def fake_run(argv, *args, **kwargs):
        write(argv)
        barrier.wait()  # both runs have filled their private copy: now both publish
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)


def _leftovers(directory):
    return [n for n in os.listdir(directory) if ".tmp" in n]


def test_two_wheel_downloads_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(wheelcache, "WHEEL_CACHE", str(tmp_path))

    def pip_download(argv):
        dest = argv[argv.index("--dest") + 1]
        with open(os.path.join(dest, "demo-1.0-py3-none-any.whl"), "w") as fh:
            fh.write(f"from {threading.get_ident()}")

    _tool_that_waits_for_both(monkeypatch, pip_download)
    a, b = _both(lambda: wheelcache.wheel("demo==1.0"))
    assert a == b and os.path.isfile(a)
    assert _leftovers(tmp_path) == []


def test_two_wheelhouse_fills_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(wheelhouse, "CACHE", str(tmp_path))

    def pip(argv):
        dest = argv[argv.index("--wheel-dir" if "wheel" in argv else "--dest") + 1]
        os.makedirs(dest, exist_ok=True)
        with open(os.path.join(dest, f"{argv[3]}.whl"), "w") as fh:
            fh.write("x")

    barrier = threading.Barrier(2, timeout=30)
    calls = []

    def fake_run(argv, *args, **kwargs):
        pip(argv)
        calls.append(argv)
        if "download" in argv:  # the last step of a fill
            barrier.wait()
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    a, b = _both(wheelhouse.dependency_wheels)
    assert a == b and os.path.isdir(a) and os.listdir(a)
    assert _leftovers(tmp_path) == []


def test_two_rootfs_builds_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(rootfs, "ROOTFS_CACHE", str(tmp_path))
    monkeypatch.setattr(rootfs.shutil, "which", lambda name: "/usr/bin/" + name)

    def mmdebstrap(argv):
        with open(argv[-1], "w") as fh:
            fh.write("a whole tar")

    _tool_that_waits_for_both(monkeypatch, mmdebstrap)
    a, b = _both(lambda: rootfs.build_rootfs("bookworm"))
    assert a == b and open(a).read() == "a whole tar"
    assert _leftovers(tmp_path) == []


def test_publish_keeps_the_winners_copy_across_processes(tmp_path):
    """Two processes (two pytest runs) publish the same directory; both succeed, the entry is whole."""
    dest = tmp_path / "entry"
    code = (
        "import sys, os, time; sys.path.insert(0, sys.argv[1]); import cachefill\n"
        "tmp = cachefill.private_dir(sys.argv[2])\n"
        "open(os.path.join(tmp, 'data'), 'w').write('whole')\n"
        "while not os.path.exists(sys.argv[3]): time.sleep(0.01)\n"
        "print(cachefill.publish_dir(tmp, sys.argv[2]))\n"
    )
    go = tmp_path / "go"
    tests_dir = os.path.dirname(cachefill.__file__)
    procs = [
        subprocess.Popen([sys.executable, "-c", code, tests_dir, str(dest), str(go)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    go.write_text("")
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [str(dest), str(dest)]
    assert (dest / "data").read_text() == "whole"
    assert _leftovers(tmp_path) == []


def test_a_real_failure_still_fails(tmp_path):
    tmp = cachefill.private_dir(str(tmp_path / "entry"))
    (tmp_path / "entry").write_text("a file, not a directory someone else filled")
    with pytest.raises(OSError):
        cachefill.publish_dir(tmp, str(tmp_path / "entry"))
    assert not os.path.exists(tmp)
