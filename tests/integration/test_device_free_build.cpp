// Device-free builds (kbv run --overlap-builds on a GPU): the real judge and sandbox build a
// candidate for a given CUDA architecture with no GPU to see. This machine has none, so a build
// that touched CUDA would fail: a CUDA load_inline extension compiling here is the evidence.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "device_free_build.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::example_candidate;
using testing::example_problem;
using testing::fixture;

using testing::build_device_free;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The file `name` load_inline wrote for the (one) extension built under `dir` (cuda.cu, main.cpp).
std::string read_named(const std::string& dir, const std::string& name) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename() == name) return read_file(e.path());
  return "";
}

std::string read_cuda_source(const std::string& dir) { return read_named(dir, "cuda.cu"); }

// Imports the one extension module built under `dir` in a plain interpreter (no GPU here) and
// calls `function` on a CPU tensor: what it printed (the error the host code raised, or "ok").
std::string import_and_call(const std::string& dir, const std::string& function) {
  std::string so;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".so") so = e.path().string();
  ProcessSpec spec;
  spec.argv = {KBV_PYTHON_EXECUTABLE, "-c",
               "import sys, importlib.util, torch\n"
               "path = sys.argv[1]\n"
               "spec = importlib.util.spec_from_file_location(path.rsplit('/', 1)[1].split('.')[0], path)\n"
               "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
               "try:\n    getattr(m, sys.argv[2])(torch.randn(8)); print('CALLED: ok')\n"
               "except RuntimeError as e:\n    print('CALLED: ' + str(e).splitlines()[0])\n",
               so, function};
  ProcessResult r = run_process(spec, Clock::now() + std::chrono::minutes(2));
  const std::string out = r.output_head + r.output_tail;
  const auto at = out.find("CALLED: ");
  return at == std::string::npos ? "no call (" + r.describe() + "): " + out : out.substr(at + 8, out.find('\n', at) - at - 8);
}

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
    if (e.path().filename() == "build.ninja") for_sm90 = read_file(e.path()).find("arch=compute_90,code=sm_90") != std::string::npos;
  }
  EXPECT_TRUE(library) << r.context();
  EXPECT_TRUE(for_sm90) << "the extension must compile for the job's architecture\n" << r.context();
  // Its CUDA source's own #include <torch/extension.h> was left out (half of nvcc's work), it
  // compiled with the lean torch/types.h (a third less again), and the verdict says so.
  EXPECT_TRUE(r.verdict["build"]["extensions"][0].value("extension_h_left_out", false)) << r.context();
  EXPECT_TRUE(r.verdict["build"]["extensions"][0].value("lean_prelude", false)) << r.context();
  std::string cu = read_cuda_source(r.verdict["build"]["build_dir"].get<std::string>());
  EXPECT_NE(cu.find("(lean prelude)"), std::string::npos) << cu.substr(0, 400);
  EXPECT_NE(cu.find("#include <ATen/ops/empty_like.h>"), std::string::npos) << cu.substr(0, 4000);
  EXPECT_EQ(cu.find("#include <torch/types.h>"), std::string::npos) << cu.substr(0, 400);
  EXPECT_EQ(cu.find("\n#include <torch/extension.h>"), std::string::npos) << cu.substr(0, 400);
  // main.cpp with torch/extension.h less the C++ frontend (the lean binding).
  EXPECT_TRUE(r.verdict["build"]["extensions"][0].value("lean_binding", false)) << r.context();
  const std::string main_cpp = read_named(r.verdict["build"]["build_dir"].get<std::string>(), "main.cpp");
  EXPECT_NE(main_cpp.find("(lean binding)"), std::string::npos) << main_cpp.substr(0, 600);
  EXPECT_EQ(main_cpp.find("#include <torch/extension.h>"), std::string::npos) << main_cpp.substr(0, 600);
  // Built lean, it loads (no symbol the lean headers declared and left undefined), its binding
  // converts the tensor and its host code runs: relu_cuda's own check of its input is what a CPU
  // tensor meets, and the binding turns it into the RuntimeError torch's would.
  EXPECT_EQ(import_and_call(r.verdict["build"]["build_dir"].get<std::string>(), "relu_cuda"), "relu_cuda: x must be a CUDA tensor");
}

// A main.cpp that needs a name of the C++ frontend kbv's pre-check does not know is compiled
// again with torch/extension.h: built, not a compile_error, and its binding works.
TEST(DeviceFreeBuild, AMainCppThatNeedsTheFrontendIsCompiledWithTorchExtensionH) {
  auto r = build_device_free(fixture("relu_cuda_binding_needs_frontend.py"), "binding-frontend");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "built") << r.context();
  ASSERT_EQ(r.verdict["build"]["extensions"].size(), 1u) << r.context();
  EXPECT_FALSE(r.verdict["build"]["extensions"][0].value("lean_binding", true)) << r.context();
  EXPECT_TRUE(r.verdict["build"]["extensions"][0].value("lean_prelude", false)) << "the CUDA source's step is its own\n" << r.context();
  const std::string dir = r.verdict["build"]["build_dir"].get<std::string>();
  EXPECT_EQ(read_named(dir, "main.cpp").rfind("#include <torch/extension.h>", 0), 0u) << read_named(dir, "main.cpp").substr(0, 400);
  const std::string log = read_file(r.verdict["build"]["log_path"].get<std::string>());
  EXPECT_NE(log.find("did not compile with kbv's lean binding"), std::string::npos) << log.substr(0, 2000);
  EXPECT_EQ(import_and_call(dir, "relu_forward"), "x must be a CUDA tensor");
}

