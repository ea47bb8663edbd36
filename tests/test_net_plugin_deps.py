"""An NCCL net plugin whose own DT_NEEDED libraries do not resolve in the image (NCCL-NET-PLUGIN-DEPENDENCY-MISSING).

Real ELF files built with gcc (the plugin links a real libhwloc.so.15 stand-in, so its DT_NEEDED is the linker's),
put into OCI images and read through api.inspect_image; the engine runs on the facts read. The library the plugin
needs is kept by no want: whether it exists comes from the layer index's hashes of every path.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tempfile

import pytest
from imagebuild import Opaque, Symlink, Whiteout, build_oci, make_layer, write_oci_dir

from imgcheck import api
from imgcheck.engine import evaluate
from imgcheck.matrix import load_matrix
from imgcheck.model.image import ImageFacts
from imgcheck.model.image_io import parse_image_facts
from imgcheck.model.node_io import parse_node_facts
from imgcheck.model.serde import from_dict, to_dict
from imgcheck.sources.read_options import ReadOptions

MATRIX = load_matrix()
RULE = "NCCL-NET-PLUGIN-DEPENDENCY-MISSING"
EFA_NODE = {"name": "p5", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap16s27", "driver": "efa"}]}}
IB_NODE = {"name": "ib", "rdma": {"stack": "mlnx_ofed", "devices": [{"name": "mlx5_0", "driver": "mlx5_core"}]}}
OFI = "opt/amazon/ofi-nccl/lib"
NCCL = {"usr/lib/x86_64-linux-gnu/libnccl.so.2.27.3": b"\x7fELF not read"}
ENV = ["NCCL_NET_PLUGIN=ofi", f"LD_LIBRARY_PATH=/{OFI}"]


def _gcc(tmp: str, soname: str, body: str, link: list[str] = (), runpath: str | None = None) -> str:
    src, out = os.path.join(tmp, soname + ".c"), os.path.join(tmp, soname)
    with open(src, "w") as fh:
        fh.write(body + "\n")
    cmd = ["gcc", "-shared", "-fPIC", "-nostdlib", "-o", out, src, f"-Wl,-soname,{soname}", *link]
    if runpath is not None:
        cmd += [f"-Wl,-rpath,{runpath}", "-Wl,--enable-new-dtags"]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def _libs(
    runpath: str | None = None, dep: str = "libhwloc.so.15", symbol: str = "hwloc_topology_init"
) -> tuple[bytes, bytes]:
    """(plugin, dep): the plugin calls into the library, so the linker records DT_NEEDED `dep` (libhwloc.so.15)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        lib = _gcc(tmp, dep, f"int {symbol}(void *t) {{ return 0; }}")
        plugin = _gcc(
            tmp,
            "libnccl-net-ofi.so",
            f"extern int {symbol}(void *t);\nint ncclNetPlugin_v9(void) {{ return {symbol}(0); }}",
            [lib],
            runpath,
        )
        with open(plugin, "rb") as p, open(lib, "rb") as h:
            return p.read(), h.read()


def _inspect(tmp_path, layers: list[dict], env=ENV):
    oci = write_oci_dir(str(tmp_path / "oci"), build_oci([make_layer(files) for files in layers], env=env))
    return api.inspect_image(f"oci-dir:{oci}", ReadOptions(use_cache=False))


def _plugin(facts):
    return next(p for p in facts.nccl_net_plugins if p.loaded)


def _findings(facts, node=EFA_NODE):
    result = evaluate(facts, parse_node_facts(node, "node"), MATRIX)
    return {f.id: f for f in result.findings}, {u.rule: u.reason for u in result.unknowns}


def test_missing_dependency_is_found_from_the_plugins_elf(tmp_path):
    plugin, _ = _libs()
    facts = _inspect(tmp_path, [{**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin}])
    p = _plugin(facts)
    assert p.how.startswith("libnccl-net-ofi.so by LD_LIBRARY_PATH")
    assert [(n.name, n.found) for n in p.needed] == [("libhwloc.so.15", False)]
    assert f"/{OFI}" in p.needed[0].how and "/usr/lib/x86_64-linux-gnu" in p.needed[0].how
    assert from_dict(ImageFacts, json.loads(json.dumps(to_dict(facts)))) == facts  # survives a facts file
    found, _ = _findings(facts)
    f = found[RULE]
    assert f.severity == "warning" and "libhwloc.so.15" in f.title and "sockets" in f.title  # EFA: only sockets left
    assert "libhwloc.so.15: cannot open shared object file" in f.predicted_error
    assert any(e.fact == "image.nccl_net_plugins.needed" and e.path == f"/{OFI}/libnccl-net-ofi.so" for e in f.evidence)
    # on an InfiniBand node NCCL falls back to its own IB transport: still the plugin's loss, worded so
    found, _ = _findings(facts, IB_NODE)
    assert "internal transports" in found[RULE].title


