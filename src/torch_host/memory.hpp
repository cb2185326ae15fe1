#pragma once
// Peak device memory of one forward call, above what was allocated before it, seen two ways:
// the caching allocator's statistics (what KernelBench-Verified reports) and every device
// allocation through CUPTI (raw cudaMalloc / cuMemAlloc in a candidate's extension included).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <ATen/ATen.h>

#include "core/verdict.hpp"

namespace kbv::torch_host {

// Starts observing device allocations; call before the models and inputs are made so that
// later frees of them are recognised. Returns how peak_device_bytes will be measured.
std::string memory_tracking_start(const at::Device& device);

// The judge's caching allocator grows its segments page by page (torch's expandable segments)
// instead of keeping every size's blocks in segments of their own: a judge whose free cache holds
// a tensor's size in pieces can still place the tensor (an honest ReLU at a ninth of an H100 ran
// out of memory under strict with 8.71 GiB of such cache, bench/RESULTS.md session 30). Sets
// PYTORCH_CUDA_ALLOC_CONF in this process's environment; call before CUDA or Python starts. A
// PYTORCH_CUDA_ALLOC_CONF or PYTORCH_ALLOC_CONF already there is the user's choice and is kept.
// Returns whether the environment now asks for them.
// The sandbox's allocator is left as torch sets it (its environment is built from a list that
// leaves these out): its outputs reach the judge through legacy CUDA IPC, which cannot share
// memory mapped this way.
bool prefer_expandable_segments();
// Once CUDA has started: sets the allocator to them where the environment asks for them,
// whatever torch read before (the setting in the environment alone was not checked on a GPU yet;
// this one was, in process). Returns whether the allocator uses them.
bool apply_expandable_segments(const at::Device& device);

// Runs `forward` once (outputs kept alive until it returns, as a caller would hold them) and
// reports the peaks above the state before the call.
MemoryUse measure_forward_memory(const at::Device& device, const std::function<void()>& forward);

// What the caching allocator holds allocated now (tensors alive between calls).
std::int64_t allocated_bytes(const at::Device& device);

// What the caching allocator holds now: in tensors, and reserved from the device in all (CUDA;
// zeros elsewhere).
struct AllocatorBytes {
  std::int64_t allocated = 0, reserved = 0;
};
AllocatorBytes allocator_bytes(const at::Device& device);

// The most the allocator held above its level before `fn` while `fn` ran (CUDA; 0 elsewhere):
// what one call of a model needs beyond its inputs, its outputs included.
std::int64_t allocation_rise(const at::Device& device, const std::function<void()>& fn);

// Gives the caching allocator's free blocks back to the driver (CUDA; a no-op elsewhere).
void free_cached_memory(const at::Device& device);

// The same, only when the allocator holds more than `bytes` free: the device memory the judge
// freed stays its own until then, and the sandbox's next allocation could fail for want of it.
void free_cached_memory_over(const at::Device& device, std::int64_t bytes);

// What the caching allocator held when one of this process's allocations last failed for want of
// device memory, read at the failure (an out-of-memory observer): by the time the error reaches a
// catch, the failing step's tensors have been freed and the allocator's figures say nothing of it.
struct OutOfMemoryMoment {
  AllocatorBytes held;
  std::int64_t asked = 0;        // the allocation that failed
  std::int64_t device_free = 0;  // the device's free memory then, after the allocator gave back its cache
  std::uint64_t sequence = 0;    // counts the failures recorded in this process: which one this is
  std::string cache_layout;      // how the allocator's memory lay then (allocator_cache_layout)
};
// How the caching allocator's segments lie on `device`: whether it maps expandable segments now,
// how many segments (expandable ones, streams), and the largest free block, e.g. "expandable
// segments on; 7 segments (1 expandable) on 2 streams; largest free block 1.20 GiB". Free cache
// that cannot serve an allocation is told apart by it: a free block too small, or another stream's.
std::string allocator_cache_layout(const at::Device& device);
// Starts recording them (CUDA; once per process, later calls do nothing).
void watch_out_of_memory(const at::Device& device);
std::optional<OutOfMemoryMoment> last_out_of_memory();
// Forgets the last one (a judge kept warm starts each evaluation with none).
void forget_out_of_memory();
// Called at each recorded out-of-memory once its figures are kept, in the failing thread with the
// allocator's lock released: the judge reads who held the device at that moment, before anyone
// could give memory back. Empty: none. It must not throw.
void set_out_of_memory_hook(std::function<void()> hook);
// Records an out-of-memory of a device allocation made outside the caching allocator (the judge's
// own cudaMalloc) as the observer records the allocator's, and calls the hook.
void record_out_of_memory(const at::Device& device, std::int64_t asked);
// A size as torch's caching allocator writes it in its out-of-memory message ("Tried to allocate
// 12.00 GiB"), to tell whether the failure recorded is the one an error's text reports.
std::string allocator_size_text(std::int64_t bytes);

}  // namespace kbv::torch_host
