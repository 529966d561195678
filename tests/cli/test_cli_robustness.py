"""The strop tool on hostile paths and inputs: every problem is "strop: error: ..." and exit
1 (never an abort, a hang or lost data).

    test_cli_robustness.py STROP_EXE WORK_DIR

Exit 77 (skipped) without numpy; the checks that read HDF5 files are left out without h5py.
"""
import os
import resource
import signal
import stat
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"skipped: {e} (scripts/deps.sh installs python3-numpy)")
    sys.exit(77)
try:
    import h5py
except ImportError:
    h5py = None

from cli_harness import Harness

harness = Harness(sys.argv)
path, check, strop = harness.path, harness.check, harness.strop


def refused(*args, mention, timeout=60):
    """Runs strop expecting exit 1 with a strop error message that mentions `mention`."""
    r = strop(*args, ok=False, timeout=timeout)
    check(r.returncode == 1 and r.stderr.startswith("strop: error: ") and mention in r.stderr,
          f"strop {' '.join(map(str, args))[:80]} says '{mention}' (exit {r.returncode}: "
          f"{r.stderr.strip()[:200]})")
    return r


def npy_header_only(name, shape):
    """A float64 .npy file of an empty array of `shape` (written by hand: numpy will not
    make a (2**62, 0) array's header for us without the array)."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % (shape,)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path(name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())


rng = np.random.default_rng(3)
np.save(path("a16.npy"), rng.standard_normal((16, 16)))
np.save(path("x8.npy"), rng.standard_normal((8, 2)).astype(np.float32))
strop("demo", "-n", 8, "-b", 1, "--device", "cpu", "-o", path("ops.h5"))

# ---- paths that cannot even be checked: an error, not an abort (exit 134) ----------------
os.symlink("loop.h5", path("loop.h5"))
refused("info", "loop.h5", mention="symbolic links")
long_name = "a" * 300
refused("info", long_name + ".h5", mention="File name too long")
refused("apply", long_name + ".h5", "x8.npy", "-o", "y.npy", mention="File name too long")
refused("transform", "--kind", "hadamard", long_name + ".npy", "-o", "y.npy",
        mention="File name too long")
refused("factorize", "a16.npy", "-s", "lowrank", "--rank", 2, "-o", long_name + ".h5",
        mention="File name too long")

# ---- the demo writes into an existing file, keeping what else it holds -------------------
strop("factorize", "a16.npy", "-s", "lowrank", "--rank", 2, "-o", "keep.h5", "--name", "mine")
strop("demo", "-n", 8, "-b", 1, "--device", "cpu", "-o", "keep.h5")
r = strop("info", "keep.h5")
check(all(name in r.stdout for name in ("mine", "dft", "hadamard")),
      "the demo kept the operator already in its output file")
with open(path("notes.txt"), "w") as f:
    f.write("my notes\n")
refused("demo", "-n", 8, "-b", 1, "--device", "cpu", "-o", "notes.txt", mention="notes.txt")
with open(path("notes.txt")) as f:
    check(f.read() == "my notes\n", "the demo left a file that is not HDF5 as it was")

# ---- empty matrices are refused at once, whatever their other dimension ------------------
npy_header_only("huge_rows_empty.npy", (2**62, 0))
npy_header_only("huge_cols_empty.npy", (0, 2**62))
npy_header_only("empty.npy", (0, 0))
for name, structure in (("huge_rows_empty.npy", "kron"), ("huge_cols_empty.npy", "monarch"),
                        ("empty.npy", "butterfly")):
    try:
        refused("factorize", name, "-s", structure, "-o", "e.h5", mention="empty", timeout=30)
    except subprocess.TimeoutExpired:
        check(False, f"factorize {name} -s {structure} returns (it hung)")

# ---- outputs keep their mode; read-only ones are refused ---------------------------------
with open(path("private.npy"), "w") as f:
    f.write("secret\n")
os.chmod(path("private.npy"), 0o600)
strop("apply", "ops.h5:hadamard", "x8.npy", "-o", "private.npy", "-q")
check(stat.S_IMODE(os.stat(path("private.npy")).st_mode) == 0o600,
      "an output written over a 0600 file stays 0600")
with open(path("read_only.npy"), "w") as f:
    f.write("keep\n")
os.chmod(path("read_only.npy"), 0o444)
refused("apply", "ops.h5:hadamard", "x8.npy", "-o", "read_only.npy", "-q", mention="not writable")
with open(path("read_only.npy")) as f:
    check(f.read() == "keep\n", "a read-only output file is left as it was")

# ---- NaN converts to NaN: not a lossy conversion -----------------------------------------
x = np.arange(8.0).reshape(8, 1)
x[3, 0] = np.nan
np.save(path("x_nan.npy"), x)  # float64, for a float32 operator
strop("apply", "ops.h5:hadamard", "x_nan.npy", "-o", "y_nan.npy", "-q")
check(os.path.exists(path("y_nan.npy")), "apply converts float64 signals holding a NaN")

# ---- the standard output that cannot be written is an error ------------------------------
with open("/dev/full", "w") as full:
    r = subprocess.run([harness.exe, "info", "ops.h5"], stdout=full, stderr=subprocess.PIPE,
                       text=True, cwd=harness.work, timeout=60)
check(r.returncode == 1 and "cannot write the standard output" in r.stderr,
      f"strop info > /dev/full fails (exit {r.returncode}: {r.stderr.strip()})")

# ---- a directory given as a WAV file is called a directory -------------------------------
os.mkdir(path("dir.wav"))
refused("transform", "--kind", "hadamard", "dir.wav", "-o", "y.npy", mention="is a directory")

# ---- --batch-rows on a 1-D array: what is wrong and what to do ----------------------------
np.save(path("v8.npy"), np.arange(8, dtype=np.float32))
r = refused("apply", "ops.h5:hadamard", "--batch-rows", "v8.npy", "-o", "e_rows.npy",
            mention="1-D array")
check("8 signals of length 1" in r.stderr and "drop --batch-rows" in r.stderr,
      "apply --batch-rows on a 1-D array says to drop --batch-rows")

# ---- bench --csv: the old CSV is replaced whole or kept --------------------------------------
OLD_CSV = "bench,operator\nold,results\n"


def old_csv(name, mode=0o644):
    with open(path(name), "w") as f:
        f.write(OLD_CSV)
    os.chmod(path(name), mode)


def csv_kept(name):
    with open(path(name)) as f:
        return f.read() == OLD_CSV


def file_size_limit(crash):
    """For the child: files may grow to 64 bytes, so writing the CSV (some 250 bytes) fails
    as on a full disk (write() says EFBIG), or with crash=True kills strop (SIGXFSZ)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL if crash else signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
    return limit


