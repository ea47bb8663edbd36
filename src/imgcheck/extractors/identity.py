"""What the caches key extracted content by, importable without the extractors themselves.

A warm re-check answers from the facts cache; importing every extractor (and the layer walk)
just to name the cache would cost more than the answer. tests/test_extractors.py checks that
WANTS_FINGERPRINT is the hash of the extractors' wants, so a changed want cannot reuse old entries.
"""

EXTRACTOR_VERSION = "2"  # bump when how a kept file is read into facts changes
WANTS_FINGERPRINT = "799fd39fb4b5e2359e5eb550fe731f98efef1d7c256acd9f10380d8b2cacdc59"  # sha256 of WantSet.key()
CACHE_NAMESPACE = f"{EXTRACTOR_VERSION}\n{WANTS_FINGERPRINT}"
