#pragma once
// Wraps torch.utils.cpp_extension.load_inline / load before the candidate is imported, so that
// every extension it builds:
//  - goes to build_root/<candidate source hash>/<unique name> (no lock races between candidates
//    that all call their extension "my_ext", and a re-run reuses the build);
//  - gets a unique module name unless its own source hard-codes one in PYBIND11_MODULE;
//  - compiles for this device's architecture only (TORCH_CUDA_ARCH_LIST);
//  - writes its compiler output to one log file;
//  - searches the judge's precompiled torch/extension.h first (always the same flags, so whether
//    the PCH exists never changes torch's rebuild decision);
//  - on a CPU device, refuses CUDA sources at once (KbvNeedsCuda) instead of building for nothing;
//  - compiles a load_inline CUDA source with a lean torch/types.h (only the operators it names)
//    where that compiles, else without its own #include <torch/extension.h> (half of nvcc's work;
//    load_inline's torch/types.h stays), else as written;
//  - compiles load_inline's main.cpp with torch/extension.h less the C++ frontend
//    (core/binding_prelude.hpp) where that compiles, else as written.
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "core/verdict.hpp"

namespace kbv::sandbox {

struct BuildHookConfig {
  std::string build_dir;       // build_root/<source hash>
  std::string source_hash;
  std::string log_path;
  bool device_is_cuda = false;
  bool device_free = false;    // built without the GPU (kbv run --overlap-builds)
  std::string cuda_arch;       // "9.0"; empty leaves TORCH_CUDA_ARCH_LIST alone
  std::string torch_pch;       // the judge's precompiled torch/extension.h folder (judge/torch_pch.hpp)
  bool lean_prelude = true;    // try the lean torch/types.h first (off: tests of the steps after it)
  bool lean_binding = true;    // main.cpp with kbv/binding.h in place of torch/extension.h first
};

class BuildHooks {
 public:
  // Imports torch.utils.cpp_extension (~0.2 s: setuptools and friends) before the job arrives,
  // without initialising CUDA: a sandbox started ahead pays it while the device is another's.
  static void preload();
  explicit BuildHooks(const BuildHookConfig& config);  // installs the wrappers
  std::vector<ExtensionBuild> extensions() const;       // what was built (or attempted) so far
  bool failed_in_build() const;                         // an extension build raised
  // `e` (the exception the import ended with) is an extension's compile failing, raised as it
  // was: not an import of a built module that raised, nor anything the candidate made of it.
  bool compile_failed(const pybind11::error_already_set& e) const;
  static bool is_needs_cuda(const pybind11::error_already_set& e);

 private:
  pybind11::list records_;
};

}  // namespace kbv::sandbox
