#pragma once
// The float32 screen of a comparison (compare.hpp): decides, for float32 and narrower outputs,
// the elements float32's rounding cannot move across the tolerance bound, so that only an output
// with an element near the bound (or a NaN) needs the float64 comparison. On a CUDA device it is
// one fused pass over both outputs (float32_screen_kernel.cu); elsewhere, and where that kernel
// cannot run, a chain of torch operators computes the same figures.
#include <ATen/core/Tensor.h>

#include "core/protocol.hpp"

namespace kbv::judge {

// The screen's margin: an element passes it when |c - r| <= (atol + rtol * |r|) * (1 - margin)
// in float32, and fails it when |c - r| > (atol + rtol * |r|) * (1 + margin). float32's rounding
// (a few parts in 10^8 of each term) cannot move such an element across the bound in float64, so
// the screen decides those elements as the float64 comparison does; anything else (an element
// near the bound, a NaN) is left to it.
constexpr double kScreenMargin = 1e-5;

enum class Screened { pass, fail, unsure };

struct Screen {
  Screened result = Screened::unsure;
  double max_abs = 0, max_rel = 0;  // float32's, where it passed
};

// Screens two flat (1-D) tensors of one float32, float16 or bfloat16 dtype; anything else is
// `unsure`. `fail` when an element is past the fail bound, `pass` when every element is inside
// the pass bound (no NaN), else `unsure`.
Screen screen_in_float32(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol);

// The same with torch's operators only, in chunks (the CPU's way; the reference the fused kernel
// is tested against).
Screen screen_in_float32_with_operators(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol);

}  // namespace kbv::judge
