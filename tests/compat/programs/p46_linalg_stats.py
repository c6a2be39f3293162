"""Linear algebra and statistics a tutorial touches: least squares by normal equations, inv/det/solve,
norms, eigen-free PCA by SVD, covariance by matmul, outer, cross products of rows via einsum."""

import numpy as np
import torch

rng = np.random.default_rng(46)
A = torch.tensor(rng.normal(size=(20, 3)), dtype=torch.float64)
y = A @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 0.01 * torch.tensor(rng.normal(size=20))
w = torch.linalg.solve(A.T @ A, A.T @ y)
w_inv = torch.linalg.inv(A.T @ A) @ A.T @ y
M = torch.tensor([[4.0, 1.0], [1.0, 3.0]])
L = torch.linalg.cholesky(M)
centered = A - A.mean(dim=0, keepdim=True)
U, S, Vh = torch.linalg.svd(centered, full_matrices=False)
cov = centered.T @ centered / (A.shape[0] - 1)
Q, R = torch.linalg.qr(A[:4, :3])
results = {
    "w": w,
    "w_inv": w_inv,
    "det": torch.linalg.det(M).item(),
    "det_m": M.det().item(),
    "inv": torch.inverse(M),
    "L": L,
    "S": S,
    "explained": (S**2 / (S**2).sum()),
    "cov": cov,
    "norm_fro": torch.linalg.norm(M).item(),
    "vector_norm": torch.linalg.vector_norm(M, ord=1).item(),
    "matrix_norm": torch.linalg.matrix_norm(M, ord=1).item(),
    "norm_inf": torch.linalg.norm(torch.tensor([3.0, -4.0]), ord=float("inf")).item(),
    "outer": torch.outer(M[0], M[1]),
    "dot": torch.dot(M[0], M[1]).item(),
    "mv": torch.mv(M, torch.tensor([1.0, 1.0])),
    "QR": (Q @ R - A[:4, :3]).abs().max().item() < 1e-10,
    "trace": torch.trace(M).item(),
    "cdist": torch.cdist(M, M + 1),
    "matrix_power": torch.linalg.matrix_power(M, 3),
    "kron_like": torch.einsum("i,j->ij", M[0], M[1]),
    "addmm": torch.addmm(M, M, M, beta=0.5, alpha=2.0),
    "baddbmm": list(torch.bmm(M.unsqueeze(0), M.unsqueeze(0)).shape),
    "corrcoef_manual": (cov[0, 1] / (cov[0, 0].sqrt() * cov[1, 1].sqrt())).item(),
    "cross": torch.linalg.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0])),
}
