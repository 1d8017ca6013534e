# models/cnn.ts - the CNN family for whole-field rows: TorchScript methods of
# the trained module.
#
# hml fills in this template (see hml-train(1), MODEL FAMILIES) and compiles
# it with torch::jit::Module::define() onto a module that holds
#   parameters  w0, b0, w1, b1, ... (hidden conv layers), w_out, b_out
#               Conv2d layout: w [out_channels, in_channels, k, k], b [out_channels]
#   buffers     in_mean, in_std [in_channels, 1, 1];
#               out_mean, out_std [out_channels, 1, 1]
#   attributes  hml_input_shape, hml_output_shape (List[int], per row:
#               [C, H, W] or [H, W]), hml_arch (str), training (bool)
# Rows [H, W] get a channel dimension of 1 inside forward, and lose it again
# on output. A residual arch (@if residual) predicts the change: the input
# is added to the de-normalised network, whose out_mean/out_std are then
# the statistics of y - x. Padding {pad} = kernel // 2 keeps the field's size ('same').
# Template syntax: see models/mlp.ts.

def core(self, x: Tensor) -> Tensor:
    h = x
@repeat hidden
    h = {act}(torch.conv2d(h, self.w{i}, self.b{i}, [1, 1], [{pad}, {pad}]))
@if dropout
    h = torch.dropout(h, {dropout}, self.training)
@end
@end
    return torch.conv2d(h, self.w_out, self.b_out, [1, 1], [{pad}, {pad}])

def forward(self, x: Tensor) -> Tensor:
    n = x.size(0)
    z = (x.reshape([n, {in_channels}, {height}, {width}]) - self.in_mean) / self.in_std
    y = self.core(z) * self.out_std + self.out_mean
@if residual
    y = y + x.reshape([n, {in_channels}, {height}, {width}])
@end
@if log_output
    y = torch.exp(y)
@end
    return y.reshape([n] + self.hml_output_shape)
