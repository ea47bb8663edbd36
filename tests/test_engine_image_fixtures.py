"""The committed image facts the engine tests run on (tests/fixtures/engine_images/*.json) are what
`imgcheck inspect -o json` produces for the real Debian images: this end-to-end test builds each image
from the cached mmdebstrap rootfs, inspects it, and fails when the output drifts from the committed file.
Regenerate deliberately with IMGCHECK_UPDATE_FIXTURES=1 (and say why in the commit)."""

from __future__ import annotations

import json
import os

import pytest

from engine_facts import IMAGES_DIR, committed_facts, fixture_doc
from imgcheck import api
from imgcheck.read_options import ReadOptions

UPDATE = os.environ.get("IMGCHECK_UPDATE_FIXTURES") == "1"


@pytest.mark.parametrize("suite", ("bullseye", "bookworm", "trixie"))
def test_committed_facts_are_what_inspect_reads(suite, debian_archive):
    facts = api.inspect_image(f"docker-archive:{debian_archive(suite)}", ReadOptions(use_cache=False))
    doc = fixture_doc(facts, suite)
    path = os.path.join(IMAGES_DIR, f"{suite}.json")
    if UPDATE:
        with open(path, "w") as fh:
            fh.write(json.dumps(doc, indent=1) + "\n")
    with open(path) as fh:
        committed = json.load(fh)
    assert committed == doc, f"inspect output drifted from {path}; regenerate with IMGCHECK_UPDATE_FIXTURES=1"
    loaded = committed_facts(suite)
    assert loaded.unknown == {}  # inspect writes every fact explicitly
    assert loaded.rdma.libibverbs is not None and loaded.rdma.providers
