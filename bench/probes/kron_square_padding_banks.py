#!/usr/bin/env python3
# Session 54 (CPU only): bank-conflict degree of the square Kron kernel's step reads (float,
# P = 16, chunk 16^3) under two paddings: one float per 128 bytes (main) and 16 bytes per 128
# bytes (what 16-byte copies need).
def pad1(e): return e + e // 32
def pad4(e): return e + 4 * (e // 32)
def scalar_degree(addrs):  # 32 word addresses of one warp instruction
    banks = {}
    for a in set(addrs): banks.setdefault(a % 32, set()).add(a)
    return max(len(v) for v in banks.values())
def vec_degree(addrs):  # 32 float addresses, 16 B each; 8 threads per wavefront
    worst = 1
    for q in range(4):
        units = {}
        for a in set(addrs[8*q:8*q+8]):
            u = a // 4
            units.setdefault(u % 8, set()).add(u)
        worst = max(worst, max(len(v) for v in units.values()))
    return worst
P = 16
for name, pad in (("1 float / 128 B", pad1), ("16 B / 128 B", pad4)):
    # step 0 (c = 1): thread k's row is 16 contiguous floats at (r0 + k) * 16
    s0 = max(scalar_degree([pad((r0 + k) * P + p) for k in range(32)]) for r0 in range(0, 256, 32) for p in range(P))
    v0 = max(vec_degree([pad((r0 + k) * P + 4 * q) for k in range(32)]) for r0 in range(0, 256, 32) for q in range(4))
    out = [f"step 0 scalar {s0}-way, step 0 LDS.128 {v0}-way"]
    for S in (1, 2):
        c = P ** S
        worst = 1
        for g0 in range(0, 256, 32):
            for p in range(P):
                rows = [g0 + k for k in range(32)]  # consecutive rows (row_of not applied)
                addrs = [pad((r // c) * P * c + (r % c) + p * c) for r in rows]
                worst = max(worst, scalar_degree(addrs))
        out.append(f"step {S} (c = {c}) scalar, consecutive rows {worst}-way")
    print(name + ": " + "; ".join(out))
