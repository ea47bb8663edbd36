"""What the caches key extracted content by, importable without the extractors themselves.

A warm re-check answers from the facts cache; importing every extractor (and the layer walk)
just to name the cache would cost more than the answer. tests/test_extractors.py checks that
WANTS_FINGERPRINT is the hash of the extractors' wants, so a changed want cannot reuse old entries.
"""

EXTRACTOR_VERSION = "11"  # bump when how a kept file is read into facts changes
WANTS_FINGERPRINT = "d1ba1a06be73d1b2dee2cc1c3c0fd89670181e6859114091abed4b7c679462ba"  # sha256 of WantSet.key()
# bump when what a layer read keeps for the same wants changes: the tar or squashfs walk, a scanner's result
LAYER_READ_VERSION = "1"
# Image facts depend on the extractors; a layer's index (kept bytes, scan results, path hashes) only on the wants
# and the walk. So an extractor bump that keeps the wants re-extracts from cached layer indexes: a re-check after
# such an upgrade reads no layer (docs/benchmarks.md).
CACHE_NAMESPACE = f"{EXTRACTOR_VERSION}\n{WANTS_FINGERPRINT}"
LAYER_CACHE_NAMESPACE = f"layer-read {LAYER_READ_VERSION}\n{WANTS_FINGERPRINT}"
