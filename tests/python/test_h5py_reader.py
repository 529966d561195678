"""A strop HDF5 file read with h5py alone: every operator rebuilt from the documented schema
(strop_h5.py) must equal the dense matrix strop computed, and Strassen-Tile operators and
chains (which may have no dense matrix) applied to a batch must give strop's result. Exit 77
(skipped) without h5py.

    test_h5py_reader.py WRITE_SAMPLE_EXE OUT.h5
"""
import os
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e} (scripts/deps.sh installs python3-h5py)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strop_h5  # noqa: E402

writer, path = sys.argv[1], sys.argv[2]
subprocess.run([writer, path], check=True)

tolerance = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-12, "complex128": 1e-12}
failures = 0
checked = 0
applied = 0
chains = 0


def compare(name, what, got, expected, scalar):
    global failures
    error = np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-30)
    if got.shape != expected.shape or not error <= tolerance[scalar]:
        failures += 1
        print(f"FAIL {name} ({what}): shape {got.shape} vs {expected.shape}, "
              f"relative error {error:.2e}")


with h5py.File(path, "r") as f:
    assert int(f.attrs["strop_format_version"]) == 1
    for name, g in f.items():
        if "strop_type" not in g.attrs:
            continue
        scalar = g.attrs["scalar_type"]
        if name in f["expected"]:
            compare(name, "dense", strop_h5.dense(g), f["expected"][name][...], scalar)
            checked += 1
        if name in f["applied"]:  # Y = A X recomputed from the schema (Strassen-Tile inside)
            x = f["signals"][name][...]
            compare(name, "applied", strop_h5.apply(g, x), f["applied"][name][...], scalar)
            applied += 1
            chains += strop_h5._type(g) == "strassen_tile_chain"
print(f"{checked} operators rebuilt and {applied} applied ({chains} Strassen-Tile chains) "
      f"with h5py, {failures} failures")
# Per scalar type: 2 Strassen-Tile operators, 8 expressions around one, and a chain.
sys.exit(1 if failures or checked < 4 * 21 or applied < 4 * 11 or chains < 4 else 0)
