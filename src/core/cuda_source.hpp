#pragma once
// Whether a candidate's source builds CUDA code (a load_inline with cuda_sources, a __global__
// kernel, with_cuda=True, a .cu/.cuh file): such a candidate cannot run on a CPU device. The
// judge skips it there (when the sandbox's build says so too) and `kbv run --list` says ahead
// that it will.
#include <string>

namespace kbv {

bool source_needs_cuda(const std::string& source_text);

// The file's text read and tested; false when it cannot be read.
bool file_needs_cuda(const std::string& path);

}  // namespace kbv
