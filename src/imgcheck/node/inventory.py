"""The embedded node inventory: one JSON file per node under $IMGCHECK_HOME/nodes/.

Layout (plain files so Slurm tasks on a shared filesystem can each write their own node):
  $IMGCHECK_HOME/nodes/<name>.json    node facts (`imgcheck node probe` output)
  $IMGCHECK_HOME/fleets/<fleet>.txt   optional named groups: one node name per line, `#` comments

Fleet selectors (`--fleet`):
  all                       every node in the inventory
  <fleet>                   the names in fleets/<fleet>.txt, else nodes labelled imgcheck.fleet=<fleet>
  key=value[,key2!=v,key3]  nodes whose labels match every term (=, ==, != and bare key = has label)
  k8s:<label-selector>      nodes read from the Kubernetes API (imgcheck.node.k8s), not from files
"""

from __future__ import annotations

import builtins  # `list` inside Inventory is its method: annotations below it say builtins.list
import os
import re

from .. import safejson
from ..errors import BadInputError, UnavailableError, UsageError
from ..fsutil import atomic_write
from ..model.location import Location
from ..model.node import NodeFacts
from ..model.node_io import dump_node_facts, parse_node_facts
from ..user_text import clip

FLEET_LABEL = "imgcheck.fleet"
# Kubernetes node names (DNS subdomains) and Slurm host names fit; no "/" and no leading dot, so a
# name can never leave the directory.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")
_LABEL_TERM = re.compile(r"^(?P<key>[A-Za-z0-9][A-Za-z0-9._/-]*)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[A-Za-z0-9._-]*))?$")


def validate_name(name: str, what: str = "node name") -> str:
    if not isinstance(name, str) or not _NAME.match(name) or ".." in name:
        raise UsageError(
            f"invalid {what} {clip(str(name))!r}: use letters, digits, '.', '_' and '-' (no '/', no leading '.')"
        )
    return name


def default_home() -> str:
    return os.environ.get("IMGCHECK_HOME") or os.path.join(os.path.expanduser("~"), ".imgcheck")


