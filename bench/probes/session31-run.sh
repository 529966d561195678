#!/usr/bin/env bash
# Session 31's GPU calls: every GPU suite (with the new Table 3, random-grid, 16-bit unfused and
# Kron tests), then blr_bench over every layer (the Table 3 list now in bench/blr_layers.hpp),
# per call, at BATCHES: its fp32 CSV compares the float operators' public path with their GEMM
# plans (what Auto for float signals is chosen from); BENCH_ARGS=--float-paths adds A^T and
# batch-contiguous rows.
#   bash bench/probes/session31-run.sh OUT
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session31}
source "$(dirname "$0")/probe-build.sh"
run_tests '*' all
start=$(date +%s)
timeout ${BENCH_TIMEOUT:-240} ./build-gpu/bench/blr_bench --reps ${REPS:-10} ${BENCH_ARGS:-} \
  --batches "${BATCHES:-1,2,4,16,128,1024}" \
  --csv "$out/blr-bench$tag-$dev.csv" --csv16 "$out/blr16-bench$tag-$dev.csv" \
  --json "$out/blr-summary$tag-$dev.json" >"$out/blr-bench$tag-$dev.log" 2>&1
echo "blr_bench: exit code $? ($(($(date +%s) - start)) s)"
python3 - "$out/blr-bench$tag-$dev.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))][1:]
t = {(r[0], r[1], r[4], int(r[7])): float(r[8]) for r in rows}
for s in ('monarch', 'blast', 'lowrank', 'monarch_t', 'blast_t', 'monarch_rm', 'blast_rm'):
    for b in sorted({k[3] for k in t}):
        q = [t[k] / t[(k[0], k[1], s + '_plan', b)] for k in t
             if k[2] == s and k[3] == b and (k[0], k[1], s + '_plan', b) in t]
        if q:
            print(f"{s:8s} B={b:5d} public/plan median {statistics.median(q):.2f} "
                  f"min {min(q):.2f} max {max(q):.2f} (n={len(q)})")
PY
