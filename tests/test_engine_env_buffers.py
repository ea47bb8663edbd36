"""ENV-NCCL-BUFFSIZE-BAR1: what an NCCL_BUFFSIZE value costs in registered GPU memory, against the GPUs' BAR1.

The real AWS nccl-tests MPIJob (tests/job/specs/real, SOURCES.md) sets NCCL_BUFFSIZE=8388608, twice NCCL's default:
it fits every GPU with a datacenter BAR1. The same spec with the one value raised to 1 GiB (vllm-project/vllm#19613:
'NCCL_BUFFSIZE was set too large ... the default value made the issue go away', ibv_reg_dmabuf_mr ENOMEM) is judged
against the node's BAR1, or, where that is unknown, against the smallest aperture NVIDIA ships."""

from __future__ import annotations

import dataclasses
import os

from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import parse_job_spec

RULE = "ENV-NCCL-BUFFSIZE-BAR1"
SPEC = os.path.join(os.path.dirname(__file__), "job", "specs", "real", "aws-eks-nccl-tests-mpijob.yaml")
H100 = "mofed-23.10-open-550-peermem"  # 8 H100, BAR1 128 GiB each, DMA-BUF usable
MATRIX = matrix()


def worker(buffsize: str | None = None):
    with open(SPEC) as f:
        text = f.read()
    if buffsize is not None:
        text = text.replace("NCCL_BUFFSIZE=8388608", f"NCCL_BUFFSIZE={buffsize}")
    return parse_job_spec(text, "nccl-tests.yaml")[1]


def bar1(nd, size):
    gpus = tuple(dataclasses.replace(g, bar1_bytes=size) for g in nd.gpu.gpus)
    return dataclasses.replace(nd, gpu=dataclasses.replace(nd.gpu, gpus=gpus))


def run(job, nd):
    return evaluate(with_nccl(committed_facts("bookworm"), "2.21.5"), nd, MATRIX, job=job)


def found(result):
    return [f for f in result.findings if f.id == RULE]


def asked(result):
    return [u for u in result.unknowns if u.rule == RULE]


def test_the_real_spec_value_fits_a_datacenter_bar1():
    assert worker().env_value("NCCL_BUFFSIZE").value == "8388608"
    result = run(worker(), node(H100))
    assert not found(result) and not asked(result)


def test_a_gib_buffer_may_exceed_even_an_h100_bar1():
    (f,) = found(run(worker("1073741824"), node(H100)))
    assert f.severity == "warning" and "2 GiB to 640 GiB" in f.title
    assert "ibv_reg_dmabuf_mr failed with error Cannot allocate memory" in f.predicted_error  # DMA-BUF path


def test_a_small_bar1_is_certainly_exceeded():
    small = bar1(node(H100), 256 << 20)  # a T4-class 256 MiB aperture
    (f,) = found(run(worker("1073741824"), small))
    assert f.severity == "error"
    assert not found(run(worker("4194304"), small))  # NCCL's own default is not judged


def test_bar1_unknown_asks_for_small_values_and_warns_for_huge_ones():
    unknown_bar1 = bar1(node(H100), None)
    assert asked(run(worker(), unknown_bar1)) and not found(run(worker(), unknown_bar1))
    (f,) = found(run(worker("1073741824"), unknown_bar1))
    assert f.severity == "warning" and "BAR1 of GPUs with the smallest aperture" in f.title
