# Finds the Python interpreter that holds torch, then LibTorch from that same install, so the
# worker's C++ (LibTorch) and the candidate's Python (torch) share one set of libraries.
# Sets KBV_HAVE_TORCH, KBV_PYTHON_SITE, KBV_PYTHON_HOME and the imported target kbv::torch_python.
set(_kbv_default_python "$ENV{HOME}/.cache/kbv-venv/bin/python")
if(NOT EXISTS "${_kbv_default_python}")
  set(_kbv_default_python python3)
endif()
set(KBV_PYTHON "${_kbv_default_python}" CACHE FILEPATH "Python interpreter whose torch the worker embeds")

execute_process(
  COMMAND "${KBV_PYTHON}" -c "import torch, sysconfig; print(torch.utils.cmake_prefix_path); print(sysconfig.get_paths()['purelib']); print(torch.__version__); import sys; print(sys.base_prefix)"
  OUTPUT_VARIABLE _kbv_probe RESULT_VARIABLE _kbv_probe_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)

if(NOT _kbv_probe_rc EQUAL 0)
  if(KBV_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "KBV_WITH_TORCH=ON but '${KBV_PYTHON}' cannot import torch; run scripts/setup.sh")
  endif()
  message(STATUS "kbv: torch not importable by ${KBV_PYTHON}; building the torch-free core only")
  set(KBV_HAVE_TORCH OFF)
  return()
endif()

string(REPLACE "\n" ";" _kbv_probe "${_kbv_probe}")
list(GET _kbv_probe 0 _kbv_torch_cmake)
list(GET _kbv_probe 1 KBV_PYTHON_SITE)
list(GET _kbv_probe 2 KBV_TORCH_VERSION)
# The embedded interpreter's home (its standard library), fixed here rather than found at run time
# through the python3 on PATH.
list(GET _kbv_probe 3 KBV_PYTHON_HOME)
message(STATUS "kbv: torch ${KBV_TORCH_VERSION} from ${KBV_PYTHON_SITE}")

set(Python3_EXECUTABLE "${KBV_PYTHON}")
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)
list(PREPEND CMAKE_PREFIX_PATH "${_kbv_torch_cmake}")
# Torch's config looks for the CUDA toolkit; only the device's architecture is worth compiling.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch REQUIRED)

find_library(KBV_TORCH_PYTHON_LIB torch_python PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH REQUIRED)
add_library(kbv::torch_python INTERFACE IMPORTED)
target_link_libraries(kbv::torch_python INTERFACE ${TORCH_LIBRARIES} ${KBV_TORCH_PYTHON_LIB} Python3::Python)
target_compile_options(kbv::torch_python INTERFACE ${TORCH_CXX_FLAGS})

find_package(CUDAToolkit QUIET)
set(KBV_HAVE_TORCH ON)
