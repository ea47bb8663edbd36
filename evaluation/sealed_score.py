"""The scorer every sealed held-out set shares (evaluation/sealed-*/score.py call it with their own folder).

(a) every sealed incident case goes through imgcheck's engine the way the repo's own
    tests/incidents/score.py and corpus.py do (their loaders are imported, not copied);
(b) every sealed log goes through `imgcheck triage` (the Python API the repo's tests use).

--load-check loads every case (image, node, job and the `working` variant) with the repo's own loaders
(tests/incidents/corpus.py) and checks that every log file of logs/index.json exists and is readable. It does not
call the engine or triage, so it prints no scores; it writes the result to load-check.txt.

Prints a mechanical count (expected rule id / signature found) and writes the full per-case output to a JSON
file for a human judge. A case whose facts the engine rejects is reported as "case error", never a crash.
--repo may name another checkout (a baseline worktree): its loaders and engine are the ones imported.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback


def setup_path(repo: str) -> None:
    repo = os.path.abspath(repo)
    for p in (os.path.join(repo, "tests", "incidents"), os.path.join(repo, "tests"), os.path.join(repo, "src")):
        while p in sys.path:
            sys.path.remove(p)
    # src first, then tests (for corpus.py via tests/incidents)
    sys.path.insert(0, os.path.join(repo, "tests", "incidents"))
    sys.path.insert(0, os.path.join(repo, "tests"))
    sys.path.insert(0, os.path.join(repo, "src"))


def load_json(path: str):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def run_case(case: dict, corpus, matrix) -> dict:
    from imgcheck.engine import evaluate

    out: dict = {
        "id": case["id"],
        "url": case.get("url"),
        "expect": case.get("expect", []),
        "mechanism": case.get("mechanism"),
        "expect_kind": case.get("expect_kind"),
        "must_not": case.get("must_not", []),
        "negative": str(case.get("mechanism", "")).startswith("(negative)"),
    }
    try:
        cid = case["id"]
        image = corpus.image_facts(corpus.image_doc(case["image"], cid), cid)
        node = corpus.node_facts(case["node"], cid)
        job = corpus.job_facts(case.get("job"), cid)
        result = evaluate(image, node, matrix, job=job)
    except Exception as exc:  # noqa: BLE001 - a case the engine rejects is reported, not fatal
        out["status"] = "case error"
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=3)
        return out
    found = {f.id: f.severity for f in result.findings}
    out["status"] = "ok"
    out["findings"] = [
        {"id": f.id, "severity": f.severity, "title": getattr(f, "title", None)} for f in result.findings
    ]
    out["unknowns"] = [
        {"rule": getattr(u, "rule", None) or getattr(u, "id", None), "reason": getattr(u, "reason", None)}
        for u in result.unknowns
    ]
    rank = getattr(corpus, "SEVERITY_RANK", None) or {"info": 0, "warning": 1, "error": 2}

    def resolved(rule_id: str):
        try:
            return corpus.resolve(rule_id).rule
        except Exception:  # noqa: BLE001 - a placeholder or API the tree does not know: compare literally
            return rule_id

    exp = case.get("expect", [])
    if exp:
        out["expected_found"] = all(
            resolved(w["id"]) in found and rank.get(found[resolved(w["id"])], 0) >= rank.get(w["severity"], 0)
            for w in exp
        )
    else:
        out["expected_found"] = None
    out["must_not_blamed"] = [m for m in case.get("must_not", []) if resolved(m) in found]
    working = case.get("working")
    if working:
        try:
            wimg_spec = corpus.deep_merge(case["image"], working.get("image", {}))
            wnode = corpus.deep_merge(case["node"], working.get("node", {}))
            wjob_doc = case.get("job")
            if "job" in working:
                wjob_doc = corpus.deep_merge(wjob_doc or {}, working["job"])
            wres = evaluate(
                corpus.image_facts(corpus.image_doc(wimg_spec, cid), cid + ":working"),
                corpus.node_facts(wnode, cid + ":working"),
                matrix,
                job=corpus.job_facts(wjob_doc, cid + ":working"),
            )
            wfound = {f.id for f in wres.findings}
            out["working_findings"] = [{"id": f.id, "severity": f.severity} for f in wres.findings]
            out["working_absent_ok"] = not any(resolved(a) in wfound for a in working.get("absent", []))
        except Exception as exc:  # noqa: BLE001
            out["working_error"] = f"{type(exc).__name__}: {exc}"
    return out


def run_log(entry: dict, logs_dir: str) -> dict:
    from imgcheck.triage import triage

    out = {
        "id": entry["id"],
        "url": entry.get("url"),
        "mechanism": entry.get("mechanism"),
        "expect_signatures": entry.get("expect_signatures", []),
        "negative": bool(entry.get("negative")),
    }
    try:
        files = entry["file"] if isinstance(entry["file"], list) else [entry["file"]]
        report = triage([os.path.join(logs_dir, f) for f in files])
    except Exception as exc:  # noqa: BLE001
        out["status"] = "case error"
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    out["status"] = "ok"
    out["verdict"] = report.verdict
    out["first_failure"] = report.first_failure.signature if report.first_failure else None
    out["diagnoses"] = [
        {
            "signature": d.signature,
            "severity": d.severity,
            "role": d.role,
            "at_first_failure": d.at_first_failure,
            "causes": [c.id for c in d.causes][:4],
        }
        for d in report.diagnoses
    ]
    out["top_cause"] = report.diagnoses[0].causes[0].id if report.diagnoses and report.diagnoses[0].causes else None
    sigs = [d.signature for d in report.diagnoses]
    exp = entry.get("expect_signatures", [])
    out["expected_first"] = bool(exp) and out["first_failure"] in exp
    out["expected_any"] = bool(exp) and any(s in sigs for s in exp)
    return out


def _guard(fn, item: dict, *args) -> dict:
    """Run one case/log; anything unexpected becomes a 'case error' entry instead of a crash."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001
        return {
            "id": item.get("id"),
            "url": item.get("url"),
            "expect": item.get("expect", []),
            "expect_signatures": item.get("expect_signatures", []),
            "mechanism": item.get("mechanism"),
            "status": "case error",
            "error": f"{type(exc).__name__}: {exc}",
            "diagnoses": [],
        }


