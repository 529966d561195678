"""Rebuild the dense matrix of a strop operator stored in HDF5, with h5py and numpy only
(and apply a Strassen-Tile operator or chain, which may have none, to a batch of signals).

This is the reference reader of docs/hdf5-format.md: it follows the written schema, not
strop's code, so a test that compares its result with strop's own dense matrix checks
both the writer and the documentation.

    import h5py, strop_h5
    with h5py.File("ops.h5") as f:
        A = strop_h5.dense(f["dft"])
"""
import numpy as np


def _children(group):
    out = []
    while str(len(out)) in group:
        out.append(group[str(len(out))])
    return out


def _block_diag(blocks):
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = np.zeros((rows, cols), dtype=np.result_type(*blocks))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r += b.shape[0]
        c += b.shape[1]
    return out


def _ks_factor(g):
    a, b, c, d = (int(x) for x in g.attrs["pattern"])
    values = g["values"][...]  # shape (a, b, c, d)
    out = np.zeros((a * b * d, a * c * d), dtype=values.dtype)
    for i in range(a):
        for k in range(b):
            for l in range(c):
                for j in range(d):
                    out[(i * b + k) * d + j, (i * c + l) * d + j] = values[i, k, l, j]
    return out


def strassen_tile_apply(g, x):
    """Y = A X for a strassen_tile node g and signals x (N x B), from the schema alone.

    With W = A^T, for signal tile I, input tile L and output tile J (t x t tiles, vec
    column-major: entry (i, j) at i + t*j), vec(Y^T[I, J]) = D^T sum_L (E_X vec(X^T[I, L])
    * What[:, J, L]). The t signals of a tile are mixed; a partial last tile is padded with
    zero signals."""
    t, r = int(g.attrs["tile"]), int(g.attrs["rank"])
    rows, cols = int(g.attrs["rows"]), int(g.attrs["cols"])
    ex, dec = g["encode_signal"][...], g["decode"][...]  # (r, t*t)
    what = g["encoded_weight"][...]  # (r, M/t, N/t)
    assert ex.shape == dec.shape == (r, t * t) and what.shape == (r, rows // t, cols // t)
    batch = x.shape[1]
    ni = -(-batch // t)
    xt = np.zeros((ni * t, cols), dtype=np.result_type(x, what))
    xt[:batch] = x.T
    # v[I, L, i + t*l] = X^T[I*t + i, L*t + l]
    v = xt.reshape(ni, t, cols // t, t).transpose(0, 2, 3, 1).reshape(ni, cols // t, t * t)
    z = np.einsum("ilp,pjl->ijp", v @ ex.T, what)  # the r colour products
    y = (z @ dec).reshape(ni, rows // t, t, t)  # y[I, J, j, i] = Y^T[I*t + i, J*t + j]
    return y.transpose(0, 3, 1, 2).reshape(ni * t, rows)[:batch].T


def _type(g):
    t = g.attrs["strop_type"]
    return t.decode() if isinstance(t, bytes) else str(t)


def apply(g, x):
    """Y = A X for the operator stored in group g and signals x (N x B).

    A strassen_tile_chain A_1 ... A_L (children "0" .. "L-1") applies its layers one after
    the other, the last child first, each padding its own partial last tile with zero
    signals. Other kinds act on each signal separately: dense(g) @ x."""
    t = _type(g)
    if t == "strassen_tile":
        return strassen_tile_apply(g, x)
    if t == "strassen_tile_chain":
        layers = _children(g)
        if not layers or any(_type(k) != "strassen_tile" for k in layers):
            raise ValueError(f"{g.name}: a strassen_tile_chain needs strassen_tile children")
        for layer in reversed(layers):
            x = strassen_tile_apply(layer, x)
        return x
    return dense(g) @ x


def dense(g):
    """The dense matrix of the operator stored in group g."""
    t = _type(g)
    rows, cols = int(g.attrs["rows"]), int(g.attrs["cols"])
    kids = [dense(k) for k in _children(g)]
    if t == "dense":
        m = g["matrix"][...]
    elif t == "identity":
        m = np.eye(rows)
    elif t == "diagonal":
        m = np.diag(g["diagonal"][...])
    elif t == "permutation":
        m = np.eye(rows)[g["indices"][...]]  # row i of P x is row indices[i] of x
    elif t == "ks_factor":
        m = _ks_factor(g)
    elif t == "ks_chain":
        m = kids[0]
        for k in kids[1:]:
            m = m @ k
    elif t == "lowrank":
        m = g["left"][...] @ g["right"][...]
    elif t == "monarch":
        left, right = g["left"][...], g["right"][...]  # (rb, cb, h, r), (rb, cb, r, w)
        rb, cb, h, _ = left.shape
        w = right.shape[3]
        m = np.zeros((rows, cols), dtype=left.dtype)
        for k in range(rb):
            for l in range(cb):
                m[k * h:(k + 1) * h, l * w:(l + 1) * w] = left[k, l] @ right[k, l]
    elif t == "blast":
        u, s, v = g["left"][...], g["diagonals"][...], g["right"][...]  # (rb,h,r) (rb,cb,r) (cb,r,w)
        rb, h, _ = u.shape
        cb, _, w = v.shape
        m = np.zeros((rows, cols), dtype=u.dtype)
        for k in range(rb):
            for l in range(cb):
                m[k * h:(k + 1) * h, l * w:(l + 1) * w] = u[k] @ np.diag(s[k, l]) @ v[l]
    elif t == "strassen_tile":
        # Only when it acts on each signal separately (exact encoders): else there is no
        # dense matrix, use strassen_tile_apply on a batch.
        m = strassen_tile_apply(g, np.eye(cols))
    elif t == "strassen_tile_chain":
        # Likewise only when every layer acts on each signal separately; else use apply.
        m = kids[0]
        for k in kids[1:]:
            m = m @ k
    elif t == "product":
        m = kids[0] @ kids[1]
    elif t == "sum":
        m = kids[0] + kids[1]
    elif t == "scaled":
        m = g.attrs["factor"] * kids[0]
    elif t == "transpose":
        m = kids[0].T
    elif t == "adjoint":
        m = kids[0].conj().T
    elif t == "kron":
        m = kids[0]
        for k in kids[1:]:
            m = np.kron(m, k)
    elif t == "block_diag":
        m = _block_diag(kids)
    elif t == "vstack":
        m = np.vstack(kids)
    elif t == "hstack":
        m = np.hstack(kids)
    else:
        raise ValueError(f"{g.name}: unknown strop_type {t!r}")
    if m.shape != (rows, cols):
        raise ValueError(f"{g.name}: {t} gives {m.shape}, attributes say {(rows, cols)}")
    return m
