"""`imgcheck diff OLD NEW` on the real bullseye and trixie images (rdma-core 33.2 -> 56.1)."""

from __future__ import annotations

import json
import os

import pytest
from recommend_helpers import matrix, node, node_file, real_facts, renamed, with_nccl, write_facts

from imgcheck.cli.main import main
from imgcheck.recommend.diff import diff_images

pytestmark = pytest.mark.e2e  # real Debian rdma images (mmdebstrap)


def _diff(capsys, *argv) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main(["diff", *argv, "-o", "json"])
    return rc, json.loads(capsys.readouterr().out)


def test_diff_real_images_userspace_changes(capsys, debian_archive):
    old, new = (f"docker-archive:{debian_archive(s)}" for s in ("bullseye", "trixie"))
    rc, doc = _diff(
        capsys,
        old,
        new,
        "--node-facts",
        node_file("inbox-6.8-open-570"),
        "--node-facts",
        node_file("mofed-23.10-open-550-peermem"),
    )
    changes = {c["fact"]: (c["old"], c["new"]) for c in doc["changes"]}
    assert changes["rdma.libibverbs.rdma_core"] == ("33.2", "56.1")
    assert changes["rdma.libibverbs.version"] == ("1.11.33.2", "1.14.56.1")
    assert changes["rdma.libibverbs.private_abi"] == ("33", "34")
    assert changes["rdma.libibverbs.symbol_versions.IBVERBS_1.12"] == ("absent", "present")  # ibv_reg_dmabuf_mr
    ucx_old, ucx_new = changes["ucx.version"]
    assert ucx_old.startswith("1.10") and ucx_new.startswith("1.18")
    assert changes["rdma.providers"][0].endswith("rdmav33") and "rdmav34" in changes["rdma.providers"][1]
    assert changes["rdma.packages.libibverbs1"] == ("33.2-1", "56.1-1")
    assert "IBVERBS_1.8" not in " ".join(changes)  # ibv_reg_mr_iova2 is in both: not a change
    # These plain rdma images carry no NCCL, so the NCCL-over-RDMA rules (DMA-BUF, GDR) do not apply to them
    # and each image's libibverbs matches its own providers: no node changes verdict.
    assert rc == 0 and doc["newly_failing"] == []
    assert {(n["node"], n["old"], n["new"]) for n in doc["nodes"]} == {
        ("gpu-inbox-68", "ok", "ok"),
        ("gpu-mofed2310", "ok", "ok"),
    }


@pytest.fixture(scope="module")
def torch_images(debian_archive, tmp_path_factory):
    """The same two real userspaces with NCCL 2.13.4 + CUDA 12.4.1 on top (as a torch image would add them)."""
    d = tmp_path_factory.mktemp("diff-facts")
    out = {}
    for suite in ("bullseye", "trixie"):
        facts = renamed(with_nccl(real_facts(debian_archive(suite)), "2.13.4", cuda="12.4.1"), f"team/trainer:{suite}")
        out[suite] = write_facts(d / f"{suite}.json", facts)
    return out


