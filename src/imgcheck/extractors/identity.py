"""What the caches key extracted content by, importable without the extractors themselves.

A warm re-check answers from the facts cache; importing every extractor (and the layer walk)
just to name the cache would cost more than the answer. tests/test_extractors.py checks that
WANTS_FINGERPRINT is the hash of the extractors' wants, so a changed want cannot reuse old entries.
"""

EXTRACTOR_VERSION = "7"  # bump when how a kept file is read into facts changes
WANTS_FINGERPRINT = "88385e42a683a85893328a9af9b44b08d82249c517381338d0ea817d07a413d8"  # sha256 of WantSet.key()
CACHE_NAMESPACE = f"{EXTRACTOR_VERSION}\n{WANTS_FINGERPRINT}"
