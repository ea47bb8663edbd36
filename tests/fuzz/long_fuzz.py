"""Long, seeded mutation fuzzing of every parser that reads hostile input (not run in CI).

    PYTHONPATH=src:tests python tests/fuzz/long_fuzz.py [--inputs 100000] [--seed 1] [--only NAME]

Each parser gets `--inputs` mutated inputs derived from real seeds (a real layer tar, GNU tar's
PAX sparse archives, Debian's libibverbs ELF, real-shaped manifests, node facts, cache entries,
dpkg status ...). Every input must end in a result or the parser's documented error; anything else
(another exception, an input running longer than --budget seconds: a hang) is a finding, printed
with its seed so it can be replayed. Prints a table of inputs, documented errors, findings, the
slowest input and the peak RSS; SECURITY.md quotes the numbers.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import io
import json
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time

from imagebuild import Symlink, make_layer, sha256

from imgcheck import safejson
from imgcheck.elf.reader import NotElf, read_elf
from imgcheck.errors import BadInputError, ImgcheckError
from imgcheck.extractors.env import parse_nccl_conf
from imgcheck.extractors.os_release import parse_os_release
from imgcheck.extractors.packages import parse_apk_installed, parse_dpkg_status, parse_rpm_header, parse_rpmdb_sqlite
from imgcheck.extractors.rdma import _OFED_INFO
from imgcheck.model.node_io import parse_node_facts
from imgcheck.sources.manifest import check_config, layers_of_manifest, with_diff_ids
from imgcheck.sources.platform import parse_platform, select_manifest
from imgcheck.view.cache import index_bytes, index_from_bytes
from imgcheck.view.fileview import FileView, SymlinkLoop
from imgcheck.view.layer_index import SYMLINK, Entry, LayerIndex, Limits, index_layer
from imgcheck.view.tarwalk import TarWalker
from imgcheck.view.wants import Want, WantSet

WANTS = WantSet((Want(r".*", content=True, max_bytes=1 << 20),))
LIMITS = Limits(max_entries=10_000, max_uncompressed=64 << 20, max_symlinks=5_000, max_kept_bytes=32 << 20)
LIBIBVERBS = "/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"


class Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise Hang()


# -- mutators -----------------------------------------------------------------------------------

INTERESTING = [
    b"\x00",
    b"\xff",
    b"\x7f",
    b"\x80",
    b"0",
    b"7",
    b"9",
    b" ",
    b"/",
    b"..",
    b"\n",
    b"=",
    b"99999999999",
    b"-1",
    b"\x1b[2J",
    b"[/ib0]",
]


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        pos = rng.randrange(len(buf) + 1) if buf else 0
        if op < 0.35 and buf:
            buf[min(pos, len(buf) - 1)] = rng.randrange(256)
        elif op < 0.55:
            buf[pos:pos] = rng.choice(INTERESTING)
        elif op < 0.7 and buf:
            del buf[pos : pos + rng.randint(1, 64)]
        elif op < 0.85 and buf:
            span = bytes(buf[pos : pos + rng.randint(1, 512)])
            buf[pos:pos] = span * rng.randint(1, 4)
        else:
            x = rng.choice(INTERESTING)
            buf[pos : pos + len(x)] = x
    return bytes(buf)


def random_json(rng: random.Random, depth: int = 0):
    r = rng.random()
    if depth > 4 or r < 0.3:
        return rng.choice(
            [
                None,
                True,
                False,
                0,
                -1,
                2**63,
                10**30,
                1.5,
                float("1e308"),
                "",
                "x",
                "sha256:" + "a" * 64,
                "application/vnd.oci.image.layer.v1.tar+gzip",
                "\x1b[31m",
                "linux/amd64",
                [],
                {},
            ]
        )
    if r < 0.6:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        rng.choice(
            [
                "mediaType",
                "digest",
                "size",
                "layers",
                "manifests",
                "platform",
                "os",
                "architecture",
                "rootfs",
                "diff_ids",
                "name",
                "kernel",
                "rdma",
                "gpu",
                "x",
            ]
        ): random_json(rng, depth + 1)
        for _ in range(rng.randint(0, 5))
    }


def mutate_json(rng: random.Random, doc):
    """A structural mutation: a random node replaced, deepened, or the text itself mutated."""
    if rng.random() < 0.15:
        text = json.dumps(doc).encode()
        return mutate_bytes(rng, text)
    doc = json.loads(json.dumps(doc))
    for _ in range(rng.randint(1, 4)):
        node, parent, key = doc, None, None
        for _step in range(rng.randint(0, 6)):
            if isinstance(node, dict) and node:
                key = rng.choice(list(node))
            elif isinstance(node, list) and node:
                key = rng.randrange(len(node))
            else:
                break
            parent, node = node, node[key]
        value = random_json(rng)
        if rng.random() < 0.1:
            for _ in range(rng.randint(10, 300)):
                value = {"x": value} if rng.random() < 0.5 else [value]
        if parent is None:
            doc = value
        else:
            parent[key] = value
    text = json.dumps(doc)
    if rng.random() < 0.05:  # far deeper than the encoder itself could write
        depth = rng.randint(1000, 200_000)
        text = "[" * depth + text + "]" * depth
    return text.encode()


# -- seeds --------------------------------------------------------------------------------------


def seeds(tmp: str) -> dict:
    layer = make_layer(
        {
            "etc/os-release": b"ID=debian\n",
            "usr/lib/libibverbs.so.1": b"\x7fELF" + b"\0" * 100,
            "usr/lib/l": Symlink("libibverbs.so.1"),
            "a/.wh.b": b"",
            "c/.wh..wh..opq": b"",
        }
    )
    root = os.path.join(tmp, "sp")
    os.makedirs(os.path.join(root, "usr/lib"))
    with open(os.path.join(root, "usr/lib/f"), "wb") as fh:
        fh.write(b"head")
        fh.seek(20000)
        fh.write(b"tail")
    sparse = []
    for v in ("0.0", "0.1", "1.0"):
        out = os.path.join(tmp, f"s{v}.tar")
        subprocess.run(
            ["tar", "-C", root, "--sparse", "--format=posix", f"--sparse-version={v}", "-cf", out, "usr"], check=True
        )
        sparse.append(open(out, "rb").read())
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha256(b"c"), "size": 1},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": sha256(b"l"), "size": 10}],
    }
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": sha256(b"m"),
                "size": 5,
                "platform": {"os": "linux", "architecture": "amd64"},
            },
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": sha256(b"n"),
                "size": 5,
                "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"},
            },
        ],
    }
    config = {
        "architecture": "amd64",
        "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [sha256(b"l")]},
        "config": {"Env": ["PATH=/usr/bin", "NCCL_IB_HCA=mlx5"]},
    }
    fixtures = os.path.join(os.path.dirname(__file__), "..", "fixtures", "engine_nodes")
    node = json.load(open(os.path.join(fixtures, sorted(os.listdir(fixtures))[0])))
    idx = index_layer(io.BytesIO(layer), sha256(layer), WANTS, LIMITS)
    con = sqlite3.connect(":memory:")
    con.executescript("CREATE TABLE Packages (hnum INTEGER PRIMARY KEY, blob BLOB NOT NULL);")
    hdr = _rpm_header()
    con.execute("INSERT INTO Packages (blob) VALUES (?)", (hdr,))
    con.commit()
    rpmdb = con.serialize()
    con.close()
    return {
        "layer": layer,
        "gzip": gzip.compress(layer, mtime=0),
        "sparse": sparse,
        "manifest": manifest,
        "index": index,
        "config": config,
        "node": node,
        "cache": index_bytes(idx),
        "rpm": hdr,
        "rpmdb": rpmdb,
        "elf": open(LIBIBVERBS, "rb").read() if os.path.exists(LIBIBVERBS) else b"\x7fELF",
        "dpkg": b"Package: libibverbs1\nStatus: install ok installed\nVersion: 44.0-2\nDescription: x\n continued\n\n",
        "apk": b"P:musl\nV:1.2.4-r2\n\nP:rdma-core\nV:46.0-r0\n\n",
        "osrel": b'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
        "ofed": b"MLNX_OFED_LINUX-23.10-1.1.9.0:\nDOCA-OFED-24.10\nOFED-internal-24.10-1.1.4\n",
    }


def _rpm_header() -> bytes:
    import struct

    strings = b"libibverbs\x0044.0\x001.el9\x00"
    tags = [(1000, 6, 0, 1), (1001, 6, 11, 1), (1002, 6, 16, 1)]
    return struct.pack(">ii", len(tags), len(strings)) + b"".join(struct.pack(">iiii", *t) for t in tags) + strings


# -- the parsers ----------------------------------------------------------------------------------


def _walk_tar(data: bytes) -> None:
    walker = TarWalker(io.BytesIO(data))
    for _member in walker:
        walker.read_data(1 << 20)


def _manifest(doc: bytes) -> None:
    parsed = safejson.loads(doc, "m")
    for call in (
        lambda: layers_of_manifest(parsed, "m"),
        lambda: select_manifest(parsed, parse_platform("linux/amd64"), "i"),
        lambda: with_diff_ids([], check_config(parsed, "c"), "c"),
    ):
        try:
            call()
        except BadInputError:
            pass
        except AttributeError:
            if isinstance(parsed, dict):
                raise


def _fileview(rng: random.Random) -> None:
    idx = LayerIndex(digest="d")
    names = ["a", "b", "a/b", "c/d", "..", "/", "x/../y"]
    for _ in range(rng.randint(1, 20)):
        target = "/".join(rng.choice(names) for _ in range(rng.randint(1, 30)))
        if rng.random() < 0.05:
            target = "../" * rng.randint(1000, 100_000) + target
        path = rng.choice(["a", "b", "c", "a/b", "c/d"])
        idx.entries[path] = Entry(path, SYMLINK, linkname=target)
    view = FileView([idx])
    for path in ("a/b/c", "c/d/e", "b"):
        view.file(path)


def parsers(seed: dict):
    # name -> (make input from rng, run it, documented exceptions)
    doc_err = (BadInputError,)
    return {
        "tar walk (mutated layer)": (lambda r: mutate_bytes(r, seed["layer"]), _walk_tar, (BadInputError,)),
        "layer index (mutated layer)": (
            lambda r: mutate_bytes(r, seed["layer"]),
            lambda d: index_layer(io.BytesIO(d), sha256(d), WANTS, LIMITS),
            (ImgcheckError,),
        ),
        "gzip layer": (
            lambda r: mutate_bytes(r, seed["gzip"]),
            lambda d: index_layer(io.BytesIO(d), sha256(d), WANTS, LIMITS),
            (ImgcheckError,),
        ),
        "PAX sparse (GNU tar 0.0/0.1/1.0)": (
            lambda r: mutate_bytes(r, r.choice(seed["sparse"])),
            _walk_tar,
            (BadInputError,),
        ),
        "ELF (Debian libibverbs)": (lambda r: mutate_bytes(r, seed["elf"]), read_elf, (NotElf,)),
        "rpm header": (lambda r: mutate_bytes(r, seed["rpm"]), parse_rpm_header, (ValueError,)),
        "rpmdb sqlite": (
            lambda r: mutate_bytes(r, seed["rpmdb"]),
            lambda d: parse_rpmdb_sqlite(d, "p", None),
            (sqlite3.DatabaseError, ImgcheckError, OverflowError),
        ),
        "dpkg status": (
            lambda r: mutate_bytes(r, seed["dpkg"] * r.randint(1, 50)),
            lambda d: parse_dpkg_status(d, "p", None),
            (ImgcheckError,),
        ),
        "apk installed": (
            lambda r: mutate_bytes(r, seed["apk"]),
            lambda d: parse_apk_installed(d, "p", None),
            (ImgcheckError,),
        ),
        "os-release / nccl.conf": (
            lambda r: mutate_bytes(r, seed["osrel"]),
            lambda d: (parse_os_release(d.decode("utf-8", "replace")), parse_nccl_conf(d.decode("utf-8", "replace"))),
            (),
        ),
        "ofed_info regex": (
            lambda r: mutate_bytes(r, seed["ofed"] * r.randint(1, 2000)),
            lambda d: _OFED_INFO.search(d.decode("utf-8", "replace")),
            (),
        ),
        "manifest / index / config JSON": (
            lambda r: mutate_json(r, r.choice([seed["manifest"], seed["index"], seed["config"]])),
            _manifest,
            doc_err,
        ),
        "node facts JSON": (
            lambda r: mutate_json(r, seed["node"]),
            lambda d: parse_node_facts(safejson.loads(d, "n"), "n"),
            doc_err,
        ),
        "layer cache entry": (
            lambda r: mutate_bytes(r, seed["cache"]),
            lambda d: index_from_bytes(d, "c"),
            (ValueError, KeyError, TypeError),
        ),
        "symlink resolution": (lambda r: random.Random(r.random()), _fileview, (SymlinkLoop,)),
    }


def run(name: str, make, parse, allowed, inputs: int, seed: int, budget: float) -> dict:
    rng = random.Random(f"{seed}:{name}")
    stats = {"inputs": 0, "documented": 0, "findings": 0, "slowest": 0.0}
    for i in range(inputs):
        state = rng.getstate()
        data = make(rng)
        start = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, budget)
        try:
            parse(data)
        except Hang:
            stats["findings"] += 1
            print(f"HANG {name} input {i} (>{budget}s) seed state {hash(state)}", file=sys.stderr)
        except allowed:
            stats["documented"] += 1
        except Exception as exc:  # noqa: BLE001 - the point of the exercise
            stats["findings"] += 1
            print(f"FINDING {name} input {i}: {exc.__class__.__name__}: {str(exc)[:200]}", file=sys.stderr)
            if stats["findings"] <= 2:
                import traceback

                traceback.print_exc(limit=-4, file=sys.stderr)
            if isinstance(data, bytes) and len(data) < 4096:
                print("  input (base64): " + base64.b64encode(data).decode(), file=sys.stderr)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        stats["slowest"] = max(stats["slowest"], time.perf_counter() - start)
        stats["inputs"] += 1
    return stats


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds one input may take before it is a hang")
    ap.add_argument("--only")
    args = ap.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory() as tmp:
        seed = seeds(tmp)
    print("| parser | inputs | documented errors | findings | slowest input (s) | peak RSS (MiB) |")
    print("| --- | --- | --- | --- | --- | --- |")
    total_findings = 0
    for name, (make, parse, allowed) in parsers(seed).items():
        if args.only and args.only not in name:
            continue
        s = run(name, make, parse, allowed, args.inputs, args.seed, args.budget)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        total_findings += s["findings"]
        print(
            f"| {name} | {s['inputs']} | {s['documented']} | {s['findings']} | {s['slowest']:.2f} | {rss:.0f} |",
            flush=True,
        )
    return 1 if total_findings else 0


if __name__ == "__main__":
    sys.exit(main())
