"""The committed image facts the engine tests run on (tests/fixtures/engine_images/*.json) are what
`imgcheck inspect -o json` produces for the real Debian images: this end-to-end test builds each image
from the cached mmdebstrap rootfs, inspects it, and fails when the output drifts from the committed file.
Regenerate deliberately with IMGCHECK_UPDATE_FIXTURES=1 (and say why in the commit).

Two things differ between builds of the same image and are compared apart: the content digests and layer
size (mmdebstrap's tar is not byte-reproducible: file times), and the versions of base packages a Debian
point release updated. The digests must still be consistent (every layer reference names a layer of the
image), and the RDMA userspace packages the image was built for are compared with their versions."""

from __future__ import annotations

import json
import os
import re

import pytest
from engine_facts import IMAGES_DIR, committed_facts, fixture_doc

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions

UPDATE = os.environ.get("IMGCHECK_UPDATE_FIXTURES") == "1"
# What the image was built for (engine_facts.fixture_doc's reference) and what those packages pull in.
RDMA_PACKAGES = re.compile(r"^(libibverbs1|ibverbs-providers|librdmacm1|libucx0|libnl-(3|route-3)-200|libnuma1)$")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def build_independent(doc: dict) -> dict:
    """The document with this build's digests named by role, layer sizes dropped and base-package versions
    left out; fails if a layer reference names no layer of the image."""
    roles = {doc["digest"]: "<image>"}
    for index, layer in enumerate(doc["layers"]):
        roles.setdefault(layer["digest"], f"<layer {index}>")
        roles.setdefault(layer["diff_id"], f"<layer {index}>")
    text = json.dumps(dict(doc, layers=[dict(layer, size=None) for layer in doc["layers"]]))
    stray = set(DIGEST.findall(text)) - set(roles)
    assert not stray, f"digests that name no layer of the image: {sorted(stray)}"
    out = json.loads(DIGEST.sub(lambda m: roles[m.group(0)], text))
    out["packages"] = [p if RDMA_PACKAGES.match(p["name"]) else dict(p, version=None) for p in out["packages"]]
    return out


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
    assert build_independent(committed) == build_independent(doc), (
        f"inspect output drifted from {path}; regenerate with IMGCHECK_UPDATE_FIXTURES=1"
    )
    loaded = committed_facts(suite)
    assert loaded.unknown == {}  # inspect writes every fact explicitly
    assert loaded.rdma.libibverbs is not None and loaded.rdma.providers