def load_check(corpus, cases: list, index: list, logs_dir: str) -> list[str]:
    """Parse every case (and its working variant) and check every log file; no rules are run."""
    lines = []
    for c in cases:
        cid = c["id"]
        try:
            corpus.image_facts(corpus.image_doc(c["image"], cid), cid)
            corpus.node_facts(c["node"], cid)
            corpus.job_facts(c.get("job"), cid)
            for w in c.get("expect", []) + [{"id": m} for m in c.get("must_not", [])]:
                corpus.resolve(w["id"])
            working = c.get("working")
            if working:
                wimg = corpus.deep_merge(c["image"], working.get("image", {}))
                wnode = corpus.deep_merge(c["node"], working.get("node", {}))
                wjob = c.get("job")
                if "job" in working:
                    wjob = corpus.deep_merge(wjob or {}, working["job"])
                corpus.image_facts(corpus.image_doc(wimg, cid), cid + ":working")
                corpus.node_facts(wnode, cid + ":working")
                corpus.job_facts(wjob, cid + ":working")
            lines.append(f"case {cid}: loads" + (" (with working variant)" if working else ""))
        except Exception as exc:  # noqa: BLE001 - reported, then fix the case
            lines.append(f"case {cid}: LOAD ERROR {type(exc).__name__}: {exc}")
    for e in index:
        files = e["file"] if isinstance(e["file"], list) else [e["file"]]
        missing = [f for f in files if not os.path.isfile(os.path.join(logs_dir, f))]
        if missing:
            lines.append(f"log {e['id']}: MISSING {missing}")
            continue
        try:
            for f in files:
                with open(os.path.join(logs_dir, f), encoding="utf-8") as fh:
                    fh.read()
            lines.append(f"log {e['id']}: readable ({len(files)} file(s))")
        except Exception as exc:  # noqa: BLE001
            lines.append(f"log {e['id']}: READ ERROR {type(exc).__name__}: {exc}")
    return lines


