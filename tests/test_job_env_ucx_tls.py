"""UCX-TLS-NO-INTERNODE (engine/ucx.py) on the committed facts of a real Debian image with UCX (libucx0), from the
image Env or the job's env (docker run -e wins over the image's Env)."""

from __future__ import annotations

import dataclasses

import pytest
from engine_facts import committed_facts, matrix, node

from imgcheck.engine import evaluate
from imgcheck.job import parse_job_spec

MATRIX = matrix()
NODE = "mofed-23.10-open-550-peermem"


def _ids(image, job=None):
    return [f.id for f in evaluate(image, node(NODE), MATRIX, job=job).findings]


def _image(**env):
    facts = committed_facts("bookworm")
    assert facts.ucx is not None  # libucx0 is in the image
    return dataclasses.replace(facts, env=dict(facts.env, **env))


@pytest.mark.parametrize("value", ["self,sm,cuda_copy,gdr_copy", "sm", "cuda_ipc,posix"])
def test_only_intra_node_transports(value):
    assert "UCX-TLS-NO-INTERNODE" in _ids(_image(UCX_TLS=value))


@pytest.mark.parametrize("value", ["rc,sm,cuda_copy,gdr_copy", "tcp", "all", "^sm", "ud_x,self", "newtl,sm"])
def test_a_transport_that_may_reach_another_node(value):
    assert "UCX-TLS-NO-INTERNODE" not in _ids(_image(UCX_TLS=value))


def test_the_jobs_env_is_the_value_in_force():
    (bad,) = parse_job_spec("docker run -e UCX_TLS=sm,self img", "run.sh")
    (good,) = parse_job_spec("docker run -e UCX_TLS=rc,sm img", "run.sh")
    assert "UCX-TLS-NO-INTERNODE" in _ids(_image(UCX_TLS="rc,sm"), bad)
    assert "UCX-TLS-NO-INTERNODE" not in _ids(_image(UCX_TLS="sm,self"), good)


def test_no_ucx_in_the_image_no_finding():
    assert "UCX-TLS-NO-INTERNODE" not in _ids(dataclasses.replace(_image(UCX_TLS="sm"), ucx=None))
