// Device-free builds (kbv run --overlap-builds on a GPU): the real judge and sandbox build a
// candidate for a given CUDA architecture with no GPU to see. This machine has none, so a build
// that touched CUDA would fail: a CUDA load_inline extension compiling here is the evidence.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "device_free_build.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::example_candidate;
using testing::example_problem;
using testing::fixture;

using testing::build_device_free;

TEST(DeviceFreeBuild, ACudaExtensionBuildsForTheGivenArchitectureWithNoGpu) {
  auto r = build_device_free(example_candidate("relu_cuda.py"), "cuda");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "skipped") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "built") << r.context();
  ASSERT_EQ(r.verdict["build"]["extensions"].size(), 1u) << r.context();
  EXPECT_TRUE(r.verdict["build"]["extensions"][0].value("cuda", false)) << r.context();
  // Compiled for sm_90 (TORCH_CUDA_ARCH_LIST from the job), the library is in the cache entry.
  bool library = false, for_sm90 = false;
  for (const auto& e : fs::recursive_directory_iterator(r.verdict["build"]["build_dir"].get<std::string>())) {
    if (e.path().extension() == ".so") library = true;
    if (e.path().filename() == "build.ninja") {
      std::ifstream in(e.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for_sm90 = text.find("arch=compute_90,code=sm_90") != std::string::npos;
    }
  }
  EXPECT_TRUE(library) << r.context();
  EXPECT_TRUE(for_sm90) << "the extension must compile for the job's architecture\n" << r.context();
}

// A compiler error needs no GPU to happen: it is the verdict, as with the GPU.
TEST(DeviceFreeBuild, AnExtensionThatDoesNotCompileIsACompileError) {
  auto r = build_device_free(example_candidate("relu_compile_error.py"), "error");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "compile_error") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "build") << r.context();
}

// An import that asks CUDA for the device fails without the GPU: not its verdict (it may be
// honest); the judge says needs_device and kbv builds it again with the GPU.
TEST(DeviceFreeBuild, AnImportThatNeedsTheGpuIsNoVerdict) {
  auto r = build_device_free(fixture("relu_cuda_at_import.py"), "import");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "skipped") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "needs_device") << r.context();
}

// An extension that compiled but whose import raised: the compiler did not fail, so it may be the
// missing GPU's doing (module init asking CUDA for the device).
TEST(DeviceFreeBuild, AnExtensionThatCompilesButRaisesOnImportIsNoVerdict) {
  auto r = build_device_free(fixture("relu_ext_init_raises.py"), "init");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "skipped") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "needs_device") << r.context();
}

// nvcc -arch=native asks the GPU what to build for; without one nvcc 13 builds for its default
// arch instead (a warning, and torch adds no arch of its own): a different build from the one the
// GPU gets, or none for Hopper-only code. No verdict from the device-free build.
TEST(DeviceFreeBuild, ACompileThatAsksForTheNativeGpuIsNoVerdict) {
  auto r = build_device_free(fixture("relu_cuda_arch_native.py"), "native");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "skipped") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "needs_device") << r.context();
}

}  // namespace
}  // namespace kbv
