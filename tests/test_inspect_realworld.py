"""Real-world image layouts, built from real artifacts the way users build them.

Base: the real Debian bookworm rootfs with python3 (conftest's mmdebstrap cache). On top, layers the
image's own tools made in a chroot: `python3 -m venv` and its pip 23.0.1 installing NVIDIA's real
wheels from PyPI (nvidia-cuda-runtime-cu12 12.4.127, nvidia-cuda-runtime 13.0.96 with
`pip install --target`), torch 2.5.1's and nvidia-nccl-cu12 2.21.5's real METADATA (PyPI's PEP 658
metadata, installed as dist-info-only wheels: the real wheels are 0.9 GB and 190 MB), and Debian
trixie non-free's real libcudart12 installed by dpkg (which runs ldconfig).
"""

from __future__ import annotations

import json
import os
import tarfile

import pytest
from chrootimage import Rootfs, cached_layers
from imagebuild import write_docker_archive
from rootfs import ROOTFS_CACHE, build_rootfs
from wheelcache import debian_package, metadata, metadata_wheel, wheel

from imgcheck import api
from imgcheck.knowledge.nccl import nccl_in_use
from imgcheck.sources.read_options import ReadOptions

pytestmark = pytest.mark.e2e

VENV_SITE = "/opt/venv/lib/python3.11/site-packages"
CU12 = "nvidia-cuda-runtime-cu12==12.4.127"
CU13 = "nvidia-cuda-runtime==13.0.96"
TORCH = "torch==2.5.1"
NCCL = "nvidia-nccl-cu12==2.21.5"


def _python_base() -> str:
    path = os.path.join(ROOTFS_CACHE, "bookworm-python3.tar")
    if not os.path.exists(path):
        pytest.skip("the bookworm-python3 rootfs is not cached (tests/node/test_probe_image.py builds it)")
    return path


PIP_COMMANDS = {
    "venv_torch": "python3 -m venv /opt/venv && /opt/venv/bin/pip install -q --no-index --no-deps {cu12} {torch}",
    "nccl_wheel": "/opt/venv/bin/pip install -q --no-index --no-deps {nccl}",
    "target_cu13": "/opt/venv/bin/pip install -q --no-index --no-deps --target /opt/pylibs {cu13}",
    "libcudart12": "dpkg -i --force-depends {deb}",
}


@pytest.fixture(scope="module")
def pip_layers(tmp_path_factory):
    """Layer tars over bookworm-python3, each made by the image's own python3/pip/dpkg (cached once built)."""
    base = _python_base()
    work = tmp_path_factory.mktemp("pip-layers")
    files = {
        "cu12": wheel(CU12),
        "cu13": wheel(CU13),
        "torch": metadata_wheel(TORCH, str(work)),
        "nccl": metadata_wheel(NCCL, str(work)),
        "deb": debian_package("libcudart12", "trixie", "non-free"),
    }

    def build(directory):
        fs = Rootfs(base, str(work / "root"))
        try:
            inside = {k: fs.copy_in(v, "/debs" if k == "deb" else "/wheels") for k, v in files.items()}
            for name, command in PIP_COMMANDS.items():  # in order: each layer holds what its command changed
                fs.run(command.format(**inside))
                fs.layer(os.path.join(directory, name + ".tar"))
        finally:
            fs.remove()

    inputs = [base, files["cu12"], files["cu13"], files["deb"], TORCH, NCCL] + list(PIP_COMMANDS.values())
    layers = cached_layers(ROOTFS_CACHE, inputs, list(PIP_COMMANDS), build)
    layers["base"] = base
    return layers


def _inspect(tmp_path, layers: list[str], env: list[str] | None = None):
    path = str(tmp_path / "image.tar")
    write_docker_archive(path, [], env=env, layer_files=layers)
    return api.inspect_image(f"docker-archive:{path}", ReadOptions(use_cache=False))


