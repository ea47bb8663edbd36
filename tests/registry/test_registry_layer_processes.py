"""Layers of a registry image read by forked worker processes, each over its own connections."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from imagebuild import build_oci, make_layer
from registrypush import Pusher

from imgcheck.sources.http import HttpClient

pytestmark = pytest.mark.registry

LAYERS = [
    make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "opt/a.bin": os.urandom(2_000_000)}),
    make_layer({"usr/lib/libnccl.so.2.21.5": b"n" * 64, "opt/b.bin": os.urandom(1_500_000)}),
    make_layer({"etc/nccl.conf": b"NCCL_IB_HCA=mlx5_0\n", "opt/c.bin": os.urandom(1_000_000)}),
]


def test_cli_reads_registry_layers_in_worker_processes(registry, tmp_path):
    built = build_oci(LAYERS)
    Pusher(registry.url).push_image("test/layered-procs", "v1", built)
    ref = f"{registry.host}/test/layered-procs:v1"
    env = {**os.environ, "IMGCHECK_HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "imgcheck.cli.main", "inspect", ref, "-o", "json", "-q", "--stats"]
    cold = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert cold.returncode == 0, cold.stderr
    facts = json.loads(cold.stdout)["image"]
    assert facts["digest"] == built.manifest_digest and facts["nccl_conf"] == {"NCCL_IB_HCA": "mlx5_0"}
    assert "read: 3 layers streamed" in cold.stderr and "in 2 worker processes" in cold.stderr
    warm = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert json.loads(warm.stdout)["image"] == facts and "facts from the cache; no layer read" in warm.stderr


def test_a_forked_client_starts_with_empty_connection_pools(registry):
    """The parent's pooled keep-alive socket stays the parent's: the child neither uses nor closes it."""
    client = HttpClient()
    assert client.send("GET", f"{registry.url}/v2/").status_code == 200
    adapter = client.session.get_adapter(registry.url)
    parents = adapter.poolmanager
    (pool,) = [parents.pools[key] for key in parents.pools.keys()]
    assert pool.num_connections == 1
    pid = os.fork()
    if pid == 0:  # the child: one request of its own, then report whether it kept away
        ok = client.send("GET", f"{registry.url}/v2/").status_code == 200 and adapter.poolmanager is not parents
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert client.send("GET", f"{registry.url}/v2/").status_code == 200  # the parent's connection still works
    assert pool.num_connections == 1 and adapter.poolmanager is parents
