// The comparisons' fused float32 screen (src/judge/float32_screen_kernel.cu) decides every output
// as the operator chain it replaced does (float32_screen.cpp's screen_in_float32_with_operators,
// the CPU's way): pass, fail or unsure, and the same error maxima where it passes.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "judge/float32_screen.hpp"
#include "judge/float32_screen_kernel.hpp"

namespace kbv::judge {
namespace {

at::TensorOptions on_gpu(at::ScalarType dtype) { return at::TensorOptions().device(at::Device(at::kCUDA, 0)).dtype(dtype); }

std::string name_of(Screened s) { return s == Screened::pass ? "pass" : s == Screened::fail ? "fail" : "unsure"; }

void expect_same_screen(const at::Tensor& ref, const at::Tensor& cand, const Tolerance& tol, const std::string& what) {
  const Screen fused = screen_in_float32(ref, cand, tol);
  const Screen operators = screen_in_float32_with_operators(ref, cand, tol);
  EXPECT_EQ(name_of(fused.result), name_of(operators.result)) << what;
  if (fused.result == Screened::pass && operators.result == Screened::pass) {
    EXPECT_NEAR(fused.max_abs, operators.max_abs, 1e-6 * std::max(1.0, operators.max_abs)) << what;
    EXPECT_NEAR(fused.max_rel, operators.max_rel, 1e-6 * std::max(1.0, operators.max_rel)) << what;
  }
}

TEST(Float32ScreenGpu, TheKernelRunsOnThisDevice) {
  at::Tensor a = at::randn({1000}, on_gpu(at::kFloat));
  at::Tensor partials = at::empty({screen_blocks(1000), kScreenFigures}, on_gpu(at::kFloat));
  ASSERT_TRUE(launch_screen(a.data_ptr(), a.data_ptr(), 1000, ScreenDtype::float32, 1e-3f, 1e-3f, 1.0f, 1.0f,
                            partials.data_ptr<float>(), c10::cuda::getCurrentCUDAStream(0).stream()))
      << "the judge's kernels have no image for this device: its comparisons fall back to torch's operators";
  at::Tensor row = partials.cpu();
  EXPECT_LT(row[0][0].item<float>(), 0.0f);  // every |c - r| = 0 is inside the bound
  EXPECT_EQ(row[0][1].item<float>(), 0.0f);
}

TEST(Float32ScreenGpu, TheFusedKernelDecidesAsTheOperatorsDo) {
  const Tolerance tol{1e-3, 1e-3};
  for (at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{5} << 16, (std::int64_t{3} << 24) + 17}) {
      const std::string where = std::string(c10::toString(dtype)) + " n=" + std::to_string(n) + ": ";
      at::Tensor ref = at::randn({n}, on_gpu(at::kFloat)).to(dtype);
      expect_same_screen(ref, ref.clone(), tol, where + "equal");
      at::Tensor noisy = (ref.to(at::kFloat) + at::randn({n}, on_gpu(at::kFloat)) * 1e-5).to(dtype);
      expect_same_screen(ref, noisy, tol, where + "within the tolerance");
      for (std::int64_t at_index : {std::int64_t{0}, n / 2, n - 1}) {
        const std::string here = where + "index " + std::to_string(at_index) + ": ";
        at::Tensor far = ref.clone();
        far[at_index] = ref[at_index].to(at::kFloat).item<float>() + 10.0f;
        expect_same_screen(ref, far, tol, here + "one element far off");
        at::Tensor near = ref.clone().to(at::kFloat);
        const float r = ref[at_index].to(at::kFloat).item<float>();
        near[at_index] = r + static_cast<float>(tol.atol + tol.rtol * std::fabs(r));  // on the bound
        expect_same_screen(ref.to(at::kFloat), near, tol, here + "on the bound (float32)");
        at::Tensor nan_both = ref.clone();
        nan_both[at_index] = NAN;
        expect_same_screen(nan_both, nan_both.clone(), tol, here + "NaN in both");
        at::Tensor nan_cand = ref.clone();
        nan_cand[at_index] = NAN;
        expect_same_screen(ref, nan_cand, tol, here + "NaN in the candidate's");
        at::Tensor inf_both = ref.clone();
        inf_both[at_index] = INFINITY;
        expect_same_screen(inf_both, inf_both.clone(), tol, here + "the same Inf in both");
        at::Tensor inf_cand = ref.clone();
        inf_cand[at_index] = -INFINITY;
        expect_same_screen(ref, inf_cand, tol, here + "Inf in the candidate's only");
      }
    }
  }
  // Zero-size outputs pass; an exact atol of 0 and a wide rtol are the operators' too.
  at::Tensor empty = at::empty({0}, on_gpu(at::kFloat));
  EXPECT_EQ(name_of(screen_in_float32(empty, empty, tol).result), "pass");
  at::Tensor ref = at::randn({4096}, on_gpu(at::kFloat));
  expect_same_screen(ref, ref * 1.5f, Tolerance{1e-6, 0.6}, "rtol 0.6");
  expect_same_screen(ref, ref * 1.5f, Tolerance{1e-6, 0.2}, "rtol 0.2");
}

// The kernel reads memory; a negative view's memory holds the negation of its values. Such a
// tensor goes to the operators, which read it as its values.
TEST(Float32ScreenGpu, ANegativeViewIsScreenedByItsValues) {
  const Tolerance tol{1e-3, 1e-3};
  at::Tensor x = at::randn({std::int64_t{1} << 20}, on_gpu(at::kFloat));
  at::Tensor negative = at::_neg_view(x);
  EXPECT_EQ(name_of(screen_in_float32(negative, x.neg(), tol).result), "pass");
  EXPECT_EQ(name_of(screen_in_float32(negative, x.clone(), tol).result), "fail");
  EXPECT_EQ(name_of(screen_in_float32(x.neg(), negative, tol).result), "pass");
}

// Not an assertion (load moves it): the seconds of both ways on one large output, for the log.
TEST(Float32ScreenGpu, SecondsOfBothWaysOnALargeOutput) {
  const std::int64_t n = std::int64_t{1} << 30;  // 4 GiB of float32 each
  at::Tensor ref = at::randn({n}, on_gpu(at::kFloat));
  at::Tensor cand = ref + 1e-6f;
  const Tolerance tol{1e-4, 1e-4};
  for (int way = 0; way < 2; ++way) {
    Screen s;
    auto once = [&] { s = way == 0 ? screen_in_float32(ref, cand, tol) : screen_in_float32_with_operators(ref, cand, tol); };
    once();  // first use of the kernels
    at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
    start.record();
    for (int k = 0; k < 5; ++k) once();
    stop.record();
    stop.synchronize();
    std::printf("%s: %.2f ms a screen of 2 x 4 GiB (%s)\n", way == 0 ? "fused kernel" : "operators",
                start.elapsed_time(stop) / 5, name_of(s.result).c_str());
    EXPECT_EQ(name_of(s.result), "pass");
  }
}

}  // namespace
}  // namespace kbv::judge
