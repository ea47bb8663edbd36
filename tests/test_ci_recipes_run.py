"""The CI recipes in docs/ci/ run: their script lines, read with PyYAML, executed in a temp workspace.

GitHub Actions: every `run:` step in order (the `uses:` actions are GitHub's), honouring `if:
!cancelled()` after a failing step. GitLab CI: build-image's script, then the imgcheck and
imgcheck-manifests jobs' before_script and script, in one shell each as the runner does. Both check the
repository's workload manifests (k8s/) with `imgcheck job check` too. The real things underneath: the
Docker daemon builds the image (FROM scratch + Debian bookworm's real rootfs with an Env trap), the
recipes' own `pip install "$IMGCHECK_INSTALL"` installs this tree into a fresh venv (offline, from a
wheelhouse), GitLab's image goes to Debian's docker-registry behind htpasswd and is read back with the
credentials the recipe writes. Only what points at GitHub or GitLab is replaced: `${{ github.* }}`,
the CI_* variables, and IMGCHECK_INSTALL (a pinned git URL there, this tree here).
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import venv

import junitparser
import pytest
import yaml
from registryfixture import PASSWORD, USER, basic_registry  # noqa: F401
from wheelhouse import REPO, copy_source, dependency_wheels

pytestmark = [pytest.mark.docker, pytest.mark.registry]
CI_DIR = os.path.join(REPO, "docs", "ci")
NODES = os.path.join(REPO, "tests", "fixtures", "engine_nodes")
FLEET = ("inbox-6.8-open-570", "mofed-23.10-open-550-peermem")
TRAP = "ENV-NCCL-IB-RETRY-CNT"
# The repository's manifests: a Kubeflow PyTorchJob as its examples write one (8 ranks per node, no /dev/shm
# volume) and a Deployment, both naming the released tag, and a ConfigMap the recipes' workload filter skips.
TRAINER_JOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: trainer
spec:
  nprocPerNode: "8"
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/trainer:latest
              resources:
                limits:
                  nvidia.com/gpu: 8
"""
SERVE_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer-eval
spec:
  replicas: 1
  selector:
    matchLabels: {app: trainer-eval}
  template:
    metadata:
      labels: {app: trainer-eval}
    spec:
      containers:
        - name: eval
          image: registry.example.com/trainer:latest
          resources:
            limits:
              nvidia.com/gpu: 1
"""
CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trainer-config\ndata:\n  epochs: "3"\n'


def _load(name: str) -> dict:
    with open(os.path.join(CI_DIR, name), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def docker_cli():
    docker = pytest.importorskip("docker")
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI on PATH")
    try:
        docker.from_env().ping()
    except Exception as exc:  # no socket, daemon down
        pytest.skip(f"no Docker daemon reachable ({exc.__class__.__name__}: {exc})")


@pytest.fixture()
def workspace(tmp_path, rootfs):
    """A repository checkout as CI sees it: a Dockerfile and the fleet's node facts under .imgcheck/."""
    ws = tmp_path / "repo"
    ws.mkdir()
    try:
        os.link(rootfs("bookworm"), ws / "rootfs.tar")
    except OSError:
        shutil.copy(rootfs("bookworm"), ws / "rootfs.tar")
    # NCCL as the nvidia-nccl-cu12 wheel installs it (its dist-info on a standard site directory), so the launch
    # rules, which judge NCCL's use of the launch, apply to the manifests
    dist = ws / "site" / "nvidia_nccl_cu12-2.21.5.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: 2.21.5\n")
    (ws / "Dockerfile").write_text(
        "FROM scratch\nADD rootfs.tar /\nCOPY site/ /usr/local/lib/python3.11/dist-packages/\n"
        "ENV NCCL_IB_RETRY_CNT=16\n"
    )
    (ws / ".imgcheck" / "nodes").mkdir(parents=True)
    (ws / ".imgcheck" / "fleets").mkdir()
    names = []
    for fixture in FLEET:
        doc = json.load(open(os.path.join(NODES, fixture + ".json"), encoding="utf-8"))
        names.append(doc["name"])
        (ws / ".imgcheck" / "nodes" / f"{doc['name']}.json").write_text(json.dumps(doc))
    (ws / ".imgcheck" / "fleets" / "prod.txt").write_text("\n".join(names) + "\n")
    (ws / "k8s").mkdir()
    (ws / "k8s" / "trainer.yaml").write_text(TRAINER_JOB)
    (ws / "k8s" / "configmap.yaml").write_text(CONFIGMAP)
    (ws / "k8s" / "eval.yaml").write_text(SERVE_DEPLOYMENT)
    return ws


