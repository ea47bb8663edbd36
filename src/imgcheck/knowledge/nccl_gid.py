"""The GID entry NCCL picks itself on a RoCE port (NCCL_IB_GID_INDEX unset or -1), from the node's GID table.

NCCL from roce_gid_auto on (nccl_features) walks the table from entry 0 (NVIDIA/nccl src/transport/net_ib.cc
ncclIbGetGidIndex / ncclUpdateGidIndex, the same logic in net_ib/connect.cc from v2.30): it moves to a candidate
of the wanted address family (NCCL_IB_ADDR_FAMILY, default AF_INET: an IPv4-mapped GID) when the current entry is
of the other family; otherwise to a valid candidate (configured, not link-local fe80::/64) of the wanted family
whose RoCE version is NCCL_IB_ROCE_VERSION_NUM (default 2) when the current entry's version differs or the
current entry is not valid. NCCL_IB_ADDR_RANGE further restricts candidates; it is not simulated (None).
"""

from __future__ import annotations

from ..model.node import GID_GLOBAL as GLOBAL
from ..model.node import GID_IPV4_MAPPED as IPV4_MAPPED
from ..model.node import GidEntry, RdmaPort

AF_INET, AF_INET6 = "AF_INET", "AF_INET6"
_VERSIONS = {"IB/RoCE v1": 1, "RoCE v1": 1, "RoCE v2": 2}


def _family(entry: GidEntry | None) -> str:
    return AF_INET if entry is not None and entry.kind == IPV4_MAPPED else AF_INET6  # zeros are AF_INET6


def _valid(entry: GidEntry | None) -> bool:
    return entry is not None and entry.kind in (IPV4_MAPPED, GLOBAL)


def nccl_choice(
    port: RdmaPort, family: str = AF_INET, roce_version: int = 2, addr_range: str | None = None
) -> tuple[int | None, str]:
    """(the index NCCL picks, how) or (None, why it cannot be told from the facts)."""
    if addr_range:
        return None, "NCCL_IB_ADDR_RANGE is set: its subnet test is not simulated"
    gap = port.gid_table_gap()
    if gap is not None:
        return None, gap
    assert port.gids is not None and port.gid_table_len is not None  # gid_table_gap
    table = {g.index: g for g in port.gids}
    current = 0
    for candidate in range(1, port.gid_table_len):
        cur, cand = table.get(current), table.get(candidate)
        if _family(cand) != _family(cur) and _family(cand) == family:
            current = candidate  # NCCL's first test: a change to the wanted family (no validity check)
            continue
        if _family(cand) != family or not _valid(cand):
            continue
        assert cand is not None  # _valid
        cur_version = _VERSIONS.get(cur.type or "") if cur is not None else None
        cand_version = _VERSIONS.get(cand.type or "")
        if cand_version is None or (cur is not None and cur_version is None):
            return None, f"the RoCE version of GID entry {current if cand_version else candidate} is unknown"
        if cur is None:
            return None, f"NCCL would read the RoCE version of the unused entry {current} (an error in NCCL)"
        if (cur_version != cand_version or not _valid(cur)) and cand_version == roce_version:
            current = candidate
    entry = table.get(current)
    kind = entry.kind if entry is not None else "unused"
    version = entry.type if entry is not None else "no type"
    return current, f"entry {current} ({kind}, {version}) by NCCL's own choice ({family}, RoCE v{roce_version})"
