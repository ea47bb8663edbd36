"""The prediction engine: pure functions from (ImageFacts, NodeFacts, Matrix) to findings and unknowns.

One module per rule family (rdma_userspace, gdr, dmabuf, ofed, cuda, limits, env_traps); rule texts,
severities, confidences and sources come from the matrix's rules.json.
"""

from .evaluate import FAMILIES, REQUIRED_ROWS, RULE_IDS, Evaluation, evaluate
from .report import FleetResult, build_report, evaluate_fleet, group_nodes, parse_ignore

__all__ = [
    "FAMILIES",
    "REQUIRED_ROWS",
    "RULE_IDS",
    "Evaluation",
    "evaluate",
    "FleetResult",
    "build_report",
    "evaluate_fleet",
    "group_nodes",
    "parse_ignore",
]
