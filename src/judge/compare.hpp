#pragma once
// Comparison of a candidate's outputs with the reference's, for one distribution (SPEC: "Correct
// on every valid distribution: shape, dtype, finite/NaN pattern, tolerance; max abs/rel error").
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/protocol.hpp"

namespace kbv::judge {

struct OutputComparison {
  bool ok = true;
  std::string reason;        // empty when ok; otherwise about the first failing output
  double max_abs_err = 0;    // max |c - r| over elements where both are finite, all outputs
  double max_rel_err = 0;    // max |c - r| / max(|r|, atol) over the same elements
  std::int64_t mismatched = 0;  // failing elements, all outputs (tolerance and NaN/Inf pattern)
  std::int64_t numel = 0;       // elements compared, summed over outputs (complex: 2 each)
  // Every failure is a finite element outside the tolerance: no structural difference, no
  // NaN/Inf where the reference differs. Only such a failure may be a matter of numerics.
  bool tolerance_only = true;
};

// Compares `candidate` with `reference`, output by output. Never throws for anything the
// candidate returned; a failure is ok = false with a reason.
//
// Structure (checked first for each output, in this order):
//   count   "returned N outputs, expected M"
//   None    "output i: returned None, expected a tensor" (an undefined tensor)
//   shape   "output i: shape [2, 3] expected [2, 4]"
//   dtype   "output i: dtype Half expected Float"
//   device  "output i: on device cuda:0 expected cpu"
//   layout  "output i: layout Sparse expected Strided"
// Candidate tensors may have any strides (non-contiguous, expanded, channels_last). An output
// that fails on structure is not compared element-wise; the other outputs still are.
//
// Elements (as torch.allclose, computed in float64): where both values are finite, an element
// passes iff |c - r| <= atol + rtol * |r|. Where either is non-finite, it passes iff the pattern
// matches exactly: NaN with NaN, +inf with +inf, -inf with -inf. So a non-finite candidate value
// where the reference is finite always fails, and so does a finite value where the reference is
// not. `nan_pattern_must_match` (strict) applies the same element rule; it changes the reason,
// which then names the pattern first:
//   "output 0: NaN/Inf pattern differs at 12 elements (first at index [0, 3]: got nan expected 0.5)"
// otherwise the reason is the tolerance one, with any non-finite failures counted in it:
//   "output 0: 512 of 4096 elements outside atol=0.001 rtol=0.001
//    (max abs err 2 at index [3, 7]: got 3 expected 1)"
// where the index is that of the failing element with the largest |c - r| (multi-dimensional,
// in the output's logical shape). All outputs are compared, so the error maxima and counts cover
// every output; the reason describes the first that fails. Complex outputs are compared as
// their (real, imaginary) parts.
//
// Memory: both tensors are compared in chunks of 2^23 elements converted to float64 (about
// 64 MiB per temporary), so an output of many GiB needs only a bounded amount of extra device
// memory beyond one contiguous copy of a non-contiguous candidate, and float64 keeps the
// tolerance test exact for every input dtype (float32 would round atol + rtol * |r| itself).
// Float32 and narrower outputs are first screened in float32 (float32_screen.hpp: one fused
// kernel on a CUDA device, operators in chunks of 2^25 elements elsewhere): where every element
// is inside the bound by a margin of 1e-5 of it, which float32's rounding cannot cross, they pass
// without the float64 pass, and the errors reported are float32's.
OutputComparison compare_outputs(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& candidate,
                                 const Tolerance& tol, bool nan_pattern_must_match);

// compare_outputs(...).ok, without the failure's details: the float32 screen decides most
// outputs either way (an element past the bound by the margin fails them), the full comparison
// the rest.
bool outputs_match(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& candidate, const Tolerance& tol,
                   bool nan_pattern_must_match);

// True iff every element of every output is finite (integer and bool tensors always are;
// undefined tensors are skipped). Used to skip a distribution on which the reference itself
// yields NaN/Inf.
bool all_finite(const std::vector<at::Tensor>& outputs);

}  // namespace kbv::judge
