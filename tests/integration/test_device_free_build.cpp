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

// Imports that may need the GPU are no verdict of a device-free build (they may be honest): the
// judge says needs_device and kbv builds them again with the GPU.
struct NeedsDeviceCase {
  const char* fixture;
  const char* why;
};

class DeviceFreeNeedsDevice : public ::testing::TestWithParam<NeedsDeviceCase> {};

TEST_P(DeviceFreeNeedsDevice, IsNoVerdict) {
  const auto& c = GetParam();
  auto r = build_device_free(fixture(c.fixture), c.fixture);
  ASSERT_TRUE(r.verdict.is_object()) << c.why << "\n" << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "skipped") << c.why << "\n" << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "needs_device") << c.why << "\n" << r.context();
}

INSTANTIATE_TEST_SUITE_P(
    DeviceFreeBuild, DeviceFreeNeedsDevice,
    ::testing::Values(
        NeedsDeviceCase{"relu_cuda_at_import.py", "the import asks CUDA for the device"},
        // The compiler did not fail: module init asking CUDA for the device is the missing GPU's doing.
        NeedsDeviceCase{"relu_ext_init_raises.py", "the extension compiled but its init raised"},
        // nvcc -arch=native without a GPU builds for nvcc's default arch (a warning; torch adds
        // none of its own): not the build the GPU gets, or none for Hopper-only code.
        NeedsDeviceCase{"relu_cuda_arch_native.py", "nvcc asks for the native GPU"}),
    [](const ::testing::TestParamInfo<NeedsDeviceCase>& info) {
      std::string name = info.param.fixture;
      return name.substr(0, name.find('.'));
    });

}  // namespace
}  // namespace kbv
