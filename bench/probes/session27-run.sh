#!/usr/bin/env bash
# Session 27's GPU calls: the BLR decode kernel's last-stage weights loaded ahead of its grid
# barrier (STROP_BLR_LOAD_AHEAD=0 turns that off in the same build) and Kron's signal groups
# (kron_bench --group-mb, 0 = off), into OUT with TAG in the file names. Both were measured at
# commit 835136b and then removed (bench/probes/*-tried.patch; the --group-mb flag of
# kron_bench exists only at that commit), so on later commits the BLR part compares two runs of
# the same code and GROUPS_MB defaults to none (the Kron part skipped).
#   PART=tests bash bench/probes/session27-run.sh OUT   # build, gpu_blr + gpu_kron (SUITES)
#   PART=bench bash bench/probes/session27-run.sh OUT   # build, blr_bench on/off, kron_bench
# BATCHES (default 1,2,4,8), GROUPS_MB (at 835136b: "0 8 16 24"), KRON_ONLY (default table1).
set -uo pipefail
out=${1:?OUT}
tag=${TAG:--session27}
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
start=$(date +%s)
cmake --build build-gpu -j 16 --target ${TARGETS:-strop_gpu_tests blr_bench kron_bench} 2>&1 |
  grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - start)) s"
if [ "${PART:-tests}" = tests ]; then
  start=$(date +%s)
  timeout ${TEST_TIMEOUT:-400} ./build-gpu/tests/strop_gpu_tests --run_test="${SUITES:-gpu_blr:gpu_kron}" \
    --report_level=short --log_level=error >"$out/gpu-tests$tag-$dev.log" 2>&1
  echo "gpu tests exit code: $? ($(($(date +%s) - start)) s)" | tee -a "$out/gpu-tests$tag-$dev.log"
  tail -8 "$out/gpu-tests$tag-$dev.log"
  exit 0
fi
batches=${BATCHES:-1,2,4,8}
for ahead in 1 0; do
  start=$(date +%s)
  STROP_BLR_LOAD_AHEAD=$ahead timeout ${GRAPH_TIMEOUT:-150} ./build-gpu/bench/blr_bench --graph \
    --reps 20 --batches "$batches" --csv /dev/null \
    --csv16 "$out/blr16-bench$tag-ahead$ahead-graph-$dev.csv" --json /dev/null >/dev/null 2>&1
  echo "blr graph, load ahead $ahead: exit code $? ($(($(date +%s) - start)) s)"
done
for mb in ${GROUPS_MB:-none}; do
  [ "$mb" = none ] && continue
  start=$(date +%s)
  timeout ${KRON_TIMEOUT:-120} ./build-gpu/bench/kron_bench --reps 10 --auto-only --no-table4 \
    --only "${KRON_ONLY:-table1}" --group-mb "$mb" --csv "$out/kron-bench$tag-group$mb-$dev.csv" \
    --json /dev/null >/dev/null 2>&1
  echo "kron group $mb MB: exit code $? ($(($(date +%s) - start)) s)"
  awk -F, 'NR > 2 { printf "  %s %s %.3f ms (roofline frac %.3f)\n", $2, $4, $6 * 1e3, 1 / $16 }' \
    "$out/kron-bench$tag-group$mb-$dev.csv"
done
for f in "$out"/blr16-bench$tag-ahead1-graph-$dev.csv; do
  g=${f/ahead1/ahead0}
  echo "== decode, graph replay, us: load ahead on / off"
  join -t, <(awk -F, '$5 ~ /_plan_decode/ {print $1"/"$2"/"$5"/"$8","$9}' "$f" | sort) \
    <(awk -F, '$5 ~ /_plan_decode/ {print $1"/"$2"/"$5"/"$8","$9}' "$g" | sort) |
    awk -F, '{ printf "%s %.1f %.1f %.3f\n", $1, $2 * 1e6, $3 * 1e6, $2 / $3 }'
done
