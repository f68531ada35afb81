#!/usr/bin/env python3
"""Expected values of scipy's `linear_sum_assignment` on tie-heavy cost matrices, for the Rust port's test
(crates/nemotron-postprocess/tests/alignment_units.rs). Upstream's processor matches speaker tags to diarizer speakers with
it, and speakers that never spoke have identical cost columns, so which of the tied solutions scipy picks matters.

Installs scipy from PyPI into a private virtual environment, then writes testdata/alignment/assignment_cases.json:
[{"rows": r, "cols": c, "cost": [...row-major...], "row_ind": [...], "col_ind": [...]}, ...].

Usage: python3 scripts/alignment/assignment_cases.py
"""
import json
import os
import subprocess
import sys
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "../../testdata/alignment/assignment_cases.json")
ENV = os.path.join(os.environ.get("TMPDIR", "/tmp"), "nemotron-assignment-venv")
SCIPY = "scipy==1.17.1"


def ensure_scipy():
    python = os.path.join(ENV, "bin", "python")
    if not os.path.exists(python):
        venv.create(ENV, with_pip=True)
    subprocess.run([python, "-m", "pip", "install", "-q", SCIPY], check=True)
    return python


def generate():
    import numpy as np
    import scipy
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(20261130)
    cases = []
    for i in range(300):
        rows, cols = int(rng.integers(1, 7)), int(rng.integers(1, 9))
        kind = i % 3
        if kind == 0:  # few distinct values: ties everywhere
            cost = rng.choice([-1.0, -0.5, 0.0, 0.5], size=(rows, cols))
        elif kind == 1:  # the processor's case: some columns identical (silent speakers)
            cost = rng.normal(size=(rows, cols)).round(1)
            same = rng.random(cols) < 0.5
            cost[:, same] = cost[:, [int(np.argmax(same))]]
        else:  # identical rows and columns
            cost = np.repeat(rng.choice([0.0, 1.0, 2.0], size=(rows, 1)), cols, axis=1)
            cost += rng.choice([0.0, 1.0], size=(1, cols))
        r, c = linear_sum_assignment(cost)
        cases.append({"rows": rows, "cols": cols, "cost": cost.ravel().tolist(),
                      "row_ind": r.tolist(), "col_ind": c.tolist()})
    return {"scipy": scipy.__version__, "cases": cases}


if __name__ == "__main__":
    if sys.argv[1:] == ["--generate"]:
        json.dump(generate(), sys.stdout)
    else:
        python = ensure_scipy()
        text = subprocess.run([python, os.path.abspath(__file__), "--generate"], check=True, capture_output=True,
                              text=True).stdout
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            f.write(text + "\n")
        print(f"wrote {OUT}")
