"""NCCL's XML topology and graph files (NCCL_TOPO_FILE, NCCL_GRAPH_FILE), read the way NCCL's own loader reads them.

NCCL does not use an XML library: src/graph/xml.cc has a small reader of its own, and what it accepts is narrower
than XML (checked at NVIDIA/nccl v2.6.4-1 .. v2.30.7-1, where the reader is the same apart from comments and the
node limits):
- between elements only ' ', '\\n' and '\\r' may appear; anything else is "XML Parse error : expecting '<', got 'c'"
  (a tab, text content, a byte-order mark);
- attributes are separated by single spaces on the element's line; a newline or tab before an attribute or before
  '>' is "XML Parse : expected >, got 'c'"; so is an XML declaration (`<?xml ... ?>`);
- a value starts with " or ' and runs to the next "; an unquoted value is "XML Parse : Expected (double) quote.";
- `<!-- -->` comments are skipped; every opened element needs its own closing tag ("XML Mismatch : a / b",
  "XML Parse : unterminated a"); names are at most 254 bytes ("Error : name ... too long");
- a topology's root <system> needs version="1" (xmlGetAttrInt: "Attribute version of node system not found", or
  "XML Topology has wrong version"); a graph's <graphs> the same ("XML Graph has wrong version").
The node limits (MAX_NODES 1024 and MAX_SUBS 32 to 2.20; NCCL_TOPO_XML_MAX_NODES 256 and MAX_SUBS 128 from 2.21, more
for graphs in 2.30) depend on the release and are not checked: files as shipped stay far below them. A file that fails any of these makes NCCL's init fail (ncclInternalError / ncclInvalidUsage); the first failure is
recorded with the message NCCL prints. Nothing here runs or loads anything from the image.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..model.image import NcclFileRef, NcclXmlFile
from ..view.fileview import FileView
from ..view.wants import ANY_DIRS, Want

# the settings whose value is a file NCCL reads (NCCL_TOPO_FILE, NCCL_GRAPH_FILE: src/graph/topo.cc, search.cc)
FILE_SETTINGS = ("NCCL_TOPO_FILE", "NCCL_GRAPH_FILE")
# where NCCL looks for a topology when NCCL_TOPO_FILE is unset (src/graph/topo.cc ncclTopoGetSystem)
DEFAULT_TOPO_PATH = "var/run/nvidia-topologyd/virtualTopology.xml"
USER_CONF = "root/.nccl.conf"  # $HOME/.nccl.conf of root (src/misc/param.cc initEnvFunc), read before /etc/nccl.conf
_MAX_XML = 1024 * 1024

WANTS = (
    # topology/graph XMLs as images ship them (/opt/microsoft/ndv4-topo.xml, .../aws-ofi-nccl/xml/p5.48xl-topo.xml)
    Want(ANY_DIRS + r"[^/]*(?:[Tt]opo|TOPO|[Gg]raph|GRAPH)[^/]*\.xml", content=True, max_bytes=_MAX_XML),
    Want(r"root/\.nccl\.conf", content=True, max_bytes=256 * 1024),
)

MAX_STR_LEN = 255  # src/graph/xml.h (256 in 2.6-2.11: one byte more before "too long")
XML_VERSION = 1  # NCCL_TOPO_XML_VERSION and NCCL_GRAPH_XML_VERSION, 1 in every release
# the elements each loader follows (xml.cc ncclTopoXmlLoad* and ncclTopoXmlGraphLoad* handlers); others are skipped
_TOPO_CHILDREN = {
    None: ("system",),
    "system": ("cpu",),
    "cpu": ("pci", "nic"),
    "pci": ("pci", "gpu", "nic", "pcilink"),
    "gpu": ("nvlink", "c2c"),
    "nic": ("net",),
}
_GRAPH_CHILDREN = {None: ("graphs",), "graphs": ("graph",), "graph": ("channel",), "channel": ("net", "gpu")}
_WS = " \n\r"


class XmlError(Exception):
    """The message NCCL's reader prints (WARN) for the first thing it rejects."""


@dataclass
class _Node:
    name: str
    attrs: dict[str, str]
    parent: _Node | None
    subs: list[_Node] = field(default_factory=list)
    closed: bool = False


