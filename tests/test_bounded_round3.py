"""Bounded whatever the input, round 3 (issue 40): each hand-made hostile input gets one line and its
documented exit code with the process tree's peak RSS under 512 MiB, or is read with bounded work.

Memory is measured from outside: a wrapper process runs `imgcheck` and reports the largest resident set of
it and its layer workers (RUSAGE_CHILDREN), so earlier tests' children do not count. Nothing here times a
run: a case the old code could not finish (a trickling registry, a 23 GB walk) would hang, not pass.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from imagebuild import build_oci, make_layer, write_docker_archive, write_oci_dir

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions

MAX_RSS_KIB = 512 * 1024
EXAMPLE_NODE = os.path.join(os.path.dirname(__file__), "..", "examples", "nodes", "inbox-535-proprietary.json")
_MEASURE = (
    "import json, resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "print(json.dumps([p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace'),\n"
    "                  resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n"
)


_CLI = "import sys; from imgcheck.cli.main import main; sys.exit(main(sys.argv[1:]))"


def run_measured(args: list[str], home, env: dict[str, str] | None = None) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in KiB of imgcheck and its workers)."""
    environ = {**os.environ, "IMGCHECK_HOME": str(home), **(env or {})}
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-c", _CLI, *args],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
    )
    code, stdout, stderr, rss = json.loads(out.stdout)
    return code, stdout, stderr, rss


def one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and stderr.startswith("imgcheck: error:") and "Traceback" not in stderr, stderr
    return stderr


# -- paths no filesystem holds ----------------------------------------------------------------------------


def test_a_member_name_of_200k_components_is_refused_before_its_parents_cost_memory(tmp_path):
    """The name implies 200,000 parent directories of up to 400 KB each: 23 GB of prefixes before."""
    name = "/".join(["a"] * 200_000) + "/link"
    from imagebuild import Symlink

    lower = make_layer({name: Symlink("x"), "etc/os-release": b"ID=debian\n"})
    path = write_oci_dir(str(tmp_path / "img"), build_oci([lower, make_layer({"etc/hostname": b"y"})]))
    code, _out, err, rss = run_measured(["inspect", f"oci-dir:{path}"], tmp_path / "home")
    assert code == 2 and "PATH_MAX" in one_line(err) and "layer sha256:" in err
    assert rss < MAX_RSS_KIB


def test_directory_paths_of_a_layer_are_bounded_in_bytes(tmp_path):
    """Names under PATH_MAX can still imply 4 MB of parent paths each; a layer's directory paths have a budget."""
    deep = "/".join(["a"] * 1990)
    layer = make_layer({f"b{i}/{deep}/f": b"" for i in range(40)} | {"etc/os-release": b"ID=debian\n"})
    path = write_oci_dir(str(tmp_path / "img"), build_oci([layer]))
    code, _out, err, rss = run_measured(["inspect", f"oci-dir:{path}"], tmp_path / "home")
    assert code == 2 and "IMGCHECK_MAX_DIR_BYTES" in one_line(err)
    assert rss < MAX_RSS_KIB


def test_a_component_past_name_max_is_refused(tmp_path):
    layer = make_layer({"usr/lib/x86_64-linux-gnu/libnccl.so.2." + "9" * 300 + ".1": b"\x7fELF"})
    path = write_oci_dir(str(tmp_path / "img"), build_oci([layer]))
    code, _out, err, _rss = run_measured(["inspect", f"oci-dir:{path}"], tmp_path / "home")
    assert code == 2 and "NAME_MAX" in one_line(err)


# -- a total budget for kept files -------------------------------------------------------------------------


def test_forty_wanted_copies_of_15_mib_hit_the_image_budget_not_the_memory(tmp_path):
    """40 files matching a wanted name, 15 MiB of zeros each, in a 600 KiB gzip layer (641 MiB RSS before)."""
    files: dict[str, object] = {f"d{i}/libibverbs.so.1": b"\0" * (15 << 20) for i in range(40)}
    path = write_oci_dir(str(tmp_path / "img"), build_oci([make_layer(files)]))
    code, _out, err, rss = run_measured(["inspect", f"oci-dir:{path}"], tmp_path / "home")
    assert code == 2 and "IMGCHECK_MAX_WANTED_BYTES" in one_line(err)
    assert rss < MAX_RSS_KIB


# -- docker save | gzip is inflated once --------------------------------------------------------------------