@pytest.mark.parametrize(
    "where, env, runpath, how",
    [
        # the distro's package: a default directory (no want keeps the file; the layer's path hashes say it is there)
        ("usr/lib/x86_64-linux-gnu/libhwloc.so.15.6.4", ENV, None, "default directory /usr/lib/x86_64-linux-gnu"),
        (
            "opt/hwloc/lib/libhwloc.so.15",
            ["NCCL_NET_PLUGIN=ofi", f"LD_LIBRARY_PATH=/{OFI}:/opt/hwloc/lib"],
            None,
            "LD_LIBRARY_PATH /opt/hwloc/lib",
        ),
        ("opt/amazon/ofi-nccl/deps/libhwloc.so.15", ENV, "$ORIGIN/../deps", "RUNPATH /opt/amazon/ofi-nccl/deps"),
    ],
)
def test_dependency_found_on_the_search_path(tmp_path, where, env, runpath, how):
    plugin, hwloc = _libs(runpath)
    files = {**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin, where: hwloc}
    if where.endswith(".6.4"):
        files["usr/lib/x86_64-linux-gnu/libhwloc.so.15"] = Symlink("libhwloc.so.15.6.4")
    p = _plugin(_inspect(tmp_path, [files], env))
    assert p.needed[0].found is True and p.needed[0].how == how
    assert RULE not in _findings(_inspect(tmp_path / "again", [files], env))[0]


def test_origin_is_the_directory_the_plugin_was_opened_from(tmp_path):
    """$ORIGIN of a library opened through a symlink is the symlink's directory (glibc does not resolve it): the
    same files with the plugin's name linked from /usr/lib do not find the library beside the plugin's real file."""
    plugin, hwloc = _libs("$ORIGIN")
    files = {
        **NCCL,
        f"{OFI}/libnccl-net-ofi.so": plugin,
        f"{OFI}/libhwloc.so.15": hwloc,
        "usr/lib/x86_64-linux-gnu/libnccl-net.so": Symlink(f"/{OFI}/libnccl-net-ofi.so"),
    }
    p = _plugin(_inspect(tmp_path, [files], env=[]))
    assert p.runpath == ("$ORIGIN",)
    assert p.needed[0].found is False
    assert RULE in _findings(_inspect(tmp_path / "again", [files], env=[]))[0]
    # what the real loader does with the same layout on this machine
    root = tmp_path / "root"
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, Symlink):
            target.symlink_to(str(root) + data.target)
        else:
            target.write_bytes(data)
    with pytest.raises(OSError, match="libhwloc.so.15: cannot open shared object file"):
        ctypes.CDLL(str(root / "usr/lib/x86_64-linux-gnu/libnccl-net.so"))
    ctypes.CDLL(str(root / OFI / "libnccl-net-ofi.so"))  # opened from its own directory, $ORIGIN finds it