def test_downgrade_moves_the_open_module_node_to_failing(capsys, torch_images):
    """Why one node moves: on gpu-inbox-68 (inbox kernel 6.8, open GPU modules, no peermem) NCCL 2.13 uses
    DMA-BUF. trixie's libibverbs exports ibv_reg_dmabuf_mr (IBVERBS_1.12), so registration works; bullseye's
    (rdma-core 33.2) does not, and NCCL 2.13 does not fall back: DMABUF-UNSUPPORTED (error). On gpu-inbox-515
    (proprietary modules) NCCL never tries DMA-BUF, so both images get the same GDR-PEERMEM-MISSING warning
    and that node does not move."""
    nodes = ["--node-facts", node_file("inbox-6.8-open-570"), "--node-facts", node_file("inbox-5.15-proprietary-535")]
    rc, doc = _diff(capsys, f"facts:{torch_images['trixie']}", f"facts:{torch_images['bullseye']}", *nodes)
    by_node = {n["node"]: n for n in doc["nodes"]}
    assert rc == 1 and doc["newly_failing"] == ["gpu-inbox-68"]
    assert (by_node["gpu-inbox-68"]["old"], by_node["gpu-inbox-68"]["new"]) == ("ok", "fail")
    # without DMA-BUF, and with no peermem on an inbox kernel, GPUDirect RDMA is gone as well
    assert by_node["gpu-inbox-68"]["added"] == ["DMABUF-UNSUPPORTED", "GDR-PEERMEM-MISSING"]
    assert by_node["gpu-inbox-68"]["direction"] == "worse"
    assert (by_node["gpu-inbox-515"]["old"], by_node["gpu-inbox-515"]["new"]) == ("warn", "warn")
    assert by_node["gpu-inbox-515"]["added"] == [] and by_node["gpu-inbox-515"]["removed"] == []

    # the bump the other way round repairs that node: exit 0, the move is "better"
    rc, doc = _diff(capsys, f"facts:{torch_images['bullseye']}", f"facts:{torch_images['trixie']}", *nodes)
    by_node = {n["node"]: n for n in doc["nodes"]}
    assert rc == 0 and doc["newly_failing"] == []
    assert by_node["gpu-inbox-68"]["direction"] == "better" and by_node["gpu-inbox-68"]["removed"] == [
        "DMABUF-UNSUPPORTED",
        "GDR-PEERMEM-MISSING",
    ]