def test_a_gzipped_docker_save_is_inflated_once_not_once_per_layer(tmp_path, monkeypatch):
    """30 layers: opened one at a time, each layer inflated the archive again from its start (10x the time)."""
    from imgcheck.sources import blobstore

    layers = [make_layer({f"l{j}/f": bytes([j]) * 4096, "etc/os-release": b"ID=debian\n"}) for j in range(30)]
    plain = write_docker_archive(str(tmp_path / "save.tar"), layers, env=["NCCL_DEBUG=INFO"])
    with open(plain, "rb") as src, gzip.open(str(tmp_path / "save.tar.gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    opened = []
    real_open_tar = blobstore._open_tar
    monkeypatch.setattr(blobstore, "_open_tar", lambda p: opened.append(p) or real_open_tar(p))
    packed = api.inspect_image(f"docker-archive:{tmp_path / 'save.tar.gz'}", ReadOptions(use_cache=False))
    assert len(opened) == 2  # the member index, then one pass over every layer
    flat = api.inspect_image(f"docker-archive:{plain}", ReadOptions(use_cache=False))
    assert packed.layers == flat.layers and packed.env == flat.env and packed.os == flat.os


def test_a_swapped_layer_in_a_gzipped_docker_save_is_still_refused(tmp_path, capsys):
    """One pass over the stream verifies each layer against its diff_id as the per-layer reads did."""
    import tarfile

    from imagebuild import write_tar_members

    from imgcheck.cli.main import main

    layers = [make_layer({"etc/os-release": b"ID=debian\n"}), make_layer({"etc/hostname": b"original"})]
    plain = write_docker_archive(str(tmp_path / "save.tar"), layers)
    with tarfile.open(plain) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    edited = {name: data.replace(b"original", b"tampered") for name, data in members.items()}
    assert edited != members
    write_tar_members(str(tmp_path / "edited.tar"), edited)
    with open(tmp_path / "edited.tar", "rb") as src, gzip.open(str(tmp_path / "edited.tar.gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert main(["inspect", f"docker-archive:{tmp_path / 'edited.tar.gz'}", "--no-cache"]) == 2
    assert "digest mismatch" in capsys.readouterr().err


# -- numbers of 5,000 digits ---------------------------------------------------------------------------------


def test_versions_and_settings_of_thousands_of_digits_are_bad_values_not_a_crash(tmp_path):
    big = "9" * 5000
    layer = make_layer(
        {
            "etc/os-release": b"ID=debian\n",
            "usr/lib/x86_64-linux-gnu/libnccl.so.2." + "7" * 200 + ".1": b"\x7fELF",
            "etc/nccl.conf": f"NCCL_IB_GID_INDEX={big}\n".encode(),
        }
    )
    env = [f"NCCL_IB_TIMEOUT={big}", f"NCCL_IB_RETRY_CNT={big}", f"CUDA_VERSION={big}.1", f"NCCL_VERSION=2.{big}"]
    path = write_oci_dir(str(tmp_path / "img"), build_oci([layer], env=env))
    code, out, err, _rss = run_measured(
        ["check", f"oci-dir:{path}", "--node-facts", EXAMPLE_NODE, "-o", "json"], tmp_path / "home"
    )
    assert code in (0, 1), err
    notes = json.loads(out)["image"]["notes"]
    assert any("cuda.version" in n and "not a version" in n for n in notes)
    assert any("nccl[0].version" in n and "not a version" in n for n in notes)


def test_a_facts_file_with_a_version_of_thousands_of_digits_is_refused(tmp_path):
    doc = {"reference": "x", "nccl": [{"version": "2." + "9" * 5000, "origin": "library"}]}
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    code, _out, err, _rss = run_measured(["check", f"facts:{facts}", "--node-facts", EXAMPLE_NODE], tmp_path / "home")
    assert code == 2 and "not a version" in one_line(err)


# -- a registry that trickles ----------------------------------------------------------------------------------


@pytest.fixture
def trickling_registry():
    """/v2/ answers at once; a manifest comes one byte every 0.2 s (each read well within the read timeout)."""
    stop = threading.Event()

    class Trickler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            if self.path == "/v2/":
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
                return
            body = json.dumps({"schemaVersion": 2, "padding": "x" * 4000}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body:
                if stop.wait(0.2):
                    return
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def test_a_trickled_manifest_meets_a_total_deadline(trickling_registry, tmp_path):
    """4,000 bytes at 5 bytes/s would take 13 minutes; every single read is within the 1 s read timeout."""
    code, _out, err, _rss = run_measured(
        ["inspect", f"{trickling_registry}/team/app:1"], tmp_path / "home", env={"IMGCHECK_REGISTRY_TIMEOUT": "1"}
    )
    assert code == 3 and "too slow" in one_line(err)


# -- a log from 200,000 writers ------------------------------------------------------------------------------------


def test_triage_of_200k_writers_is_bounded_in_memory_and_report(tmp_path):
    """Each line from another host:pid (1.2 GiB RSS and 87 MiB of JSON before)."""
    log = tmp_path / "job.log"
    with open(log, "w") as fh:
        for i in range(200_000):
            fh.write(
                f"node{i}:{1000 + i}:{2000 + i} [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
                f"from peer 10.0.{i % 250}.{i % 200}<{40000 + i % 20000}> with status=12 opcode=0 len=0 vendor err "
                "129 (Recv)\n"
            )
    code, out, _err, rss = run_measured(["triage", str(log), "-o", "json"], tmp_path / "home")
    assert code == 1
    assert rss < MAX_RSS_KIB
    assert len(out) < 2 << 20
    report = json.loads(out)
    assert report["first_failure"]["where"]["line"] == 1  # the earliest failing writer is still named
    assert any("writers" in n and "counted together" in n for n in report["notes"])