# -- PyPI torch: CUDA from the wheel, NCCL from torch's parenthesised pin, dist-infos as packages -------


def test_pip_torch_cuda_from_wheel_and_nccl_from_pin(tmp_path, pip_layers):
    facts = _inspect(tmp_path, [pip_layers["base"], pip_layers["venv_torch"]])
    pkgs = {(p.name, p.db): p for p in facts.packages}
    assert pkgs[("torch", "python")].version == "2.5.1"
    assert pkgs[("torch", "python")].path == f"{VENV_SITE}/torch-2.5.1.dist-info/METADATA"
    assert pkgs[("nvidia-cuda-runtime-cu12", "python")].version == "12.4.127"
    assert f"{VENV_SITE}" in facts.python_sites
    # torch 2.5.1 writes `nvidia-nccl-cu12 (==2.21.5) ; platform_system == "Linux" and ...` (PyPI metadata)
    [nccl] = facts.nccl
    assert (nccl.version, nccl.origin) == ("2.21.5", "torch-requirement")
    assert "(==2.21.5)" in nccl.how and nccl.path == f"{VENV_SITE}/torch-2.5.1.dist-info/METADATA"
    cuda = facts.cuda
    assert cuda.version == "12.4.127" and cuda.origin == "pip nvidia-cuda-runtime-cu12"
    assert cuda.path == f"{VENV_SITE}/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA"
    assert cuda.layer == facts.layers[1].diff_id
    wheel_rt = next(r for r in cuda.runtime if r.origin == "pip nvidia-cuda-runtime-cu12")
    # the wheel's own library, its soname read from the ELF: the CUDA 12 driver API level
    assert wheel_rt.library == f"{VENV_SITE}/nvidia/cuda_runtime/lib/libcudart.so.12"
    assert wheel_rt.soname == "libcudart.so.12"
    lib_rt = next(r for r in cuda.runtime if r.library == wheel_rt.library and r.origin == "soname")
    assert lib_rt.version == "12" and lib_rt.loaded is False and "RPATH" in lib_rt.how


def test_pip_torch_with_nccl_wheel_prefers_the_wheel(tmp_path, pip_layers):
    facts = _inspect(tmp_path, [pip_layers["base"], pip_layers["venv_torch"], pip_layers["nccl_wheel"]])
    nccl = nccl_in_use(facts)
    assert (nccl.version, nccl.origin) == ("2.21.5", "pip")
    assert nccl.path == f"{VENV_SITE}/nvidia_nccl_cu12-2.21.5.dist-info/METADATA"
    assert nccl.layer == facts.layers[2].diff_id
    # torch's pin stays a fact beside the wheel, so the engine can compare them (here they agree)
    [pin] = [n for n in facts.nccl if n.origin == "torch-requirement"]
    assert pin.version == "2.21.5" and "nvidia-nccl-cu12" in pin.how


def test_pip_torch_cu12_fails_on_r470(tmp_path, pip_layers):
    """Before, the image had no CUDA version and the verdict was ok; CUDA 12 needs driver >= 525."""
    from engine_facts import by_id, node, run

    facts = _inspect(tmp_path, [pip_layers["base"], pip_layers["venv_torch"]])
    result = run(facts, node("mofed-5.8-470-peermem"))
    finding = by_id(result, "CUDA-DRIVER-TOO-OLD")
    assert any(
        e.value == "12.4.127" and e.path.endswith("nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA")
        for e in finding.evidence
    )


# -- pip install --target DIR + PYTHONPATH ---------------------------------------------------------


