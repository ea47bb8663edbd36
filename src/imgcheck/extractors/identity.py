"""What the caches key extracted content by, importable without the extractors themselves.

A warm re-check answers from the facts cache; importing every extractor (and the layer walk)
just to name the cache would cost more than the answer. tests/test_extractors.py checks that
WANTS_FINGERPRINT is the hash of the extractors' wants, so a changed want cannot reuse old entries.
"""

EXTRACTOR_VERSION = "1"  # bump when how a kept file is read into facts changes
WANTS_FINGERPRINT = "f1db86eda671e29a25c456ae7993ffa825a0407c1e924abc40a843ff4213b739"  # sha256 of WantSet.key()
CACHE_NAMESPACE = f"{EXTRACTOR_VERSION}\n{WANTS_FINGERPRINT}"
