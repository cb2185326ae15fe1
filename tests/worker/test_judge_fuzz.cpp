// Property test: nothing a reference or a candidate's output holds can make the judge's
// comparison, numerics model, degenerate-problem audit or integrity checks throw (issue 34:
// `internal_error` is kbv's own fault only). Every function below is called by the judge on data
// the problem or the candidate chose, outside any guard that would turn a throw into the
// candidate's outcome; a throw there ends a verdict as internal_error, which is re-evaluated
// forever and never scored.
//
// The test crosses a set of awkward tensors (NaN, +-inf, one inf, denormals, values near each
// dtype's largest, empty and zero-size, 0-d, integer and bool, fp16/bf16, complex, non-contiguous,
// None) with each other as (reference, candidate) pairs and with random mixes of them, and
// requires every path to return. It runs on the CPU (label worker, in CI).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "judge/compare.hpp"
#include "judge/integrity.hpp"
#include "judge/numerics.hpp"
#include "judge/problem_audit.hpp"
#include "torch_host/forward.hpp"

namespace kbv::judge {
namespace {

using torch_host::Arg;
using torch_host::ArgList;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Case {
  std::string name;
  at::Tensor t;
};

at::Tensor filled(std::vector<double> values, at::ScalarType dtype, at::IntArrayRef shape) {
  at::Tensor v = at::tensor(values, at::TensorOptions().dtype(at::kDouble));
  return v.to(dtype).reshape(shape);
}

// The awkward values, each as a [2, 4] tensor (a shape every case shares, so that they meet each
// other element-wise), plus shapes of their own.
std::vector<Case> awkward_tensors() {
  const double fmax = std::numeric_limits<float>::max();
  const double fden = std::numeric_limits<float>::denorm_min();
  const double dmax = std::numeric_limits<double>::max();
  const double dden = std::numeric_limits<double>::denorm_min();
  std::vector<Case> out;
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16}) {
    const std::string d = c10::toString(dt);
    out.push_back({d + " ordinary", filled({1, -2, 0.5, 0, 3, -1, 2, 0.25}, dt, {2, 4})});
    out.push_back({d + " one inf", filled({1, 2, 3, kInf, 5, 6, 7, 8}, dt, {2, 4})});
    out.push_back({d + " one -inf", filled({1, 2, 3, -kInf, 5, 6, 7, 8}, dt, {2, 4})});
    out.push_back({d + " all inf", filled({kInf, -kInf, kInf, kInf, -kInf, kInf, kInf, kInf}, dt, {2, 4})});
    out.push_back({d + " nan", filled({kNaN, 1, kNaN, 2, 3, kNaN, 4, 5}, dt, {2, 4})});
    out.push_back({d + " all nan", filled(std::vector<double>(8, kNaN), dt, {2, 4})});
    out.push_back({d + " denormal", filled({fden, -fden, dden, 1e-39, -1e-42, 0, 1e-45, fden}, dt, {2, 4})});
    out.push_back({d + " float max", filled({fmax, -fmax, fmax, fmax, -fmax, 1, fmax, -fmax}, dt, {2, 4})});
    out.push_back({d + " fp16 edge", filled({65504, -65504, 65520, 6.1e-5, 5.96e-8, 1e5, -1e5, 0}, dt, {2, 4})});
    out.push_back({d + " double max", filled({dmax, -dmax, dmax, 1e300, -1e300, 1, dmax, 0}, dt, {2, 4})});
    out.push_back({d + " empty", at::empty({0}, at::TensorOptions().dtype(dt))});
    out.push_back({d + " zero-size 2-d", at::empty({2, 0}, at::TensorOptions().dtype(dt))});
    out.push_back({d + " 0-d inf", filled({kInf}, dt, {})});
    out.push_back({d + " 0-d nan", filled({kNaN}, dt, {})});
    out.push_back({d + " non-contiguous", filled({1, kInf, 2, kNaN, 3, fmax, 4, -0.0}, dt, {4, 2}).t()});
    out.push_back({d + " expanded", filled({kInf}, dt, {1, 1}).expand({2, 4})});
  }
  for (at::ScalarType dt : {at::kInt, at::kLong, at::kShort, at::kByte, at::kChar}) {
    const std::string d = c10::toString(dt);
    out.push_back({d + " ordinary", at::arange(8, at::TensorOptions().dtype(dt)).reshape({2, 4})});
    out.push_back({d + " empty", at::empty({0}, at::TensorOptions().dtype(dt))});
  }
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  out.push_back({"Long extremes", at::tensor({std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                                              std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, std::int64_t{1} << 62,
                                              -(std::int64_t{1} << 62), std::int64_t{7}},
                                             i64)
                                       .reshape({2, 4})});
  out.push_back({"Int extremes", at::tensor({INT32_MAX, INT32_MIN, 0, -1, 1, INT32_MAX, INT32_MIN, 7}, at::TensorOptions().dtype(at::kInt))
                                     .reshape({2, 4})});
  out.push_back({"Bool", at::tensor({1, 0, 1, 1, 0, 0, 1, 0}, at::TensorOptions().dtype(at::kInt)).to(at::kBool).reshape({2, 4})});
  out.push_back({"Bool all true", at::ones({2, 4}, at::TensorOptions().dtype(at::kBool))});
  out.push_back({"Bool empty", at::empty({0}, at::TensorOptions().dtype(at::kBool))});
  at::Tensor re = filled({1, kInf, kNaN, 0, 3.4e38, -1, 2, 1e-40}, at::kFloat, {2, 4});
  out.push_back({"ComplexFloat", at::complex(re, re.flip(1))});
  out.push_back({"ComplexDouble empty", at::empty({0}, at::TensorOptions().dtype(at::kComplexDouble))});
  out.push_back({"None", at::Tensor()});
  return out;
}

