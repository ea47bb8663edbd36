"""Issue 32, launch values: what a value means, read the way its reader reads it.

CUDA_VISIBLE_DEVICES as the CUDA driver reads it (PyTorch's parse mirrors the driver; its test table is the
reference below), the GPUs a node's ranks can see against the ranks it starts (failing in the framework before NCCL),
and an IP address where an interface name belongs. Real specs are verbatim (specs/real/SOURCES.md); each test changes
one field of a working spec to the value that breaks it."""

from __future__ import annotations

import dataclasses
import os

import pytest
from engine_facts import committed_facts, matrix, node, with_nccl

from imgcheck.engine import evaluate
from imgcheck.job import load_job_spec, parse_job_spec
from imgcheck.knowledge import net_select, visible_devices

REAL = os.path.join(os.path.dirname(__file__), "specs", "real")
MATRIX = matrix()
NODE8 = "mofed-23.10-open-550-peermem"  # 8 H100
SKETCH = "improved-diffusion-docker-sketch.sh"  # docker --gpus=all, CUDA_VISIBLE_DEVICES='4,5,6,7', mpiexec -n 4


def text(name):
    with open(os.path.join(REAL, name)) as f:
        return f.read()


def gpus_node(n):
    full = node(NODE8)
    return dataclasses.replace(full, gpu=dataclasses.replace(full.gpu, gpus=full.gpu.gpus[:n]))


def run(job, img=None, nd=None):
    return evaluate(img or with_nccl(committed_facts("bookworm"), "2.21.5"), nd or node(NODE8), MATRIX, job=job)


def found(result, rule):
    return [f for f in result.findings if f.id == rule]


def sketch(value=None):
    spec = text(SKETCH)
    if value is not None:
        spec = spec.replace("CUDA_VISIBLE_DEVICES='4,5,6,7'", f"CUDA_VISIBLE_DEVICES={value}")
    (job,) = parse_job_spec(spec, SKETCH)
    return job


# pytorch/pytorch test/test_cuda.py TestVisibleDeviceParses (https://github.com/pytorch/pytorch/pull/84879): the
# driver's reading of the variable, which torch.cuda.device_count mirrors
@pytest.mark.parametrize(
    ("value", "ordinals", "none"),
    [
        ("1gpu2,2ampere", (1, 2), False),  # the rest of an entry is ignored
        ("0, 1, 2, -1, 3", (0, 1, 2), False),  # a negative ends the list
        ("0, 1, 2, 1", None, True),  # an ordinal twice: no device
        ("2, +3, -0, 5", (2, 3, 0, 5), False),
        ("one,two,3,4", (), True),  # a word first: no device
        ("4,3,two,one", (4, 3), False),  # a word later ends the list
        ("", (), True),
        ("GPU-9e8d35e3", (), False),
    ],
)
def test_cuda_visible_devices_parses_as_the_driver_does(value, ordinals, none):
    parsed = visible_devices.parse(value)
    assert parsed.none is none
    if ordinals is not None:
        assert parsed.ordinals == ordinals


def test_mpirun_without_host_list_runs_every_rank_in_the_container():
    job = sketch()
    assert job.gpus == -1 and job.ranks_per_node == 4 and "no host list" in job.ranks_setting


def test_host_ordinals_work_only_where_the_node_has_them():
    assert not [f for f in run(sketch()).findings if "VISIBLE" in f.id or f.id == "JOB-RANKS-EXCEED-GPUS"]
    (f,) = found(run(sketch(), nd=gpus_node(4)), "ENV-CUDA-VISIBLE-DEVICES-ORDINAL")
    assert f.severity == "error" and "No CUDA GPUs are available" in f.predicted_error  # 4..7 on a 4-GPU node
    six = run(sketch(), nd=gpus_node(6))
    (f,) = found(six, "ENV-CUDA-VISIBLE-DEVICES-ORDINAL")
    assert "invalid device ordinal" in f.predicted_error and "visible are 4,5" in f.mechanism
    (ranks,) = found(six, "JOB-RANKS-EXCEED-GPUS")  # 4 ranks, 2 GPUs left visible
    assert ranks.severity == "error" and "4 ranks per node on 2 GPUs" in ranks.title


