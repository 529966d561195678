"""Rebuild the dense matrix of a strop operator stored in HDF5, with h5py and numpy only
(and apply any operator, including Strassen-Tile operators and expressions around them, which
may have none, to a batch of signals).

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


def _mixes_signals(g):
    """Whether the operator in g mixes the signals of a batch (a Strassen-Tile operator with
    inexact encoders, or an expression around one): A X differs from A applied to each
    column of X alone."""
    cols = int(g.attrs["cols"])
    x = np.random.default_rng(0).standard_normal((cols, 5))
    together = apply(g, x)
    alone = np.hstack([apply(g, x[:, [j]]) for j in range(x.shape[1])])
    return np.linalg.norm(together - alone) > 1e-3 * np.linalg.norm(together)


def _adjoint_map(g, y, conjugate):
    """A^T Y (A^H Y when conjugate) for an operator A that mixes the signals of a batch: the
    adjoint of the linear map X -> A X on rows x B matrices, from the matrix of that map."""
    rows, cols = int(g.attrs["rows"]), int(g.attrs["cols"])
    batch = y.shape[1]
    basis = np.eye(cols * batch).reshape(cols * batch, cols, batch, order="F")
    m = np.stack([apply(g, e).reshape(-1, order="F") for e in basis], axis=1)
    m = m.conj() if conjugate else m
    return (m.T @ y.reshape(-1, order="F")).reshape(cols, batch, order="F")


def apply(g, x):
    """Y = A X for the operator stored in group g and signals x (N x B).

    A strassen_tile_chain A_1 ... A_L (children "0" .. "L-1") applies its layers one after
    the other, the last child first, each padding its own partial last tile with zero
    signals. Expressions apply their children as the node says (so a Strassen-Tile operator
    inside a product, sum, stack or scaling sees the whole batch); the transpose or adjoint
    of an operator that mixes signals is the adjoint of its batch-linear map. Other kinds act
    on each signal separately: dense(g) @ x."""
    t = _type(g)
    kids = _children(g)
    if t == "strassen_tile":
        return strassen_tile_apply(g, x)
    if t == "strassen_tile_chain":
        if not kids or any(_type(k) != "strassen_tile" for k in kids):
            raise ValueError(f"{g.name}: a strassen_tile_chain needs strassen_tile children")
        for layer in reversed(kids):
            x = strassen_tile_apply(layer, x)
        return x
    if t == "product":
        return apply(kids[0], apply(kids[1], x))
    if t == "sum":
        return apply(kids[0], x) + apply(kids[1], x)
    if t == "scaled":
        return g.attrs["factor"] * apply(kids[0], x)
    if t in ("transpose", "adjoint"):
        if _mixes_signals(kids[0]):
            return _adjoint_map(kids[0], x, conjugate=t == "adjoint")
        m = dense(kids[0])
        return (m.conj() if t == "adjoint" else m).T @ x
    if t in ("vstack", "hstack", "block_diag"):
        parts, offset = [], 0
        for k in kids:
            width = int(k.attrs["cols"])
            part = x if t == "vstack" else x[offset:offset + width]
            parts.append(apply(k, part))
            offset += width
        return sum(parts) if t == "hstack" else np.vstack(parts)
    return dense(g) @ x


def dense(g):
    """The dense matrix of the operator stored in group g."""
    t = _type(g)
    rows, cols = int(g.attrs["rows"]), int(g.attrs["cols"])
    if t in ("strassen_tile", "strassen_tile_chain"):
        # Only when it acts on each signal separately (exact encoders): else there is no
        # dense matrix, use apply on a batch.
        if _mixes_signals(g):
            raise ValueError(f"{g.name}: this {t} mixes the signals of a batch: it has no "
                             "dense matrix (use apply)")
        return apply(g, np.eye(cols))
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
