"""End-to-end test of `strop transform` on small .npy, HDF5 and WAV files, with numpy as the
independent reference (np.fft for the DFT, the defining sums for Hadamard and the DCT) and
Python's own `wave` module writing the 16-bit PCM input; then the error cases.

    test_transform_cli.py STROP_EXE WORK_DIR

Exit 77 (skipped) without numpy/h5py.
"""
import os
import struct
import sys
import wave

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e} (scripts/deps.sh installs python3-numpy and python3-h5py)")
    sys.exit(77)

from cli_harness import Harness, rel  # noqa: E402

harness = Harness(sys.argv)
path, check, strop = harness.path, harness.check, harness.strop
rng = np.random.default_rng(7)


def sylvester(n):
    h = np.array([[1.0]])
    while h.shape[0] < n:
        h = np.kron(h, np.array([[1.0, 1.0], [1.0, -1.0]]))
    return h


def dct2(x):
    """2 sum_j x_j cos(pi k (2j+1) / 2n) along axis 0 (FFTW's REDFT10, scipy's default)."""
    n = x.shape[0]
    k, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * n)) @ x


def read_float_wav(file):
    """A 32-bit float WAV as frames x channels (Python's wave module reads only PCM)."""
    data = open(file, "rb").read()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    at, channels, samples = 12, None, None
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        body = data[at + 8:at + 8 + size]
        if cid == b"fmt ":
            tag, channels = struct.unpack("<HH", body[:4])
            assert tag == 3
        elif cid == b"data":
            samples = np.frombuffer(body, dtype="<f4").reshape(-1, channels)
        at += 8 + size + size % 2
    return samples


# ---- help ----------------------------------------------------------------------------------
r = strop("transform", "--help")
check("--kind" in r.stdout and "--frame" in r.stdout, "transform --help lists its options")
r = strop("--help")
check("transform" in r.stdout, "strop --help lists transform")

# ---- .npy: Hadamard, DFT (real signals promoted), batch rows --------------------------------
x = rng.standard_normal((64, 5))
np.save(path("x.npy"), x)
strop("transform", "--kind", "hadamard", "x.npy", "-o", "hx.npy", "-q")
check(rel(np.load(path("hx.npy")), sylvester(64) @ x) < 1e-12, "hadamard of .npy matches")
strop("transform", "--kind", "hadamard", "--inverse", "hx.npy", "-o", "hxx.npy", "--factors", 6)
check(rel(np.load(path("hxx.npy")), x) < 1e-12, "inverse hadamard (full chain) gives x back")

x48 = rng.standard_normal((48, 3)).astype(np.float32)  # 48 = 3 * 16: mixed radix
np.save(path("x48.npy"), x48)
strop("transform", "--kind", "dft", "x48.npy", "-o", "f48.npy")
f48 = np.load(path("f48.npy"))
check(f48.dtype == np.complex64, "dft of float32 signals is complex64")
check(rel(f48, np.fft.fft(x48, axis=0)) < 1e-5, "dft of .npy matches numpy.fft")
strop("transform", "--kind", "dft", "--inverse", "f48.npy", "-o", "x48back.npy")
check(rel(np.load(path("x48back.npy")), x48) < 1e-5, "inverse dft gives the signals back")
strop("transform", "--kind", "dft", "--norm", "ortho", "--batch-rows", "x48.npy", "-o",
      "f48rows.npy")
check(rel(np.load(path("f48rows.npy")), np.fft.fft(x48, axis=1, norm="ortho")) < 1e-5,
      "--batch-rows --norm ortho matches numpy.fft(axis=1, norm='ortho')")

# ---- HDF5 datasets: DCT -------------------------------------------------------------------
y = rng.standard_normal((40, 4))
with h5py.File(path("sig.h5"), "w") as f:
    f["y"] = y
