#include "judge/compare.hpp"

#include "judge/blockwise.hpp"
#include "judge/float32_screen.hpp"
#include "judge/profile.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <limits>
#include <sstream>

namespace kbv::judge {

namespace {

// Elements converted to float64 at a time: 8 Mi elements = 64 MiB per float64 temporary.
constexpr std::int64_t kChunk = std::int64_t{1} << 23;

std::string shape_str(at::IntArrayRef sizes) {
  std::ostringstream s;
  s << '[';
  for (std::size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << ']';
  return s.str();
}

// The multi-dimensional index, in `sizes`, of row-major flat index `flat`.
std::string index_str(std::int64_t flat, at::IntArrayRef sizes) {
  std::vector<std::int64_t> index(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    index[d] = sizes[d] > 0 ? flat % sizes[d] : 0;
    flat = sizes[d] > 0 ? flat / sizes[d] : 0;
  }
  return shape_str(index);
}

std::string num_str(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// What one output's elements did; flat indices are into the (real-viewed) flattened output.
struct ElementStats {
  double max_abs = 0;
  double max_rel = 0;
  std::int64_t tol_failures = 0;      // both finite, outside tolerance
  std::int64_t pattern_failures = 0;  // NaN/Inf pattern differs
  double worst_err = -1;              // largest |c - r| among tolerance failures
  std::int64_t worst_index = -1;
  double worst_got = 0, worst_expected = 0;
  std::int64_t first_pattern_index = -1;
  double pattern_got = 0, pattern_expected = 0;
};

// Elements a sample screens, evenly spaced over an output; outputs of up to four times this are
// screened whole at once.
constexpr std::int64_t kSampleElements = std::int64_t{1} << 16;

// The screen over an evenly spaced sample of the elements. Its `fail` is the whole output's: the
// screen fails an output for any one element past the fail bound, computed per element as the
// whole output's screen computes it. So an output that clearly differs (most trivial outputs the
// problem audit tries) costs a read of 64 Ki elements; anything else is unsure, for the whole.
Screened screen_sample(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol) {
  const std::int64_t n = ref_flat.numel();
  if (n <= 4 * kSampleElements || cand_flat.numel() != n) return Screened::unsure;
  at::Tensor picks = at::arange(0, n, n / kSampleElements, ref_flat.options().dtype(at::kLong));
  return screen_in_float32(ref_flat.index_select(0, picks), cand_flat.index_select(0, picks), tol).result == Screened::fail
             ? Screened::fail
             : Screened::unsure;
}

ElementStats compare_elements(const at::Tensor& ref_flat, const at::Tensor& cand_flat, const Tolerance& tol) {
  ElementStats st;
  // The outputs of almost every candidate that is right: every element well inside the bound,
  // its errors float32's (to a few parts in 10^8). A failure needs the float64 pass's details.
  if (Screen screen = profile::timed("compare.screen", [&] { return screen_in_float32(ref_flat, cand_flat, tol); });
      screen.result == Screened::pass) {
    st.max_abs = screen.max_abs;
    st.max_rel = screen.max_rel;
    return st;
  }
  profile::Step step("compare.float64");  // the screen was unsure or failed: every element in float64
  const std::int64_t n = ref_flat.numel();
  // Relative error divides by max(|r|, atol); with atol = 0 the smallest normal double keeps a
  // zero reference from turning an exact match (0 / 0) into NaN.
  const double rel_floor = tol.atol > 0 ? tol.atol : std::numeric_limits<double>::min();
  for (std::int64_t begin = 0; begin < n; begin += kChunk) {
    const std::int64_t len = std::min(kChunk, n - begin);
    at::Tensor r = ref_flat.narrow(0, begin, len).to(at::kDouble);
    at::Tensor c = cand_flat.narrow(0, begin, len).to(at::kDouble);
    at::Tensor r_abs = r.abs();
    at::Tensor both = at::isfinite(r).logical_and_(at::isfinite(c));
    at::Tensor diff = (c - r).abs_();
    at::Tensor diff_finite = at::where(both, diff, 0.0);
    at::Tensor tol_fail = both.logical_and(diff > r_abs * tol.rtol + tol.atol);
    at::Tensor same_non_finite = c.eq(r).logical_or_(at::isnan(c).logical_and_(at::isnan(r)));
    at::Tensor pattern_fail = both.logical_not().logical_and_(same_non_finite.logical_not_());
    at::Tensor rel = diff_finite / r_abs.clamp_min(rel_floor);
    at::Tensor fail_err = at::where(tol_fail, diff, -1.0);
    auto [worst_err, worst_idx] = fail_err.max(0);
    // One device-to-host copy per chunk for all the scalars.
    at::Tensor summary = at::stack({diff_finite.max(), rel.max(), tol_fail.sum().to(at::kDouble),
                                    pattern_fail.sum().to(at::kDouble), worst_err, worst_idx.to(at::kDouble),
                                    pattern_fail.to(at::kByte).argmax().to(at::kDouble)})
                             .cpu();
    const double* v = summary.data_ptr<double>();
    st.max_abs = std::max(st.max_abs, v[0]);
    st.max_rel = std::max(st.max_rel, v[1]);
    st.tol_failures += static_cast<std::int64_t>(v[2]);
    const auto chunk_pattern = static_cast<std::int64_t>(v[3]);
    if (v[4] > st.worst_err && v[4] >= 0) {
      const auto i = static_cast<std::int64_t>(v[5]);
      st.worst_err = v[4];
      st.worst_index = begin + i;
      st.worst_got = c[i].item<double>();
      st.worst_expected = r[i].item<double>();
    }
    if (chunk_pattern > 0 && st.pattern_failures == 0) {
      const auto i = static_cast<std::int64_t>(v[6]);
      st.first_pattern_index = begin + i;
      st.pattern_got = c[i].item<double>();
      st.pattern_expected = r[i].item<double>();
    }
    st.pattern_failures += chunk_pattern;
  }
  return st;
}

// Flattens in logical (row-major) order; complex outputs become (real, imaginary) pairs.
at::Tensor flat_real(const at::Tensor& t) {
  at::Tensor x = t.detach();
  if (x.layout() != at::kStrided) x = x.to_dense();
  if (x.is_complex()) x = at::view_as_real(x.resolve_conj());
  x = x.resolve_neg();  // a negative view's memory holds the values' negation
  return x.contiguous().view(-1);
}

// Checks output `i`; returns an empty string when it matches, else the reason.
std::string compare_one(std::size_t i, const at::Tensor& ref, const at::Tensor& cand, const Tolerance& tol,
                        bool nan_pattern_must_match, OutputComparison& out) {
  const std::string prefix = "output " + std::to_string(i) + ": ";
  if (!ref.defined() && !cand.defined()) return {};
  if (!cand.defined()) return prefix + "returned None, expected a tensor";
  if (!ref.defined()) return prefix + "returned a tensor, expected None";
  if (cand.sizes() != ref.sizes())
    return prefix + "shape " + shape_str(cand.sizes()) + " expected " + shape_str(ref.sizes());
  if (cand.scalar_type() != ref.scalar_type())
    return prefix + "dtype " + c10::toString(cand.scalar_type()) + " expected " + c10::toString(ref.scalar_type());
  if (cand.device() != ref.device())
    return prefix + "on device " + cand.device().str() + " expected " + ref.device().str();
  if (cand.layout() != ref.layout()) {
    std::ostringstream s;
    s << prefix << "layout " << cand.layout() << " expected " << ref.layout();
    return s.str();
  }

  const ElementStats st = compare_elements(flat_real(ref), flat_real(cand), tol);
  // Counts are of real scalars; a complex element holds two.
  const std::int64_t per_element = ref.is_complex() ? 2 : 1;
  const std::int64_t numel = ref.numel() * per_element;
  out.numel += numel;
  out.max_abs_err = std::max(out.max_abs_err, st.max_abs);
  out.max_rel_err = std::max(out.max_rel_err, st.max_rel);
  out.mismatched += st.tol_failures + st.pattern_failures;
  if (st.tol_failures + st.pattern_failures == 0) return {};
  if (st.pattern_failures > 0) out.tolerance_only = false;

  std::ostringstream s;
  s << prefix;
  if (nan_pattern_must_match && st.pattern_failures > 0) {
    s << "NaN/Inf pattern differs at " << st.pattern_failures << " elements (first at index "
      << index_str(st.first_pattern_index / per_element, ref.sizes()) << ": got " << num_str(st.pattern_got)
      << " expected " << num_str(st.pattern_expected) << ")";
    if (st.tol_failures > 0) s << "; " << st.tol_failures << " more outside atol=" << num_str(tol.atol) << " rtol=" << num_str(tol.rtol);
    return s.str();
  }
  s << (st.tol_failures + st.pattern_failures) << " of " << numel << " elements outside atol="
    << num_str(tol.atol) << " rtol=" << num_str(tol.rtol) << " (";
  if (st.pattern_failures > 0) {
    s << st.pattern_failures << " NaN/Inf where the reference differs, first at index "
      << index_str(st.first_pattern_index / per_element, ref.sizes()) << ": got " << num_str(st.pattern_got)
      << " expected " << num_str(st.pattern_expected);
    if (st.tol_failures > 0) s << "; ";
  }
  if (st.tol_failures > 0) {
    s << "max abs err " << num_str(st.worst_err) << " at index "
      << index_str(st.worst_index / per_element, ref.sizes()) << ": got " << num_str(st.worst_got) << " expected "
      << num_str(st.worst_expected);
  }
  s << ")";
  return s.str();
}

}  // namespace

OutputComparison compare_outputs(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& candidate,
                                 const Tolerance& tol, bool nan_pattern_must_match) {
  OutputComparison out;
  if (candidate.size() != reference.size()) {
    out.ok = false;
    out.tolerance_only = false;
    out.reason = "returned " + std::to_string(candidate.size()) + " outputs, expected " +
                 std::to_string(reference.size());
    return out;
  }
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    std::string reason;
    const std::int64_t compared_before = out.numel;
    try {
      reason = compare_one(i, reference[i], candidate[i], tol, nan_pattern_must_match, out);
    } catch (const c10::Error& e) {
      // Whatever the candidate returned, its failure is a verdict, not an exception.
      reason = "output " + std::to_string(i) + ": could not be compared: " + e.what_without_backtrace();
      out.tolerance_only = false;
    }
    if (reason.empty()) continue;
    if (out.numel == compared_before) out.tolerance_only = false;  // failed on structure, before any element
    if (out.ok) {
      out.ok = false;
      out.reason = std::move(reason);
    }
  }
  return out;
}

bool outputs_match(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& candidate, const Tolerance& tol,
                   bool nan_pattern_must_match) {
  if (candidate.size() != reference.size()) return false;
  at::NoGradGuard no_grad;
  auto screenable = [](const at::Tensor& r, const at::Tensor& c) {
    return r.defined() && c.defined() && c.sizes() == r.sizes() && c.scalar_type() == r.scalar_type() &&
           c.device() == r.device() && r.layout() == at::kStrided && c.layout() == at::kStrided && !r.is_complex();
  };
  // Flattened once, for the sample and the whole screen; left empty where the screen cannot judge
  // (the comparison then says what it makes of the output).
  std::vector<std::pair<at::Tensor, at::Tensor>> flat(reference.size());
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (!screenable(reference[i], candidate[i])) continue;
    try {
      flat[i] = {flat_real(reference[i]), flat_real(candidate[i])};
    } catch (const c10::Error&) {
      flat[i] = {};
    }
  }
  // Samples first: one element past the bound in any output decides it.
  for (const auto& [r, c] : flat) {
    if (!r.defined()) continue;
    try {
      if (profile::timed("compare.sample", [&] { return screen_sample(r, c, tol); }) == Screened::fail) return false;
    } catch (const c10::Error&) {
      // left to the whole outputs' screen below
    }
  }
  bool sure = true;
  for (const auto& [r, c] : flat) {
    if (!r.defined()) {
      sure = false;  // the comparison itself says what it makes of these
      continue;
    }
    Screened screened = Screened::unsure;
    try {
      screened = profile::timed("compare.screen", [&] { return screen_in_float32(r, c, tol).result; });
    } catch (const c10::Error&) {
      // left to the comparison, which makes a verdict of it
    }
    if (screened == Screened::fail) return false;
    sure = sure && screened == Screened::pass;
  }
  return sure || compare_outputs(reference, candidate, tol, nan_pattern_must_match).ok;
}

bool all_finite(const std::vector<at::Tensor>& outputs) {
  at::NoGradGuard no_grad;
  for (const at::Tensor& t : outputs) {
    if (!t.defined() || !(t.is_floating_point() || t.is_complex())) continue;
    if (t.numel() == 0) continue;
    at::Tensor x = t.layout() == at::kStrided ? t : t.to_dense();
    // A mask of a block at a time (blockwise.hpp): whole, it is a quarter of a float32 output.
    if (count_blockwise({x}, [](const std::vector<at::Tensor>& b) { return at::isfinite(b[0]).logical_not_(); }) > 0) return false;
  }
  return true;
}

}  // namespace kbv::judge
