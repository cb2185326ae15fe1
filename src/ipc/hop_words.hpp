#pragma once
// The two words of one judge<->runner hop, at the start of a SharedMemory both map and register
// with CUDA: the judge's stream writes `start` (call N may begin) after its timing start event,
// the runner's stream waits for it, runs forward(), then writes `done`; the judge's stream
// waits for `done` before its end event. On separate cache lines: each has one writer.
#include <cstdint>

namespace kbv::ipc {

struct HopWords {
  alignas(64) std::uint32_t start;
  alignas(64) std::uint32_t done;
};

inline constexpr std::size_t kHopPageBytes = 4096;

}  // namespace kbv::ipc
