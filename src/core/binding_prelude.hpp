#pragma once
// What load_inline's main.cpp is compiled with in place of torch/extension.h (the lean binding:
// docs/scale.md, "Build cost"). torch/extension.h is torch/all.h, all of torch's C++ frontend (nn,
// optim, data, jit, serialisation: ~4 s of a PCH'd main.cpp's ~8 s of CPU), then torch/python.h.
// A binding uses python.h's includes, and only those: the frontend's headers declare no pybind11
// type caster (checked against torch 2.11's headers), so what a bound function accepts is the
// same. The judge writes this list as <torch-pch>/kbv/binding.h (and precompiles it); the
// sandbox's build hooks use the same list, and only where torch's python.h includes exactly
// these plus kFrontendOfPythonH.
#include <array>
#include <string>

namespace kbv {

inline constexpr std::array<const char*, 13> kBindingHeaders = {
    "torch/types.h",
    "torch/csrc/Device.h",
    "torch/csrc/Dtype.h",
    "torch/csrc/DynamicTypes.h",
    "torch/csrc/Exceptions.h",
    "torch/csrc/autograd/python_variable.h",
    "torch/csrc/python_headers.h",
    "torch/csrc/utils/pybind.h",
    "torch/csrc/utils/python_numbers.h",
    "torch/csrc/utils/python_tuples.h",
    "iterator",
    "string",
    "utility",
};

// python.h's includes that are the frontend's (left out with torch/all.h).
inline constexpr std::array<const char*, 3> kFrontendOfPythonH = {"torch/detail/static.h", "torch/nn/module.h",
                                                                  "torch/ordered_dict.h"};

// The macros torch/extension.h defines and kBindingHeaders do not (g++ -dM on torch 2.11, less
// include guards: tests/worker/test_binding_prelude.cpp checks the list against the headers).
// They are poisoned after the headers: a source that tests, expands or stringizes one
// (TORCH_VERSION, AT_PARALLEL_OPENMP) would silently get another value without the frontend, and
// poisoned it fails to compile instead, and is compiled again with torch/extension.h.
inline constexpr std::array<const char*, 45> kFrontendOnlyMacros = {
    "AT_BLAS_F2C", "AT_BLAS_USE_CBLAS_DOT", "AT_BUILD_WITH_BLAS", "AT_BUILD_WITH_LAPACK", "AT_KLEIDIAI_ENABLED",
    "AT_MKLDNN_ACL_ENABLED", "AT_MKLDNN_ENABLED", "AT_MKL_ENABLED", "AT_MKL_SEQUENTIAL", "AT_NNPACK_ENABLED",
    "AT_PARALLEL_NATIVE", "AT_PARALLEL_OPENMP", "AT_POCKETFFT_ENABLED", "AT_USE_EIGEN_SPARSE",
    "C10_DECLARE_TLS_class_static", "C10_DEFINE_TLS_class_static", "C10_DEFINE_TLS_static", "CAFFE2_STATIC_LINK_CUDA",
    "FORALL_ATEN_BASE_SYMBOLS", "FORALL_ATTR_BASE_SYMBOLS", "FORALL_NS_SYMBOLS", "FORWARD_HAS_DEFAULT_ARGS", "SOFT_ASSERT",
    "TORCH_ABI_VERSION", "TORCH_ARG", "TORCH_ENUM_DECLARE", "TORCH_ENUM_DEFINE", "TORCH_ENUM_PRETTY_PRINT", "TORCH_MODULE",
    "TORCH_MODULE_IMPL", "TORCH_OPTIONS_CTOR_VARIANT_ARG3", "TORCH_OPTIONS_CTOR_VARIANT_ARG4", "TORCH_UNUSED_EXCEPT_CUDA",
    "TORCH_VERSION", "TORCH_VERSION_ABI_TAG", "TORCH_VERSION_MAJOR", "TORCH_VERSION_MINOR", "TORCH_VERSION_PATCH",
    "_TORCH_OPTIM_DESERIALIZE_TORCH_ARG", "_TORCH_OPTIM_DESERIALIZE_TORCH_ARG_DEQUE",
    "_TORCH_OPTIM_DESERIALIZE_TORCH_ARG_OPTIONAL", "_TORCH_OPTIM_SERIALIZE", "_TORCH_OPTIM_SERIALIZE_TORCH_ARG",
    "_TORCH_OPTIM_SERIALIZE_TORCH_ARG_DEQUE", "_TORCH_OPTIM_SERIALIZE_WITH_TEMPLATE_ARG",
};

// What main.cpp gets in place of #include <torch/extension.h>: the headers, then the poison.
inline std::string binding_lines() {
  std::string text;
  for (const char* h : kBindingHeaders) text += std::string("#include <") + h + ">\n";
  text += "#pragma GCC poison";
  for (const char* m : kFrontendOnlyMacros) text += std::string(" ") + m;
  return text + "\n";
}

// The file <torch-pch>/kbv/binding.h.
inline std::string binding_header_text() {
  return "// kbv: torch/extension.h less torch's C++ frontend (torch/all.h): what a load_inline binding uses\n"
         "#pragma once\n" +
         binding_lines();
}

}  // namespace kbv