@pytest.fixture()
def runner_env(tmp_path):
    """A fresh Python (as setup-python or python:3.12 gives), HOME of its own, pip offline from a wheelhouse."""
    wheels = dependency_wheels()
    py = tmp_path / "python"
    venv.EnvBuilder(with_pip=True).create(py)
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": f"{py / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": wheels,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CONSTRAINT": "",
        "PIP_EXTRA_INDEX_URL": "",
        "IMGCHECK_INSTALL": copy_source(str(tmp_path / "imgcheck-src")),
        **{k: os.environ[k] for k in ("DOCKER_HOST", "LANG") if k in os.environ},
    }


def _bash(script: str, cwd, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _github_expr(text: str, values: dict) -> str:
    out = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: values[m.group(1)], text)
    assert "${{" not in out, f"an expression this test does not know: {out}"
    return out


def _hash_files_present(condition: str, cwd) -> bool:
    return all(
        glob.glob(os.path.join(cwd, f), recursive=True) for f in re.findall(r"hashFiles\('([^']+)'\)", condition)
    )


def _check_manifests(rc: int, log: str) -> None:
    """The job-spec step: both workload manifests checked with the built image (its Env trap in each, the
    PyTorchJob's /dev/shm too small for 8 ranks: conditional on the node's GPUs using NCCL's SHM transport, which the
    manifest does not say), the ConfigMap skipped, exit 1 (findings)."""
    assert rc == 1, log
    headers = [line for line in log.splitlines() if line.startswith("== imgcheck job check ")]
    assert headers == ["== imgcheck job check k8s/eval.yaml", "== imgcheck job check k8s/trainer.yaml"], log
    evaluation, training = log.split(headers[0], 1)[1].split(headers[1], 1)
    assert f"ERROR {TRAP}" in evaluation and "JOB-SHM-TOO-SMALL" not in evaluation, evaluation
    assert "ERROR (conditional) JOB-SHM-TOO-SMALL" in training and f"ERROR {TRAP}" in training, training


def _check_reports(ws, rc: int, log: str) -> dict:
    assert rc == 1, log  # the Env trap is an error: the gate fails the job ...
    report = json.load(open(ws / "imgcheck.json", encoding="utf-8"))  # ... after every report is written
    assert TRAP in [f["id"] for f in report["findings"]] and report["verdict"] == "fail"
    sarif = json.load(open(ws / "imgcheck.sarif", encoding="utf-8"))
    assert TRAP in [r["ruleId"] for r in sarif["runs"][0]["results"]]
    failing = {
        case.name
        for suite in junitparser.JUnitXml.fromfile(str(ws / "imgcheck.xml"))
        for case in suite
        if any(isinstance(r, junitparser.Failure) for r in case.result)
    }
    assert failing
    assert f"ERROR {TRAP}" in log  # `-o table` goes to the job log
    return sarif


def test_github_actions_recipe_runs(docker_cli, workspace, runner_env):
    wf = _load("github-actions.yml")
    summary = workspace / "step-summary.md"
    # a sha of its own: the tag trainer:<sha> lives in a Docker daemon other test runs may share
    values = {"github.sha": secrets.token_hex(10), "github.workspace": str(workspace)}
    env = {**runner_env, "GITHUB_STEP_SUMMARY": str(summary), "CI": "true"}
    env.update({k: _github_expr(str(v), values) for k, v in wf["env"].items() if k != "IMGCHECK_INSTALL"})
    ran, failed, log, step_logs = [], False, "", {}
    try:
        for step in wf["jobs"]["imgcheck"]["steps"]:
            if "run" not in step:
                continue  # actions/checkout, setup-python, upload actions: GitHub's own code
            condition = step.get("if", "")
            if failed and "!cancelled()" not in condition and "always()" not in condition:
                continue
            if not _hash_files_present(condition, workspace):
                continue
            result = _bash(_github_expr(step["run"], values), workspace, env)
            ran.append((step.get("name"), result.returncode))
            step_logs[step.get("name")] = result.stdout + result.stderr
            log += result.stdout + result.stderr
            failed = failed or result.returncode != 0
        names = [name for name, _ in ran]
        assert names == [
            "Build the image",
            "Install imgcheck",
            "Check the image against the prod fleet",
            "Check the job specs",
            "Job summary",
        ], ran
        assert [rc for _, rc in ran[:2]] == [0, 0], log
        sarif = _check_reports(workspace, ran[2][1], log)
        location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert location == "trainer"  # the image name: the next commit's tag keeps the same alerts
        _check_manifests(ran[3][1], step_logs["Check the job specs"])
        assert ran[4][1] == 0 and summary.read_text().startswith(open(workspace / "imgcheck.md").read()[:40])
    finally:
        subprocess.run(["docker", "rmi", "-f", env["IMAGE"]], capture_output=True)