def test_target_dir_counts_only_through_pythonpath(tmp_path, pip_layers):
    layers = [pip_layers["base"], pip_layers["target_cu13"]]
    on_path = _inspect(tmp_path, layers, env=["PATH=/usr/bin:/bin", "PYTHONPATH=/opt/pylibs"])
    assert "/opt/pylibs" in on_path.python_sites
    assert ("nvidia-cuda-runtime", "13.0.96") in {(p.name, p.version) for p in on_path.packages}
    assert on_path.cuda.version == "13.0.96" and on_path.cuda.origin == "pip nvidia-cuda-runtime"
    rt = next(r for r in on_path.cuda.runtime if r.origin == "pip nvidia-cuda-runtime")
    assert rt.library == "/opt/pylibs/nvidia/cu13/lib/libcudart.so.13" and rt.soname == "libcudart.so.13"
    off_path = _inspect(tmp_path, layers)
    assert "/opt/pylibs" not in off_path.python_sites
    assert "nvidia-cuda-runtime" not in {p.name for p in off_path.packages}
    # the library file is still in the image: only its major, from the ELF soname, is known
    assert off_path.cuda.version == "13" and off_path.cuda.origin == "soname"


# -- Debian's libcudart12 (trixie non-free), installed by dpkg ----------------------------------------


def test_debian_libcudart12(tmp_path, pip_layers):
    facts = _inspect(tmp_path, [pip_layers["base"], pip_layers["libcudart12"]])
    cuda = facts.cuda
    assert cuda.version == "12.4.127"
    by_origin = {r.origin: r for r in cuda.runtime}
    pkg = by_origin["dpkg libcudart12"]
    assert pkg.version == "12.4.127" and pkg.path == "/var/lib/dpkg/status"
    lib = by_origin["library file name"]
    assert lib.library == "/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127" and lib.soname == "libcudart.so.12"
    # dpkg's trigger ran ldconfig: the loader finds it through the image's ld.so.cache
    assert lib.loaded is True and lib.how.startswith("/etc/ld.so.cache")
    assert pkg.library == lib.library


# -- torch pins in every form it has used (real PyPI metadata) -------------------------------------


@pytest.mark.parametrize(
    "spec,nccl",
    [
        ("torch==2.0.1", ("nvidia-nccl-cu11", "2.14.3")),
        ("torch==2.3.0", ("nvidia-nccl-cu12", "2.20.5")),
        ("torch==2.6.0", ("nvidia-nccl-cu12", "2.21.5")),
        ("torch==2.7.0", ("nvidia-nccl-cu12", "2.26.2")),
    ],
)
def test_torch_pins_every_form(spec, nccl):
    import re

    from wheelcache import metadata_text

    from imgcheck.extractors.python import Distribution, pinned

    meta = metadata(spec)["metadata"]
    dist = Distribution(
        name="torch",
        version=meta["version"],
        site="s",
        path="s/torch.dist-info/METADATA",
        layer=None,
        metadata=metadata_text(meta),
    )
    found = pinned(dist, re.compile(r"nvidia-nccl-cu[0-9]+"), "x86_64")
    assert [(n, v) for n, v, _ in found] == [nccl]
    # the same pins do not apply on aarch64 (torch's markers say platform_machine == "x86_64")
    assert pinned(dist, re.compile(r"nvidia-nccl-cu[0-9]+"), "aarch64") == []


# -- the loader's choice: a stale rdma-core under /opt/conda/pkgs ---------------------------------

CONDA = "opt/conda/pkgs/rdma-core-33.2-0/lib"
DEB_LIB = "usr/lib/x86_64-linux-gnu"


@pytest.fixture(scope="module")
def stale_conda_layer(tmp_path_factory):
    """bullseye's real rdma-core 33.2 (PABI 33) files laid out as conda's package cache keeps them."""
    src = build_rootfs("bullseye")
    out = str(tmp_path_factory.mktemp("conda") / "conda.tar")
    with tarfile.open(src) as old, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as new:
        for member in old:
            name = member.name.lstrip("./")
            base = os.path.basename(name)
            if name.startswith(DEB_LIB + "/") and (
                base.startswith("libibverbs.so")
                or base.startswith("libmlx5.so")
                or name.startswith(DEB_LIB + "/libibverbs/libmlx5-")
            ):
                member.name = CONDA + name[len(DEB_LIB) :]
                new.addfile(member, old.extractfile(member) if member.isfile() else None)
    return out


