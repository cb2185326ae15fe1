#include "judge/float32_screen.hpp"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "judge/profile.hpp"

#ifdef KBV_HAVE_JUDGE_KERNELS
#include "judge/float32_screen_kernel.hpp"
#endif

namespace kbv::judge {
namespace {

// Elements screened at a time by the operators: 32 Mi elements = 128 MiB per float32 temporary.
constexpr std::int64_t kScreenChunk = std::int64_t{1} << 25;

bool screenable(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol) {
  const auto dtype = ref_flat.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) return false;
  if (cand_flat.scalar_type() != dtype) return false;
  // A bound near float32's subnormals has no relative precision left, and one past its range
  // (rtol above 1, atol near its largest value) would overflow where float64's does not.
  return tol.atol >= 1e-30 && tol.atol <= 1e30 && (tol.rtol == 0 || (tol.rtol >= 1e-30 && tol.rtol <= 1));
}

// Figures per row, the kernel's and the operators' alike.
constexpr int kFigures = 4;
#ifdef KBV_HAVE_JUDGE_KERNELS
static_assert(kFigures == kScreenFigures, "the kernel's rows and the operators' differ");
#endif

// Rows of (worst margin to the pass bound, past the fail bound, max |c - r|, max relative error),
// one per chunk or block, made into the screen's answer.
Screen combine(const at::Tensor& rows) {
  Screen out;
  out.result = Screened::pass;
  if (rows.numel() == 0) return out;
  at::Tensor all = rows.to(at::kDouble).cpu().contiguous();
  const double* v = all.data_ptr<double>();
  for (std::int64_t k = 0; k < all.size(0); ++k) {
    const double* row = v + kFigures * k;
    if (row[1] > 0) return {Screened::fail};
    if (!(row[0] <= 0)) out.result = Screened::unsure;
    out.max_abs = std::max(out.max_abs, row[2]);
    out.max_rel = std::max(out.max_rel, row[3]);
  }
  return out;
}

#ifdef KBV_HAVE_JUDGE_KERNELS
// KBV_SCREEN=operators: the operators on the device too, for measuring the kernel against them.
bool kernel_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("KBV_SCREEN");
    return !(v && std::string(v) == "operators");
  }();
  return wanted;
}

// One fused pass on the device; nullopt where the kernel cannot run here.
std::optional<Screen> screen_with_kernel(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol) {
  // The kernel reads memory as plain values: only one-dimensional, dense, same-sized tensors
  // without torch's lazy bits (a negative or conjugate view, a zero tensor) go to it.
  auto plain = [](const at::Tensor& t) {
    return t.is_cuda() && t.dim() == 1 && t.is_contiguous() && t.has_storage() && !t.is_neg() && !t.is_conj() &&
           !t._is_zerotensor() && t.layout() == at::kStrided &&
           !t.key_set().has(c10::DispatchKey::Python);
  };
  if (!kernel_wanted() || !plain(ref_flat) || !plain(cand_flat) || cand_flat.device() != ref_flat.device() ||
      cand_flat.numel() != ref_flat.numel())
    return std::nullopt;
  const std::int64_t n = ref_flat.numel();
  if (n == 0) return Screen{Screened::pass};
  const c10::cuda::CUDAGuard on_device(ref_flat.device());
  const ScreenDtype dtype = ref_flat.scalar_type() == at::kFloat  ? ScreenDtype::float32
                            : ref_flat.scalar_type() == at::kHalf ? ScreenDtype::float16
                                                                  : ScreenDtype::bfloat16;
  // NaN until a block writes its row: rows a kernel never wrote read as unsure, never as a pass.
  at::Tensor partials = at::full({screen_blocks(n), kFigures}, NAN, ref_flat.options().dtype(at::kFloat));
  const auto stream = c10::cuda::getCurrentCUDAStream(ref_flat.device().index());
  if (!launch_screen(ref_flat.data_ptr(), cand_flat.data_ptr(), n, dtype, static_cast<float>(tol.atol),
                     static_cast<float>(tol.rtol), static_cast<float>(1.0 - kScreenMargin),
                     static_cast<float>(1.0 + kScreenMargin), partials.data_ptr<float>(), stream.stream())) {
    // Correct either way, but ten times slower at large sizes: said once in the judge's log, and
    // each fallback counted in its profile (compare.screen.operators).
    static std::once_flag said;
    std::call_once(said, [] {
      std::cerr << "kbv-judge: the comparisons' screen kernel cannot run on this device (no image for its "
                   "architecture); comparing with torch's operators\n";
    });
    profile::Step step("compare.screen.operators");
    return std::nullopt;
  }
  return combine(partials);
}
#endif

}  // namespace

Screen screen_in_float32_with_operators(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol) {
  if (!screenable(ref_flat, cand_flat, tol)) return {};
  const std::int64_t n = ref_flat.numel();
  // Per chunk: the worst margin to the screen's pass bound (NaN propagates), whether an element
  // is past its fail bound (a NaN never is), max |c - r|, max relative error.
  std::vector<at::Tensor> partial;
  for (std::int64_t begin = 0; begin < n; begin += kScreenChunk) {
    const std::int64_t len = std::min(kScreenChunk, n - begin);
    at::Tensor r = ref_flat.narrow(0, begin, len).to(at::kFloat);
    at::Tensor c = cand_flat.narrow(0, begin, len).to(at::kFloat);
    // NaN where either is NaN or both are the same Inf; Inf where only one is Inf (a failure).
    at::Tensor diff = at::sub(c, r).abs_();
    at::Tensor r_abs = r.abs();
    at::Tensor bound = at::mul(r_abs, tol.rtol).add_(tol.atol);
    at::Tensor worst = at::sub(diff, bound, 1.0 - kScreenMargin).max();
    at::Tensor failed = at::gt(diff, at::mul(bound, 1.0 + kScreenMargin)).any();
    at::Tensor rel = at::div(diff, r_abs.clamp_min_(tol.atol)).max();
    partial.push_back(at::stack({worst, failed.to(at::kFloat), diff.max(), rel}));
  }
  if (partial.empty()) return Screen{Screened::pass};
  return combine(at::stack(partial));
}

Screen screen_in_float32(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol) {
  if (!screenable(ref_flat, cand_flat, tol)) return {};
#ifdef KBV_HAVE_JUDGE_KERNELS
  if (auto screened = screen_with_kernel(ref_flat, cand_flat, tol)) return *screened;
#endif
  return screen_in_float32_with_operators(ref_flat, cand_flat, tol);
}

}  // namespace kbv::judge