def _gitlab_script(ci: dict, job: str, predefined: dict) -> str:
    """The job's shell: predefined and declared variables (GitLab expands $VARS in them), then its lines."""
    lines = [f"export {k}={json.dumps(v)}" for k, v in predefined.items()]
    declared = {**ci.get("variables", {}), **ci[job].get("variables", {})}
    lines += [f'export {k}="{v}"' for k, v in declared.items() if k != "IMGCHECK_INSTALL"]
    return "\n".join(lines + ci[job].get("before_script", []) + ci[job]["script"])


def test_gitlab_recipe_runs(docker_cli, workspace, runner_env, basic_registry):  # noqa: F811
    ci = _load("gitlab-ci.yml")
    predefined = {
        "CI_REGISTRY": basic_registry.host,
        "CI_REGISTRY_USER": USER,
        "CI_REGISTRY_PASSWORD": PASSWORD,
        "CI_REGISTRY_IMAGE": f"{basic_registry.host}/group/trainer",
        "CI_COMMIT_SHA": "89abcdef0123",
        "CI_PROJECT_DIR": str(workspace),
    }
    build = _bash(_gitlab_script(ci, "build-image", predefined), workspace, runner_env)
    image = f"{predefined['CI_REGISTRY_IMAGE']}:{predefined['CI_COMMIT_SHA']}"
    try:
        assert build.returncode == 0, build.stdout + build.stderr
        # the imgcheck job runs in another container: nothing of the build job's HOME is left
        shutil.rmtree(os.path.join(runner_env["HOME"], ".docker"), ignore_errors=True)
        job = _bash(_gitlab_script(ci, "imgcheck", predefined), workspace, runner_env)
        log = job.stdout + job.stderr
        _check_reports(workspace, job.returncode, log)
        for path in ci["imgcheck"]["artifacts"]["paths"]:
            assert (workspace / path).is_file(), path  # `when: always` keeps them all
        assert glob.glob(str(workspace / ci["imgcheck-manifests"]["rules"][0]["exists"][0]), recursive=True)
        manifests = _bash(_gitlab_script(ci, "imgcheck-manifests", predefined), workspace, runner_env)
        _check_manifests(manifests.returncode, manifests.stdout + manifests.stderr)
    finally:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_pinned_git_install_has_git_in_its_image(name):
    """pip needs git for a `git+https://` requirement, and python:*-slim images have none."""
    doc = _load(name)
    install = (doc.get("env") or doc.get("variables"))["IMGCHECK_INSTALL"]
    assert re.search(r"@v?\d+\.\d+", install), "the recipe pins a version"
    if name == "gitlab-ci.yml" and "git+" in install:
        image = doc["imgcheck"]["image"]
        scripts = " ".join(doc["imgcheck"].get("before_script", []))
        assert "slim" not in image or "install -y git" in scripts, image


def _doc_yaml_blocks() -> list:
    text = open(os.path.join(REPO, "docs", "ci.md"), encoding="utf-8").read()  # the CI recipes page
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def test_doc_snippets_install_imgcheck_before_running_it():
    github, gitlab = _doc_yaml_blocks()
    runs = [step.get("run", "") for step in github]
    install = next(i for i, r in enumerate(runs) if "pip install" in r)
    assert install < next(i for i, r in enumerate(runs) if r.strip().startswith("imgcheck "))
    job = gitlab["imgcheck"]
    assert any('pip install "$IMGCHECK_INSTALL"' in line for line in job["before_script"])
    assert "git+" in job["variables"]["IMGCHECK_INSTALL"] and "slim" not in job["image"]
    full = _load("gitlab-ci.yml")["imgcheck"]
    assert job["image"] == full["image"] and job["before_script"][0] == full["before_script"][0]
