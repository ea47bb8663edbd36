"""The docker: source's stream reader on save streams of each layout docker writes.

Debian's dockerd (20.10) writes the legacy layout, covered by tests/test_docker_daemon.py against
the real daemon; docker >= 25 writes an OCI layout (blobs/sha256/..., manifest.json last), and
with the containerd image store its layer blobs may be compressed. Those streams are built here
and served by a stand-in client with the SDK's interface (a generator of chunks).
"""

from __future__ import annotations

import io
import json
import tarfile

import pytest
import requests
from imagebuild import compress, make_layer, sha256

from imgcheck import api
from imgcheck.errors import BadInputError, UnavailableError, UsageError
from imgcheck.sources.docker_daemon import DockerDaemonSource
from imgcheck.sources.read_options import ReadOptions
from imgcheck.sources.resolve import open_source, parse_image_ref

LOWER = make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "etc/nccl.conf": b"NCCL_IB_HCA=mlx5\n"})
UPPER = make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="13"\n'})


def save_stream(
    layers: list[bytes],
    compression: str | None = None,
    manifest_first: bool = False,
    corrupt_layer: int | None = None,
    env=("NCCL_DEBUG=INFO",),
) -> tuple[bytes, dict]:
    """A docker>=25 style `docker save` tar and the matching inspect attributes."""
    diff_ids = [sha256(l) for l in layers]
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": list(env)},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
    ).encode()
    blobs = {sha256(config): config}
    names = []
    for i, layer in enumerate(layers):
        blob = compress(layer, compression)
        digest = sha256(blob)
        if corrupt_layer == i:
            blob = blob[:-600] + bytes(600)  # wrong bytes under the right name
        blobs[digest] = blob
        names.append("blobs/sha256/" + digest.split(":")[1])
    manifest = json.dumps(
        [{"Config": "blobs/sha256/" + sha256(config).split(":")[1], "RepoTags": ["t:latest"], "Layers": names}]
    ).encode()
    members = sorted(("blobs/sha256/" + d.split(":")[1], b) for d, b in blobs.items())
    tail = [
        ("index.json", b'{"schemaVersion":2,"manifests":[]}'),
        ("manifest.json", manifest),
        ("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'),
    ]
    members = tail + members if manifest_first else members + tail
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    attrs = {
        "Id": sha256(config),
        "Os": "linux",
        "Architecture": "amd64",
        "Config": {"Env": list(env)},
        "RootFS": {"Type": "layers", "Layers": diff_ids},
        "RepoDigests": [],
    }
    return buf.getvalue(), attrs


class FakeClient:
    """The few docker SDK calls the source makes; get_image yields chunks like the SDK does."""

    def __init__(self, stream: bytes, attrs: dict, break_at: int | None = None):
        self.stream, self.attrs, self.break_at = stream, attrs, break_at
        self.saves = 0
        client = self

        class Images:
            def get(self, ref):
                return type("Image", (), {"attrs": client.attrs})()

        class Api:
            def get_image(self, image_id, chunk_size):
                assert image_id == client.attrs["Id"]  # the inspected image, not whatever the tag is now
                client.saves += 1

                def gen():
                    for i in range(0, len(client.stream), 7919):  # odd chunk sizes cross member bounds
                        if client.break_at is not None and i >= client.break_at:
                            raise requests.exceptions.ChunkedEncodingError("Connection broken")
                        yield client.stream[i : i + 7919]

                return gen()

        self.images, self.api = Images(), Api()

    def ping(self):
        return True

    def close(self):
        pass


def inspect(client):
    from imgcheck.extractors.assemble import build_facts, want_set
    from imgcheck.view.reader import read_view

    src = DockerDaemonSource("t:latest", client=client)
    image = src.open()
    view, _ = read_view(image, want_set())
    return build_facts(view, image, "docker:t:latest")


@pytest.mark.parametrize("compression", [None, "gzip", "zstd"])
@pytest.mark.parametrize("manifest_first", [False, True])
def test_oci_layout_save_streams(compression, manifest_first):
    stream, attrs = save_stream([LOWER, UPPER], compression, manifest_first)
    client = FakeClient(stream, attrs)
    facts = inspect(client)
    assert client.saves == 1  # one pass over the stream for every layer
    assert facts.os.version_id == "13" and facts.os.layer == sha256(UPPER)
    assert facts.nccl_conf == {"NCCL_IB_HCA": "mlx5"}
    assert facts.env == {"NCCL_DEBUG": "INFO"}
    assert facts.digest == attrs["Id"] and facts.platform == "linux/amd64"
    assert [l.diff_id for l in facts.layers] == [sha256(LOWER), sha256(UPPER)]


def test_corrupt_layer_in_stream_is_bad_input():
    stream, attrs = save_stream([LOWER, UPPER], "gzip", corrupt_layer=1)
    client = FakeClient(stream, attrs)
    with pytest.raises(BadInputError):
        inspect(client)
    assert client.saves == 1  # the other layer's reader got the same error, not a second export


def test_stream_of_another_image_is_refused():
    stream, _ = save_stream([LOWER])
    _, attrs = save_stream([LOWER], env=("OTHER=1",))  # inspect answer of a different config
    with pytest.raises(BadInputError, match="not the inspected image"):
        inspect(FakeClient(stream, attrs))


def test_stream_without_manifest_is_bad_input():
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("blobs/sha256/" + sha256(LOWER).split(":")[1])
        info.size = len(LOWER)
        tar.addfile(info, io.BytesIO(LOWER))
    _, attrs = save_stream([LOWER])
    with pytest.raises(BadInputError, match="no manifest.json"):
        inspect(FakeClient(buf.getvalue(), attrs))


def test_broken_daemon_stream_is_unavailable():
    stream, attrs = save_stream([LOWER, UPPER])
    with pytest.raises(UnavailableError, match="stream broke"):
        inspect(FakeClient(stream, attrs, break_at=len(stream) // 2))


def test_docker_scheme_resolves_to_daemon_source():
    source = open_source(parse_image_ref("docker:debian:bookworm"), ReadOptions(insecure_registries=("x",)))
    assert isinstance(source, DockerDaemonSource)
    with pytest.raises(UsageError):
        api.inspect_image("docker: bad")
