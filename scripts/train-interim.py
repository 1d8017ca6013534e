#!/usr/bin/python3
"""Interim trainer: fit a small MLP to one region of an hml collection file.

This stands in for `hml train` (issue #3, libtorch C++ through the CLI) so
that the main job can show infer mode before the CLI exists. It writes plain
TorchScript with the normalisation inside and the `hml_input_shape` /
`hml_output_shape` attributes the runtime checks.

usage: train-interim.py DATA.h5 REGION OUT.pt [--epochs N] [--width W] [--seed S]
"""
import argparse
import sys
from typing import List

import h5py
import numpy as np
import torch


class Mlp(torch.nn.Module):
    hml_input_shape: List[int]
    hml_output_shape: List[int]

    def __init__(self, nin, nout, width, x_mean, x_std, y_mean, y_std):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(nin, width), torch.nn.Tanh(),
            torch.nn.Linear(width, width), torch.nn.Tanh(),
            torch.nn.Linear(width, nout))
        self.register_buffer("x_mean", x_mean)
        self.register_buffer("x_std", x_std)
        self.register_buffer("y_mean", y_mean)
        self.register_buffer("y_std", y_std)
        self.hml_input_shape = [nin]
        self.hml_output_shape = [nout]

    def forward(self, x):
        return self.net((x - self.x_mean) / self.x_std) * self.y_std + self.y_mean


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("region")
    ap.add_argument("out")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()

    with h5py.File(a.data, "r") as f:
        if a.region not in f:
            sys.exit(f"train-interim: error: no region '{a.region}' in '{a.data}'")
        x = np.asarray(f[a.region]["input"], dtype=np.float32)
        y = np.asarray(f[a.region]["output"], dtype=np.float32)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y) or len(x) < 16:
        sys.exit(f"train-interim: error: need row data, got {x.shape} -> {y.shape}")
    torch.manual_seed(a.seed)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    perm = torch.randperm(len(x))
    nval = max(1, len(x) // 10)
    val, tr = perm[:nval], perm[nval:]
    model = Mlp(x.shape[1], y.shape[1], a.width, x[tr].mean(0), x[tr].std(0) + 1e-12,
                y[tr].mean(0), y[tr].std(0) + 1e-12)
    opt = torch.optim.Adam(model.net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.epochs)
    for _ in range(a.epochs):
        for idx in tr[torch.randperm(len(tr))].split(256):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(
                (model(x[idx]) - model.y_mean) / model.y_std,
                (y[idx] - model.y_mean) / model.y_std)
            loss.backward()
            opt.step()
        sched.step()
    with torch.no_grad():
        rmse = float(((model(x[val]) - y[val]) ** 2).mean().sqrt())
    torch.jit.script(model.eval()).save(a.out)
    print(f"train-interim: {len(tr)} training rows, validation rmse {rmse:.4g}, wrote {a.out}")


if __name__ == "__main__":
    main()
