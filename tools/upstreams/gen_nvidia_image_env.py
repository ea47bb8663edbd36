"""Generate catalogs/nvidia_image_env.json: the Env every nvidia/cuda tag sets, from NVIDIA's own Dockerfiles.

NVIDIA builds nvidia/cuda (docker.io/nvidia/cuda, nvcr.io/nvidia/cuda) from the templates of
gitlab.com/nvidia/container-images/cuda, rendered per tag under dist/<cuda>/<distro>/<flavour>[/<cudnn>]/Dockerfile
(dist/end-of-life/... for retired releases). This reads every rendered Dockerfile of the newest commit of a mirror,
without building anything, and writes one row per tag:
- env: the variables the Dockerfile's own ENV lines set for amd64 (its base-amd64 stage, then the final stage),
  `${VAR}` references to variables set before it resolved, a reference to the parent image's variable (`${PATH}`)
  kept as written;
- env_arm64: the variables whose arm64 stage value differs (NVIDIA_REQUIRE_CUDA does: no driver branch pins);
- from: the tag of the nvidia/cuda image it is built FROM (runtime FROM base, devel FROM runtime, cudnn FROM devel
  or runtime), whose Env it inherits (the loader composes them); null for a tag FROM a distro image.
Only the variables rules read are kept (NVIDIA_*, CUDA_VERSION, NCCL_VERSION, NV_LIBNCCL_*, NV_CUDA_COMPAT_PACKAGE,
NV_CUDA_CUDART_VERSION, *CUDNN*_VERSION, LD_LIBRARY_PATH, PATH, LIBRARY_PATH). Re-run:
    python tools/upstreams/gen_nvidia_image_env.py /work/.mirror/pranavmishra90+nvidia-container-images-cuda/repo
(a GitHub mirror of the GitLab repository; the row's source names the GitLab commit of the same id).
"""

from __future__ import annotations

import os
import re
import shlex
import sys

from git_read import Mirror, write_generated

OUT = os.path.join(os.path.dirname(__file__), "../../src/imgcheck/data/compat_matrix/catalogs/nvidia_image_env.json")
MIRROR = "pranavmishra90/nvidia-container-images-cuda"
GITLAB = "https://gitlab.com/nvidia/container-images/cuda/-/blob"
FLAVOURS = ("base", "runtime", "devel")
KEEP = re.compile(
    r"NVIDIA_\w+|CUDA_VERSION|NCCL_VERSION|NV_LIBNCCL_\w*PACKAGE_VERSION|NV_CUDA_COMPAT_PACKAGE|NV_CUDA_CUDART_VERSION"
    r"|\w*CUDNN\w*_VERSION|LD_LIBRARY_PATH|PATH|LIBRARY_PATH"
)
REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")
FROM = re.compile(r"^FROM\s+(\S+)(?:\s+(?:as|AS)\s+(\S+))?", re.M)


def _distro(name: str) -> str:
    """Directory name -> the distro part of the tag: ubuntu2204 -> ubuntu22.04 (NVIDIA's tags), others as is."""
    m = re.fullmatch(r"ubuntu(\d\d)(\d\d)", name)
    return f"ubuntu{m.group(1)}.{m.group(2)}" if m else name


def _env_pairs(args: str) -> list[tuple[str, str]]:
    """`ENV K V` (one pair, the rest of the line the value) or `ENV K=V K2="V 2"`."""
    args = args.strip()
    first = args.split(None, 1)
    if "=" not in first[0]:
        value = first[1] if len(first) > 1 else ""
        return [(first[0], shlex.split(value)[0] if value.startswith('"') else value.strip())]
    out = []
    for word in shlex.split(args, posix=True):
        k, _, v = word.partition("=")
        out.append((k, v))
    return out


def _resolve(value: str, env: dict[str, str]) -> str:
    return REF.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), value)


