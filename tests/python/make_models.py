#!/usr/bin/env python3
"""Make the TorchScript fixture models that the unit and end-to-end tests load.

usage: make_models.py OUTDIR

Every model is built from a fixed seed, so two runs write the same numbers.
For a model NAME with a reference case the script also writes

  NAME.in.txt   the reference input
  NAME.out.txt  what Python's forward returns for it

in a format C reads with fscanf: the first line is the number of dims and
the dims ("2 64 5"), then one value per line, printed with repr() of a
Python float, which round-trips float64 (and float32, which it holds exactly).

Models:
  mlp_f32.pt       scripted Linear(5,16)-Tanh-Linear(16,1), float32
  mlp_f64.pt       the same, .double()
  mlp_f16.pt       the same, .half() (a dtype hml does not support)
  declared.pt      Linear(5,1) with hml_input_shape [5], hml_output_shape [1]
  field_cnn.pt     traced Conv2d(4,8,3)-Tanh-Conv2d(8,4,3), [N,4,8,16] -> same
  identity.pt      no parameters; returns its input unchanged
  affine.pt        no parameters; returns 2 * x + 1 (in-place region tests)
  tuple_out.pt     returns a tuple of two tensors
  argmax_out.pt    float32 model that returns int64 indices [N, 1]
  nonfinite.pt     returns [N, 1]: NaN in the first row, +Inf in the last,
                   1.0 elsewhere (outputs the runtime must not scatter)
  no_forward.pt    a scripted module with an exported method and no forward
  not_a_model.pt   a text file
  state_dict.pt    torch.save() of a state dict: a zip, not TorchScript
"""
import os
import sys
from typing import List, Tuple

import torch
from torch import nn


def write_tensor(path, t):
    t = t.detach().contiguous()
    with open(path, "w") as f:
        f.write(" ".join(str(d) for d in [t.dim()] + list(t.shape)) + "\n")
        for v in t.reshape(-1).tolist():
            f.write(repr(float(v)) + "\n")


def save(model, out, name, x=None):
    model.save(os.path.join(out, name + ".pt"))
    if x is None:
        return
    # Check the saved file, not the object in memory: this is what C loads.
    loaded = torch.jit.load(os.path.join(out, name + ".pt"))
    with torch.no_grad():
        y = loaded(x)
    write_tensor(os.path.join(out, name + ".in.txt"), x)
    write_tensor(os.path.join(out, name + ".out.txt"), y)


def mlp():
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))


class Declared(nn.Module):
    hml_input_shape: List[int]
    hml_output_shape: List[int]

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)
        self.hml_input_shape = [5]
        self.hml_output_shape = [1]

    def forward(self, x):
        return self.lin(x)


class FieldCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(4, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        return self.c2(torch.tanh(self.c1(x)))


class Identity(nn.Module):
    def forward(self, x):
        return x


class Affine(nn.Module):
    def forward(self, x):
        return 2 * x + 1


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        y = self.lin(x)
        return y, y


class ArgmaxOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 3)

    def forward(self, x):
        return self.lin(x).argmax(dim=1, keepdim=True)


class NonFinite(nn.Module):
    def forward(self, x):
        y = x[:, :1] * 0.0 + 1.0
        y[-1, 0] = float("inf")
        y[0, 0] = float("nan")
        return y


class NoForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 1)

    @torch.jit.export
    def predict(self, x):
        return self.lin(x)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: make_models.py OUTDIR\n")
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    torch.manual_seed(1234)
    net = mlp().eval()
    x32 = torch.randn(64, 5, dtype=torch.float32)
    save(torch.jit.script(net), out, "mlp_f32", x32)
    x64 = torch.randn(64, 5, dtype=torch.float64)
    save(torch.jit.script(mlp().eval().double()), out, "mlp_f64", x64)
    save(torch.jit.script(mlp().eval().half()), out, "mlp_f16")

    torch.manual_seed(1235)
    save(torch.jit.script(Declared().eval()), out, "declared",
         torch.randn(8, 5))

    torch.manual_seed(1236)
    cnn = FieldCNN().eval()
    xf = torch.randn(3, 4, 8, 16)
    with torch.no_grad():
        traced = torch.jit.trace(cnn, xf)
    save(traced, out, "field_cnn", xf)

    torch.manual_seed(1237)
    save(torch.jit.script(Identity().eval()), out, "identity")
    save(torch.jit.script(Affine().eval()), out, "affine")
    save(torch.jit.script(TupleOut().eval()), out, "tuple_out")
    save(torch.jit.script(ArgmaxOut().eval()), out, "argmax_out",
         torch.randn(16, 5))
    save(torch.jit.script(NoForward().eval()), out, "no_forward")
    save(torch.jit.script(NonFinite().eval()), out, "nonfinite")

    with open(os.path.join(out, "not_a_model.pt"), "w") as f:
        f.write("this is a text file, not a TorchScript archive\n")
    torch.save(mlp().state_dict(), os.path.join(out, "state_dict.pt"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