// Built, its one extension's CUDA source with torch/types.h and without its own extension.h line.
void expect_built_with_torch_types_h(const testing::JudgeReply& r) {
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "built") << r.context();
  ASSERT_EQ(r.verdict["build"]["extensions"].size(), 1u) << r.context();
  EXPECT_FALSE(r.verdict["build"]["extensions"][0].value("lean_prelude", true)) << r.context();
  EXPECT_TRUE(r.verdict["build"]["extensions"][0].value("extension_h_left_out", false)) << r.context();
  std::string cu = read_cuda_source(r.verdict["build"]["build_dir"].get<std::string>());
  EXPECT_NE(cu.find("#include <torch/types.h>"), std::string::npos) << cu.substr(0, 400);
}

// KBV_LEAN_PRELUDE=off (for measuring) builds the same source with torch/types.h.
TEST(DeviceFreeBuild, TheLeanPreludeCanBeTurnedOffForMeasuring) {
  expect_built_with_torch_types_h(
      build_device_free(example_candidate("relu_cuda.py"), "lean-off", "9.0", "", {{"KBV_LEAN_PRELUDE", "off"}}));
}

// A CUDA source that needs a name the lean prelude leaves out (declared by torch/library.h's
// headers) is compiled again with torch/types.h, its extension.h line still left out: built.
TEST(DeviceFreeBuild, ACudaSourceThatNeedsTorchTypesHIsCompiledWithIt) {
  auto r = build_device_free(fixture("relu_cuda_needs_types_h.py"), "types-h");
  expect_built_with_torch_types_h(r);
  if (!r.verdict.is_object()) return;
  std::string log = read_file(r.verdict["build"]["log_path"].get<std::string>());
  EXPECT_NE(log.find("did not compile with kbv's lean torch/types.h"), std::string::npos) << log.substr(0, 2000);
}

// A CUDA source that needs the rest of torch/extension.h (a name kbv's pre-check does not know)
// is compiled again as written: built, not a compile_error; and a later import of the same
// source (the evaluation's) builds nothing again.
TEST(DeviceFreeBuild, ACudaSourceThatNeedsTorchExtensionHIsCompiledAsWritten) {
  fs::path builds = fs::temp_directory_path() / ("kbv-as-written-builds-" + std::to_string(::getpid()));
  fs::remove_all(builds);
  auto r = build_device_free(fixture("relu_cuda_needs_extension_h.py"), "as-written", "9.0", builds.string());
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "skipped") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "built") << r.context();
  ASSERT_EQ(r.verdict["build"]["extensions"].size(), 1u) << r.context();
  EXPECT_FALSE(r.verdict["build"]["extensions"][0].value("extension_h_left_out", true)) << r.context();
  const std::string dir = r.verdict["build"]["build_dir"].get<std::string>();
  EXPECT_NE(read_cuda_source(dir).find("\n#include <torch/extension.h>"), std::string::npos);
  std::string log = read_file(r.verdict["build"]["log_path"].get<std::string>());
  EXPECT_NE(log.find("did not compile with kbv's lean torch/types.h"), std::string::npos) << log.substr(0, 2000);
  EXPECT_NE(log.find("did not compile without its #include <torch/extension.h>"), std::string::npos) << log.substr(0, 2000);
  std::size_t notes_before = 0;
  for (std::size_t at = log.find("did not compile"); at != std::string::npos; at = log.find("did not compile", at + 1))
    ++notes_before;

  auto again = build_device_free(fixture("relu_cuda_needs_extension_h.py"), "as-written", "9.0", builds.string());
  ASSERT_TRUE(again.verdict.is_object()) << again.context();
  EXPECT_EQ(again.verdict.value("stage", ""), "built") << again.context();
  std::string log_after = read_file(again.verdict["build"]["log_path"].get<std::string>());
  std::size_t notes = 0;
  for (std::size_t at = log_after.find("did not compile"); at != std::string::npos; at = log_after.find("did not compile", at + 1))
    ++notes;
  EXPECT_EQ(notes, notes_before) << "the second import tried a leaner compile again\n" << log_after;
  EXPECT_LT(again.verdict["build"]["extensions"][0].value("seconds", 99.0), 20.0)
      << "the second import compiled again\n" << again.context();
  if (!::testing::Test::HasFailure()) fs::remove_all(builds);
}

// A compiler error needs no GPU to happen: it is the verdict, as with the GPU.
TEST(DeviceFreeBuild, AnExtensionThatDoesNotCompileIsACompileError) {
  auto r = build_device_free(example_candidate("relu_compile_error.py"), "error");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "compile_error") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "build") << r.context();
  EXPECT_NE(r.verdict.value("reason", "").find("'output' was not declared"), std::string::npos) << r.context();
}

// A CUDA source that compiles under none of kbv's attempts: the reason is nvcc's diagnostic of
// the last one (the source as written), not torch's bare "Error building extension".
TEST(DeviceFreeBuild, ACudaSourceThatDoesNotCompileSaysWhatNvccSaid) {
  auto r = build_device_free(fixture("relu_cuda_typo.py"), "cuda-typo");
  ASSERT_TRUE(r.verdict.is_object()) << r.context();
  EXPECT_EQ(r.verdict.value("outcome", ""), "compile_error") << r.context();
  EXPECT_EQ(r.verdict.value("stage", ""), "build") << r.context();
  const std::string reason = r.verdict.value("reason", "");
  EXPECT_NE(reason.find("cuda.cu("), std::string::npos) << r.context();
  EXPECT_NE(reason.find("has no member \"X\""), std::string::npos) << r.context();
  // All three attempts ran and failed: the log says the as-written one was the last.
  const std::string log = read_file(r.verdict["build"].value("log_path", ""));
  EXPECT_NE(log.find("compiling it as written"), std::string::npos) << log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
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
