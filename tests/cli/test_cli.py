"""End-to-end test of the strop tool, along a new user's path: run the demo, write matrices
with numpy, factorize them into every structure, inspect the file, apply the operators to
signals and compare with numpy, read the file with h5py; then the error cases.

    test_cli.py STROP_EXE WORK_DIR

The references are independent of strop: numpy builds the matrices and the expected
products, and tests/python/strop_h5.py rebuilds each saved operator from the documented
HDF5 schema with h5py alone. Exit 77 (skipped) without numpy/h5py.
"""
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e} (scripts/deps.sh installs python3-numpy and python3-h5py)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import strop_h5  # noqa: E402

from cli_harness import Harness, rel  # noqa: E402

harness = Harness(sys.argv)
STROP, WORK = harness.exe, harness.work
path, check, strop = harness.path, harness.check, harness.strop


def operator_matrix(file, name):
    with h5py.File(file, "r") as f:
        return strop_h5.dense(f[name])


# ---- 1. help everywhere ------------------------------------------------------------------
for command in ([], ["demo"], ["factorize"], ["apply"], ["info"], ["bench"]):
    r = strop(*command, "--help")
    check("Usage" in r.stdout or "usage" in r.stdout.lower(), f"{command} --help prints usage")

# The version the tool prints and the files record is include/strop/version.hpp's.
with open(os.path.join(HERE, "..", "..", "include", "strop", "version.hpp")) as header:
    numbers = dict(line.split()[1:3] for line in header
                   if line.startswith("#define STROP_VERSION_") and len(line.split()) == 3)
VERSION = ".".join(numbers[f"STROP_VERSION_{part}"] for part in ("MAJOR", "MINOR", "PATCH"))
r = strop("--version")
check(r.stdout.strip() == f"strop {VERSION}", f"--version prints strop {VERSION} ({r.stdout.strip()})")

# ---- 2. the demo -------------------------------------------------------------------------
r = strop("demo", "--size", 256, "--batch", 8, "--device", "cpu", "-o", path("demo.h5"))
check("identical" in r.stdout and "Hadamard" in r.stdout, "demo reports the round trip")
check(r.stderr == "", "demo is quiet on stderr when it is not a terminal")
n = 256
dft256 = np.fft.fft(np.eye(n))  # F[i, j] = exp(-2 pi i ij / n)
h2 = np.array([[1, 1], [1, -1]])
had256 = np.array([[1.0]])
for _ in range(8):
    had256 = np.kron(had256, h2)
if check(os.path.exists(path("demo.h5")), "demo wrote its HDF5 file"):
    with h5py.File(path("demo.h5"), "r") as f:
        check({"dft", "hadamard"} <= set(f.keys()), "h5py sees the demo's operators")
        written_by = f.attrs.get("strop_library_version", b"")
        written_by = written_by.decode() if isinstance(written_by, bytes) else written_by
        check(written_by == VERSION, f"the file records strop {VERSION} ({written_by})")
        check(rel(strop_h5.dense(f["dft"]), dft256) < 2e-5, "demo's DFT is the DFT (h5py)")
        check(rel(strop_h5.dense(f["hadamard"]), had256) < 1e-5,
              "demo's Hadamard is the Hadamard matrix (h5py)")

# ---- 3. matrices a user would bring ------------------------------------------------------
rng = np.random.default_rng(5)
had64 = np.kron(np.kron(had256[:4, :4], had256[:4, :4]), had256[:4, :4]).astype(np.float32)
dft64 = np.fft.fft(np.eye(64)).astype(np.complex64)
lowrank = rng.standard_normal((64, 4)) @ rng.standard_normal((4, 48))  # float64, rank 4
monarch = np.zeros((64, 64), dtype=np.float32)  # 4 x 4 blocks of rank 2
for k in range(4):
    for l in range(4):
        monarch[16 * k:16 * k + 16, 16 * l:16 * l + 16] = (
            rng.standard_normal((16, 2)) @ rng.standard_normal((2, 16)))
blast = rng.standard_normal((64, 64)).astype(np.float32)
np.save(path("hadamard.npy"), had64)
np.save(path("dft.npy"), dft64)
np.save(path("lowrank.npy"), lowrank)
np.save(path("blast.npy"), blast)
with h5py.File(path("weights.h5"), "w") as f:
    f.create_dataset("layers/monarch", data=monarch)
x64 = rng.standard_normal((64, 5)).astype(np.float32)
x48 = rng.standard_normal((48, 5)).astype(np.float32)
np.save(path("x64.npy"), x64)
np.save(path("x48.npy"), x48)
with h5py.File(path("signals.h5"), "w") as f:
    f["x"] = x64