strop("transform", "--kind", "dct", "sig.h5:/y", "-o", "sig.h5:/dct_y")
with h5py.File(path("sig.h5"), "r") as f:
    check(rel(f["dct_y"][()], dct2(y)) < 1e-12, "dct of an HDF5 dataset matches the sums")
    check(rel(f["y"][()], y) == 0, "the input dataset is untouched")
strop("transform", "--kind", "dct", "--inverse", "sig.h5:/dct_y", "-o", "back.h5:/y")
with h5py.File(path("back.h5"), "r") as f:
    check(rel(f["y"][()], y) < 1e-12, "inverse dct of the HDF5 dataset gives y back")

# ---- WAV: 16-bit PCM stereo in, float WAV out ----------------------------------------------
pcm = (rng.standard_normal((256, 2)) * 4000).astype("<i2")
with wave.open(path("in.wav"), "wb") as w:
    w.setnchannels(2)
    w.setsampwidth(2)
    w.setframerate(8000)
    w.writeframes(pcm.tobytes())
samples = pcm.astype(np.float64) / 32768
strop("transform", "--kind", "dct", "--norm", "ortho", "in.wav", "-o", "spec.npy")
spec = np.load(path("spec.npy"))
ortho = dct2(samples) / 2 * np.sqrt(2 / 256)
ortho[0] /= np.sqrt(2)
check(spec.shape == (256, 2) and rel(spec, ortho) < 1e-5, "dct of each WAV channel matches")
strop("transform", "--kind", "dct", "--norm", "ortho", "--inverse", "spec.npy", "-o", "back.wav")
back = read_float_wav(path("back.wav"))
check(back is not None and rel(back, samples) < 1e-5, "inverse dct to WAV gives the audio back")
strop("transform", "--kind", "dft", "in.wav", "-o", "f.npy")
strop("transform", "--kind", "dft", "--inverse", "f.npy", "-o", "fback.wav")
check(rel(read_float_wav(path("fback.wav")), samples) < 1e-5,
      "dft then inverse dft of WAV audio to WAV (real part) gives it back")

# ---- file types by extension, in any case: .Wav, .wAv, .NPY, .H5 ---------------------------
with open(path("in.wav"), "rb") as f, open(path("in.Wav"), "wb") as g:
    g.write(f.read())
strop("transform", "--kind", "dct", "--norm", "ortho", "in.Wav", "-o", "spec_case.NPY")
check(os.path.exists(path("spec_case.NPY")) and rel(np.load(path("spec_case.NPY")), ortho) < 1e-5,
      "'in.Wav' is read as WAV, 'spec_case.NPY' written as .npy")
strop("transform", "--kind", "dct", "--norm", "ortho", "--inverse", "spec_case.NPY", "-o",
      "back.wAv")
check(os.path.exists(path("back.wAv")) and rel(read_float_wav(path("back.wAv")), samples) < 1e-5,
      "'back.wAv' is written as WAV")
strop("transform", "--kind", "dct", "in.Wav", "-o", "SIG.H5:/dct")
if check(os.path.exists(path("SIG.H5")), "'SIG.H5:/dct' is written"):
    with h5py.File(path("SIG.H5"), "r") as f:
        check(f["dct"].shape == (256, 2) and rel(f["dct"][()], dct2(samples)) < 1e-5,
              "'SIG.H5:/dct' is HDF5 and holds the DCT of each channel")

# ---- short-time transforms ----------------------------------------------------------------
s = rng.standard_normal((300, 1))  # 300 samples: frames of 64 every 32: 8, 12 samples left
np.save(path("s.npy"), s)
strop("transform", "--kind", "hadamard", "--frame", 64, "--hop", 32, "s.npy", "-o", "st.npy")
frames = np.stack([s[f * 32:f * 32 + 64, 0] for f in range(8)], axis=1)
st = np.load(path("st.npy"))
check(st.shape == (64, 8) and rel(st, sylvester(64) @ frames) < 1e-12,
      "short-time hadamard: frame f is column f")
