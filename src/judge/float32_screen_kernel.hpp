#pragma once
// The float32 screen's fused CUDA kernel (float32_screen.hpp), free of torch: both outputs are
// read once, and each block leaves four figures (float32_screen.cpp combines them).
#include <cstdint>

namespace kbv::judge {

enum class ScreenDtype { float32, float16, bfloat16 };

// Per block, four floats: the largest (|c - r| - pass_scale * bound), NaN if any was NaN; 1 if an
// element had |c - r| > fail_scale * bound, else 0; the largest |c - r| (NaN-propagating); the
// largest |c - r| / max(|r|, atol) (NaN-propagating); bound = |r| * rtol + atol, all in float32.
constexpr int kScreenFigures = 4;

// Blocks the kernel launches for `n` elements (the partials' rows).
int screen_blocks(std::int64_t n);

// Queues the kernel on `stream` (a cudaStream_t) writing screen_blocks(n) rows of partials to
// device memory at `partials`. False, with the CUDA error cleared, when it cannot be launched
// (no kernel image for this device): the caller then screens with operators.
bool launch_screen(const void* ref, const void* cand, std::int64_t n, ScreenDtype dtype, float atol, float rtol,
                   float pass_scale, float fail_scale, float* partials, void* stream);

}  // namespace kbv::judge