class _Reader:
    """NCCL's xmlGetNode/xmlLoadSub, character by character, over bytes."""

    def __init__(self, data: bytes, children: dict[str | None, tuple[str, ...]]):
        self.data, self.pos, self.children = data, 0, children
        self.roots: list[_Node] = []

    def char(self) -> str:
        if self.pos >= len(self.data):
            raise XmlError("XML Parse : Unexpected EOF")
        c = chr(self.data[self.pos])
        self.pos += 1
        return c

    def value(self) -> tuple[str, str]:
        c = self.char()
        if c not in "\"'":
            raise XmlError("XML Parse : Expected (double) quote.")
        out = []
        while True:
            c = self.char()
            if c == '"':
                break
            out.append(c)
        return "".join(out), self.char()

    def token(self, want_value: bool) -> tuple[str, str | None, str]:
        name: list[str] = []
        while True:
            c = self.char()
            if c == "=":
                if not want_value:
                    raise XmlError(f"XML Parse : Unexpected value with name {''.join(name)}")
                value, last = self.value()
                return "".join(name), value, last
            name.append(c)
            if len(name) == MAX_STR_LEN:
                raise XmlError(f"Error : name {''.join(name[:-1])} too long (max {MAX_STR_LEN})")
            if c in " >/\n\r":
                return "".join(name[:-1]), None, c

    def skip_comment(self, start: str, nxt: str) -> None:
        end = "..."
        for ch in start + nxt:
            end = end[1:] + ch
        while end != "-->":
            if self.pos >= len(self.data):
                raise XmlError("XML Parse error : unterminated comment")
            end = end[1:] + chr(self.data[self.pos])
            self.pos += 1

    def node(self) -> tuple[str, str, dict[str, str]] | None:
        """(kind, name, attributes): kind "open" | "single" | "close"; None at the end of the file."""
        c = " "
        while c in _WS:
            if self.pos >= len(self.data):
                return None
            c = chr(self.data[self.pos])
            self.pos += 1
        if c != "<":
            raise XmlError(f"XML Parse error : expecting '<', got '{c}'")
        name, _, c = self.token(False)
        if name.startswith("!--"):
            self.skip_comment(name[3:], c)
            return self.node()
        if name == "" and c == "/":
            name, _, c = self.token(False)
            if c != ">":
                raise XmlError(f"XML Parse error : unexpected trailing {c} in closing tag {name}")
            return "close", name, {}
        attrs: dict[str, str] = {}
        while c == " ":
            key, value, c = self.token(True)
            attrs.setdefault(key, value or "")
        kind = "open"
        if c == "/":
            kind = "single"
            _, _, c = self.token(False)
        if c != ">":
            raise XmlError(f"XML Parse : expected >, got '{c}'")
        return kind, name, attrs

    def load(self, head: _Node | None, skipped: bool = False) -> None:
        """xmlLoadSub. Inside an element no handler follows, NCCL reads each child into the very slot that holds the
        element, so any closing tag closes it and its name is gone: no mismatch is seen there."""
        while True:
            got = self.node()
            if got is None:
                if head is not None:
                    raise XmlError(f"XML Parse : unterminated {'' if skipped else head.name}")
                return
            kind, name, attrs = got
            if head is not None and kind == "close":
                if not skipped and name != head.name:
                    raise XmlError(f"XML Mismatch : {head.name} / {name}")
                return
            if not skipped and name in self.children.get(head.name if head else None, ()):
                node = _Node(name, attrs, head)
                (head.subs if head is not None else self.roots).append(node)
                if kind == "open":
                    self.load(node)
            elif kind == "open":
                self.load(_Node(name, attrs, head), skipped=True)  # read to a closing tag, not followed


def _walk(nodes: list[_Node]) -> Iterator[_Node]:
    for n in nodes:
        yield n
        yield from _walk(n.subs)


def _int(text: str | None) -> int | None:
    try:
        return int(text, 0) if text is not None else None
    except ValueError:
        return None


def _root_of(data: bytes) -> str | None:
    """Which of NCCL's two formats a file holds, from the first of <system or <graphs in its first 4 KiB."""
    head = data[:4096]
    found = {name: head.find(b"<" + name.encode()) for name in ("system", "graphs")}
    seen = {k: v for k, v in found.items() if v >= 0}
    return min(seen, key=lambda k: seen[k]) if seen else None