const std::vector<Tolerance>& tolerances() {
  static const std::vector<Tolerance> t{{1e-3, 1e-3}, {1e-2, 1e-2}, {0, 0}, {1e-40, 0}, {1e30, 10}};
  return t;
}

// Runs `body`; on a throw, the test fails with what threw and on which inputs.
void must_not_throw(const std::string& what, const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::Error& e) {
    ADD_FAILURE() << what << " threw: " << e.what_without_backtrace();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " threw: " << e.what();
  }
}

// A deep copy that keeps None as None (clone() of an undefined tensor throws).
at::Tensor copy_of(const at::Tensor& t) { return t.defined() ? t.clone() : t; }

TEST(JudgeFuzz, ComparisonsNeverThrowOnAnyPair) {
  const auto cases = awkward_tensors();
  int pairs = 0;
  for (const auto& r : cases)
    for (const auto& c : cases) {
      const std::string what = "reference " + r.name + ", candidate " + c.name;
      for (const Tolerance& tol : tolerances())
        for (bool nan_pattern : {false, true}) {
          must_not_throw("compare_outputs(" + what + ")", [&] {
            OutputComparison cmp = compare_outputs({r.t}, {c.t}, tol, nan_pattern);
            if (!cmp.ok) {
              EXPECT_FALSE(cmp.reason.empty()) << what;
            }
          });
          must_not_throw("outputs_match(" + what + ")", [&] { outputs_match({r.t}, {c.t}, tol, nan_pattern); });
        }
      ++pairs;
    }
  EXPECT_GT(pairs, 1000);
}

TEST(JudgeFuzz, AnOutputEqualsItselfUnderStrictsPattern) {
  // The property behind strict's NaN/Inf rule: whatever a reference holds, the same values pass.
  for (const auto& r : awkward_tensors()) {
    must_not_throw("compare_outputs(" + r.name + ", itself)", [&] {
      OutputComparison cmp = compare_outputs({r.t}, {copy_of(r.t)}, {1e-3, 1e-3}, true);
      EXPECT_TRUE(cmp.ok) << r.name << ": " << cmp.reason;
    });
  }
}

TEST(JudgeFuzz, DegenerateAuditNeverThrows) {
  // Issue 34: a reference with one infinity ended strict in internal_error ("value cannot be
  // converted to type float without overflow", the mean of the reference in trivial_pass).
  const auto cases = awkward_tensors();
  for (const auto& r : cases) {
    for (const auto& in : cases) {
      ArgList inputs;
      Arg a;
      a.is_tensor = true;
      a.tensor = in.t;
      inputs.push_back(a);
      for (const Tolerance& tol : {tolerances()[0], tolerances()[3]})
        for (bool nan_pattern : {false, true})
          must_not_throw("trivial_pass(reference " + r.name + ", input " + in.name + ")",
                         [&] { trivial_pass({r.t}, inputs, tol, nan_pattern); });
    }
    must_not_throw("trivial_pass(reference " + r.name + ", no inputs)", [&] { trivial_pass({r.t}, {}, {1e-3, 1e-3}, true); });
    must_not_throw("trivial_pass(two outputs " + r.name + ")", [&] { trivial_pass({r.t, r.t}, {}, {1e-3, 1e-3}, false); });
    must_not_throw("all_finite(" + r.name + ")", [&] { all_finite({r.t}); });
  }
}

