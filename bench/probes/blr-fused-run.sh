#!/usr/bin/env bash
# On the GPU machine: blr_bench's one-launch kernel rows (graph replay and per call) on the
# small layers at B = 1024, and ncu on the kernel for GPT2-S c_attn (sections and an opcode
# summary of the SASS).   TAG=v2 bash bench/probes/blr-fused-run.sh OUT
set -uo pipefail
out=${1:?OUT}
tag=${TAG:-probe}
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
start=$(date +%s)
cmake --build build-gpu -j 16 --target blr_bench ${TARGETS:-} 2>&1 | grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - start)) s"
if [ -n "${TESTS:-}" ]; then
  timeout 300 ./build-gpu/tests/strop_gpu_tests --run_test="$TESTS" --report_level=short \
    --log_level=error 2>&1 | tee "$out/gpu-tests-$tag.log" | tail -5
fi
for mode in --graph ""; do
  for layer in ${LAYERS:-GPT2-S/c_attn ViT-B/qkv DiT-XL/2/qkv Llama-3.2-1B/qo}; do
    name=$(echo "$layer" | tr '/' '_')
    csv="$out/blr-$tag${mode:+-graph}-$name.csv"
    ./build-gpu/bench/blr_bench $mode --reps 10 --batches ${BATCHES:-1024} --layer "$layer" \
      --csv /dev/null --csv16 "$csv" --json /dev/null >/dev/null 2>&1
    echo "== $layer ${mode:-per call}"
    grep -E "plan|unfused" "$csv" | awk -F, '{printf "%s B=%s %s %.1f us (dense %.1f, bound %.1f)\n",$2,$8,$5,$9*1e6,$10*1e6,$11*1e6}'
  done
done
if [ "${NCU:-1}" = 1 ]; then
  ncu --clock-control none --section SpeedOfLight --section LaunchStats --section WarpStateStats \
    --section SourceCounters --section InstructionStats --import-source no -k regex:blr_fused_kernel \
    --launch-count 12 -o "$out/ncu-$tag" ./build-gpu/bench/blr_bench --reps 1 --batches 1024 \
    --layer GPT2-S/c_attn --csv /dev/null --csv16 /dev/null --json /dev/null >/dev/null 2>&1
  ncu -i "$out/ncu-$tag.ncu-rep" --page details >"$out/ncu-$tag.txt" 2>&1
  grep -E "Duration|Issued Warp Per|Executed Instructions  " "$out/ncu-$tag.txt" | head -40
  ncu -i "$out/ncu-$tag.ncu-rep" --page source --print-source sass --csv >"$out/src.csv" 2>&1
  python3 bench/probes/ncu_source_summary.py "$out/src.csv" | tee "$out/ncu-$tag-opcodes.txt"
  rm -f "$out/src.csv" "$out/ncu-$tag.ncu-rep"
fi
