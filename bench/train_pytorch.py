#!/usr/bin/python3
"""bench/train_pytorch.py - the PyTorch baseline of `hml train`.

Trains what lib/train/train.cpp trains, in plain Python PyTorch, on the same
collection file, and reports its throughput measured as hml measures it:

    samples_per_second = training rows * epochs / train_step_seconds

where train_step_seconds is the sum, over epochs, of the time from the start
of the epoch's shuffle to the end of its last optimiser step (the per-epoch
shuffle, the gather of the shuffled rows, and forward, loss, backward,
gradient clipping and Adam step of every mini-batch). Not timed, on both
sides: reading the file, the split, the normalisation, the initialisation,
and the per-epoch validation (which both sides still run, once per epoch,
with its one .item() sync, the best-weights copy and the plateau schedule).

What is the same as lib/train/train.cpp:
  - the data: region `label`'s `input`/`output` rows as float32, rows as
    hml counts them (the shorter side, limited by the `calls` table), rows
    holding NaN/Inf dropped (`hml train`'s default);
  - the split: test rows first, then validation, from the same
    std::mt19937_64 permutation (reproduced below), so both sides train on
    the very same rows;
  - the normalisation: per-feature mean and population std of the training
    rows, computed in double, std < 1e-8 replaced by 1 for inputs and (as
    a divisor) for outputs; applied once before training;
  - the model: Linear/activation layers as models/mlp.ts's core(),
    initialised by torch.manual_seed(seed) and nn.Linear's default
    initialisation, which is what lib/train/train.cpp reproduces;
  - the optimiser: Adam (or AdamW) with the same lr and weight decay and
    default betas/eps; clip_grad_norm_ to `clip` before every step; MSE loss
    on normalised outputs; the training loss summed in a tensor (no per-step
    sync) and read once per epoch; the last, shorter batch of an epoch kept;
  - the schedule: plateau (halve the lr after patience/2, or 5, epochs
    without a better validation RMSE, not below 1e-6), cosine or none;
    early stopping after `patience` epochs (0: off);
  - torch.set_num_threads(threads).
What differs, by design (a PyTorch user's idiomatic code): the epochs'
shuffles come from torch.randperm with its own seeded generator, not from
hml's Fisher-Yates over std::mt19937_64; the parameters are separate
nn.Linear tensors and the backward is autograd's, with gradients set to
None between steps (hml keeps parameters and gradients in two flat buffers
and writes an MLP's backward out, the same kernels without autograd: its
own optimisations, not less work). Adam runs its per-tensor loop, torch
1.13's default on CPU; --foreach picks the multi-tensor one, no faster here.
"""
import argparse
import json
import math
import sys
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F

MASK64 = (1 << 64) - 1


class MT19937_64:
    """std::mt19937_64, for the split (a few thousand draws, untimed)."""

    def __init__(self, seed):
        self.mt = [0] * 312
        self.mt[0] = seed & MASK64
        for i in range(1, 312):
            prev = self.mt[i - 1]
            self.mt[i] = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64
        self.index = 312

    def _twist(self):
        mt = self.mt
        for i in range(312):
            x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % 312] & 0x7FFFFFFF)
            xa = x >> 1
            if x & 1:
                xa ^= 0xB5026F5AA96619E9
            mt[i] = mt[(i + 156) % 312] ^ xa
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK64


def shuffle(v, g):
    """lib/train/train.cpp's shuffle(): Fisher-Yates with unbiased draws."""
    for i in range(len(v), 1, -1):
        limit = MASK64 - MASK64 % i
        r = g()
        while r >= limit:
            r = g()
        j = r % i
        v[i - 1], v[j] = v[j], v[i - 1]


def load(path, label):
    """Region `label` of a collection file as float32 [rows, F] arrays."""
    with h5py.File(path, "r") as f:
        if label is None:
            labels = sorted(k for k in f if isinstance(f[k], h5py.Group)
                            and "input" in f[k] and "output" in f[k])
            if len(labels) != 1:
                sys.exit(f"{path}: regions {labels}; name one with --label")
            label = labels[0]
        g = f[label]
        n_in, n_out = g["input"].shape[0], g["output"].shape[0]
        calls = g.get("calls")
        if calls is not None and calls.shape and calls.shape[0] > 0 and \
                calls.dtype.names and "input_rows" in calls.dtype.names:
            last = calls[-1]
            n_in = min(n_in, int(last["input_offset"] + last["input_rows"]))
            n_out = min(n_out, int(last["output_offset"] + last["output_rows"]))
        rows = min(n_in, n_out)
        x = np.asarray(g["input"][:rows], dtype=np.float32).reshape(rows, -1)
        y = np.asarray(g["output"][:rows], dtype=np.float32).reshape(rows, -1)
    finite = np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)
    return x[finite], y[finite]


def statistics(rows, constant_std):
    """Per-feature mean and population std in double, as float32."""
    d = rows.double()
    mean, std = d.mean(0), d.std(0, unbiased=False)
    std = torch.where(std < 1e-8, torch.full_like(std, constant_std), std)
    return mean.float(), std.float()


ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh, "gelu": torch.nn.GELU,
               "silu": torch.nn.SiLU, "sigmoid": torch.nn.Sigmoid}