def read_xml(data: bytes, path: str, layer: str | None, graph: bool | None = None) -> NcclXmlFile:
    """One file read as NCCL's topology loader (graph=False), graph loader (True), or by its root (None)."""
    if graph is None:
        graph = _root_of(data) == "graphs"
    kind = "graph" if graph else "topology"
    reader = _Reader(data, _GRAPH_CHILDREN if graph else _TOPO_CHILDREN)
    try:
        reader.load(None)
        root_name = "graphs" if graph else "system"
        root = next((r for r in reader.roots if r.name == root_name), None)
        if root is None:
            # nothing NCCL's loader follows: a topology adds nothing (NCCL detects the node itself), a graph loads none
            return NcclXmlFile(path=path, layer=layer, kind=kind, note=f"no <{root_name}> element: NCCL loads nothing")
        if "version" not in root.attrs:
            raise XmlError(f"Attribute version of node {root_name} not found")
        version = _int(root.attrs["version"])
        if version != XML_VERSION:
            what = "Graph" if graph else "Topology"
            raise XmlError(f"XML {what} has wrong version {root.attrs['version']}, {XML_VERSION} needed")
    except XmlError as exc:
        return NcclXmlFile(path=path, layer=layer, kind=kind, error=str(exc))
    nodes = list(_walk([root]))
    if graph:
        return NcclXmlFile(
            path=path,
            layer=layer,
            kind=kind,
            version=version,
            gpu_devs=tuple(
                sorted({d for n in nodes if n.name == "gpu" if (d := _int(n.attrs.get("dev"))) is not None})
            ),
            net_devs=tuple(
                sorted({d for n in nodes if n.name == "net" if (d := _int(n.attrs.get("dev"))) is not None})
            ),
        )
    cpus = [n for n in nodes if n.name == "cpu"]
    # numaid is read for every CPU (ncclTopoAddCpu, xmlGetAttrInt): never filled in by detection
    for cpu in cpus:
        if "numaid" not in cpu.attrs:
            return NcclXmlFile(path=path, layer=layer, kind=kind, version=version,
                               error="Attribute numaid of node cpu not found")  # fmt: skip
    # arch and vendor are filled in only for a CPU NCCL's own detection reaches (xml.cc ncclTopoGetXmlFromCpu)
    unfilled = sorted({a for cpu in cpus for a in ("arch", "vendor") if a not in cpu.attrs})
    busids = [
        n.parent.attrs["busid"].lower()
        for n in nodes
        if n.name == "gpu" and n.parent is not None and "busid" in n.parent.attrs
    ]
    nets = [n.attrs["name"] for n in nodes if n.name == "net" and "name" in n.attrs]
    return NcclXmlFile(
        path=path,
        layer=layer,
        kind=kind,
        version=version,
        gpu_busids=tuple(busids),
        net_names=tuple(nets),
        cpu_unfilled=tuple(unfilled),
    )


def parse_conf(text: str) -> dict[str, str]:
    from .env import parse_nccl_conf

    return parse_nccl_conf(text)


def extract(view: FileView, image_env: dict[str, str], nccl_conf: dict[str, str]) -> tuple[
    tuple[NcclXmlFile, ...], tuple[NcclFileRef, ...]
]:  # fmt: skip
    """The XML files the image ships that NCCL could load, and each file an NCCL setting of the image names."""
    files: dict[str, NcclXmlFile] = {}
    user_conf_data = view.read(USER_CONF)
    user_conf = parse_conf(user_conf_data.decode("utf-8", "replace")) if user_conf_data else {}
    refs: list[NcclFileRef] = []
    # NCCL reads ~/.nccl.conf, then /etc/nccl.conf, each with setenv(overwrite=0): Env wins, then ~/.nccl.conf
    for origin, values in (("env", image_env), ("/" + USER_CONF, user_conf), ("/etc/nccl.conf", nccl_conf)):
        for name in FILE_SETTINGS:
            value = (values.get(name) or "").strip()
            if not value:
                continue
            rel = posixpath.normpath(value).lstrip("/") if value.startswith("/") else None
            exists = view.exists(rel) if rel else None  # a relative path depends on the working directory
            refs.append(NcclFileRef(name=name, value=value, origin=origin, exists=exists))
            ref = view.file(rel) if rel and exists else None
            if rel is None or ref is None or rel in files:
                continue
            if ref.data is None or ref.truncated:  # a name no want keeps, or larger than the want keeps
                files[rel] = NcclXmlFile(path="/" + rel, layer=ref.layer, kind=None, note="not read (not kept)")
            else:
                files[rel] = read_xml(ref.data, "/" + rel, ref.layer, graph=name == "NCCL_GRAPH_FILE")
    for rel in view.paths(WANTS[0].pattern) + ([DEFAULT_TOPO_PATH] if view.exists(DEFAULT_TOPO_PATH) else []):
        if rel in files:
            continue
        ref = view.file(rel)
        if ref is not None and ref.data is not None and not ref.truncated and _root_of(ref.data) is not None:
            files[rel] = read_xml(ref.data, "/" + rel, ref.layer)
    return tuple(files[k] for k in sorted(files)), tuple(refs)
