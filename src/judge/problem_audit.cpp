#include "judge/problem_audit.hpp"

#include "judge/compare.hpp"

namespace kbv::judge {

std::string trivial_pass(const std::vector<at::Tensor>& ref, const torch_host::ArgList& inputs, const Tolerance& tol,
                         bool nan_pattern) {
  std::vector<at::Tensor> zeros, constant;
  bool all_scalar = true;
  for (const auto& r : ref) {
    zeros.push_back(at::zeros_like(r));
    at::Tensor mean = r.is_floating_point() ? r.to(at::kDouble).nan_to_num().mean() : r.to(at::kDouble).mean();
    constant.push_back(at::full_like(r, mean.item<double>()));
    all_scalar = all_scalar && r.numel() <= 1;
  }
  if (outputs_match(ref, zeros, tol, nan_pattern)) return "zeros";
  // A scalar output (a loss) always equals its own mean: the constant test needs elements.
  if (!all_scalar && outputs_match(ref, constant, tol, nan_pattern)) return "constant";
  if (ref.size() == 1 && !inputs.empty() && inputs[0].is_tensor && inputs[0].tensor.sizes() == ref[0].sizes() &&
      inputs[0].tensor.scalar_type() == ref[0].scalar_type() && outputs_match(ref, {inputs[0].tensor}, tol, nan_pattern))
    return "input";
  return "";
}

}  // namespace kbv::judge