def test_stale_conda_copy_is_not_the_loaded_libibverbs(tmp_path, stale_conda_layer):
    facts = _inspect(tmp_path, [build_rootfs("bookworm"), stale_conda_layer])
    lib = facts.rdma.libibverbs
    assert lib.path == f"/{DEB_LIB}/libibverbs.so.1.14.44.0" and lib.private_abi == 34
    assert lib.provider_dir == f"/{DEB_LIB}/libibverbs"  # compiled into the library
    loaded = [c for c in lib.copies if c.loaded]
    assert [c.path for c in loaded] == [lib.path] and loaded[0].how.startswith("/etc/ld.so.cache")
    stale = next(c for c in lib.copies if c.path.startswith("/" + CONDA))
    assert stale.version == "1.11.33.2" and not stale.loaded and "conda" in stale.how
    assert all(p.pabi == 34 for p in facts.rdma.providers)
    assert [p.path for p in facts.rdma.other_providers] == [f"/{CONDA}/libibverbs/libmlx5-rdmav33.so"]
    from engine_facts import node, run

    assert "RDMA-PABI-MISMATCH" not in {f.id for f in run(facts, node("inbox-6.8-open-570")).findings}


def test_ld_library_path_makes_the_old_copy_load_and_mismatch(tmp_path, stale_conda_layer):
    facts = _inspect(
        tmp_path, [build_rootfs("bookworm"), stale_conda_layer], env=["PATH=/usr/bin:/bin", f"LD_LIBRARY_PATH=/{CONDA}"]
    )
    lib = facts.rdma.libibverbs
    assert lib.path == f"/{CONDA}/libibverbs.so.1.11.33.2" and lib.private_abi == 33
    assert next(c for c in lib.copies if c.loaded).how == f"LD_LIBRARY_PATH /{CONDA}"
    # its compiled-in provider dir is Debian's, where bookworm's PABI 34 providers are: none loads
    assert lib.provider_dir == f"/{DEB_LIB}/libibverbs"
    mlx5 = next(p for p in facts.rdma.providers if p.name == "mlx5" and p.path.startswith(f"/{DEB_LIB}/"))
    assert mlx5.loaded is False and "libmlx5-rdmav33.so" in mlx5.how
    from engine_facts import node, run

    result = run(facts, node("inbox-6.8-open-570"))
    assert "RDMA-PABI-MISMATCH" in {f.id for f in result.findings}


# -- every provider's real ELF (efa, mana, mlx4, hns link a shared library) ----------------------


@pytest.mark.parametrize("suite,pabi", [("bookworm", 34), ("trixie", 34)])
def test_every_provider_elf_is_read(suite, pabi, debian_archive):
    facts = api.inspect_image(f"docker-archive:{debian_archive(suite)}")
    providers = {p.name: p for p in facts.rdma.providers}
    assert all(p.private_abi_needed == pabi for p in providers.values()), {
        n: p.private_abi_needed for n, p in providers.items()
    }
    for name in ("efa", "mana", "mlx4", "mlx5"):
        p = providers[name]
        assert p.library == f"/{DEB_LIB}/lib{name}.so.1.{p.version.split('.', 1)[1]}"
        assert p.symbol_versions and all(v.startswith(name.upper() + "_") for v in p.symbol_versions)
    assert all(p.loaded for p in providers.values())
    assert facts.rdma.libibverbs.config_dir == "/etc/libibverbs.d"