# ---- 4. factorize into every structure ---------------------------------------------------
out = path("ops.h5")
# name, input, options, the matrix, exact (the structure represents it)
cases = [
    ("had_bf", "hadamard.npy", ["-s", "butterfly"], had64, True),
    ("dft_bf", "dft.npy", ["-s", "butterfly", "--bit-reversal"], dft64, True),
    ("mon", "weights.h5:/layers/monarch", ["-s", "monarch", "--blocks", 4, "--rank", 2],
     monarch, True),
    ("lr", "lowrank.npy", ["-s", "lowrank", "--rank", 4], lowrank, True),
    ("kr", "hadamard.npy", ["-s", "kron", "--left-shape", "8x8"], had64, True),
    ("bl", "blast.npy", ["-s", "blast", "--blocks", 4, "--rank", 8, "--steps", 50], blast, False),
    ("lr_bf", "lowrank.npy", ["-s", "butterfly", "--budget", 2000], lowrank, False),
]
saved = {}
for name, source, options, matrix, exact in cases:
    r = strop("factorize", path(source), *options, "-o", out, "--name", name)
    check("rel. error" in r.stdout and "parameters" in r.stdout, f"factorize {name} prints a report")
    if r.returncode != 0:
        continue
    approx = operator_matrix(out, name)
    error = rel(approx, matrix)
    with h5py.File(out, "r") as f:
        attrs = f[name].attrs
        stored_error = float(attrs.get("provenance_relative_error", -1))
        stored_source = attrs.get("provenance_source", b"")
        stored_source = stored_source.decode() if isinstance(stored_source, bytes) else stored_source
        check(source in stored_source, f"{name}: provenance names the source ({stored_source})")
    tolerance = 1e-10 if matrix.dtype == np.float64 else 2e-5
    if exact:
        check(error < tolerance, f"{name}: the saved operator is the input matrix (error {error:.1e})")
    else:
        check(error < 1, f"{name}: the saved operator approximates the input (error {error:.2f})")
    check(abs(stored_error - error) <= 1e-3 * max(error, 1e-3) + 2e-5,
          f"{name}: provenance error {stored_error:.3e} matches h5py's {error:.3e}")
    saved[name] = (approx, matrix, exact)

# ---- 4b. Strassen-Tile: exact with all 49 colours; with fewer it mixes the 4 signals of a
# tile, so it has no dense matrix: compare its application with numpy's STL from the schema.
stl_out = path("stl.h5")
r = strop("factorize", path("hadamard.npy"), "-s", "stl", "--rank", 49, "-o", stl_out,
          "--name", "exact")
check("rel. error" in r.stdout and "rank 49" in r.stdout, "factorize -s stl prints a report")
if r.returncode == 0:
    with h5py.File(stl_out, "r") as f:
        check(rel(strop_h5.dense(f["exact"]), had64) < 2e-5, "stl with 49 colours is the input")
r = strop("factorize", path("hadamard.npy"), "-s", "stl", "--rank", 32, "--seed", 3, "-o",
          stl_out, "--name", "r32")
if r.returncode == 0:
    strop("apply", stl_out + ":r32", path("x64.npy"), "-o", path("y_stl.npy"))
    if os.path.exists(path("y_stl.npy")):
        y = np.load(path("y_stl.npy"))
        with h5py.File(stl_out, "r") as f:
            check(rel(y, strop_h5.apply(f["r32"], x64)) < 2e-5,
                  "apply stl (5 signals, a padded tile) equals numpy's STL from the schema")
        check(0 < rel(y, had64 @ x64) < 1, "stl with 32 colours approximates A X")
r = strop("factorize", path("hadamard.npy"), "-s", "stl", "--rank", 50, "-o", stl_out, ok=False)
check("1..49" in r.stderr + r.stdout, "factorize -s stl --rank 50 says the ranks it takes")
# info counts a Strassen-Tile operator's flops per signal of a full tile (one signal alone is
# padded to a tile of 4: flops(1) was 4x this): 2 (r B/t (N/t)(M/t) + r t^2 B/t (N/t + M/t)).
r = strop("info", stl_out + ":exact")
t, rank, tiles = 4, 49, 64 // 4
per_signal = 2 * (rank * tiles * tiles + rank * t * t * 2 * tiles) // t
check(f"flops/signal  {per_signal:,} " in r.stdout, f"info: stl flops/signal {per_signal:,}")

# ---- 5. info -----------------------------------------------------------------------------
r = strop("info", out)
for needle in ["had_bf", "dft_bf", "ks_chain", "ks_factor", "pattern (1,2,2,32)", "permutation",
               "bit reversal", "monarch", "4 x 4 blocks", "lowrank", "rank 4", "kron", "blast",
               "provenance", "compression", "flops/signal"]:
    check(needle in r.stdout, f"info shows '{needle}'")
