// The lean binding's list (src/core/binding_prelude.hpp) against this torch's own headers: what
// the list was derived from must still hold, or the list is stale. g++ preprocesses both ways
// (~10 s of CPU): the macros torch/extension.h defines and the binding does not must each be
// poisoned (or be an include guard, which a source never tests for meaning).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "core/binding_prelude.hpp"
#include "torch_host/python_runtime.hpp"

namespace py = pybind11;

namespace kbv {
namespace {

void python() {
  static auto* runtime = new torch_host::PythonRuntime();  // one interpreter per process, never torn down
  (void)runtime;
}

constexpr const char* kMacroDiff = R"PY(
import os, re, subprocess, sysconfig, tempfile
import torch.utils.cpp_extension as ext

def macros(text):
    flags = ["-DTORCH_API_INCLUDE_EXTENSION_H", "-std=c++17"]
    for d in ext.include_paths() + [sysconfig.get_path("include")]:
        flags += ["-isystem", d]
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(text)
    try:
        out = subprocess.run(["c++", "-dM", "-E", f.name] + flags, capture_output=True, text=True, check=True).stdout
    finally:
        os.remove(f.name)
    return set(re.findall(r"^#define (\w+)", out, re.M))

def frontend_only(binding):
    return sorted(macros("#include <torch/extension.h>\n") - macros(binding))

def python_h_includes():
    inc = ext.include_paths()[0]
    with open(os.path.join(inc, "torch/csrc/api/include/torch/python.h")) as f:
        return re.findall(r'^[ \t]*#[ \t]*include[ \t]*<([^>]+)>', f.read(), re.M)
)PY";

bool include_guard(const std::string& name) {
  return name.starts_with("_GLIBCXX_") || name.starts_with("_STL_") || name.ends_with("_INCLUDED") ||
         name.starts_with("STRONG_HAS_");  // the strong-type header's feature tests, beside its guard
}

TEST(BindingPrelude, EveryMacroOnlyTheFrontendDefinesIsPoisoned) {
  python();
  py::dict scope;
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kMacroDiff, scope);
  // The headers alone (no poison: a poisoned name's own #define would not preprocess).
  std::string headers;
  for (const char* h : kBindingHeaders) headers += std::string("#include <") + h + ">\n";
  auto only_frontend = scope["frontend_only"](headers).cast<std::vector<std::string>>();
  ASSERT_FALSE(only_frontend.empty()) << "torch/extension.h defines nothing more: the diff did not run";
  const std::set<std::string> poisoned(kFrontendOnlyMacros.begin(), kFrontendOnlyMacros.end());
  for (const auto& name : only_frontend)
    EXPECT_TRUE(poisoned.count(name) || include_guard(name)) << name << " is defined by the frontend alone and not poisoned";
  EXPECT_NE(binding_lines().find(" TORCH_VERSION "), std::string::npos) << binding_lines();
}

// The list is python.h's own includes less the frontend's three: the layout the sandbox's hook
// checks before it uses the list at all.
TEST(BindingPrelude, TheListIsTorchPythonHsIncludesLessTheFrontend) {
  python();
  py::dict scope;
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kMacroDiff, scope);
  auto includes = scope["python_h_includes"]().cast<std::vector<std::string>>();
  std::vector<std::string> expected(kBindingHeaders.begin(), kBindingHeaders.end());
  expected.insert(expected.end(), kFrontendOfPythonH.begin(), kFrontendOfPythonH.end());
  std::sort(includes.begin(), includes.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(includes, expected);
}

}  // namespace
}  // namespace kbv