def test_bullseye_ucx_really_version(debian_archive):
    facts = api.inspect_image(f"docker-archive:{debian_archive('bullseye')}")
    ucx = facts.ucx
    assert ucx.version == "1.10.0" and ucx.package_version == "1.10.1~rc1+really.1.10.0-1"
    # the version's copy: the libucp.so.0 libucx0's dpkg file list names
    assert ucx.path == f"/{DEB_LIB}/libucp.so.0.0.0"
    assert [c.path for c in ucx.copies if c.loaded] == [ucx.path]
    # Debian builds UCX against rdma-core: its IB modules carry none of the log strings an MLNX_OFED experimental-verbs
    # build compiles in (UCX 1.10 still has that code, behind configure's verbs_exp.h checks)
    assert ucx.modules and all(m.exp_verbs == () for m in ucx.modules), [(m.name, m.exp_verbs) for m in ucx.modules]


# -- second stacks inside wheels (nixl-cu12, libucx-cu12 from PyPI) -------------------------------

STACK_COMMAND = "python3 -m venv /opt/venv && /opt/venv/bin/pip install -q --no-index --no-deps {wheels}"


@pytest.fixture(scope="module")
def wheel_stack_layer(tmp_path_factory):
    base = _python_base()
    work = tmp_path_factory.mktemp("stacks")
    files = [wheel("nixl-cu12==1.5.1"), wheel("libucx-cu12==1.22.0"), wheel("pyverbs==56.0rc1")]

    def build(directory):
        fs = Rootfs(base, str(work / "root"))
        try:
            inside = [fs.copy_in(f) for f in files]
            fs.run(STACK_COMMAND.format(wheels=" ".join(inside)))
            fs.layer(os.path.join(directory, "stacks.tar"))
        finally:
            fs.remove()

    layers = cached_layers(ROOTFS_CACHE, [base] + files + [STACK_COMMAND], ["stacks"], build)
    return base, layers["stacks"]


def test_bundled_stacks_in_wheels(tmp_path, wheel_stack_layer):
    facts = _inspect(tmp_path, list(wheel_stack_layer))
    stacks = {(s.distribution, s.kind): s for s in facts.bundled_stacks}
    verbs = stacks[("nixl-cu12", "rdma-core")]
    assert verbs.path == f"{VENV_SITE}/nixl_cu12.libs" and verbs.version == "48.0" and verbs.private_abi == 34
    assert any(lib.endswith("libibverbs-1de1263b.so.1.14.48.0") for lib in verbs.libraries)
    # the wheel's libibverbs looks for providers in a system path compiled in at its build
    assert verbs.provider_dir == "/usr/lib64/libibverbs" and verbs.config_dir == "/etc/libibverbs.d"
    assert verbs.system_providers == ()  # a Debian image has no /usr/lib64/libibverbs
    assert "nixl-cu12" in verbs.loaded_by
    assert ("nixl-cu12", "ucx") in stacks
    # pyverbs 56.0rc1 from PyPI bundles rdma-core 48.0 (auditwheel's pyverbs.libs), not the 56 its name says
    pyverbs = stacks[("pyverbs", "rdma-core")]
    assert pyverbs.path == f"{VENV_SITE}/pyverbs.libs" and pyverbs.version == "48.0" and pyverbs.private_abi == 34
    assert {lib.rsplit("/", 1)[1].split("-")[0] for lib in pyverbs.libraries} >= {
        "libibverbs",
        "libmlx5",
        "libefa",
        "librdmacm",
    }
    assert ("pyverbs", "ucx") not in stacks
    ucx = stacks[("libucx-cu12", "ucx")]
    assert ucx.path == f"{VENV_SITE}/libucx" and ucx.version == "1.22.0"
    # the image itself has no rdma-core or UCX: the wheels' copies are not the image's
    assert facts.rdma.libibverbs is None and facts.ucx is None
    # the new facts survive a facts file (JSON) unchanged
    from imgcheck.model.image import ImageFacts
    from imgcheck.model.serde import from_dict, to_dict

    assert from_dict(ImageFacts, json.loads(json.dumps(to_dict(facts)))) == facts


