#pragma once
// Fills every SM's shared memory with a garbage pattern right before a call, in the context the
// call runs in. A kernel that reads shared memory it never wrote (an unguarded reduction slot)
// used to see what kbv's own reference kernels had left there when both ran in one process; in
// a sandbox of its own it sees zeros and an honest bug passes. The sandbox and the twin both
// scrub inside the timed window, so the hop carries the scrub and the subtraction removes it.
#include <cstdint>
#include <memory>
#include <string>

namespace kbv::cuda {

class SharedMemoryScrub {
 public:
  // Loads the scrub kernel (PTX, compiled by the driver) into the current device's context.
  // nullptr with `error` set when the driver refuses.
  static std::unique_ptr<SharedMemoryScrub> load(std::string* error);

  // The pattern of call `seq`, five in turn (NaN, +-FLT_MAX, +-65504 per fp16 half), so that a
  // sum, a max and a min over garbage, in fp32 or fp16, each meet a value that breaks them.
  static std::uint32_t pattern_for(std::uint32_t seq);

  // Queues the fill on `stream` (a cudaStream_t as void*). False with `error` set on failure.
  bool queue(void* stream, std::uint32_t pattern, std::string* error) const;

  unsigned blocks() const { return blocks_; }
  unsigned shared_bytes() const { return shared_bytes_; }

 private:
  SharedMemoryScrub() = default;
  void* function_ = nullptr;  // CUfunction
  int device_ = 0;            // whose context holds it
  unsigned blocks_ = 0, shared_bytes_ = 0;
};

}  // namespace kbv::cuda
