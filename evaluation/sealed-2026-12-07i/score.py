"""Score imgcheck once on the SEALED held-out set #9 (evaluation/sealed-2026-12-07i): incident cases and real failing logs.

    python evaluation/sealed-2026-12-07i/score.py [--repo /work/main] [--out evaluation/sealed-2026-12-07i/result.json]
    python evaluation/sealed-2026-12-07i/score.py --load-check [--repo /work/main]   # parse only, no rules run, no scores (alias --dry-run)

The scoring itself is evaluation/sealed_score.py, shared by every set (collected as /work/sealed9).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sealed_score import main  # noqa: E402  (the shared scorer in /work/main/evaluation)

if __name__ == "__main__":
    sys.exit(main(HERE, "evaluation/sealed-2026-12-07i", __doc__.splitlines()[0]))
