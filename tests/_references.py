"""Dense reference implementations written from the papers' equations.

Each function follows the equations as printed (in this package's
orientation: documents by terms), with the full ``n x m x k`` posterior
where the paper has one: tiny inputs only.  They share no code with the
package, so a test comparing an estimator with them cannot pass because both
sides run the same (wrong) kernel.
"""

import numpy as np


def tempered_posterior(p_z, p_d_z, p_w_z, beta=1.0):
    """``P_beta(z|d,w)`` proportional to ``[P(z) P(d|z) P(w|z)] ** beta``.

    Hofmann's tempered E-step (plain EM for ``beta = 1``); shape ``(n, m, k)``,
    zero on the cells the model gives no mass (their count is zero).
    """
    joint = (p_z[None, None, :] * p_d_z[:, None, :] * p_w_z.T[None, :, :]) ** beta
    total = joint.sum(axis=2, keepdims=True)
    return np.divide(joint, total, where=total > 0, out=np.zeros_like(joint))


def plsa_em(X, p_z, p_d_z, p_w_z, beta=1.0, n_steps=1):
    """Hofmann's (tempered) EM for ``P(d, w) = sum_z P(z) P(d|z) P(w|z)``.

    M-step from the expected counts ``n(d, w) P(z|d,w)``:
    ``P(z) = T_z / N``, ``P(d|z) = sum_w n P / T_z``, ``P(w|z) = sum_d n P / T_z``
    (paper 003, section 2; paper 000, eq. (1)-(2)).  Returns the three
    parameters after ``n_steps`` steps.
    """
    X = np.asarray(X, dtype=float)
    for _ in range(n_steps):
        counts = X[:, :, None] * tempered_posterior(p_z, p_d_z, p_w_z, beta)
        T = counts.sum(axis=(0, 1))
        p_z, p_d_z, p_w_z = T / X.sum(), counts.sum(axis=1) / T, (counts.sum(0) / T).T
    return p_z, p_d_z, p_w_z


def lee_seung(X, W, H, n_steps=1):
    """Lee & Seung's KL multiplicative updates, documents first, then terms.

    ``W <- W (X / WH) H^T / (1 H^T)``, then, with the ratio of the *updated*
    ``W``, ``H <- H W^T (X / WH) / (W^T 1)``: alternating, as in paper 001 and
    scikit-learn.  Returns ``(W, H)``.
    """
    X = np.asarray(X, dtype=float)

    def ratio(W, H):  # X / WH, 0 where X is (a term no document uses: WH = 0)
        M = W @ H
        return np.divide(X, M, where=X > 0, out=np.zeros_like(M))

    for _ in range(n_steps):
        W = W * (ratio(W, H) @ H.T) / H.sum(axis=1)[None, :]
        H = H * (W.T @ ratio(W, H)) / W.sum(axis=0)[:, None]
    return W, H


def joint_nmf(X, W, H, n_steps=1, alpha=0.0, normalize="components"):
    """Paper 002's joint updates under normalization constraints, from the
    posterior of the incoming state.

    With ``phi_dwz = W_dz H_zw / (WH)_dw`` and the expected counts
    ``c_dwz = X_dw phi_dwz``, the Lagrangian of the joint auxiliary function
    gives (eq. (27)-(29)):

    - Alg. 4 (rows of ``H`` sum to one, L1 penalty ``alpha`` on ``W``):
      ``H_zw = sum_d c_dwz / sum_dw c_dwz`` and
      ``W_dz = sum_w c_dwz / (1 + alpha)``;
    - Alg. 6 (rows of ``W`` sum to one too, the model ``diag(N_d) W H``):
      the same ``H`` and ``W_dz = sum_w c_dwz / N_d``.

    Returns ``(W, H)`` and the objective before every step and after the
    last (the KL divergence of the model, plus ``alpha * sum(W)``).
    """
    X = np.asarray(X, dtype=float)
    n_d = X.sum(axis=1)
    losses = []

    def model(W, H):
        return (n_d[:, None] * W if normalize == "both" else W) @ H

    def objective(W, H):
        M = model(W, H)
        seen = X > 0
        kl = np.sum(X[seen] * np.log(X[seen] / M[seen])) - X.sum() + M.sum()
        return kl + (alpha * W.sum() if normalize == "components" else 0.0)

    for _ in range(n_steps):
        losses.append(objective(W, H))
        # The posterior of an unseen cell is never used (its count is 0).
        phi = W[:, None, :] * H.T[None, :, :]
        total = phi.sum(axis=2, keepdims=True)
        counts = X[:, :, None] * np.divide(phi, total, where=total > 0, out=0 * phi)
        topic_word = counts.sum(axis=0).T
        H = topic_word / topic_word.sum(axis=1, keepdims=True)
        doc_topic = counts.sum(axis=1)
        W = doc_topic / (n_d[:, None] if normalize == "both" else 1 + alpha)
    losses.append(objective(W, H))
    return W, H, np.array(losses)