TEST(JudgeFuzz, OneInfinityInTheReferenceIsNotDegenerate) {
  // What the internal error hid: the audit's answer on such a reference. A ramp with one inf
  // is matched by no trivial output under strict's pattern rule.
  at::Tensor ref = at::arange(1, 65, at::TensorOptions().dtype(at::kFloat));
  ref[5] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(trivial_pass({ref}, {}, {1e-3, 1e-3}, true), "");
  // Near float's largest value the mean overflows float: still an answer, not an exception.
  at::Tensor huge = at::full({64}, std::numeric_limits<float>::max(), at::TensorOptions().dtype(at::kFloat));
  EXPECT_EQ(trivial_pass({huge}, {}, {1e-3, 1e-3}, true), "constant");
}

TEST(JudgeFuzz, NumericsModelNeverThrows) {
  const auto cases = awkward_tensors();
  for (const auto& t : cases) {
    at::Tensor truth = t.t.defined() && (t.t.is_floating_point()) ? t.t.to(at::kDouble) : t.t;
    for (const auto& e : cases)
      for (const auto& c : cases) {
        if (e.t.defined() && truth.defined() && e.t.sizes() != truth.sizes()) continue;  // as the judge calls it
        if (e.t.defined() && !e.t.is_floating_point()) continue;  // eager's output is the reference's dtype
        must_not_throw("check_numerics(truth " + t.name + ", eager " + e.name + ", candidate " + c.name + ")", [&] {
          NumericsCheck check = check_numerics({truth}, {e.t}, {c.t});
          if (check.within) {
            EXPECT_TRUE(std::isfinite(check.candidate_max_abs_err)) << t.name << " / " << e.name << " / " << c.name;
          }
        });
      }
  }
}

TEST(JudgeFuzz, IntegrityChecksNeverThrow) {
  const auto cases = awkward_tensors();
  for (const auto& a : cases)
    for (const auto& b : cases) {
      if (!a.t.defined()) continue;
      ArgList pristine;
      Arg arg;
      arg.is_tensor = true;
      arg.tensor = a.t;
      pristine.push_back(arg);
      must_not_throw("find_input_mutation(" + a.name + ", " + b.name + ")", [&] { find_input_mutation(pristine, {b.t}); });
      must_not_throw("find_late_writes(" + a.name + ", " + b.name + ")", [&] { find_late_writes({a.t}, {b.t}); });
    }
}

TEST(JudgeFuzz, RandomMixesNeverThrow) {
  // Random tensors built from the awkward values (each element one of them), random shapes,
  // random dtypes, as reference/candidate pairs through every path.
  std::mt19937_64 rng(34);
  const std::vector<double> specials{0.0,  -0.0, 1.0,  -1.0, kInf, -kInf, kNaN, 3.4028234663852886e38, -3.4028234663852886e38,
                                     1e-45, 1e-40, 65504.0, 65520.0, 6.1e-5, 1e38, 1e300, 1e-310, 0.5};
  const std::vector<at::ScalarType> dtypes{at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kInt, at::kBool};
  auto random_tensor = [&](at::ScalarType dt, const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = specials[rng() % specials.size()];
    at::Tensor t = at::tensor(v, at::TensorOptions().dtype(at::kDouble)).reshape(shape);
    // Integer casts of inf or NaN are undefined in C++: integers and bools get finite values.
    if (!at::isFloatingType(dt)) t = at::nan_to_num(t, 0.0, 1.0, -1.0).clamp(-1e6, 1e6);
    return t.to(dt);
  };
  for (int i = 0; i < 400; ++i) {
    std::vector<std::int64_t> shape;
    const int dims = static_cast<int>(rng() % 4);
    for (int d = 0; d < dims; ++d) shape.push_back(static_cast<std::int64_t>(rng() % 5));
    const at::ScalarType dt = dtypes[rng() % dtypes.size()];
    at::Tensor ref = random_tensor(dt, shape);
    at::Tensor cand = rng() % 4 == 0 ? random_tensor(dtypes[rng() % dtypes.size()], shape) : random_tensor(dt, shape);
    const Tolerance& tol = tolerances()[rng() % tolerances().size()];
    const bool nan_pattern = rng() % 2 == 0;
    const std::string what = "mix " + std::to_string(i);
    must_not_throw(what + " compare_outputs", [&] { compare_outputs({ref, ref}, {cand, ref}, tol, nan_pattern); });
    must_not_throw(what + " outputs_match", [&] { outputs_match({ref}, {cand}, tol, nan_pattern); });
    must_not_throw(what + " trivial_pass", [&] { trivial_pass({ref}, {}, tol, nan_pattern); });
    must_not_throw(what + " all_finite", [&] { all_finite({ref, cand}); });
    if (at::isFloatingType(dt))
      must_not_throw(what + " check_numerics", [&] { check_numerics({ref.to(at::kDouble)}, {ref}, {cand}); });
  }
}

}  // namespace
}  // namespace kbv::judge