r = strop("info", out + ":lr")
check("lr:" in r.stdout and "had_bf" not in r.stdout, "info file.h5:NAME shows one operator")

# ---- 6. apply, against numpy -------------------------------------------------------------
for name, (approx, matrix, exact) in saved.items():
    x, xf = (x48, "x48.npy") if approx.shape[1] == 48 else (x64, "x64.npy")
    y_path = path(f"y_{name}.npy")
    strop("apply", f"{out}:{name}", path(xf), "-o", y_path)
    if not os.path.exists(y_path):
        continue
    y = np.load(y_path)
    check(y.shape == (approx.shape[0], 5), f"apply {name}: output shape {y.shape}")
    tolerance = 1e-10 if y.dtype in (np.float64, np.complex128) else 2e-5
    check(rel(y, approx @ x) < tolerance, f"apply {name}: equals A @ X with A from h5py")
    if exact:
        check(rel(y, matrix @ x) < max(tolerance, 2e-5), f"apply {name}: equals input @ X")

if "had_bf" in saved:
    strop("apply", out + ":had_bf", path("x64.npy"), "--transpose", "-o", path("yt.npy"))
    check(rel(np.load(path("yt.npy")), had64.T @ x64) < 2e-5, "apply --transpose gives A^T X")
    np.save(path("x64_rows.npy"), x64.T.copy())
    strop("apply", out + ":had_bf", path("x64_rows.npy"), "--batch-rows", "-o", path("yr.npy"))
    check(rel(np.load(path("yr.npy")), (had64 @ x64).T) < 2e-5, "apply --batch-rows: X is B x N")
    strop("apply", out + ":had_bf", path("signals.h5") + ":/x", "-o", path("y.h5") + ":/out/y")
    with h5py.File(path("y.h5"), "r") as f:
        check(rel(f["out/y"][...], had64 @ x64) < 2e-5, "apply reads and writes HDF5 datasets")
if "dft_bf" in saved:
    strop("apply", out + ":dft_bf", path("x64.npy"), "--adjoint", "-o", path("yh.npy"))
    check(rel(np.load(path("yh.npy")), dft64.conj().T @ x64) < 2e-5, "apply --adjoint gives A^H X")

# ---- 7. h5py reads the whole file --------------------------------------------------------
with h5py.File(out, "r") as f:
    ops = [k for k in f.keys() if "strop_type" in f[k].attrs]
    check(sorted(ops) == sorted(saved), f"h5py lists the saved operators: {sorted(ops)}")

# ---- 8. errors: non-zero exit, a message on stderr, no file left behind ----------------------
r = strop("factorize", path("missing.npy"), "-s", "butterfly", "-o", path("e.h5"), ok=False)
check("no such file" in r.stderr and not os.path.exists(path("e.h5")), "missing input file")
r = strop("factorize", path("hadamard.npy"), "-s", "wavelet", "-o", path("e.h5"), ok=False)
check("wavelet" in r.stderr and not os.path.exists(path("e.h5")), "unknown structure")
r = strop("factorize", path("hadamard.npy"), "-s", "kron", "--rank", 3, "-o", path("e.h5"),
          ok=False)
check("does not apply" in r.stderr, "an option of another structure")
r = strop("factorize", path("lowrank.npy"), "-s", "butterfly", "-o", path("e.h5"), ok=False)
check("power-of-two" in r.stderr and "--budget" in r.stderr, "butterfly of a 64 x 48 matrix")
r = strop("factorize", path("hadamard.npy"), "-o", path("e.h5"), ok=False)
check("structure" in r.stderr, "missing --structure")
r = strop("factorize", path("hadamard.npy"), "-s", "butterfly", "-o", path("e.npy"), ok=False)
check("HDF5 files" in r.stderr and not os.path.exists(path("e.npy")),
      "operators are not saved under a .npy name")
r = strop("factorize", path("hadamard.npy"), "-s", "butterfly", "-o", path("e.h5") + ":a",
          "--name", "b", ok=False)
check("contradicts" in r.stderr and not os.path.exists(path("e.h5")), "-o FILE:a --name b")
for value in ("nan", 0, 1):
    r = strop("factorize", path("lowrank.npy"), "-s", "lowrank", "--tolerance", value, "-o",
              path("e.h5"), ok=False)
    check("(0, 1)" in r.stderr and not os.path.exists(path("e.h5")), f"--tolerance {value}")
r = strop("factorize", path("lowrank.npy"), "-s", "lowrank", "--rank", 2, "--tolerance", 0.5,
          "-o", path("e.h5"), ok=False)
