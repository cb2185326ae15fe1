#pragma once
// Which trivial output (zeros, the reference's mean, the first input) passes as the reference on
// one distribution: empty when none does, i.e. the distribution discriminates. All trivial under
// every distribution of a protocol = a degenerate problem (flag degenerate).
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "core/protocol.hpp"
#include "core/verdict.hpp"
#include "torch_host/forward.hpp"

namespace kbv::judge {

std::string trivial_pass(const std::vector<at::Tensor>& ref, const torch_host::ArgList& inputs, const Tolerance& tol,
                         bool nan_pattern);

ProblemInfo describe_problem(const std::string& path, const std::string& size);

}  // namespace kbv::judge