strop("transform", "--kind", "hadamard", "--inverse", "--frame", 64, "--hop", 32, "st.npy",
      "-o", "sback.npy")
check(rel(np.load(path("sback.npy")), s[:32 * 7 + 64]) < 1e-12,
      "inverse short-time transform puts the frames back (overlap average)")
strop("transform", "--kind", "dct", "--frame", 128, "--hop", 64, "in.wav", "-o", "stft.npy")
wav_frames = np.stack([samples[f * 64:f * 64 + 128, c] for c in range(2) for f in range(3)],
                      axis=1)  # frame f of channel c is column 3 c + f
stft = np.load(path("stft.npy"))
check(stft.shape == (128, 6) and rel(stft, dct2(wav_frames)) < 1e-5,
      "WAV frames: 3 per channel, channel-major, each transformed")

# ---- errors ---------------------------------------------------------------------------------
r = strop("transform", "--kind", "fft", "x.npy", "-o", "e.npy", ok=False)
check("unknown transform kind 'fft'" in r.stderr, "a bad kind names itself")
np.save(path("x100.npy"), rng.standard_normal((100, 2)))
r = strop("transform", "--kind", "hadamard", "x100.npy", "-o", "e.npy", ok=False)
check("n = 100" in r.stderr, "an unsupported size names n")
r = strop("transform", "--kind", "dft", "x48.npy", "-o", "x48.npy", ok=False)
check("is the input" in r.stderr and rel(np.load(path("x48.npy")), x48) == 0,
      "writing over the input is refused and the input is untouched")
wav_bytes = open(path("in.wav"), "rb").read()
open(path("cut.wav"), "wb").write(wav_bytes[:len(wav_bytes) - 301])
r = strop("transform", "--kind", "dct", "cut.wav", "-o", "e.npy", ok=False)
check("truncated" in r.stderr, "a truncated WAV file is an error naming the problem")
r = strop("transform", "--kind", "dft", "in.wav", "-o", "e.wav", ok=False)
check("complex" in r.stderr and not os.path.exists(path("e.wav")),
      "a complex spectrum is not written to WAV")
r = strop("transform", "--kind", "dct", "--frame", 64, "s.npy", "-o", "e.wav", ok=False)
check("frames" in r.stderr, "short-time frames are not written as audio")
r = strop("transform", "--kind", "dct", "--frame", 400, "s.npy", "-o", "e.npy", ok=False)
check("longer than the signals" in r.stderr, "a frame longer than the signal is an error")
v64 = rng.standard_normal(64)  # a 1-D array: one signal, never 64 signals of length 1
np.save(path("v64.npy"), v64)
r = strop("transform", "--kind", "hadamard", "--batch-rows", "v64.npy", "-o", "e_rows.npy",
          ok=False)
check("1-D array" in r.stderr and "64 signals of length 1" in r.stderr and
      "drop --batch-rows" in r.stderr and not os.path.exists(path("e_rows.npy")),
      f"--batch-rows on a 1-D array says what is wrong and what to do ({r.stderr.strip()})")
strop("transform", "--kind", "hadamard", "v64.npy", "-o", "h_v64.npy", "-q")
check(rel(np.load(path("h_v64.npy"))[:, 0], sylvester(64) @ v64) < 1e-12,
      "without --batch-rows a 1-D array is one signal")
r = strop("transform", "--kind", "dct", "missing.npy", "-o", "e.npy", ok=False)
check("missing.npy" in r.stderr, "a missing input names the file")
for bad in (["--frame", -8], ["--frame", 0, "--hop", 3], ["--frame", 64, "--hop", 0],
            ["--frame", 64, "--hop", -3], ["--sample-rate", 0]):
    r = strop("transform", "--kind", "hadamard", *bad, "s.npy", "-o", "e_opt.npy", ok=False)
    check(not os.path.exists(path("e_opt.npy")), f"transform {bad} is refused, nothing written")

harness.finish()
