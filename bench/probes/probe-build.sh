# Sourced by the probe run scripts of sessions 28-30 (the earlier ones keep their own copy
# as a record of what ran): builds TARGETS (default strop_gpu_tests blr_bench) in build-gpu for
# sm_90 with 16 jobs, prints the errors and warnings and the build time, and sets `dev` (the
# GPU's name for file names) and `tests` (the GPU test binary); defines run_tests (suites, log
# name, [env]: runs the GPU tests into $out/gpu-tests$tag-NAME-$dev.log) and summarize (a
# blr_bench --csv16 file: the skinny path against the other plan paths at a few tokens).
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSTROP_BUILD_EXAMPLES=OFF >/dev/null
build_start=$(date +%s)
cmake --build build-gpu -j 16 --target ${TARGETS:-strop_gpu_tests blr_bench} 2>&1 |
  grep -E "error|warning" | head -30
echo "build: $(($(date +%s) - build_start)) s"
tests=./build-gpu/tests/strop_gpu_tests

run_tests() {  # suites, log name, [env]
  local start=$(date +%s)
  env ${3:-} timeout ${TEST_TIMEOUT:-300} $tests --run_test="$1" --report_level=short \
    --log_level=error >"$out/gpu-tests$tag-$2-$dev.log" 2>&1
  echo "gpu tests ($1${3:+, $3}) exit code: $? ($(($(date +%s) - start)) s)" |
    tee -a "$out/gpu-tests$tag-$2-$dev.log"
  tail -4 "$out/gpu-tests$tag-$2-$dev.log"
}

summarize() {  # csv: the plan paths at a few tokens, us
  python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith('#'))][1:]
t = {(r[0], r[1], r[4], int(r[7])): (float(r[8]), float(r[9]), float(r[10])) for r in rows}
for (m, l, s, b), (tp, td, tb) in sorted(t.items()):
    if not s.endswith('_plan_skinny'): continue
    base = s[:-len('_plan_skinny')]
    get = lambda p: t.get((m, l, base + p, b), (float('nan'),))[0]
    cub, pad, auto = get('_plan_cublas'), get('_plan_cublas_padded'), get('_plan')
    print(f"{m:9s} {l:7s} {base:8s} B={b:2d} skinny {tp*1e6:6.1f} auto {auto*1e6:6.1f} cublas "
          f"{cub*1e6:6.1f} padded {pad*1e6:6.1f} dense {td*1e6:6.1f} bound {tb*1e6:5.1f} us  "
          f"cublas/skinny {cub/tp:4.2f}")
PY
}
