"""The strop tool on hostile paths and inputs: every problem is "strop: error: ..." and exit
1 (never an abort, a hang or lost data).

    test_cli_robustness.py STROP_EXE WORK_DIR

Exit 77 (skipped) without numpy.
"""
import os
import stat
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"skipped: {e} (scripts/deps.sh installs python3-numpy)")
    sys.exit(77)

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

harness.finish()
