"""What every join module reads, built once per triage: the report's signatures, the image and node
facts, the NCCL version in use, and the note templates from signatures.json."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from ...job.model import JobFacts
from ...knowledge import settings as settings_k
from ...matrix import Matrix
from ...model.image import ImageFacts
from ...model.node import NodeFacts
from ...model.report import Evidence
from ..context import LogContext
from ..predicates import Facts, nccl_version
from ..result import Diagnosis, JoinNote, TriageReport

CONSISTENT, EXPLAINS, CONTRADICTS, UNKNOWN = "consistent", "explains", "contradicts", "unknown"


@lru_cache(maxsize=1)
def packaged_templates() -> dict[str, str]:
    from ..signatures import load_signatures

    return dict(load_signatures().note_templates)


@dataclass(frozen=True)
class JoinContext:
    report: TriageReport
    image: ImageFacts | None
    node: NodeFacts | None
    facts: Facts
    present: dict[str, Diagnosis]
    nccl_version: str | None
    nccl_where: str
    templates: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        report: TriageReport,
        image: ImageFacts | None,
        node: NodeFacts | None,
        matrix: Matrix | None = None,
        templates: dict[str, str] | None = None,
        job: JobFacts | None = None,
    ) -> JoinContext:
        facts = Facts(image=image, node=node, log=report.context, matrix=matrix, job=job)
        nver, nwhere = nccl_version(facts)
        merged = {**packaged_templates(), **(templates or {})}
        return cls(
            report=report,
            image=image,
            node=node,
            facts=facts,
            present={d.signature: d for d in report.diagnoses},
            nccl_version=nver,
            nccl_where=nwhere,
            templates=merged,
        )

    @property
    def log(self) -> LogContext:
        return self.report.context

    @property
    def kb(self) -> Matrix:
        return self.facts.kb

    def text(self, key: str, **params: object) -> str:
        """A note's text: its template in signatures.json `join_notes`, filled with params."""
        return self.templates[key].format(**params)

    def note(self, topic: str, status: str, key: str, evidence: Iterable[Evidence], **params: object) -> JoinNote:
        return JoinNote(topic, status, self.text(key, **params), tuple(evidence))

    def env(self, name: str) -> tuple[str | None, str, Evidence | None]:
        """A setting as the ranks saw it, resolved the one way imgcheck.knowledge.settings does."""
        s = settings_k.resolve(name, self.image, ((self.log.env, "log"),), job=self.facts.job)
        if s is None:
            return None, "", None
        return s.value, s.source_words, s.evidence

    def lib_evidence(self) -> list[Evidence]:
        assert self.image is not None  # callers join image facts only when an image was given
        lib = self.image.rdma.libibverbs
        if lib is None:
            return [Evidence("image.rdma.libibverbs", None)]
        return [
            Evidence("image.rdma.libibverbs.version", lib.version, lib.location),
            Evidence("image.rdma.libibverbs.has_reg_mr_iova2", lib.has_reg_mr_iova2, lib.location),
            Evidence("image.rdma.libibverbs.has_reg_dmabuf_mr", lib.has_reg_dmabuf_mr, lib.location),
        ]

    def nccl_evidence(self) -> list[Evidence]:
        assert self.image is not None
        return [Evidence("image.nccl.version", n.version, n.location) for n in self.image.nccl]