class Inventory:
    def __init__(self, home: str) -> None:
        self.home = home
        self.nodes_dir = os.path.join(home, "nodes")
        self.fleets_dir = os.path.join(home, "fleets")

    @classmethod
    def default(cls) -> Inventory:
        return cls(default_home())

    def _path(self, name: str) -> str:
        return os.path.join(self.nodes_dir, validate_name(name) + ".json")

    def add(self, facts: NodeFacts) -> str:
        """Store (or replace) a node's facts atomically; returns the file written."""
        path = self._path(facts.name)
        try:
            os.makedirs(self.nodes_dir, exist_ok=True)
        except OSError as exc:
            raise UnavailableError(f"cannot write to the inventory {self.nodes_dir}: {exc.strerror}") from None
        atomic_write(path, dump_node_facts(facts))
        return path

    def get(self, name: str) -> NodeFacts:
        path = self._path(name)
        try:
            with open(path, "rb") as fh:
                doc = safejson.load(fh, path)  # depth-bounded (hostile input)
        except FileNotFoundError:
            from ..user_text import did_you_mean

            raise UnavailableError(
                f"node {clip(name)!r} is not in the inventory ({self.nodes_dir}){did_you_mean(name, self.names())}; "
                f"add it with `imgcheck node add FILE` or run `imgcheck node probe` on it"
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadInputError(f"{path}: not valid JSON ({exc})") from None
        except OSError as exc:
            raise UnavailableError(f"cannot read {path}: {exc.strerror}") from None
        facts = parse_node_facts(doc, path, Location.described(f"inventory file {path}"))
        if facts.name != name:
            raise BadInputError(f"{path}: holds facts of node {facts.name!r}, not {name!r}")
        return facts

    def names(self) -> list[str]:
        try:
            entries = os.listdir(self.nodes_dir)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise UnavailableError(f"cannot read the inventory {self.nodes_dir}: {exc.strerror}") from None
        return sorted(e[:-5] for e in entries if e.endswith(".json") and not e.startswith(".") and _NAME.match(e[:-5]))

    def list(self) -> list[NodeFacts]:
        return [self.get(name) for name in self.names()]

    def remove(self, name: str) -> None:
        try:
            os.unlink(self._path(name))
        except FileNotFoundError:
            raise UnavailableError(f"node {name!r} is not in the inventory ({self.nodes_dir})") from None
        except OSError as exc:
            raise UnavailableError(f"cannot remove node {name!r}: {exc.strerror}") from None

    # -- fleets ------------------------------------------------------------------------------------
    def fleet(self, selector: str) -> builtins.list[NodeFacts]:
        """Nodes selected by `selector` (see the module docstring). Never empty: no match is an error."""
        selector = (selector or "").strip()
        if not selector:
            raise UsageError("empty fleet selector")
        if selector.startswith("k8s:"):
            from .k8s import read_nodes  # the kubernetes client is optional and heavy

            nodes = read_nodes(selector[4:])
            where = "in the Kubernetes cluster"
        elif selector == "all":
            nodes = self.list()
            where = f"in the inventory ({self.nodes_dir})"
        elif "=" in selector or "," in selector:
            terms = parse_label_selector(selector)
            nodes = [n for n in self.list() if matches(n.labels, terms)]
            where = "in the inventory"
        else:
            nodes = self._named_fleet(validate_name(selector, "fleet name"))
            where = f"in {self.fleets_dir}/{selector}.txt or labelled {FLEET_LABEL}={selector}"
            if not nodes:
                from ..user_text import did_you_mean

                where += did_you_mean(selector, self.fleet_names())
        if not nodes:
            raise UnavailableError(f"fleet {clip(selector)!r} matched no nodes {where}")
        return nodes

    def fleet_names(self) -> builtins.list[str]:
        """The named fleets: fleets/<name>.txt files and the values of the imgcheck.fleet node label."""
        try:
            files = [e[:-4] for e in os.listdir(self.fleets_dir) if e.endswith(".txt") and not e.startswith(".")]
        except OSError:
            files = []
        labelled = []
        for name in self.names():
            try:
                labelled.append(self.get(name).labels.get(FLEET_LABEL))
            except (BadInputError, UnavailableError):
                continue  # a broken node file is reported where it is used, not while suggesting a name
        return sorted({n for n in files + labelled if n})

    def _named_fleet(self, fleet: str) -> builtins.list[NodeFacts]:
        path = os.path.join(self.fleets_dir, fleet + ".txt")
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return [n for n in self.list() if n.labels.get(FLEET_LABEL) == fleet]
        except (OSError, UnicodeDecodeError) as exc:
            raise UnavailableError(f"cannot read fleet file {path}: {exc}") from None
        names = [line.split("#", 1)[0].strip() for line in lines]
        return [self.get(name) for name in dict.fromkeys(n for n in names if n)]


def parse_label_selector(selector: str) -> list[tuple[str, str, str | None]]:
    """`a=b,c!=d,e` -> [(a, '=', b), (c, '!=', d), (e, 'exists', None)] (Kubernetes equality syntax)."""
    terms: list[tuple[str, str, str | None]] = []
    for raw in selector.split(","):
        raw = raw.strip()
        match = _LABEL_TERM.match(raw)
        if not raw or not match:
            raise UsageError(f"invalid label selector term {raw!r} in {selector!r} (use key=value[,key2!=value2])")
        op = match.group("op")
        if op is None:
            terms.append((match.group("key"), "exists", None))
        else:
            terms.append((match.group("key"), "!=" if op == "!=" else "=", match.group("value")))
    return terms


def matches(labels: dict[str, str], terms: list[tuple[str, str, str | None]]) -> bool:
    for key, op, value in terms:
        if op == "exists" and key not in labels:
            return False
        if op == "=" and labels.get(key) != value:
            return False
        if op == "!=" and labels.get(key) == value:
            return False
    return True
