#!/usr/bin/env python3
"""Per test case, the largest measured error and its ratio to the tolerance, from the file
that STROP_ERROR_LOG collected (lines: test case, error, tolerance), sorted by that ratio.
   python3 bench/probes/summarize-errors.py OUT/errors-<device>.tsv > summary.tsv"""
import collections
import sys

cases = collections.defaultdict(list)
with open(sys.argv[1]) as log:
    for line in log:
        name, error, tol = line.rstrip("\n").split("\t")
        cases[name].append((float(error), float(tol)))
print("test_case\tchecks\tmax_error\tmin_tolerance\tmax_tolerance\tmax_error_over_tolerance")
rows = []
for name, checks in cases.items():
    ratio = max(e / t if t > 0 else float("inf") for e, t in checks)
    rows.append((ratio, name, len(checks), max(e for e, _ in checks),
                 min(t for _, t in checks), max(t for _, t in checks)))
for ratio, name, n, error, low, high in sorted(rows):
    print(f"{name}\t{n}\t{error:.3g}\t{low:.3g}\t{high:.3g}\t{ratio:.3g}")
