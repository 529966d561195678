# shellcheck shell=bash
# Sourced by the GPU probe scripts with OUT as its argument: sets out, the work folder w
# (created), b (the folder the carried binaries are unpacked into), start (seconds) and device
# (the GPU's name with underscores, also written to w/device.txt); defines kron_rows.
# shellcheck disable=SC2034  # the variables are for the sourcing script
out=${1:?OUT}
w=$out/work
mkdir -p "$w"
b=build-final
start=$(date +%s)
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_')
echo "$device" >"$w/device.txt"

# The float and double rows of Tables 1 and 3 of every kron_bench CSV in w, one line each.
kron_rows() {
  local f
  for f in "$w"/kron-*.csv; do
    echo "== $(basename "$f")"
    awk -F, '$1 ~ /table/ && ($4 == "float32" || $4 == "float64") {printf "%s %s %s auto=%.3f ms frac=%.3f err=%s\n", $2, $3, $4, $6 * 1e3, 1 / $16, $18}' "$f"
  done
}

# Seconds since the start.
elapsed() { echo $(($(date +%s) - start)); }

# gpu_tests FILTER: the GPU test cases FILTER of the carried build-final/tests binary, their
# short report.
gpu_tests() {
  echo "== tests $1"
  $b/tests/strop_gpu_tests --run_test="$1" --report_level=short --log_level=error 2>&1 | tail -3
}

# sanitize TOOL FILTER: those cases under compute-sanitizer TOOL for at most RACE_LIMIT seconds
# (default 120), the log in w/sanitize-TOOL.log; prints its exit status and last lines.
sanitize() {
  echo "== $1 $2"
  timeout "${RACE_LIMIT:-120}" compute-sanitizer --tool "$1" --error-exitcode 86 \
    --print-limit 20 $b/tests/strop_gpu_tests --run_test="$2" \
    --report_level=short --log_level=error >"$w/sanitize-$1.log" 2>&1
  echo "exit $?"
  tail -4 "$w/sanitize-$1.log"
}

# full_kron_bench NAME: the whole benchmark with build-final/bench (--reps 20 --rowmajor, at
# most 220 s) into w/kron-bench-NAME-DEVICE.csv and w/kron-summary-NAME-DEVICE.json.
full_kron_bench() {
  timeout 220 $b/bench/kron_bench --reps 20 --rowmajor --csv "$w/kron-bench-$1-$device.csv" \
    --json "$w/kron-summary-$1-$device.json" >"$w/kron-full.log" 2>&1
  echo "full exit $? at $(elapsed) s" >>"$w/tests.log"
}

# finish NAME: OUT/summary.txt (the device, w/tests.log, kron_rows and the summary JSON of
# full_kron_bench NAME), and w packed as OUT/kron-NAME.tar.gz.
finish() {
  {
    cat "$w/device.txt" "$w/tests.log"
    kron_rows
    cat "$w"/kron-summary-"$1"-*.json 2>/dev/null
  } >"$out/summary.txt"
  tar czf "$out/kron-$1.tar.gz" -C "$w" .
  rm -rf "$w"
}
