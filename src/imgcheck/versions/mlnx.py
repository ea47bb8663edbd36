"""MLNX_OFED / DOCA-OFED userspace version strings, e.g. rdma-core "2307mlnx47-1.2310119".

Layout (research/catalog/mlnx_ofed_releases.json): <rdma_core_version>-<package_release_suffix>, where
the rdma-core version is "<tag>mlnx<N>" and the suffix "1.<series digits><build>": "1.2310119" was
built for MLNX_OFED 23.10, "1.58101" for 5.8. Only the series is read from the suffix; the full
release (23.10-1.1.9.0) needs ofed_info or the catalog.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MLNX = re.compile(r"^(?:\d+:)?(?P<tag>\d+)mlnx(?P<n>\d+)(?:-(?P<suffix>[0-9.]+))?")


@dataclass(frozen=True)
class MlnxVersion:
    rdma_core_tag: str  # "2307" or "58"
    mlnx_number: int  # the number after "mlnx"
    suffix: str | None  # "1.2310119"
    series: str | None  # "23.10", "5.8" or None


def is_mlnx(version: str) -> bool:
    return "mlnx" in version.lower()


def parse_mlnx(version: str) -> MlnxVersion | None:
    match = _MLNX.match(version.strip())
    if not match:
        return None
    suffix = match.group("suffix")
    return MlnxVersion(match.group("tag"), int(match.group("n")), suffix, _series(suffix))


def _series(suffix: str | None) -> str | None:
    if not suffix or "." not in suffix:
        return None
    digits = suffix.split(".", 1)[1]
    if len(digits) >= 6 and digits[:2].isdigit() and 20 <= int(digits[:2]) <= 40:
        return f"{digits[:2]}.{digits[2:4]}"  # YY.MM releases (MLNX_OFED 23.10, DOCA-OFED 24.10 ...)
    if len(digits) >= 4 and digits[0] in "45":
        return f"{digits[0]}.{digits[1]}"  # 4.x / 5.x releases
    return None
