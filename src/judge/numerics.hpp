#pragma once
// The numerics model (docs/protocols.md, "Numerics"): where a candidate misses the element-wise
// tolerance against the fp32 reference, it is compared with a float64 run of Model on the same
// inputs (the truth) instead, and passes when its error is no worse than `factor` times eager
// PyTorch's own error against that truth. An honest kernel that sums in another order (a large-K
// GEMM, a long scan) has an error of the same size as eager's; a kernel with a real bug (a dropped
// term, TF32 or fp16 arithmetic where fp32 is asked) has one orders of magnitude larger.
#include <ATen/core/Tensor.h>

#include <vector>

#include "core/verdict.hpp"

namespace kbv::judge {

// How much larger than eager PyTorch's error a candidate's may be. Reordered fp32 sums (tiles,
// split-K, tree or sequential scans) measured within 1-4x of eager's max and RMS errors; TF32
// where fp32 is asked is ~1000x, one dropped term of a K=4096 dot product ~10^4x.
constexpr double kNumericsFactor = 8.0;

// The errors of `eager` and `candidate` against `truth` (all float64 or wider inputs welcome),
// output by output, over the elements where all three are finite. `within` holds when, for every
// floating output, the candidate's max-abs and RMS errors are each at most `factor` times eager's.
// Integer or boolean outputs, shape differences and non-finite values the tolerance check already
// judged: any of them here leaves `within` false with a note.
NumericsCheck check_numerics(const std::vector<at::Tensor>& truth, const std::vector<at::Tensor>& eager,
                             const std::vector<at::Tensor>& candidate, double factor = kNumericsFactor);

}  // namespace kbv::judge
