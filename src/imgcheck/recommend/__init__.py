"""Recommendations: clean base images from the catalog (shipped + local), the node-side upgrade path, and diffs.

Every candidate is verified by running the engine on its facts against the same nodes; nothing is proposed
that the engine does not predict clean.
"""

from .catalog import CatalogEntry, add_local, all_entries, catalog_dir, local_entries, shipped_entries
from .recommend import RecommendResult, recommend, recommendations_for_report

__all__ = [
    "CatalogEntry",
    "RecommendResult",
    "add_local",
    "all_entries",
    "catalog_dir",
    "local_entries",
    "recommend",
    "recommendations_for_report",
    "shipped_entries",
]