def stages(text: str, arch: str) -> tuple[dict[str, str] | None, str | None]:
    """(the final stage's Env for `arch`, None when the Dockerfile has no stage for it; the image its first stage
    starts FROM)."""
    text = re.sub(r"\\\n", " ", text)
    envs: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    parent: str | None = None
    for line in text.splitlines():
        line = line.strip()
        m = FROM.match(line)
        if m:
            src = m.group(1).replace("${TARGETARCH}", arch)
            if not envs:
                parent = src
            elif src not in envs and src.startswith("base-"):
                return None, parent  # no stage for this architecture
            current = dict(envs.get(src, {}))
            envs[m.group(2) or f"#{len(envs)}"] = current
            continue
        if line.startswith("ENV "):
            for k, v in _env_pairs(line[4:]):
                current[k] = _resolve(v, current)
    return current, parent


def _tag(parts: list[str], parent: str | None) -> str | None:
    """dist path parts (after dist/ and end-of-life/) -> the tag NVIDIA publishes: 12.2.2-cudnn8-runtime-ubuntu22.04."""
    version, rest = parts[0], parts[1:]
    if rest and rest[0] in FLAVOURS:  # the oldest releases: no distro directory (the default Ubuntu)
        if parent is None or ":" not in parent:
            return None
        name, _, tag = parent.partition(":")
        distro = f"{name.rsplit('/', 1)[-1]}{tag}" if name.endswith(("ubuntu", "centos")) else tag.split("-")[-1]
        rest = [distro, *rest]
    if len(rest) < 2 or rest[1] not in FLAVOURS:
        return None
    distro, flavour, cudnn = _distro(rest[0]), rest[1], rest[2:]
    if re.fullmatch(r"ubuntu\d\d", distro) and parent:  # a directory without the minor: the FROM line has it
        name, _, tag = parent.partition(":")
        distro = f"ubuntu{tag}" if name == "ubuntu" else tag.split("-")[-1]
    return "-".join([version, *cudnn, flavour, distro])


def _parent_tag(parent: str | None) -> str | None:
    if parent and parent.startswith("${IMAGE_NAME}:"):
        return parent.split(":", 1)[1]
    return None


def build(mirror_path: str) -> dict:
    mirror = Mirror(mirror_path)
    commit = mirror.git("rev-parse", "HEAD").strip()
    paths = [p for p in mirror.git("ls-tree", "-r", "--name-only", commit, "dist").split() if p.endswith("/Dockerfile")]
    files = mirror.show_many(commit, paths)
    rows = []
    for path in sorted(paths):
        text = files.get(path)
        if text is None:
            continue
        parts = [p for p in path.split("/")[1:-1] if p != "end-of-life"]
        amd, parent = stages(text, "amd64")
        arm, _ = stages(text, "arm64")
        tag = _tag(parts, parent)
        if tag is None or amd is None:
            continue  # not built for amd64 (an arm64-only flavour)
        env = {k: v for k, v in sorted(amd.items()) if KEEP.fullmatch(k)}
        arm_kept = {k: v for k, v in (arm or {}).items() if KEEP.fullmatch(k)}
        differs = {k: arm_kept.get(k) for k in sorted(set(env) | set(arm_kept)) if arm_kept.get(k) != env.get(k)}
        rows.append(
            {
                "image": "nvidia/cuda",
                "tag": tag,
                "from": _parent_tag(parent),
                "env": env,
                "env_arm64": differs if arm is not None and "base-arm64" in text else None,
                "source": f"{GITLAB}/{commit}/{path}",
                "obtained": f"read from NVIDIA's Dockerfile (mirror {MIRROR}@{commit}:{path})",
                "confidence": "reported",
            }
        )
    return {
        "table": "nvidia_image_env",
        "description": (
            "The Env NVIDIA's images set, per tag or release: nvidia/cuda rows generated from NVIDIA's rendered "
            "Dockerfiles by tools/upstreams/gen_nvidia_image_env.py (own ENV lines only; `from` names the nvidia/cuda "
            "tag whose Env the tag inherits; env_arm64: the values the arm64 build sets differently, null: "
            "no arm64 stage in the Dockerfile); NGC framework rows (image nvcr.io/nvidia/<name>) from an image's own "
            "Env as public files recorded it (catalogs/ngc_image_env.json). Derived images inherit these unless "
            "they set the variable again: imgcheck reads them as inferred, never as the image's read Env."
        ),
        "coverage": {"commit": commit, "dockerfiles": len(paths), "rows": len(rows)},
        "rows": rows,
    }


if __name__ == "__main__":
    sys.exit(write_generated(sys.argv, __doc__, build, OUT))
