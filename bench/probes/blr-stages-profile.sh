#!/usr/bin/env bash
# On the GPU machine: every kernel of one blr_bench call sequence (LAYER, B = BATCH) with its
# duration under ncu, to split the cuBLAS plans into their stages.
#   LAYER=Llama-7B/qkvo BATCH=1024 bash bench/probes/blr-stages-profile.sh OUT
set -uo pipefail
out=${1:?OUT}
layer=${LAYER:-Llama-7B/qkvo}
name=$(echo "$layer" | tr '/' '_')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-gpu -j 16 --target blr_bench 2>&1 | grep -E "error" | head
ncu --clock-control none --metrics gpu__time_duration.sum --csv \
  ./build-gpu/bench/blr_bench --reps 1 --batches ${BATCH:-1024} --layer "$layer" \
  --csv /dev/null --csv16 /dev/null --json /dev/null >"$out/stages-$name.csv" 2>/dev/null
python3 - "$out/stages-$name.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]
ki, vi = h.index("Kernel Name"), h.index("Metric Value")
for r in rows[1:]:
    print(f"{float(r[vi].replace(',', '')) / 1000:9.1f} us  {r[ki][:110]}")
PY
