# models/mlp.ts - the MLP family: TorchScript methods of the trained module.
#
# hml fills in this template (see hml-train(1), MODEL FAMILIES) and compiles
# it with torch::jit::Module::define() onto a module that holds
#   parameters  w0, b0, w1, b1, ... (hidden layers), w_out, b_out
#               Linear layout: w [out, in], b [out]
#   buffers     in_mean, in_std [in_features]; out_mean, out_std [out_features]
#               with categorical features (lib/train/categorical.h):
#               cat_feature, cat_offset (int64 [C]), cat_classes (float [C]),
#               cont_feature (int64 [in_features - C])
#   attributes  hml_input_shape, hml_output_shape (List[int], per row),
#               hml_arch (str), training (bool)
# Template syntax:
#   {name}            replaced by a variable (in_features, act, dropout, ...)
#   @repeat hidden    the lines up to the matching @end, once per hidden
#                     layer, with {i} the layer's index (0, 1, ...)
#   @if name          the lines up to the matching @end, only when the
#                     variable is set and not "0"
# Lines starting with '#' in the first column (these) are not emitted.

def core(self, x: Tensor) -> Tensor:
    h = x
@repeat hidden
    h = {act}(torch.linear(h, self.w{i}, self.b{i}))
@if dropout
    h = torch.dropout(h, {dropout}, self.training)
@end
@end
    return torch.linear(h, self.w_out, self.b_out)

def forward(self, x: Tensor) -> Tensor:
    n = x.size(0)
    r = x.reshape([n, {in_features}])
    z = (r - self.in_mean) / self.in_std
@if categorical
    v = torch.round(r.index_select(1, self.cat_feature))
    seen = (v >= 0) & (v < self.cat_classes)
    k = torch.where(seen, v, torch.zeros_like(v)).long() + self.cat_offset
    hot = torch.zeros([n, {onehot_features}], dtype=r.dtype).scatter_(1, k, seen.to(r.dtype))
    z = torch.cat([z.index_select(1, self.cont_feature), hot], 1)
@end
    y = self.core(z) * self.out_std + self.out_mean
@if log_output
    y = torch.exp(y)
@end
    return y.reshape([n] + self.hml_output_shape)
