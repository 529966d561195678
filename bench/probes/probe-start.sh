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
