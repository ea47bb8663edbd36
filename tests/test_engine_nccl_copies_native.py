"""Two libnccl.so.2 in one image: which one a program without RPATH gets, and what it lacks (issue 32).

The layout is NVIDIA/nccl#1784's: the system libnccl of a DGX container in /usr/lib/x86_64-linux-gnu and a source
build of a newer NCCL under /workspace, nccl-tests built against the build. The functions each release adds are
catalog nccl_api_symbols (tools/nccl/gen_api_symbols.py over NVIDIA/nccl's release tags)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from engine_facts import matrix as load_matrix
from engine_facts import node
from imagebuild import Symlink, make_layer, write_docker_archive

from imgcheck import api
from imgcheck.engine import evaluate
from imgcheck.sources.read_options import ReadOptions

RULE = "NCCL-OLDER-COPY-LOADED"
SYSTEM = "usr/lib/x86_64-linux-gnu"
BUILD = "workspace/3rdparty/nccl/build/lib"
CONDA_RECORD = "tests/data/conda/_openmp_mutex-4.5-1_gnu.json"


def layer(extra: dict | None = None) -> bytes:
    files = {
        f"{SYSTEM}/libnccl.so.2.23.4": b"\x7fELF system nccl",
        f"{SYSTEM}/libnccl.so.2": Symlink("libnccl.so.2.23.4"),
        f"{BUILD}/libnccl.so.2.27.3": b"\x7fELF built nccl",
        f"{BUILD}/libnccl.so.2": Symlink("libnccl.so.2.27.3"),
    }
    return make_layer({**files, **(extra or {})})


def inspect(tmp_path, data: bytes, env: list[str] | None = None):
    archive = write_docker_archive(str(tmp_path / "image.tar"), [data], env=env or [])
    return api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def outcomes(facts, matrix) -> dict:
    result = evaluate(facts, node("inbox-6.8-open-570"), matrix)
    return {f.id: f for f in result.findings} | {u.rule: u for u in result.unknowns}


def test_the_system_copy_shadows_a_newer_build(tmp_path, matrix):
    facts = inspect(tmp_path, layer())
    loaded = [n for n in facts.nccl if n.loaded]
    assert [n.version for n in loaded] == ["2.23.4"]
    found = outcomes(facts, matrix)[RULE]
    assert found.severity == "warning" and not found.assumes
    # the functions 2.24-2.27 added, read from the release headers: the thread's undefined symbol among them
    assert "ncclCommWindowRegister" in found.predicted_error
    assert "ncclCommInitRankConfig" not in found.predicted_error  # 2.14: the older copy has it


def test_ld_library_path_naming_the_build_first_is_fine(tmp_path, matrix):
    facts = inspect(tmp_path, layer(), [f"LD_LIBRARY_PATH=/{BUILD}"])
    assert [n.version for n in facts.nccl if n.loaded] == ["2.27.3"]
    assert RULE not in outcomes(facts, matrix)


def test_a_conda_environment_copy_is_its_packages_own(tmp_path, matrix):
    record = open(CONDA_RECORD, "rb").read()
    data = make_layer(
        {
            f"{SYSTEM}/libnccl.so.2.23.4": b"\x7fELF system nccl",
            f"{SYSTEM}/libnccl.so.2": Symlink("libnccl.so.2.23.4"),
            "opt/conda/lib/libnccl.so.2.28.3": b"\x7fELF conda nccl",
            "opt/conda/conda-meta/_openmp_mutex-4.5-1_gnu.json": record,
        }
    )
    facts = inspect(tmp_path, data)
    conda = [p for p in facts.packages if p.db == "conda"]
    assert [(p.name, p.version, p.build, p.channel) for p in conda] == [
        ("_openmp_mutex", "4.5", "1_gnu", "https://repo.anaconda.com/pkgs/main/linux-64")
    ]
    assert RULE not in outcomes(facts, matrix)


def test_stated_copies_without_the_loader_choice(tmp_path, matrix):
    facts = inspect(tmp_path, layer())
    stated = dataclasses.replace(facts, nccl=tuple(dataclasses.replace(n, loaded=None, how=None) for n in facts.nccl))
    assert RULE in {f.id for f in evaluate(stated, node("inbox-6.8-open-570"), matrix).findings}
    elsewhere = tuple(
        dataclasses.replace(n, loaded=None, how=None, path=n.path.replace(f"/{SYSTEM}", "/opt/old")) for n in facts.nccl
    )
    u = outcomes(dataclasses.replace(facts, nccl=elsewhere), matrix)[RULE]
    assert "not in the facts" in u.reason


def test_api_symbols_catalog_is_the_release_headers():
    rows = {r["symbol"]: r for r in json.load(open("compat_matrix/catalogs/nccl_api_symbols.json"))["rows"]}
    assert rows["ncclCommInitRankConfig"]["first"] == "2.14.3"  # nccl.h.in at v2.14.3-1
    assert rows["ncclSend"]["first"] == "2.7.3"
    assert rows["ncclCommWindowRegister"]["first"] == "2.27.3"


def test_ld_preload_of_the_build_decides(tmp_path, matrix):
    facts = inspect(tmp_path, layer(), [f"LD_PRELOAD=/{BUILD}/libnccl.so.2"])
    assert RULE not in outcomes(facts, matrix)
