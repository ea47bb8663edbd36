"""What the caches key extracted content by, importable without the extractors themselves.

A warm re-check answers from the facts cache; importing every extractor (and the layer walk)
just to name the cache would cost more than the answer. tests/test_extractors.py checks that
WANTS_FINGERPRINT is the hash of the extractors' wants, so a changed want cannot reuse old entries.
"""

EXTRACTOR_VERSION = "2"  # bump when how a kept file is read into facts changes
WANTS_FINGERPRINT = "8375e401346e05e4e73dc1be58edc5b36075a5e9374b85dfb559de5251ac36a8"  # sha256 of WantSet.key()
CACHE_NAMESPACE = f"{EXTRACTOR_VERSION}\n{WANTS_FINGERPRINT}"
