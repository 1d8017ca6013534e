"""bench/minibude_grid.py - a diagnostic, not an hml model family: how far
a model with the physics' structure gets on the same collected poses.

    E(pose) = sum over ligand atoms l of G_type(l)(R(angles) p_l + t)

G_k is a learned 3-D grid per atom type (trilinear interpolation over
[-12, 12]^3 angstrom at spacing H), p_l the true ligand atoms
(bench/minibude_ligand.c), R the rotation Rz*Ry*Rx the physics applies:
a receptor grid, as docking codes score poses. The energy is linear in
the grid's values; trained with the relative loss (floor 1), Adam, a
cosine schedule. Prints one JSON line: MAPE (|E| >= 1) on its training
rows, its validation rows (10%) and the fresh poses.

usage: minibude_grid.py LIGAND TRAIN.h5[,MORE.h5...] FRESH.h5 H EPOCHS
"""
import json, math, sys, time

import h5py, numpy as np, torch
import torch.nn.functional as F

lig_path, train_paths, fresh_path, h, epochs = sys.argv[1:6]
h, epochs, L = float(h), int(epochs), 12.0
torch.set_num_threads(1)
torch.manual_seed(0)
lig = np.loadtxt(lig_path)
P = torch.tensor(lig[:, :3], dtype=torch.float32)
onehot = F.one_hot(torch.tensor(lig[:, 3], dtype=torch.long), 8).float()


def rows(path):
    g = h5py.File(path, "r")["minibude"]
    return torch.from_numpy(g["input"][:]), torch.from_numpy(g["output"][:, 0])


def atoms(x):
    """Every ligand atom's position under each pose, scaled into [-1, 1]."""
    a, t = x[:, :3], x[:, 3:]
    sx, cx, sy, cy = torch.sin(a[:, 0]), torch.cos(a[:, 0]), torch.sin(a[:, 1]), torch.cos(a[:, 1])
    sz, cz = torch.sin(a[:, 2]), torch.cos(a[:, 2])
    R = torch.stack([torch.stack([cy * cz, sx * sy * cz - cx * sz, cx * sy * cz + sx * sz], 1),
                     torch.stack([cy * sz, sx * sy * sz + cx * cz, cx * sy * sz - sx * cz], 1),
                     torch.stack([-sy, sx * cy, cx * cy], 1)], 1)
    return (torch.einsum("nij,lj->nli", R, P) + t[:, None, :]) / L


parts = [rows(p) for p in train_paths.split(",")]
Q, Y = atoms(torch.cat([p[0] for p in parts])), torch.cat([p[1] for p in parts])
xf, YF = rows(fresh_path)
QF = atoms(xf)
n = len(Q)
perm = torch.randperm(n)
va, tr = perm[:n // 10], perm[n // 10:]
G = int(round(2 * L / h)) + 1
grid = torch.zeros(1, 8, G, G, G, requires_grad=True)


def energy(q):
    v = F.grid_sample(grid, q[None, :, :, None, :], mode="bilinear", align_corners=True)
    return (v[0, :, :, :, 0].permute(1, 2, 0) * onehot).sum((1, 2))


def mape(q, t):
    with torch.no_grad():
        p = torch.cat([energy(q[i:i + 4096]) for i in range(0, len(q), 4096)])
    k = t.abs() >= 1
    return round(float(100 * ((p - t).abs()[k] / t.abs()[k]).mean()), 1)


opt = torch.optim.Adam([grid], lr=0.5)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
t0 = time.time()
for _ in range(epochs):
    order = tr[torch.randperm(len(tr))]
    for i in range(0, len(order), 256):
        b = order[i:i + 256]
        loss = ((energy(Q[b]) - Y[b]).abs() / Y[b].abs().clamp_min(1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
print(json.dumps({"model": "receptor grid %g A (%d^3 x 8 types)" % (h, G), "poses": n,
                  "epochs": epochs, "train_mape": mape(Q[tr], Y[tr]), "val_mape": mape(Q[va], Y[va]),
                  "fresh_mape": mape(QF, YF), "seconds": round(time.time() - t0)}))
