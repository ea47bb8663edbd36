"""`imgcheck node probe|add|list|show|rm`: collect node facts and keep the node inventory."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from ..errors import ImgcheckError, UsageError
from ..model.node import NodeFacts
from ..model.node_io import dump_node_facts, load_node_facts
from ..model.serde import to_dict
from .output import OutputSpec, write_output

if TYPE_CHECKING:
    from ..node.inventory import Inventory
    from .common_args import Subparsers

NAMES = ("node",)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("node", help="probe a node's RDMA/GPU facts and manage the node inventory")
    nsub = p.add_subparsers(dest="node_command", metavar="NODE_COMMAND")

    probe = nsub.add_parser("probe", help="read this node's facts (files only; nothing is executed)")
    probe.add_argument("--root", default="/", help="host root to read (default /; /host in the probe container)")
    probe.add_argument("--name", help="node name (default: the root's /etc/hostname)")
    probe.add_argument("-o", "--output", metavar="FILE", help="write the JSON facts to FILE (default: stdout)")
    probe.add_argument("--add", action="store_true", help="also store the facts in the inventory ($IMGCHECK_HOME)")
    probe.add_argument(
        "--nfd-dir",
        metavar="DIR",
        help="also write an NFD features.d file into DIR (e.g. /etc/kubernetes/node-feature-discovery/features.d)",
    )
    probe.add_argument(
        "--annotate",
        action="store_true",
        help="also put the full JSON in the Kubernetes node's annotation (needs imgcheck[k8s] and RBAC)",
    )
    probe.add_argument(
        "--every",
        type=float,
        metavar="SECONDS",
        help="probe again every SECONDS, forever (the DaemonSet's mode; errors are reported, not fatal)",
    )
    probe.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    probe.set_defaults(func=run_probe)

    add = nsub.add_parser("add", help="add node facts files (node probe output) to the inventory")
    add.add_argument("files", nargs="+", metavar="FILE")
    add.set_defaults(func=run_add)

    lst = nsub.add_parser("list", help="list the nodes in the inventory")
    lst.add_argument("--json", action="store_true", help="JSON list of the full facts")
    lst.add_argument("--fleet", metavar="SELECTOR", help="only the nodes of a fleet selector")
    lst.set_defaults(func=run_list)

    show = nsub.add_parser("show", help="print one node's facts as JSON")
    show.add_argument("name")
    show.set_defaults(func=run_show)

    check = nsub.add_parser(
        "check",
        help="run the rules that need only node facts (no image), and compare the nodes",
        description="Node-only checks: GPUDirect RDMA paths (peer memory, DMA-BUF, GPU class), "
        "OFED installed but not running, peer-memory modules built against another "
        "ib_core, and differences between the nodes that break a job spanning them. "
        "Same report formats and exit codes as `imgcheck check`.",
    )
    from .check_cmd import FAIL_ON
    from .common_args import add_matrix_arg, add_node_args, add_report_args

    add_node_args(check)
    add_report_args(check, FAIL_ON)
    add_matrix_arg(check)
    check.set_defaults(func=run_check)

    rm = nsub.add_parser("rm", help="remove a node from the inventory")
    rm.add_argument("names", nargs="+", metavar="NAME")
    rm.set_defaults(func=run_rm)

    p.set_defaults(func=lambda args: _missing(p))


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _inventory() -> Inventory:
    from ..node.inventory import Inventory

    return Inventory.default()


def run_probe(args: argparse.Namespace) -> int:
    from ..node.inventory import validate_name

    if args.name is not None:
        validate_name(args.name)
    if args.every is None:
        return _probe_once(args)
    if args.every < 1:
        raise UsageError("--every must be at least 1 second")
    while True:  # like GFD's --sleep-interval: the labels stay fresh while the pod runs
        try:
            _probe_once(args)
        except ImgcheckError as exc:
            print(f"imgcheck: error: {exc}", file=sys.stderr)
        sys.stderr.flush()
        time.sleep(args.every)


def _probe_once(args: argparse.Namespace) -> int:
    from ..node.probe import probe

    facts = probe(args.root, name=args.name)
    if args.nfd_dir:
        from ..node.nfd import write_features

        write_features(facts, args.nfd_dir)
    if args.add:
        _inventory().add(facts)
    if args.annotate:
        from ..node.k8s import annotate_node

        annotate_node(facts)
    target = None if args.output in (None, "-") else args.output
    write_output(OutputSpec("json", target), dump_node_facts(facts))
    if not args.quiet:
        print(summary(facts), file=sys.stderr)
    return 0


def summary(facts: NodeFacts) -> str:
    """Two short lines a person reads after a probe: what RDMA and GPU stack the node has."""
    rdma = facts.rdma
    if rdma.stack == "none":
        rdma_text = "none (no RDMA device and no RDMA kernel module loaded)"
    elif rdma.stack is None:
        rdma_text = f"unknown ({facts.unknown.get('rdma.stack', 'not readable')})"
    else:
        rdma_text = rdma.stack + (f" {rdma.ofed_version}" if rdma.ofed_version else "")
        rdma_text += f", {len(rdma.devices)} device(s)"
    gpu = facts.gpu
    if gpu.driver_version:
        gpu_text = f"{gpu.driver_version} ({gpu.kernel_module or 'module kind unknown'}), {len(gpu.gpus)} GPU(s)"
        gpu_text += ", nvidia_peermem loaded" if gpu.peermem.loaded else ", nvidia_peermem not loaded"
    else:
        gpu_text = facts.unknown.get("gpu.driver_version", "unknown")
        if gpu_text.startswith("no NVIDIA kernel driver loaded"):
            gpu_text = "none loaded"
    return (
        f"node {facts.name}: kernel {facts.kernel.release or 'unknown'}; RDMA stack: {rdma_text}\n"
        f"node {facts.name}: NVIDIA driver: {gpu_text}; {len(facts.unknown)} fact(s) unknown"
    )


def run_check(args: argparse.Namespace) -> int:
    from .. import api
    from ..formats.report_formats import REPORT_FORMATS, render
    from .check_cmd import _suppressions, exit_code
    from .common_args import selected_nodes
    from .output import parse_outputs

    outputs = parse_outputs(args.output, tuple(REPORT_FORMATS))
    suppressions = _suppressions(args)
    report = api.check_nodes(selected_nodes(args), matrix_path=args.matrix, suppressions=suppressions)
    for spec in outputs:  # every report is written before a failing exit code
        color = spec.path is None and sys.stdout.isatty()
        text = render(report, spec.format, color=color, fail_on=args.fail_on, verbose=args.verbose, fleet=args.fleet)
        write_output(spec, text)
    return exit_code(report, args.fail_on)


def run_add(args: argparse.Namespace) -> int:
    inv = _inventory()
    loaded = [load_node_facts(path) for path in args.files]  # all valid before anything is written
    names = [f.name for f in loaded]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"the same node appears in several files: {', '.join(dupes)}")
    for facts in loaded:
        inv.add(facts)
        print(f"added {facts.name}", file=sys.stderr)
    return 0


def run_list(args: argparse.Namespace) -> int:
    inv = _inventory()
    nodes = inv.fleet(args.fleet) if args.fleet else inv.list()
    if args.json:
        sys.stdout.write(json.dumps([to_dict(n) for n in nodes], indent=2) + "\n")
        return 0
    rows = [("NAME", "KERNEL", "RDMA", "OFED", "DRIVER", "MODULE", "PEERMEM", "COLLECTED")]
    for n in nodes:
        peermem = {True: "yes", False: "no", None: "?"}[n.gpu.peermem.loaded]
        rows.append(
            (
                n.name,
                n.kernel.release or "?",
                n.rdma.stack or "?",
                n.rdma.ofed_version or "-",
                n.gpu.driver_version or "-",
                n.gpu.kernel_module or "-",
                peermem,
                n.collected_at or "?",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
    if len(rows) == 1:
        print(f"no nodes in {inv.nodes_dir}", file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    sys.stdout.write(dump_node_facts(_inventory().get(args.name)))
    return 0


def run_rm(args: argparse.Namespace) -> int:
    inv = _inventory()
    for name in args.names:
        inv.remove(name)
        print(f"removed {name}", file=sys.stderr)
    return 0
