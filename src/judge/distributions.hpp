#pragma once
// Correctness inputs for one distribution (SPEC: Protocols, "correctness inputs"). The problem's
// get_inputs() draws one template set of arguments on the target device and dtype; this file
// turns each of those tensors into the argument a DistributionSpec asks for, and re-initialises
// a model's parameters for reinit_params. Every random draw here comes from a private generator
// seeded by kbv: a candidate's Python may reseed torch's default generators, and our inputs must
// neither depend on that state nor disturb it.
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/protocol.hpp"
#include "judge/blockwise.hpp"

namespace kbv::judge {

// A fresh generator for `device`, seeded with `seed`, shared with nothing: not torch's default
// generator of that device, so at::manual_seed / torch.manual_seed neither change its draws nor
// are changed by them. CPU: a CPUGeneratorImpl (mt19937); CUDA and other accelerators: a new
// generator from the device's hooks (Philox on CUDA), created without needing nvcc.
at::Generator make_generator(const at::Device& device, std::uint64_t seed);

// True for real floating dtypes (fp64, fp32, fp16, bf16, fp8): the tensors a distribution
// rewrites. Integers, bools and complex tensors carry meaning (indices, masks) and are kept.
bool is_floating(const at::Tensor& t);

// The argument for `spec` made from one tensor that get_inputs() produced (`drawn`, already on
// the target device and in the target dtype). Non-floating tensors come back unchanged (the same
// tensor). For floating tensors, by spec.kind:
//   seeded_template, reinit_params  `drawn` itself (reinit_params changes parameters, not inputs)
//   scaled      drawn * spec.scale: a new tensor, same shape, dtype, device and memory format
//   normal      fresh N(0, 1)
//   heavy_tail  fresh Student-t with 2 degrees of freedom (normal / sqrt(chi2_2 / 2)), and about
//               0.1% outliers of magnitude 50..200 with random sign; clamped to |x| <= 1000 (or
//               the dtype's largest finite value if smaller) so every value is finite in fp16
//   zeros_ties  fresh values on the grid {-2, -1, -0.5, 0, 0.5, 1, 2}: ~30% exact zeros, the rest
//               uniform over the six non-zero points (many ties)
// Fresh draws use `gen` (which must belong to drawn's device type), are generated in float32
// (float64 for float64 tensors) and cast to drawn's dtype, and keep drawn's shape, device and
// memory format. The result requires grad iff `drawn` does.
// Fresh draws are made `block_elements` values at a time straight into the result, and `drawn`
// (pass it moved, when nothing else holds it) is let go first: a draw's peak device memory is its
// result and one block's temporaries, however large the tensor.
at::Tensor distribution_tensor(at::Tensor drawn, const DistributionSpec& spec, at::Generator& gen,
                               std::int64_t block_elements = kBlockElements);

// Re-initialises parameters in place (under NoGradGuard) so that reinit_params exercises the
// code paths default initialisation hides:
//   name ends in "bias"                               -> uniform(-0.5, 0.5) (non-zero biases)
//   1-D, name ends in "weight", all values equal      -> uniform(0.5, 1.5) (non-unit norm scales)
//   anything else (conv/linear weights, non-floating) -> unchanged
// Each parameter's draw comes from its own generator seeded by (seed, name), so the result does
// not depend on the order of the list or on which other parameters it holds.
void reinit_parameters(const std::vector<std::pair<std::string, at::Tensor>>& named_parameters, std::uint64_t seed);

}  // namespace kbv::judge
