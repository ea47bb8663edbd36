"""UCX-TLS-NO-INTERNODE on the real bookworm image (UCX 1.13.1 from Debian) with UCX_TLS in its Env."""

from __future__ import annotations

import dataclasses

import pytest

from engine_facts import node, real_facts, run, unknown_rules
from imgcheck.engine.ucx import allowed_internode

RULE = "UCX-TLS-NO-INTERNODE"


def _with_tls(facts, value):
    return dataclasses.replace(facts, env=dict(facts.env, UCX_TLS=value))


@pytest.mark.parametrize("value", ["sm,self", "shm,self,cuda_copy,cuda_ipc", "self,posix,sysv,cma", "mm,cuda"])
def test_only_intra_node_transports_fail(debian_archive, value):
    facts = _with_tls(real_facts(debian_archive("bookworm")), value)
    result = run(facts, node("inbox-6.8-open-570"))
    [finding] = [f for f in result.findings if f.id == RULE]
    assert finding.severity == "error" and "Destination is unreachable" in finding.predicted_error
    assert {e.fact for e in finding.evidence} >= {"image.env.UCX_TLS", "image.ucx.version"}
    assert value in finding.title


@pytest.mark.parametrize("value", ["rc,sm,self", "all", "ud_x,self", "tcp", "^tcp", "^sm", "ib,cuda", "dc_x,sm", ""])
def test_a_network_transport_left_is_fine(debian_archive, value):
    facts = _with_tls(real_facts(debian_archive("bookworm")), value)
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE not in {f.id for f in result.findings} and RULE not in unknown_rules(result)


def test_unknown_transport_name_is_unknown_not_ok(debian_archive):
    facts = _with_tls(real_facts(debian_archive("bookworm")), "sm,self,rc_mlx5_future")
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE in unknown_rules(result) and RULE not in {f.id for f in result.findings}


def test_no_ucx_in_the_image_no_rule(debian_archive):
    facts = dataclasses.replace(_with_tls(real_facts(debian_archive("bookworm")), "sm,self"), ucx=None)
    result = run(facts, node("inbox-6.8-open-570"))
    assert RULE not in {f.id for f in result.findings}


def test_negated_list_that_removes_every_network_transport():
    assert allowed_internode("^ib,tcp,ugni") == (set(), set())
    assert allowed_internode("^ib,tcp")[0] == {"ugni_smsg", "ugni_rdma", "ugni_udt"}