def main(here: str, label: str, description: str, argv=None) -> int:
    """Run the scorer on the sealed set in `here` (cases.json, logs/); `label` names it in the load check."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--repo", default="/work/main", help="imgcheck tree to score (default /work/main)")
    ap.add_argument("--out", default=os.path.join(here, "result.json"), help="JSON file for the full output")
    ap.add_argument("--quiet", action="store_true", help="only the counts")
    ap.add_argument(
        "--load-check",
        "--dry-run",
        dest="load_check",
        action="store_true",
        help="only check that every case and log loads; no rules (alias: --dry-run)",
    )
    args = ap.parse_args(argv)
    setup_path(args.repo)
    corpus = importlib.import_module("corpus")
    if args.load_check:
        cases = load_json(os.path.join(here, "cases.json"))["cases"]
        logs_dir = os.path.join(here, "logs")
        index = load_json(os.path.join(logs_dir, "index.json"))
        lines = load_check(corpus, cases, index, logs_dir)
        bad = [x for x in lines if "ERROR" in x or "MISSING" in x]
        head = (
            f"load check of {label} against {os.path.abspath(args.repo)}: {len(cases)} cases, {len(index)} logs; "
            f"{len(bad)} problem(s). No rules were run; no scores."
        )
        text = "\n".join([head, *lines]) + "\n"
        print(text, end="")
        with open(os.path.join(here, "load-check.txt"), "w", encoding="utf-8") as fh:
            fh.write(text)
        return 1 if bad else 0
    from imgcheck.matrix import load_matrix

    matrix = load_matrix()
    cases = load_json(os.path.join(here, "cases.json"))["cases"]
    logs_dir = os.path.join(here, "logs")
    index = load_json(os.path.join(logs_dir, "index.json"))

    case_out = [_guard(run_case, c, c, corpus, matrix) for c in cases]
    log_out = [_guard(run_log, e, e, logs_dir) for e in index]

    if not args.quiet:
        print("== incident cases ==")
        for r in case_out:
            print(f"- {r['id']}  expect={[w['id'] for w in r['expect']]}  status={r['status']}")
            print(f"    mechanism: {r.get('mechanism')}")
            if r["status"] != "ok":
                print(f"    case error: {r['error']}")
                continue
            print(f"    findings: {[(f['id'], f['severity']) for f in r['findings']]}")
            print(f"    unknowns: {[u['rule'] for u in r['unknowns']]}")
            print(f"    expected found: {r['expected_found']}  must_not blamed: {r['must_not_blamed']}")
        print("== logs ==")
        for r in log_out:
            print(f"- {r['id']}  expect={r['expect_signatures']}  status={r['status']}")
            if r["status"] != "ok":
                print(f"    case error: {r['error']}")
                continue
            print(f"    verdict={r['verdict']} first={r['first_failure']} top_cause={r['top_cause']}")
            print(f"    signatures: {[d['signature'] for d in r['diagnoses']][:6]}")

    with_exp = [r for r in case_out if r["expect"]]
    counts = {
        "repo": os.path.abspath(args.repo),
        "cases": len(case_out),
        "cases_with_expect": len(with_exp),
        "cases_expected_found": sum(1 for r in with_exp if r.get("expected_found")),
        "cases_without_rule_today": sum(1 for r in case_out if not r["expect"]),
        "cases_error": sum(1 for r in case_out if r["status"] != "ok"),
        "cases_must_not_violated": sum(1 for r in case_out if r.get("must_not_blamed")),
        "working_configs": sum(1 for r in case_out if "working_absent_ok" in r),
        "working_configs_clean": sum(1 for r in case_out if r.get("working_absent_ok")),
        "logs": len(log_out),
        "logs_with_expect": sum(1 for r in log_out if r["expect_signatures"]),
        "logs_expected_first": sum(1 for r in log_out if r.get("expected_first")),
        "logs_expected_any": sum(1 for r in log_out if r.get("expected_any")),
        "logs_no_signature": sum(1 for r in log_out if r["status"] == "ok" and not r["diagnoses"]),
        "logs_error": sum(1 for r in log_out if r["status"] != "ok"),
        # negatives: working configurations / noise from runs that worked (nothing should be blamed)
        "negative_cases": sum(1 for r in case_out if r.get("negative")),
        "negative_cases_with_error_finding": sum(
            1
            for r in case_out
            if r.get("negative") and any(f.get("severity") == "error" for f in r.get("findings", []))
        ),
        "negative_logs": sum(1 for r in log_out if r.get("negative")),
        "negative_logs_with_diagnosis": sum(1 for r in log_out if r.get("negative") and r.get("diagnoses")),
    }
    print("== counts ==")
    print(json.dumps(counts, indent=1))
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"counts": counts, "cases": case_out, "logs": log_out}, fh, indent=1)
    print(f"full output: {args.out}")
    return 0
