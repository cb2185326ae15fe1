"""Candidate for level1/19_ReLU.py whose extension does not compile.

load_inline with C++ only (cpp_sources, no CUDA), so it fails the same way on any machine:
the function body returns `output`, a name it never declared (it declared `out`), a typo LLMs
make. g++ reports "'output' was not declared in this scope" and load_inline raises
RuntimeError("Error building extension 'relu_cpp'") at import time.

kbv must conclude: compile_error under every protocol, with the compiler's message kept in the
build log; nothing is run.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = r"""
torch::Tensor relu_forward(torch::Tensor x) {
    auto out = torch::empty_like(x);
    auto xc = x.contiguous();
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) {
        dst[i] = src[i] > 0.f ? src[i] : 0.f;
    }
    return output;
}
"""

relu_ext = load_inline(
    name="relu_cpp",
    cpp_sources=relu_cpp_source,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_ext.relu_forward(x)
