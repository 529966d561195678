#!/usr/bin/env python3
"""Summarise `ncu --page source --print-source sass --csv` output: executed instructions and
stall samples per SASS opcode, and the hottest instructions (one kernel launch per file
section; all sections summed)."""
import csv
import sys
from collections import Counter


def main(path, top=25, listing=None):
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.count(",") > 3]
    reader = csv.reader(lines)
    header = None
    for row in reader:
        if "Source" in row and "Address" in row:
            header = row
            continue
        if header and len(row) == len(header):
            rows.append(dict(zip(header, row)))
    if not rows:
        print("no rows")
        return
    exec_col = next(c for c in header if c.startswith("Instructions Executed"))
    stall_col = next(c for c in header if c.startswith("Warp Stall Sampling (All"))
    num = lambda v: float(v.replace(",", "") or 0)
    by_op, stalls = Counter(), Counter()
    by_line = Counter()
    for r in rows:
        op = r["Source"].split()[0] if r["Source"].split() else "?"
        if op.startswith("@"):
            op = r["Source"].split()[1]
        op = op.split(".")[0]
        by_op[op] += num(r[exec_col])
        stalls[op] += num(r[stall_col])
        by_line[(r["Address"], r["Source"][:70])] += num(r[stall_col])
    if listing:  # one compact line per SASS instruction: address, executed, stalls, text
        with open(listing, "w") as out:
            for r in rows:
                out.write(f"{r['Address']}\t{num(r[exec_col]):.0f}\t{num(r[stall_col]):.0f}\t"
                          f"{r['Source']}\n")
    total = sum(by_op.values())
    print(f"instructions executed {total:.0f}, stall samples {sum(stalls.values()):.0f}")
    for op, n in by_op.most_common(top):
        print(f"  {op:12s} {n:12.0f} {100 * n / total:5.1f} %  stalls {stalls[op]:8.0f}")
    print("hottest instructions by stall samples:")
    for (addr, src), n in by_line.most_common(top):
        print(f"  {addr} {n:8.0f}  {src}")


if __name__ == "__main__":
    main(sys.argv[1], listing=sys.argv[2] if len(sys.argv) > 2 else None)
