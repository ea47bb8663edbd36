"""Generate compat_matrix/catalogs/nvidia_gpu_chips.json: every NVIDIA GPU PCI device id -> chip -> architecture,
and the first release of the open kernel modules that lists it as a compatible GPU.

    # the `fetch` tool gives the bare mirrors; then
    python tools/upstreams/gen_nvidia_gpu_chips.py /work/.mirror/pciutils+pciids/repo \\
        /work/.mirror/NVIDIA+open-gpu-kernel-modules/repo

Sources, read with git plumbing only:
- pciutils/pciids@<commit>:pci.ids, vendor 10de: each device line whose name starts with a chip code
  ("2b85  GB202 [GeForce RTX 5090]", "1db5  GV100GL [Tesla V100 SXM2 32GB]"). Lines without a chip code
  (audio functions, bridges, NVSwitch, very old parts) are counted and left out.
- NVIDIA/open-gpu-kernel-modules@<newest tag>:src/common/inc/swref/published/<architecture>/<chip>/: NVIDIA's own
  filing of each chip under its architecture (turing/tu102, blackwell/gb202, ...). A chip code's two-letter prefix
  takes the architecture of the directories with that prefix. Prefixes the tree does not file (GF Fermi and
  older) get architecture null: the catalog never guesses one.
- README.md of every release tag of NVIDIA/open-gpu-kernel-modules, section "Compatible GPUs": the PCI device ids the
  open modules support in that release (the first id column). `open_readme_first_release` is the first tag listing
  the id; null when no release lists it (a GPU before Turing, or a part the README never named). It is no support
  floor: the README left out some data-center parts for years (the T4 until 575.51.02).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from git_read import Mirror, version_key  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "src/imgcheck/data/compat_matrix/catalogs/nvidia_gpu_chips.json"
OGKM = "NVIDIA/open-gpu-kernel-modules"
PCIIDS = "pciutils/pciids"
SWREF = "src/common/inc/swref/published"
DEVICE = re.compile(r"^\t([0-9a-f]{4})\s+(.*)$")
CHIP = re.compile(r"^((?:G[A-Z]|TU|AD|NV)\d{2,3}[A-Z]*)\b\s*(?:\[(.*)\])?")
# pci.ids marks a board variant after the chip code: GL (professional), M (mobile), G, GLM; GB20B/GA10B are chips
VARIANT = re.compile(r"(?<=\d)(GLM|GL|M|G)$")
README_ROW = re.compile(r"^\|\s*(.+?)\s*\|\s*([0-9A-F]{4})(?:\s+[0-9A-F]{4}\s+[0-9A-F]{4})?\s*\|\s*$")


def nvidia_devices(pci_ids: str) -> tuple[list[tuple[str, str]], int]:
    """(device id, rest of the line) of vendor 10de, and how many lines that section has in all."""
    rows: list[tuple[str, str]] = []
    inside = False
    for line in pci_ids.splitlines():
        if re.match(r"^[0-9a-f]{4}\s", line):
            inside = line.startswith("10de ")
            continue
        if inside:
            m = DEVICE.match(line)
            if m:
                rows.append((m.group(1), m.group(2).strip()))
    return rows, len(rows)


def chip_architectures(ogkm: Mirror, tag: str) -> dict[str, str]:
    """Two-letter chip prefix -> architecture, from the swref/published directory layout at `tag`."""
    out: dict[str, str] = {}
    for arch in ogkm.git("ls-tree", "--name-only", f"{tag}:{SWREF}").split():
        try:
            chips = ogkm.git("ls-tree", "-d", "--name-only", f"{tag}:{SWREF}/{arch}").split()
        except Exception:  # a file, not a directory
            continue
        for chip in chips:
            if re.fullmatch(r"[a-z]{2}\d{2,3}[a-z]?", chip):
                out.setdefault(chip[:2], arch)
    return out


def open_first_releases(ogkm: Mirror) -> tuple[dict[str, tuple[str, str]], dict[str, set[str]], list[str]]:
    """device id -> (first tag listing it in the README's compatible GPUs, product name there), device id -> every
    product name the READMEs give it (the driver's own marketing names), and the tags read."""
    tags = sorted(ogkm.tags(r"\d+\.\d+(?:\.\d+)?"), key=version_key)
    first: dict[str, tuple[str, str]] = {}
    names: dict[str, set[str]] = {}
    for tag in tags:
        text = ogkm.show(tag, "README.md") or ""
        for line in text.splitlines():
            m = README_ROW.match(line)
            if not m:
                continue
            key = m.group(2).lower()
            names.setdefault(key, set()).add(m.group(1))
            if key not in first:
                first[key] = (tag, m.group(1))
    return first, names, tags


def build(pciids_dir: str, ogkm_dir: str) -> dict[str, Any]:
    pci = Mirror(pciids_dir)
    commit = pci.git("rev-parse", "HEAD").strip()
    devices, total = nvidia_devices(pci.git("show", "HEAD:pci.ids"))
    ogkm = Mirror(ogkm_dir)
    first, readme_names, tags = open_first_releases(ogkm)
    newest = tags[-1]
    arch_of = chip_architectures(ogkm, newest)
    rows = []
    no_chip = no_arch = 0
    for device_id, rest in devices:
        m = CHIP.match(rest)
        if not m:
            no_chip += 1
            continue
        chip = VARIANT.sub("", m.group(1))
        arch = arch_of.get(chip[:2].lower())
        if arch is None:
            no_arch += 1  # Fermi and older: no driver branch after 390 drives them; left out, counted
            continue
        listed = first.get(device_id)
        sources = [f"{PCIIDS}@{commit[:12]}:pci.ids", f"{OGKM}@{newest}:{SWREF}/{arch}"]
        row: dict[str, Any] = {
            "device_id": device_id,
            "chip": chip,
            "architecture": arch,
            "names": sorted(
                {n.strip() for n in (m.group(2) or "").split(" / ") if n.strip()} | readme_names.get(device_id, set())
            ),
            "open_readme_first_release": listed[0] if listed else None,
            "source": sources,
            "confidence": "verified",
        }
        if listed is None:
            row["note"] = "open_readme_first_release null: no open-gpu-kernel-modules README lists this device id"
        rows.append(row)
    rows.sort(key=lambda r: r["device_id"])
    unlisted_turing_plus = sum(
        1
        for r in rows
        if r["open_readme_first_release"] is None and r["architecture"] not in ("kepler", "maxwell", "pascal", "volta")
    )
    coverage = {
        "pci_ids_commit": commit,
        "nvidia_device_lines": total,
        "rows": len(rows),
        "without_chip_code": no_chip,
        "left_out_no_architecture": no_arch,
        "open_module_releases_read": len(tags),
        "open_readme_device_ids": len(first),
        "listed_by_open_readme": sum(1 for r in rows if r["open_readme_first_release"]),
        "turing_or_later_not_in_any_open_readme": unlisted_turing_plus,
    }
    return {
        "table": "nvidia_gpu_chips",
        "description": (
            "Every NVIDIA GPU PCI device id with a chip code in pci.ids: its chip, its product names (pci.ids' and the open module READMEs', which are the driver's own), the architecture NVIDIA's open "
            "kernel module source files that chip under, and the first open-gpu-kernel-modules release whose README "
            "lists it as a compatible GPU (not a support floor: the README omitted some data-center parts for years, the T4 until "
            "575.51.02; open-module support follows the architecture, see nvidia_kmod_support). Chips the source files "
            "under no architecture (Fermi and older) are left out. Generated by tools/upstreams/gen_nvidia_gpu_chips.py; edit the generator, "
            "not this file."
        ),
        "coverage": coverage,
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    data = build(argv[1], argv[2])
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(data["coverage"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