def make_model(arch, n_in, n_out):
    """mlp:WIDTHS:ACT as an nn.Sequential (the layers of models/mlp.ts)."""
    fields = arch.split(":")
    if fields[0] != "mlp" or len(fields) > 3:
        sys.exit(f"arch '{arch}': this baseline trains mlp:WIDTHS[:ACT] only")
    widths = [int(w) for w in fields[1].split("x")] if len(fields) > 1 else [64, 64]
    act = ACTIVATIONS[fields[2] if len(fields) > 2 else "relu"]
    layers, prev = [], n_in
    for w in widths:
        layers += [torch.nn.Linear(prev, w), act()]
        prev = w
    layers.append(torch.nn.Linear(prev, n_out))
    return torch.nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="collection file (HDF5)")
    ap.add_argument("--label", help="region (default: the file's only one)")
    ap.add_argument("--arch", default="mlp:64x64:relu")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--optimizer", choices=["adam", "adamw"], default="adam")
    ap.add_argument("--weight-decay", type=float, default=None)
    ap.add_argument("--schedule", choices=["plateau", "cosine", "none"], default="plateau")
    ap.add_argument("--patience", type=int, default=10)
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--val-fraction", type=float, default=0.1)
    ap.add_argument("--test-fraction", type=float, default=0.1)
    ap.add_argument("--foreach", action="store_true",
                    help="Adam's multi-tensor (foreach) implementation")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    x, y = load(a.data, a.label)
    rows = x.shape[0]
    n_test = round(rows * a.test_fraction)
    n_val = round(rows * a.val_fraction)
    n_train = rows - n_val - n_test
    order = list(range(rows))
    shuffle(order, MT19937_64(a.seed))
    X, Y = torch.from_numpy(x), torch.from_numpy(y)
    val_idx = torch.tensor(order[n_test:n_test + n_val])
    train_idx = torch.tensor(order[n_test + n_val:])
    xtr, ytr = X[train_idx], Y[train_idx]
    xva, yva = X[val_idx], Y[val_idx]

    in_mean, in_std = statistics(xtr, 1.0)
    out_mean, out_std = statistics(ytr, 0.0)
    xn = (xtr - in_mean) / in_std
    yn = (ytr - out_mean) / torch.where(out_std == 0, torch.ones_like(out_std), out_std)
    xva = (xva - in_mean) / in_std

    torch.manual_seed(a.seed)
    model = make_model(a.arch, x.shape[1], y.shape[1])
    params = list(model.parameters())
    if a.optimizer == "adamw":
        wd = 1e-2 if a.weight_decay is None else a.weight_decay
        opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=wd, foreach=a.foreach)
    else:
        wd = 0.0 if a.weight_decay is None else a.weight_decay
        opt = torch.optim.Adam(params, lr=a.lr, weight_decay=wd, foreach=a.foreach)

    best = [p.detach().clone() for p in params]
    best_val, best_epoch, lr = math.inf, 0, a.lr
    plateau_wait = max(1, a.patience // 2) if a.patience > 0 else 5
    since_best = since_lr = epochs_run = 0
    gen = torch.Generator().manual_seed(a.seed ^ 0x9e3779b97f4a7c15)
    loss_sum = torch.zeros(())
    step_time = 0.0
    t0 = time.perf_counter()
    model.train()
    for epoch in range(1, a.epochs + 1):
        if a.schedule == "cosine":
            lr = a.lr * 0.5 * (1.0 + math.cos(math.pi * (epoch - 1) / a.epochs))
            for g in opt.param_groups:
                g["lr"] = lr
        # Timed, as hml's train_step_seconds: shuffle, gather, the steps.
        ts = time.perf_counter()
        p = torch.randperm(n_train, generator=gen)
        xs, ys = xn[p], yn[p]
        loss_sum.zero_()
        for s in range(0, n_train, a.batch):
            xb, yb = xs[s:s + a.batch], ys[s:s + a.batch]
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            if a.clip > 0:
                torch.nn.utils.clip_grad_norm_(params, a.clip)
            opt.step()
            loss_sum.add_(loss.detach(), alpha=xb.shape[0])
        step_time += time.perf_counter() - ts
        train_loss = loss_sum.item() / n_train

        # Untimed on both sides: validation RMSE in application units.
        with torch.no_grad():
            model.eval()
            pred = model(xva) * out_std + out_mean
            val_rmse = math.sqrt((pred - yva).square().mean().item())
            model.train()
        epochs_run = epoch
        if val_rmse < best_val:
            best_val, best_epoch = val_rmse, epoch
            with torch.no_grad():
                for b, q in zip(best, params):
                    b.copy_(q)
            since_best = since_lr = 0
        else:
            since_best += 1
            since_lr += 1
        if a.schedule == "plateau" and since_lr >= plateau_wait and lr > 1e-6:
            lr = max(lr * 0.5, 1e-6)
            for g in opt.param_groups:
                g["lr"] = lr
            since_lr = 0
        if a.patience > 0 and since_best >= a.patience:
            break
    train_seconds = time.perf_counter() - t0

    res = {
        "arch": a.arch, "n_train": n_train, "n_val": n_val, "n_test": n_test,
        "epochs_run": epochs_run, "best_epoch": best_epoch, "batch": a.batch,
        "threads": torch.get_num_threads(), "train_loss": train_loss,
        "val_rmse": best_val, "train_seconds": train_seconds,
        "train_step_seconds": step_time,
        "samples_per_second": n_train * epochs_run / step_time if step_time > 0 else 0.0,
    }
    if a.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:20} {v}")


if __name__ == "__main__":
    main()
