# models/cnnvec.ts - the CNN family with a vector head: whole-field rows in,
# a vector out (frames in, positions out). TorchScript methods of the
# trained module.
#
# hml fills in this template (see hml-train(1), MODEL FAMILIES) and compiles
# it with torch::jit::Module::define() onto a module that holds
#   parameters  w0, b0, w1, b1, ... (hidden conv layers), then, with a
#               hidden head layer (head > 0), w_head, b_head, then w_out, b_out
#               Conv2d layout: w [out_channels, in_channels, k, k], b [out_channels]
#               Linear layout: w [out, in], b [out]
#   buffers     in_mean, in_std [in_channels, 1, 1];
#               out_mean, out_std [out_features]
#   attributes  hml_input_shape, hml_output_shape (List[int], per row:
#               input [C, H, W] or [H, W], output any shape), hml_arch (str),
#               training (bool)
# Each conv layer keeps its map's size (padding {pad} = kernel // 2), then
# a {pool}x{pool} average pool with stride {pool} shrinks it (sizes rounded
# down; the rows and columns left over are dropped, as avg_pool2d does).
# With spatial (arch "...:spatial"), the last conv layer, w{last}, has no
# activation and no pool: each of its channels is a heatmap whose softmax
# over the {map_height} x {map_width} positions weighs the positions' column
# and row coordinates, (2j + 1) / W - 1 and (2i + 1) / H - 1 (in [-1, 1]);
# the head reads each channel's expected (column, row), channel by channel.
# "@repeat hidden" runs over the pooled layers: all, or all but the last.
# Template syntax: see models/mlp.ts.

def pool(self, h: Tensor) -> Tensor:
    hh = h.size(2) // {pool}
    ww = h.size(3) // {pool}
    h = h[:, :, 0:hh * {pool}, 0:ww * {pool}]
    return h.reshape([h.size(0), h.size(1), hh, {pool}, ww, {pool}]).mean([3, 5])

@if spatial
def spatial(self, h: Tensor) -> Tensor:
    n = h.size(0)
    c = h.size(1)
    p = torch.softmax(h.reshape([n, c, {map_height} * {map_width}]), 2)
    p = p.reshape([n, c, {map_height}, {map_width}])
    gx = (torch.arange({map_width}, dtype=h.dtype, device=h.device) * 2.0 + 1.0) / {map_width} - 1.0
    gy = (torch.arange({map_height}, dtype=h.dtype, device=h.device) * 2.0 + 1.0) / {map_height} - 1.0
    ex = (p.sum(2) * gx).sum(2)
    ey = (p.sum(3) * gy).sum(2)
    return torch.stack([ex, ey], 2)

@end
def core(self, x: Tensor) -> Tensor:
    h = x
@repeat hidden
    h = {act}(torch.conv2d(h, self.w{i}, self.b{i}, [1, 1], [{pad}, {pad}]))
@if pooled
    h = self.pool(h)
@end
@if dropout
    h = torch.dropout(h, {dropout}, self.training)
@end
@end
@if spatial
    h = self.spatial(torch.conv2d(h, self.w{last}, self.b{last}, [1, 1], [{pad}, {pad}]))
@end
    h = h.reshape([h.size(0), {flat_features}])
@if head
    h = {act}(torch.linear(h, self.w_head, self.b_head))
@end
    return torch.linear(h, self.w_out, self.b_out)

def forward(self, x: Tensor) -> Tensor:
    n = x.size(0)
    z = (x.reshape([n, {in_channels}, {height}, {width}]) - self.in_mean) / self.in_std
    y = self.core(z) * self.out_std + self.out_mean
@if log_output
    y = torch.exp(y)
@end
    return y.reshape([n] + self.hml_output_shape)