def test_a_library_deleted_by_an_upper_layer_is_missing(tmp_path):
    plugin, hwloc = _libs()
    lower = {**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin, "usr/lib/x86_64-linux-gnu/libhwloc.so.15": hwloc}
    upper = {"usr/lib/x86_64-linux-gnu/libhwloc.so.15": Whiteout()}
    assert _plugin(_inspect(tmp_path, [lower, upper])).needed[0].found is False


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ldconfig") is None, reason="ldconfig -r needs root")
def test_found_through_the_images_ld_so_cache(tmp_path):
    """A directory of /etc/ld.so.conf.d reaches the loader only through the cache ldconfig writes."""
    plugin, hwloc = _libs()
    root = tmp_path / "root"
    (root / "opt/hwloc/lib").mkdir(parents=True)
    (root / "etc/ld.so.conf.d").mkdir(parents=True)
    (root / "opt/hwloc/lib/libhwloc.so.15").write_bytes(hwloc)
    (root / "etc/ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (root / "etc/ld.so.conf.d/hwloc.conf").write_text("/opt/hwloc/lib\n")
    subprocess.run(["ldconfig", "-r", str(root)], check=True, capture_output=True)
    files = {
        **NCCL,
        f"{OFI}/libnccl-net-ofi.so": plugin,
        "opt/hwloc/lib/libhwloc.so.15": hwloc,
        "etc/ld.so.conf": (root / "etc/ld.so.conf").read_bytes(),
        "etc/ld.so.conf.d/hwloc.conf": (root / "etc/ld.so.conf.d/hwloc.conf").read_bytes(),
        "etc/ld.so.cache": (root / "etc/ld.so.cache").read_bytes(),
    }
    p = _plugin(_inspect(tmp_path, [files]))
    assert (p.needed[0].found, p.needed[0].path, p.needed[0].how) == (
        True,
        "/opt/hwloc/lib/libhwloc.so.15",
        "/etc/ld.so.cache",
    )
    # the same image without the cache: the directory is searched by nobody
    del files["etc/ld.so.cache"]
    assert _plugin(_inspect(tmp_path / "nocache", [files])).needed[0].found is False


def test_nccl_net_forcing_the_plugin_makes_it_fatal(tmp_path):
    plugin, _ = _libs()
    files = {**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin}
    forced = _findings(_inspect(tmp_path / "forced", [files], ENV + ["NCCL_NET=AWS Libfabric"]))[0][RULE]
    assert forced.severity == "error" and "not found" in forced.predicted_error
    assert any(e.fact.endswith("NCCL_NET") or "NCCL_NET" in str(e.value) for e in forced.evidence)
    # NCCL_NET=Socket or IB: the job asks for an internal transport, the plugin not loading changes nothing
    for net in ("Socket", "ib"):
        found, unknowns = _findings(_inspect(tmp_path / net, [files], ENV + [f"NCCL_NET={net}"]))
        assert RULE not in found and RULE not in unknowns


def test_unread_plugin_elf_is_unknown_not_a_pass():
    image = {
        "reference": "hand-written",
        "nccl": [{"version": "2.27.3", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.27.3"}],
        "nccl_net_plugins": [{"path": f"/{OFI}/libnccl-net-ofi.so", "name": "libnccl-net-ofi.so", "loaded": True}],
    }
    found, unknowns = _findings(parse_image_facts(image, "image"))
    assert RULE not in found and "DT_NEEDED" in unknowns[RULE]
    image["nccl_net_plugins"][0]["needed"] = [{"name": "libhwloc.so.15", "found": None, "how": "cache unreadable"}]
    found, unknowns = _findings(parse_image_facts(image, "image"))
    assert RULE not in found and "cache unreadable" in unknowns[RULE]
    image["nccl_net_plugins"][0]["needed"] = [{"name": "libhwloc.so.15", "found": True}]
    found, unknowns = _findings(parse_image_facts(image, "image"))
    assert RULE not in found and RULE not in unknowns


def test_an_upper_opaque_directory_hides_the_library(tmp_path):
    plugin, hwloc = _libs()
    lower = {**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin, "opt/hwloc/lib/libhwloc.so.15": hwloc}
    env = ["NCCL_NET_PLUGIN=ofi", f"LD_LIBRARY_PATH=/{OFI}:/opt/hwloc/lib"]
    assert _plugin(_inspect(tmp_path / "one", [lower], env)).needed[0].found is True
    upper = {"opt/hwloc/lib/": Opaque(), "opt/hwloc/lib/README": b"emptied"}
    assert _plugin(_inspect(tmp_path / "two", [lower, upper], env)).needed[0].found is False


def test_a_library_only_in_a_python_prefix_is_unknown_without_the_plugins_runpath(tmp_path):
    """Without a DT_RUNPATH of its own, the plugin's needs are also looked up in the DT_RPATH of the objects that
    loaded it (the executable among them), which is not read: a copy in a Python prefix's lib (where an
    executable built with RPATH $ORIGIN/../lib looks) makes the answer unknown, not missing."""
    plugin, hwloc = _libs()
    files = {
        **NCCL,
        f"{OFI}/libnccl-net-ofi.so": plugin,
        "opt/conda/lib/python3.11/site-packages/numpy-2.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: numpy\n"
        b"Version: 2.1.0\n",
        "opt/conda/lib/libhwloc.so.15": hwloc,
    }
    facts = _inspect(tmp_path, [files])
    need = _plugin(facts).needed[0]
    assert need.found is None and "/opt/conda/lib/libhwloc.so.15" in need.how and "DT_RPATH" in need.how
    found, unknowns = _findings(facts)
    assert RULE not in found and "DT_RPATH" in unknowns[RULE]
    # with a DT_RUNPATH the plugin's own paths are the only ones for its needs: missing again
    plugin, _ = _libs("$ORIGIN")
    facts = _inspect(tmp_path / "runpath", [{**files, f"{OFI}/libnccl-net-ofi.so": plugin}])
    assert _plugin(facts).needed[0].found is False


def test_driver_libraries_come_from_the_container_toolkit_not_the_image(tmp_path):
    """libcuda.so.1 is never in an image (the NVIDIA Container Toolkit mounts it): a plugin linking it is not missing it."""
    data, _ = _libs(dep="libcuda.so.1", symbol="cuInit")
    facts = _inspect(tmp_path, [{**NCCL, f"{OFI}/libnccl-net-ofi.so": data}])
    need = _plugin(facts).needed[0]
    assert (need.name, need.found, need.path) == ("libcuda.so.1", True, None) and "Container Toolkit" in need.how
    found, unknowns = _findings(facts)
    assert RULE not in found and RULE not in unknowns


def test_a_copy_off_the_search_path_may_be_loaded_already(tmp_path):
    """glibc reuses a loaded object whose soname matches before searching: torch loads its wheel's libcudart through its
    RPATH, so a plugin needing libcudart.so.12 is satisfied there although no search directory holds it."""
    plugin, cudart = _libs(dep="libcudart.so.12", symbol="cudaGetDeviceCount")
    wheel = "usr/local/lib/python3.12/dist-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
    facts = _inspect(tmp_path, [{**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin, wheel: cudart}])
    need = _plugin(facts).needed[0]
    assert need.found is None and f"/{wheel}" in need.how
    found, unknowns = _findings(facts)
    assert RULE not in found and wheel in unknowns[RULE]
    facts = _inspect(tmp_path / "none", [{**NCCL, f"{OFI}/libnccl-net-ofi.so": plugin}])
    assert RULE in _findings(facts)[0]  # no copy anywhere: missing