# -- libfabric (Debian's libfabric1 1.17.0, dpkg-installed) and NCCL net plugins ---------------------


@pytest.fixture(scope="module")
def libfabric_layer(tmp_path_factory):
    base = build_rootfs("bookworm")
    deb = debian_package("libfabric1", "bookworm", "main")
    work = tmp_path_factory.mktemp("fabric")
    command = "dpkg -i --force-depends {deb}"

    def build(directory):
        fs = Rootfs(base, str(work / "root"))
        try:
            fs.run(command.format(deb=fs.copy_in(deb, "/debs")))
            fs.layer(os.path.join(directory, "libfabric.tar"))
        finally:
            fs.remove()

    return base, cached_layers(ROOTFS_CACHE, [base, deb, command], ["libfabric"], build)["libfabric"]


def test_debian_libfabric(tmp_path, libfabric_layer):
    facts = _inspect(tmp_path, list(libfabric_layer))
    fabric = facts.libfabric
    # the package's release, not the file's libtool suffix (libfabric.so.1.20.0)
    assert fabric.version == "1.17.0" and fabric.origin == "dpkg"
    assert fabric.path == "/usr/lib/x86_64-linux-gnu/libfabric.so.1.20.0"
    assert fabric.provider_dir == "/usr/lib/x86_64-linux-gnu/libfabric"  # compiled-in FI_PROVIDER_PATH default
    assert "efa" in fabric.builtin_providers and "EFA_1.2" in fabric.needs_efa
    assert "IBVERBS_1.12" in fabric.needs_ibverbs
    assert [c.loaded for c in fabric.copies] == [True]
    assert fabric.layer == facts.layers[1].diff_id
    from imgcheck.model.image import ImageFacts
    from imgcheck.model.serde import from_dict, to_dict

    assert from_dict(ImageFacts, json.loads(json.dumps(to_dict(facts)))) == facts  # UCX modules too
    assert facts.ucx.modules  # bookworm's own UCX 1.13.1 and its libuct_ib modules
    assert all(m.exp_verbs == () for m in facts.ucx.modules)  # built against rdma-core: no experimental verbs


def test_nccl_net_plugin_follows_nccl_net_plugin_and_the_loader(tmp_path):
    """Plugin files as the AWS EFA installer and HPC-X lay them out (names only: NCCL's choice is by name)."""
    from imagebuild import Symlink, build_oci, make_layer, write_oci_dir

    layer = make_layer(
        {
            "opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so": b"\x7fELF not read",
            "opt/amazon/ofi-nccl/lib/libnccl-net.so": Symlink("libnccl-net-ofi.so"),
            "opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so.0.0.0": b"\x7fELF not read",
            "opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so": Symlink("libnccl-net.so.0.0.0"),
        }
    )

    def plugins(env):
        oci = write_oci_dir(str(tmp_path / str(len(env))), build_oci([layer], env=env))
        return {p.path: p for p in api.inspect_image(f"oci-dir:{oci}", ReadOptions(use_cache=False)).nccl_net_plugins}

    ofi = "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"
    sharp = "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so.0.0.0"
    found = plugins(["LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/hpcx/nccl_rdma_sharp_plugin/lib"])
    assert found[ofi].loaded and found[ofi].how == "libnccl-net.so by LD_LIBRARY_PATH /opt/amazon/ofi-nccl/lib"
    assert found[sharp].loaded is False
    # NCCL_NET_PLUGIN=ofi: NCCL tries "ofi", then libnccl-net-ofi.so
    found = plugins(
        ["LD_LIBRARY_PATH=/opt/hpcx/nccl_rdma_sharp_plugin/lib:/opt/amazon/ofi-nccl/lib", "NCCL_NET_PLUGIN=ofi"]
    )
    assert found[ofi].loaded and found[sharp].loaded is False
    assert not any(p.loaded for p in plugins(["PATH=/bin"]).values())  # not on the search path