bench_args = ["bench", "ks", "--sizes", 16, "--batch", 2, "--repeats", 1]
for crash in (False, True):
    old_csv("old.csv")
    r = subprocess.run([harness.exe, *map(str, bench_args), "--csv", "old.csv"],
                       capture_output=True, text=True, cwd=harness.work, timeout=120,
                       preexec_fn=file_size_limit(crash))
    what = "killed while writing its --csv (SIGXFSZ)" if crash else "whose --csv write fails"
    check(r.returncode == (-signal.SIGXFSZ if crash else 1),
          f"bench {what}: exit {r.returncode} ({r.stderr.strip()[-200:]})")
    check(csv_kept("old.csv"), f"bench {what} leaves the old CSV as it was")
    if not crash:
        check(not [f for f in os.listdir(harness.work) if f.startswith(".old.csv.tmp")],
              "a failed bench --csv write leaves no temporary file")
strop(*bench_args, "--csv", "old.csv")
with open(path("old.csv")) as f:
    check(f.read().startswith("bench,operator,device"), "bench --csv replaces the old CSV")
old_csv("read_only.csv", 0o444)
refused(*bench_args, "--csv", "read_only.csv", mention="not writable")
check(csv_kept("read_only.csv"), "bench leaves a read-only --csv file as it was")
# Refused before the run: this one would take minutes.
try:
    refused("bench", "ks", "--sizes", 4096, "--batch", 4096, "--repeats", 1000, "--csv",
            "no_dir/b.csv", mention="no directory", timeout=30)
except subprocess.TimeoutExpired:
    check(False, "bench --csv into a missing directory is refused before the run (it ran)")

# ---- ':' in directory names and in dataset and operator names ------------------------------
# A file name may hold ':' and so may an HDF5 dataset name: "a:b/y.h5" is a file in the
# directory "a:b", never the dataset "/b/y.h5" of a file "a".
os.mkdir(path("a:b"))
np.save(path("a:b/x8.npy"), np.load(path("x8.npy")))
strop("apply", "ops.h5:hadamard", "x8.npy", "-o", "y8.npy", "-q")
y8 = np.load(path("y8.npy"))
strop("apply", "ops.h5:hadamard", "a:b/x8.npy", "-o", "a:b/y8.npy", "-q")
check(os.path.exists(path("a:b/y8.npy")) and np.array_equal(np.load(path("a:b/y8.npy")), y8),
      "apply reads and writes .npy files in a directory 'a:b'")
refused("apply", "ops.h5:hadamard", "a:b/x8.npy", "-o", "a:b/y.h5", mention="names no dataset")
check(not os.path.exists(path("a")), "an output 'a:b/y.h5' does not write a file 'a'")
strop("apply", "ops.h5:hadamard", "a:b/x8.npy", "-o", "a:b/s.h5:/y:1", "-q")
strop("apply", "ops.h5:hadamard", "--transpose", "a:b/s.h5:/y:1", "-o", "a:b/back.npy", "-q")
strop("apply", "ops.h5:hadamard", "--transpose", "y8.npy", "-o", "back.npy", "-q")
check(os.path.exists(path("a:b/back.npy")) and os.path.exists(path("back.npy")) and
      np.array_equal(np.load(path("a:b/back.npy")), np.load(path("back.npy"))),
      "apply writes and reads the dataset '/y:1' of a file in a directory 'a:b'")
if h5py and os.path.exists(path("a:b/s.h5")):
    with h5py.File(path("a:b/s.h5"), "r") as f:
        check("y:1" in f and np.array_equal(f["y:1"][()], y8), "h5py sees the dataset 'y:1'")
strop("factorize", "a16.npy", "-s", "lowrank", "--rank", 2, "-o", "a:b/ops.h5")
r = strop("info", "a:b/ops.h5")
check("lowrank" in r.stdout, "factorize -o 'a:b/ops.h5' writes there, the name its default")
strop("factorize", "a16.npy", "-s", "lowrank", "--rank", 2, "-o", "a:b/ops.h5:c:d")
r = strop("info", "a:b/ops.h5:c:d")
check("c:d" in r.stdout, "factorize -o 'a:b/ops.h5:c:d' saves the operator 'c:d' there")

harness.finish()
