#include "judge/numerics.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>

namespace kbv::judge {
namespace {

// Elements converted to float64 at a time, as in compare.cpp: a bounded temporary per chunk.
constexpr std::int64_t kChunk = std::int64_t{1} << 23;

struct Errors {
  double max_abs = 0;
  double sum_sq = 0;
  std::int64_t count = 0;
  double rms() const { return count > 0 ? std::sqrt(sum_sq / static_cast<double>(count)) : 0.0; }
};

at::Tensor flat(const at::Tensor& t) {
  at::Tensor x = t.detach();
  if (x.is_complex()) x = at::view_as_real(x.resolve_conj());
  return x.contiguous().view(-1);
}

// Errors of `eager` and `cand` against `truth` where all three are finite.
void accumulate(const at::Tensor& truth, const at::Tensor& eager, const at::Tensor& cand, Errors& e, Errors& c) {
  const std::int64_t n = truth.numel();
  for (std::int64_t begin = 0; begin < n; begin += kChunk) {
    const std::int64_t len = std::min(kChunk, n - begin);
    at::Tensor t = truth.narrow(0, begin, len).to(at::kDouble);
    at::Tensor r = eager.narrow(0, begin, len).to(at::kDouble);
    at::Tensor x = cand.narrow(0, begin, len).to(at::kDouble);
    at::Tensor finite = at::isfinite(t).logical_and_(at::isfinite(r)).logical_and_(at::isfinite(x));
    at::Tensor er = at::where(finite, (r - t).abs_(), 0.0);
    at::Tensor ec = at::where(finite, (x - t).abs_(), 0.0);
    at::Tensor s = at::stack({er.max(), er.square().sum(), ec.max(), ec.square().sum(), finite.sum().to(at::kDouble)}).cpu();
    const double* v = s.data_ptr<double>();
    e.max_abs = std::max(e.max_abs, v[0]);
    e.sum_sq += v[1];
    c.max_abs = std::max(c.max_abs, v[2]);
    c.sum_sq += v[3];
    e.count += static_cast<std::int64_t>(v[4]);
    c.count += static_cast<std::int64_t>(v[4]);
  }
}

}  // namespace

NumericsCheck check_numerics(const std::vector<at::Tensor>& truth, const std::vector<at::Tensor>& eager,
                             const std::vector<at::Tensor>& candidate, double factor) {
  NumericsCheck out;
  out.factor = factor;
  if (truth.size() != eager.size() || truth.size() != candidate.size()) {
    out.note = "output counts differ";
    return out;
  }
  at::NoGradGuard no_grad;
  bool within = true;
  Errors all_e, all_c;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const at::Tensor &t = truth[i], &r = eager[i], &c = candidate[i];
    if (!t.defined() || !r.defined() || !c.defined()) {
      if (t.defined() || r.defined() || c.defined()) {
        out.note = "output " + std::to_string(i) + " is missing";
        return out;
      }
      continue;
    }
    if (!(t.is_floating_point() || t.is_complex()) || !(c.is_floating_point() || c.is_complex())) {
      out.note = "output " + std::to_string(i) + " is not floating point: it must match exactly";
      return out;
    }
    if (t.sizes() != c.sizes() || t.sizes() != r.sizes()) {
      out.note = "output " + std::to_string(i) + " has another shape";
      return out;
    }
    // Complex and real outputs flatten to different lengths: the tolerance check judged them.
    if (t.is_complex() != c.is_complex() || t.is_complex() != r.is_complex() || !(r.is_floating_point() || r.is_complex())) {
      out.note = "output " + std::to_string(i) + " has another kind of dtype";
      return out;
    }
    Errors e, k;
    try {
      accumulate(flat(t), flat(r), flat(c), e, k);
    } catch (const c10::Error& err) {
      // Whatever the outputs hold, the model gives no verdict on them; the tolerance's stands.
      out.note = "output " + std::to_string(i) + " could not be weighed: " + err.what_without_backtrace();
      return out;
    }
    // Squares of errors near double's largest value overflow: eager's error is then no yardstick.
    if (!std::isfinite(e.max_abs) || !std::isfinite(e.rms()) || !std::isfinite(k.rms())) {
      out.note = "output " + std::to_string(i) + ": the errors overflow float64";
      return out;
    }
    within = within && k.max_abs <= factor * e.max_abs && k.rms() <= factor * e.rms();
    all_e.max_abs = std::max(all_e.max_abs, e.max_abs);
    all_c.max_abs = std::max(all_c.max_abs, k.max_abs);
    all_e.sum_sq += e.sum_sq;
    all_c.sum_sq += k.sum_sq;
    all_e.count += e.count;
    all_c.count += k.count;
  }
  out.eager_max_abs_err = all_e.max_abs;
  out.candidate_max_abs_err = all_c.max_abs;
  out.eager_rms_err = all_e.rms();
  out.candidate_rms_err = all_c.rms();
  out.within = within && all_c.count > 0;
  return out;
}

}  // namespace kbv::judge
