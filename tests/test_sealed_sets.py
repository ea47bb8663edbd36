"""Every sealed held-out set in evaluation/ still loads through today's case and log loaders (the shared scorer's
--load-check, without writing its file): a loader change that breaks an old set is caught here, not when the set is
next scored."""

from __future__ import annotations

import glob
import importlib
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = sorted(d for d in glob.glob(os.path.join(ROOT, "evaluation", "sealed-*")) if os.path.isdir(d))


@pytest.mark.parametrize("set_dir", SETS, ids=os.path.basename)
def test_sealed_set_loads(set_dir: str) -> None:
    sys.path.insert(0, os.path.join(ROOT, "evaluation"))
    try:
        scorer = importlib.import_module("sealed_score")
    finally:
        sys.path.remove(os.path.join(ROOT, "evaluation"))
    scorer.setup_path(ROOT)
    corpus = importlib.import_module("corpus")
    with open(os.path.join(set_dir, "cases.json"), encoding="utf-8") as fh:
        cases = json.load(fh)["cases"]
    logs_dir = os.path.join(set_dir, "logs")
    with open(os.path.join(logs_dir, "index.json"), encoding="utf-8") as fh:
        index = json.load(fh)
    lines = scorer.load_check(corpus, cases, index, logs_dir)
    assert len(lines) >= len(cases) + len(index)
    problems = [x for x in lines if "ERROR" in x or "MISSING" in x]
    assert not problems, problems