def test_ranks_past_the_gpus_fail_without_nccl_deciding():
    # no NCCL in the image, or one older than NCCL's duplicate-GPU check: the framework still fails
    for img in (committed_facts("bookworm"), with_nccl(committed_facts("bookworm"), "2.4.8")):
        (f,) = found(run(sketch(), img=img, nd=gpus_node(6)), "JOB-RANKS-EXCEED-GPUS")
        assert "invalid device ordinal" in f.predicted_error and "before NCCL" in f.mechanism
    # a list that leaves enough GPUs: silent
    assert not found(run(sketch("'2,3,4,5'"), nd=gpus_node(6)), "JOB-RANKS-EXCEED-GPUS")


def test_empty_or_hiding_value_leaves_no_gpu():
    (f,) = found(run(sketch("''")), "ENV-CUDA-VISIBLE-DEVICES-NONE")
    assert f.severity == "error" and "No CUDA GPUs" in f.predicted_error
    (hidden,) = found(run(sketch("-1")), "ENV-CUDA-VISIBLE-DEVICES-NONE")
    assert hidden.severity == "warning"  # how a CPU run hides GPUs on purpose
    (twice,) = found(run(sketch("'4,5,4'")), "ENV-CUDA-VISIBLE-DEVICES-NONE")
    assert "listed twice" in twice.title
    assert not found(run(sketch("'GPU-9e8d35e3'")), "ENV-CUDA-VISIBLE-DEVICES-NONE")


def test_container_count_unknown_asks():
    job = dataclasses.replace(sketch(), gpus=None)
    result = run(job)
    assert not found(result, "ENV-CUDA-VISIBLE-DEVICES-ORDINAL")
    assert [u for u in result.unknowns if u.rule == "ENV-CUDA-VISIBLE-DEVICES-ORDINAL"]


@pytest.mark.parametrize(
    ("value", "addresses"),
    [
        ("10.11.8.21", ("10.11.8.21",)),
        ("^10.0.0.0/8", ("10.0.0.0/8",)),
        ("fe80::1", ("fe80::1",)),
        ("eth0,10.0.0.1", ("10.0.0.1",)),
        ("eth0", ()),
        ("ens5f0.100", ()),  # a VLAN interface name, not an address
        ("^lo,docker", ()),
    ],
)
def test_address_items(value, addresses):
    assert net_select.address_items(value) == addresses


def test_an_address_for_an_interface_name_selects_nothing_on_any_node():
    spec = text("aws-fsdp-llama2_13b-pytorchjob.yaml")
    (ok,) = [j for j in parse_job_spec(spec, "llama2_13b-fsdp.yaml") if j.env_value("NCCL_SOCKET_IFNAME")]
    assert not found(run(ok), "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE")
    bad_spec = spec.replace('value: "^lo"', 'value: "10.11.8.21"')
    (bad,) = [j for j in parse_job_spec(bad_spec, "llama2_13b-fsdp.yaml") if j.env_value("NCCL_SOCKET_IFNAME")]
    (f,) = found(run(bad), "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE")  # no hostNetwork: decided without the netns
    assert f.severity == "error" and "'10.11.8.21'" in f.title
    gloo = parse_job_spec(bad_spec.replace("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"), "llama2_13b-fsdp.yaml")
    (g,) = [j for j in gloo if j.env_value("GLOO_SOCKET_IFNAME")]
    (f,) = found(run(g), "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS")
    assert "Unable to find address for: 10.11.8.21" == f.predicted_error


def test_real_spec_loads_from_file():
    (job,) = load_job_spec(os.path.join(REAL, SKETCH))
    assert job.env_value("CUDA_VISIBLE_DEVICES").value == "4,5,6,7"


def with_uuids(nd, uuids):
    gpus = tuple(dataclasses.replace(g, uuid=u) for g, u in zip(nd.gpu.gpus, uuids, strict=False))
    return dataclasses.replace(nd, gpu=dataclasses.replace(nd.gpu, gpus=gpus))