check("excludes" in r.stderr and not os.path.exists(path("e.h5")), "--rank with --tolerance")
r = strop("factorize", path("weights.h5"), "-s", "monarch", "-o", path("e.h5"), ok=False)
check("dataset" in r.stderr, "an HDF5 input without a dataset")
r = strop("factorize", path("weights.h5") + ":/nope", "-s", "monarch", "-o", path("e.h5"),
          ok=False)
check(r.returncode == 1 and r.stderr.startswith("strop: error:"), "a missing HDF5 dataset")
r = strop("apply", out + ":had_bf", path("x48.npy"), "-o", path("e.npy"), ok=False)
check("length 64" in r.stderr and not os.path.exists(path("e.npy")), "shape mismatch in apply")
r = strop("apply", out, path("x64.npy"), "-o", path("e.npy"), ok=False)
check("name one" in r.stderr, "apply to a file of several operators needs a name")
r = strop("apply", out + ":nope", path("x64.npy"), "-o", path("e.npy"), ok=False)
check("no operator 'nope'" in r.stderr, "apply names an operator the file lacks")
np.save(path("x64_f64.npy"), rng.standard_normal((64, 2)))
r = strop("apply", out + ":had_bf", path("x64_f64.npy"), "-o", path("e.npy"), ok=False)
check("--cast" in r.stderr, "float64 signals for a float32 operator need --cast")
strop("apply", out + ":had_bf", path("x64_f64.npy"), "--cast", "-o", path("e.npy"))
np.save(path("x64_c.npy"), (x64 + 1j * x64).astype(np.complex64))
r = strop("apply", out + ":had_bf", path("x64_c.npy"), "-o", path("e2.npy"), ok=False)
check("imaginary" in r.stderr, "complex signals for a real operator")
x64_copy = np.load(path("x64.npy"))
r = strop("apply", out + ":had_bf", path("x64.npy"), "-o", path("x64.npy"), ok=False)
check("is the input" in r.stderr and np.array_equal(np.load(path("x64.npy")), x64_copy),
      "apply refuses to write over its input, which stays untouched")
r = strop("factorize", path("hadamard.npy"), "-s", "butterfly", "-o", path("nodir/x.h5"),
          ok=False)
check("no directory" in r.stderr and "strop factorize:" not in r.stdout,
      "factorize refuses an unwritable output before factorizing")
r = strop("factorize", path("hadamard.npy"), "-s", "butterfly", "--name", "a/b", "-o",
          path("e.h5"), ok=False)
check("invalid operator name" in r.stderr and not os.path.exists(path("e.h5")),
      "factorize refuses a bad name before factorizing")
if os.path.exists("/dev/full"):
    r = strop("bench", "ks", "--sizes", 16, "--repeats", 1, "--csv", "/dev/full", ok=False)
    check("failed" in r.stderr, "bench --csv reports a failed write")
r = strop("info", path("demo.h5") + ":nope", ok=False)
check("nope" in r.stderr, "info of a missing operator")
r = strop("info", path("missing.h5"), ok=False)
check("no such file" in r.stderr, "info of a missing file")
open(path("garbage.h5"), "wb").write(b"not an HDF5 file at all" * 10)
r = strop("info", path("garbage.h5"), ok=False)
check(r.returncode == 1 and r.stderr.startswith("strop: error:"), "info of a corrupt file")
r = strop("demo", "--size", 100, ok=False)
check("power of two" in r.stderr, "demo --size must be a power of two")
r = subprocess.run([STROP, "demo", "--device", "cuda", "--size", "16", "--batch", "2", "-o",
                    path("d.h5")], capture_output=True, text=True, cwd=WORK)
check(r.returncode == 0 or "CUDA" in r.stderr, "demo --device cuda: runs, or says why not")
r = strop(ok=False)
check("subcommand" in r.stderr.lower() or "required" in r.stderr.lower(), "no subcommand")

# ---- 9. bench ----------------------------------------------------------------------------
for what in ["ks", "kron", "blr"]:
    r = strop("bench", what, "--sizes", "64,128", "--batch", 4, "--repeats", 1)
    lines = r.stdout.strip().splitlines()
    check(lines and lines[0].startswith("bench,operator") and len(lines) >= 3,
          f"bench {what} prints CSV")
r = strop("bench", "factorize", "--sizes", 64, "--repeats", 1, "--csv", path("f.csv"))
check(os.path.exists(path("f.csv")) and "butterfly" in open(path("f.csv")).read(),
      "bench factorize --csv writes the CSV")
if shutil.which("gnuplot"):
    strop("bench", "ks", "--sizes", "64,128", "--batch", 4, "--repeats", 1, "--plot",
          path("ks.png"))
    check(os.path.exists(path("ks.png")) and os.path.getsize(path("ks.png")) > 1000,
          "bench --plot writes a PNG")

harness.finish()