def test_diff_table_names_the_moving_node(capsys, torch_images):
    capsys.readouterr()
    rc = main(
        [
            "diff",
            f"facts:{torch_images['trixie']}",
            f"facts:{torch_images['bullseye']}",
            "--node-facts",
            node_file("inbox-6.8-open-570"),
            "-o",
            "table",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 1
    assert "provider ABI (PABI): 34 -> 33" in out and "ibv_reg_dmabuf_mr@IBVERBS_1.12: present -> absent" in out
    assert "gpu-inbox-68: ok -> fail (WORSE); new: DMABUF-UNSUPPORTED, GDR-PEERMEM-MISSING" in out
    assert "1 node(s) move to failing: gpu-inbox-68" in out


def test_env_changes_that_matter_are_listed(debian_archive):
    base = real_facts(debian_archive("bookworm"))
    old = with_nccl(base, "2.21.5", env={"NCCL_IB_TIMEOUT": "22", "HOSTNAME": "a"})
    new = with_nccl(base, "2.21.5", env={"NCCL_IB_TIMEOUT": "23", "HOSTNAME": "b", "UCX_TLS": "rc"})
    result = diff_images(old, new, [node("inbox-6.8-open-570")], matrix())
    env = {c.fact: (c.old, c.new) for c in result.changes if c.fact.startswith("env.")}
    assert env == {"env.NCCL_IB_TIMEOUT": ("22", "23"), "env.UCX_TLS": (None, "rc")}  # HOSTNAME is noise


def test_diff_bad_input(capsys, tmp_path, torch_images):
    assert main(["diff", f"facts:{torch_images['trixie']}", f"docker-archive:{tmp_path / 'none.tar'}"]) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert main(["diff", f"facts:{bad}", f"facts:{torch_images['trixie']}"]) == 2
    assert main(["diff", "only-one"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_diff_and_recommend_against_the_inventory(tmp_path, monkeypatch, capsys, torch_images):
    """--node NAME and --fleet SELECTOR read the node inventory under $IMGCHECK_HOME."""
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    for name in ("inbox-6.8-open-570", "inbox-5.15-proprietary-535"):
        assert main(["node", "add", node_file(name)]) == 0
    capsys.readouterr()
    rc, doc = _diff(capsys, f"facts:{torch_images['trixie']}", f"facts:{torch_images['bullseye']}", "--fleet", "all")
    assert rc == 1 and doc["newly_failing"] == ["gpu-inbox-68"] and len(doc["nodes"]) == 2
    capsys.readouterr()
    assert (
        main(["recommend", "--node", "gpu-inbox-68", "--like", f"facts:{torch_images['bullseye']}", "-o", "json"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["nodes"] == ["gpu-inbox-68"] and any(r["kind"] == "image" for r in doc["recommendations"])
    assert main(["recommend", "--node", "no-such-node"]) in (2, 3)


@pytest.fixture(scope="module")
def provider_lost(torch_images, tmp_path_factory):
    """NEW keeps trixie's libibverbs (PABI 34) but ships the mlx5 provider of an older build
    (libmlx5-rdmav33.so), the mix a partial base-image bump makes: libibverbs no longer loads it
    ("couldn't load driver 'libmlx5-rdmav33.so'")."""
    import dataclasses

    from imgcheck.model.image_io import parse_image_facts

    with open(torch_images["trixie"]) as fh:
        trixie = parse_image_facts(json.load(fh)["image"], "trixie")
    providers = tuple(
        dataclasses.replace(
            p,
            pabi=33,
            path=p.path.replace("rdmav34", "rdmav33"),
            private_abi_needed=33,
            loaded=False,
            how="IBVERBS_PRIVATE_33 is not what libibverbs (34) defines",
        )
        if p.name == "mlx5"
        else p
        for p in trixie.rdma.providers
    )
    new = renamed(
        dataclasses.replace(trixie, rdma=dataclasses.replace(trixie.rdma, providers=providers)), "team/trainer:mixed"
    )
    return torch_images["trixie"], write_facts(tmp_path_factory.mktemp("mixed") / "mixed.json", new)


def test_diff_shows_a_provider_going_from_loaded_to_not_loaded(capsys, provider_lost, tmp_path):
    """Issue 37: the node's mlx5 provider loads under OLD and not under NEW; table, JSON, Markdown (a PR
    comment) and SARIF (code scanning) all say so."""
    old, new = provider_lost
    nodes = ["--node-facts", node_file("inbox-6.8-open-570")]
    sarif_path, md_path = tmp_path / "diff.sarif", tmp_path / "diff.md"
    capsys.readouterr()
    rc = main(["diff", f"facts:{old}", f"facts:{new}", *nodes, "-o", "table", "-o", f"sarif={sarif_path}"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "provider mlx5: loads -> does not load" in out
    rc, doc = _diff(capsys, f"facts:{old}", f"facts:{new}", *nodes)
    node_doc = doc["nodes"][0]
    assert node_doc["providers"] == [{"provider": "mlx5", "old": True, "new": False}]
    assert "RDMA-PABI-MISMATCH" in node_doc["added"]
    assert any(r["id"] == "RDMA-PABI-MISMATCH" and r["title"] for r in doc["rules"])

    assert main(["diff", f"facts:{old}", f"facts:{new}", *nodes, "-o", f"markdown={md_path}"]) == 1
    md = md_path.read_text()
    assert "move to failing" in md and "gpu-inbox-68" in md and "`RDMA-PABI-MISMATCH`" in md
    assert "provider `mlx5`: loads → does not load" in md

    import jsonschema

    schema_path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "sarif-schema-2.1.0.json")
    with open(schema_path, encoding="utf-8") as fh:
        validator = jsonschema.Draft4Validator(json.load(fh), format_checker=jsonschema.FormatChecker())
    sarif = json.loads(sarif_path.read_text())
    validator.validate(sarif)
    results = sarif["runs"][0]["results"]
    pabi = next(r for r in results if r["ruleId"] == "RDMA-PABI-MISMATCH")
    assert pabi["level"] == "error" and pabi["properties"]["nodes"] == ["gpu-inbox-68"]
    assert "mlx5 (loads -> does not load)" in pabi["message"]["text"]
    # the bump back repairs it: no alert for a rule that only went away
    capsys.readouterr()
    assert main(["diff", f"facts:{new}", f"facts:{old}", *nodes, "-o", "sarif"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["results"] == []