def test_uuid_entries_are_matched_by_prefix_against_the_node():
    # the UUID form of the CUDA guide / MPS docs (GPU-8932f937-d72c-4106-c12f-20bd9faed9f6), a prefix allowed
    nd = with_uuids(
        gpus_node(2), ["GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "GPU-1d3d1b3a-7f55-4d4c-9a36-0d3c1e5b2a11"]
    )
    job = dataclasses.replace(sketch("'GPU-8932f937'"), ranks_per_node=1)
    result = run(job, nd=nd)
    assert not found(result, "ENV-CUDA-VISIBLE-DEVICES-ORDINAL") and not found(result, "ENV-CUDA-VISIBLE-DEVICES-NONE")
    (f,) = found(
        run(dataclasses.replace(sketch("'GPU-0000aaaa'"), ranks_per_node=1), nd=nd), "ENV-CUDA-VISIBLE-DEVICES-ORDINAL"
    )
    assert "No CUDA GPUs" in f.predicted_error and "'GPU-0000aaaa'" in f.title
    unknown_uuids = run(dataclasses.replace(sketch("'GPU-0000aaaa'"), ranks_per_node=1), nd=gpus_node(2))
    assert [u for u in unknown_uuids.unknowns if u.rule == "ENV-CUDA-VISIBLE-DEVICES-ORDINAL"]


def test_ib_hca_ports_are_matched_with_the_device():
    # the real OCI volcano nccl-tests job: an exact (=) device list; NCCL matches (device, port) pairs
    spec = text("oci-volcano-BM.GPU.H100.8-nccl-test.yaml")
    jobs = [j for j in parse_job_spec(spec, "nccl-test.yaml") if j.env_value("NCCL_IB_HCA")]
    assert jobs and not found(run(jobs[0]), "ENV-NCCL-IB-HCA-NO-DEVICE")
    ported = spec.replace("NCCL_IB_HCA==mlx5_0,mlx5_1,", "NCCL_IB_HCA==mlx5_0:2,mlx5_1:2,")
    (bad,) = [j for j in parse_job_spec(ported, "nccl-test.yaml") if j.env_value("NCCL_IB_HCA")][:1]
    (f,) = found(run(bad), "ENV-NCCL-IB-HCA-NO-DEVICE")
    assert "ports the selected HCAs do not have" in f.title and "mlx5_0 ports 1" in f.title
    right = spec.replace("NCCL_IB_HCA==mlx5_0,mlx5_1,", "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,")
    (ok,) = [j for j in parse_job_spec(right, "nccl-test.yaml") if j.env_value("NCCL_IB_HCA")][:1]
    assert not found(run(ok), "ENV-NCCL-IB-HCA-NO-DEVICE")


def test_named_values_as_a_real_script_writes_them_pass():
    # FlagOpen/FlagPerf base/toolkits/interconnect-MPI_intraserver/denglin/GS40/main.sh:
    # export NCCL_P2P_LEVEL=SYS / NCCL_PROTO=LL128 / NCCL_ALGO=Ring
    env = {"NCCL_P2P_LEVEL": "SYS", "NCCL_PROTO": "LL128", "NCCL_ALGO": "Ring"}
    result = evaluate(with_nccl(committed_facts("bookworm"), "2.21.5", env=env), node(NODE8), MATRIX)
    assert not found(result, "ENV-NCCL-PARAM-VALUE")
    env["NCCL_P2P_LEVEL"] = "sys"  # ncclGetLevel compares with strcmp: the lower-case word is ignored
    (f,) = found(
        evaluate(with_nccl(committed_facts("bookworm"), "2.21.5", env=env), node(NODE8), MATRIX), "ENV-NCCL-PARAM-VALUE"
    )
    assert "'sys'" in f.title


# randydl/LLaMA-Factory run_ds.sh (https://github.com/randydl/LLaMA-Factory/blob/main/run_ds.sh), its deepspeed line
# verbatim, run in a docker container; deepspeed/launcher/runner.py: --num_gpus N gives each host GPU ids 0..N-1
DS_LINE = 'deepspeed --num_gpus 8 --num_nodes 2 --hostfile hostfile --master_addr 10.252.32.12 randy/train.py "$@"'


def test_deepspeed_num_gpus_is_ranks_per_node():
    (eight,) = parse_job_spec(f"docker run --gpus 8 --network host img {DS_LINE}\n", "run_ds.sh")
    assert eight.ranks_per_node == 8 and not found(run(eight), "JOB-RANKS-EXCEED-GPUS")
    (four,) = parse_job_spec(f"docker run --gpus 4 --network host img {DS_LINE}\n", "run_ds.sh")
    (f,) = found(run(four), "JOB-RANKS-EXCEED-GPUS")
    assert "8 ranks per node on 4 GPUs" in f.title
    (auto,) = parse_job_spec("docker run --gpus 4 img deepspeed randy/train.py\n", "run_ds.sh")
    assert auto.ranks_follow_gpus and not found(run(auto), "JOB-RANKS-EXCEED-GPUS")
