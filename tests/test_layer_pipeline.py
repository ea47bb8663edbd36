"""The diff_id hashed in a second thread while the next chunk is inflated (view/layer_index.py _CountingReader,
`pipelined`), on a real Debian bookworm rootfs tar as a gzip layer.

What is asserted: the pipelined read gives the very index and diff_id of the serial read (every byte hashed, in order:
a chunk refilled while it was hashed would give another digest); a wrong diff_id is still the one-line digest error;
and no thread outlives the layer's read, whether it verified or not (layer worker processes are forked only from a
process with no other thread, view/layer_processes.can_fork).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import threading

import pytest
from rootfs import build_rootfs

from imgcheck.errors import BadInputError
from imgcheck.extractors.assemble import want_set
from imgcheck.sources.base import VerifyingReader
from imgcheck.view.layer_index import index_layer


@pytest.fixture(scope="module")
def layer() -> tuple[bytes, str, str]:
    with open(build_rootfs("bookworm"), "rb") as fh:
        tar = fh.read()
    blob = gzip.compress(tar, 1)
    return blob, "sha256:" + hashlib.sha256(blob).hexdigest(), "sha256:" + hashlib.sha256(tar).hexdigest()


def _index(blob: bytes, digest: str, diff_id: str, pipelined: bool, spacing: int | None = None):
    raw = VerifyingReader(io.BytesIO(blob), digest, "layer", len(blob))
    return index_layer(raw, digest, want_set(), diff_id=diff_id, pipelined=pipelined, seek_spacing=spacing)


@pytest.mark.parametrize("spacing", [None, 1 << 20], ids=["isal", "seek-points"])
def test_the_pipelined_read_is_the_serial_read(layer, spacing):
    blob, digest, diff_id = layer
    threads = threading.active_count()
    serial = _index(blob, digest, diff_id, pipelined=False, spacing=spacing)
    pipelined = _index(blob, digest, diff_id, pipelined=True, spacing=spacing)
    assert pipelined.uncompressed_digest == serial.uncompressed_digest == diff_id
    assert pipelined == serial and pipelined.entries and pipelined.seek_index == serial.seek_index
    assert threading.active_count() == threads


def test_a_wrong_diff_id_is_still_one_line_and_leaves_no_thread(layer):
    blob, digest, diff_id = layer
    threads = threading.active_count()
    wrong = "sha256:" + "0" * 64
    with pytest.raises(BadInputError) as err:
        _index(blob, digest, wrong, pipelined=True)
    assert f"its uncompressed content is {diff_id}" in str(err.value) and "\n" not in str(err.value)
    assert threading.active_count() == threads


def test_a_truncated_layer_is_the_same_error_and_leaves_no_thread(layer):
    # the read stops mid-stream (the inflate fails) while a chunk may be being hashed: the thread is joined all the same
    blob, _digest, diff_id = layer
    cut = blob[: len(blob) // 2]
    cut_digest = "sha256:" + hashlib.sha256(cut).hexdigest()
    threads = threading.active_count()
    messages = []
    for pipelined in (False, True):
        with pytest.raises(BadInputError) as err:
            _index(cut, cut_digest, diff_id, pipelined=pipelined)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "corrupt or truncated data" in messages[1]
    assert threading.active_count() == threads
