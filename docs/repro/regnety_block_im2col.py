"""Writes docs/repro/regnety_block_im2col.onnx, the reproducer of
docs/known-iree-issues.md's RegNetY section: torchvision's RegNetY-400MF
stem and first residual block (grouped 3x3 convolution, squeeze-excite,
1x1 convolutions, batch norms folded by the exporter, ReLU, residual add),
untrained weights from a fixed seed and batch-norm statistics drawn from
another, exported by the TorchScript exporter at opset 17.  Needs torch
and torchvision; the .onnx is committed, so the tests do not.
Usage: python regnety_block_im2col.py OUT.onnx"""

import sys

import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.regnet_y_400mf(weights=None).eval()
block = torch.nn.Sequential(model.stem, model.trunk_output[0][0]).eval()
statistics = torch.Generator().manual_seed(1)
for module in block.modules():
    if isinstance(module, torch.nn.BatchNorm2d):
        n = module.num_features
        module.running_mean.copy_(torch.randn(n, generator=statistics) * 0.1)
        module.running_var.copy_(torch.rand(n, generator=statistics) + 0.5)
        module.weight.data.copy_(torch.rand(n, generator=statistics) + 0.5)
        module.bias.data.copy_(torch.randn(n, generator=statistics) * 0.1)
x = torch.randn(1, 3, 64, 64)
torch.onnx.export(block, (x,), sys.argv[1], dynamo=False, opset_version=17, input_names=["x"], output_names=["y"])
