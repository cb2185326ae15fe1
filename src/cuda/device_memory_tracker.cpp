// CUPTI callback subscriber that keeps a map of live device allocations (see the header).
//
// Double counting: cudaMalloc is implemented on top of the driver, and CUPTI may report the
// driver call made inside it as well (the CUPTI docs do not promise either way). Each thread
// remembers the successful driver events that happened inside the runtime call it is in; at the
// runtime call's exit, an event for the same pointer was already counted by the driver callback
// and is skipped. When the driver callback did not fire, the runtime callback counts it.
//
// Address reuse across threads: thread A's cudaFree(p) returns to the driver before A's exit
// callback runs, so thread B may receive p from cudaMalloc and record it first. Each block
// therefore carries a generation number; a free removes a block only if it is the block that was
// live when the free was entered, and an allocation at an address still in the map retires the
// old block (its free already happened, its callback is late).
#include "cuda/device_memory_tracker.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>  // also brings the *_params structs (generated_cuda{,_runtime_api}_meta.h),
                    // which have no include guards and must not be included again

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace kbv::cuda {

namespace {

// Pointers (cuMemAlloc & co.) and physical-memory handles (cuMemCreate) are different value
// spaces and may collide, so each has its own map.
enum class Space : std::uint8_t { pointer, handle };
enum class Op : std::uint8_t { none, alloc, free };

// One tracked call, decoded from its CUPTI parameter struct.
struct ApiEvent {
  Op op = Op::none;
  Space space = Space::pointer;
  std::uint64_t key = 0;   // device pointer or allocation handle
  std::int64_t bytes = 0;  // allocations only
};

// Driver entry points we observe. The _ptsz variants are what the same calls become when code
// is built with --default-stream per-thread.
constexpr CUpti_CallbackId kDriverCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,   // virtual memory API (PyTorch expandable segments):
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,  // physical memory is what counts, not reservations
};

constexpr CUpti_CallbackId kRuntimeCallbacks[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
};

std::uint64_t pointer_key(CUdeviceptr p) {
  return static_cast<std::uint64_t>(p);
}
std::uint64_t pointer_key(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

ApiEvent alloc_event(Space space, std::uint64_t key, std::size_t bytes) {
  return {Op::alloc, space, key, static_cast<std::int64_t>(bytes)};
}
ApiEvent free_event(Space space, std::uint64_t key) {
  return {Op::free, space, key, 0};
}

// Decodes a driver call. Output parameters (the new pointer, the pitch) are read only when
// `outputs_valid` (at exit, after success); frees need only their input and decode at entry too.
ApiEvent decode_driver(CUpti_CallbackId cbid, const void* params, bool outputs_valid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
      auto* p = static_cast<const cuMemAlloc_v2_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), p->bytesize);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
      auto* p = static_cast<const cuMemAllocPitch_v2_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), *p->pPitch * p->Height);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
      auto* p = static_cast<const cuMemAllocManaged_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), p->bytesize);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync: {
      auto* p = static_cast<const cuMemAllocAsync_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), p->bytesize);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
      auto* p = static_cast<const cuMemAllocAsync_ptsz_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), p->bytesize);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync: {
      auto* p = static_cast<const cuMemAllocFromPoolAsync_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), p->bytesize);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz: {
      auto* p = static_cast<const cuMemAllocFromPoolAsync_ptsz_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->dptr), p->bytesize);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
      return free_event(Space::pointer,
                        pointer_key(static_cast<const cuMemFree_v2_params*>(params)->dptr));
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
      return free_event(Space::pointer,
                        pointer_key(static_cast<const cuMemFreeAsync_params*>(params)->dptr));
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
      return free_event(Space::pointer,
                        pointer_key(static_cast<const cuMemFreeAsync_ptsz_params*>(params)->dptr));
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
      auto* p = static_cast<const cuMemCreate_params*>(params);
      if (!outputs_valid) return {Op::alloc, Space::handle};
      return alloc_event(Space::handle, static_cast<std::uint64_t>(*p->handle), p->size);
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease:
      return free_event(
          Space::handle,
          static_cast<std::uint64_t>(static_cast<const cuMemRelease_params*>(params)->handle));
    default:
      return {};
  }
}

ApiEvent decode_runtime(CUpti_CallbackId cbid, const void* params, bool outputs_valid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: {
      auto* p = static_cast<const cudaMalloc_v3020_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->devPtr), p->size);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020: {
      auto* p = static_cast<const cudaMallocPitch_v3020_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->devPtr), *p->pitch * p->height);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000: {
      auto* p = static_cast<const cudaMallocManaged_v6000_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->devPtr), p->size);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020: {
      auto* p = static_cast<const cudaMallocAsync_v11020_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->devPtr), p->size);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020: {
      auto* p = static_cast<const cudaMallocAsync_ptsz_v11020_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->devPtr), p->size);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020: {
      auto* p = static_cast<const cudaMallocFromPoolAsync_v11020_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->ptr), p->size);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: {
      auto* p = static_cast<const cudaMallocFromPoolAsync_ptsz_v11020_params*>(params);
      if (!outputs_valid) return {Op::alloc};
      return alloc_event(Space::pointer, pointer_key(*p->ptr), p->size);
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
      return free_event(Space::pointer,
                        pointer_key(static_cast<const cudaFree_v3020_params*>(params)->devPtr));
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
      return free_event(
          Space::pointer,
          pointer_key(static_cast<const cudaFreeAsync_v11020_params*>(params)->devPtr));
    case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
      return free_event(
          Space::pointer,
          pointer_key(static_cast<const cudaFreeAsync_ptsz_v11020_params*>(params)->devPtr));
    default:
      return {};
  }
}

// Per-thread state between a call's entry and exit callbacks. Trivially destructible on purpose:
// CUDA may call back on a thread whose thread_local destructors have already run.
struct ThreadCalls {
  static constexpr int kMaxDriverEvents = 8;
  bool in_runtime = false;     // between a tracked runtime call's entry and exit
  int driver_event_count = 0;  // successful driver events inside that runtime call
  Op driver_ops[kMaxDriverEvents] = {};
  std::uint64_t driver_keys[kMaxDriverEvents] = {};
  std::uint64_t runtime_free_generation = 0;  // generation of the block a runtime free targets
  std::uint64_t driver_free_generation = 0;   // same, for a driver free
};
static_assert(std::is_trivially_destructible_v<ThreadCalls>);
thread_local ThreadCalls t_calls;

std::string cupti_result_text(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }
  return text;
}

}  // namespace

namespace detail {

// Everything the callback touches; lives for the whole process (see instance()).
class TrackerState {
 public:
  struct Block {
    std::int64_t bytes = 0;
    std::uint64_t generation = 0;  // unique per recorded allocation, never 0
  };

  // Generation of the live block at `key`, or 0 when the tracker does not know it.
  std::uint64_t generation_of(Space space, std::uint64_t key) {
    std::lock_guard lock(mutex_);
    auto& blocks = blocks_of(space);
    auto it = blocks.find(key);
    return it == blocks.end() ? 0 : it->second.generation;
  }

  void record_alloc(Space space, std::uint64_t key, std::int64_t bytes) {
    if (key == 0) return;  // cudaMalloc(&p, 0) succeeds with p == nullptr: nothing to track
    std::lock_guard lock(mutex_);
    auto& blocks = blocks_of(space);
    auto [it, inserted] = blocks.try_emplace(key);
    if (!inserted) {
      // The address is live in our map, so its free happened but its callback has not run yet
      // (see the top of this file): retire the old block now; that late free will not match.
      live_ -= it->second.bytes;
      ++frees_;
    }
    it->second = Block{bytes, next_generation_++};
    live_ += bytes;
    ++allocations_;
    window_peak_ = std::max(window_peak_, live_);
  }

  // Removes the block at `key` if it is still the one that was live when the free was entered
  // (`generation`); a free of an unknown pointer (generation 0) is ignored.
  void record_free(Space space, std::uint64_t key, std::uint64_t generation) {
    if (generation == 0) return;
    std::lock_guard lock(mutex_);
    auto& blocks = blocks_of(space);
    auto it = blocks.find(key);
    if (it == blocks.end() || it->second.generation != generation) return;
    live_ -= it->second.bytes;
    ++frees_;
    blocks.erase(it);
  }

  void begin_window() {
    std::lock_guard lock(mutex_);
    window_open_ = true;
    window_baseline_ = live_;
    window_peak_ = live_;
    window_first_allocations_ = allocations_;
    window_first_frees_ = frees_;
  }

  WindowStats end_window() {
    std::lock_guard lock(mutex_);
    WindowStats stats;
    if (!window_open_) return stats;
    window_open_ = false;
    stats.valid = true;
    stats.baseline_live_bytes = window_baseline_;
    stats.peak_live_bytes = window_peak_;
    stats.end_live_bytes = live_;
    stats.allocations = allocations_ - window_first_allocations_;
    stats.frees = frees_ - window_first_frees_;
    return stats;
  }

  std::int64_t live_bytes() const {
    std::lock_guard lock(mutex_);
    return live_;
  }

  // Set once by the constructor of DeviceMemoryTracker, before instance() returns; read-only
  // afterwards, so readers need no lock.
  bool subscribed = false;
  std::string error;
  CUpti_SubscriberHandle subscriber = nullptr;

 private:
  std::unordered_map<std::uint64_t, Block>& blocks_of(Space space) {
    return space == Space::pointer ? pointers_ : handles_;
  }

  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Block> pointers_;
  std::unordered_map<std::uint64_t, Block> handles_;
  std::uint64_t next_generation_ = 1;
  std::int64_t live_ = 0;
  std::int64_t allocations_ = 0;  // since subscription
  std::int64_t frees_ = 0;
  bool window_open_ = false;
  std::int64_t window_baseline_ = 0;
  std::int64_t window_peak_ = 0;  // highest live_ since the last begin_window()
  std::int64_t window_first_allocations_ = 0;
  std::int64_t window_first_frees_ = 0;
};

}  // namespace detail

namespace {

bool call_succeeded(CUpti_CallbackDomain domain, const CUpti_CallbackData* data) {
  if (data->functionReturnValue == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    return *static_cast<const CUresult*>(data->functionReturnValue) == CUDA_SUCCESS;
  }
  return *static_cast<const cudaError_t*>(data->functionReturnValue) == cudaSuccess;
}

void on_driver_call(detail::TrackerState& state, CUpti_CallbackId cbid,
                    const CUpti_CallbackData* data) {
  ThreadCalls& calls = t_calls;
  if (data->callbackSite == CUPTI_API_ENTER) {
    ApiEvent event = decode_driver(cbid, data->functionParams, /*outputs_valid=*/false);
    if (event.op == Op::free) {
      calls.driver_free_generation = state.generation_of(event.space, event.key);
    }
    return;
  }
  if (!call_succeeded(CUPTI_CB_DOMAIN_DRIVER_API, data)) return;
  ApiEvent event = decode_driver(cbid, data->functionParams, /*outputs_valid=*/true);
  if (event.op == Op::none) return;
  if (calls.in_runtime && event.space == Space::pointer &&
      calls.driver_event_count < ThreadCalls::kMaxDriverEvents) {
    calls.driver_ops[calls.driver_event_count] = event.op;
    calls.driver_keys[calls.driver_event_count] = event.key;
    ++calls.driver_event_count;
  }
  if (event.op == Op::alloc) {
    state.record_alloc(event.space, event.key, event.bytes);
  } else {
    state.record_free(event.space, event.key, calls.driver_free_generation);
  }
}

void on_runtime_call(detail::TrackerState& state, CUpti_CallbackId cbid,
                     const CUpti_CallbackData* data) {
  ThreadCalls& calls = t_calls;
  if (data->callbackSite == CUPTI_API_ENTER) {
    calls.in_runtime = true;
    calls.driver_event_count = 0;
    ApiEvent event = decode_runtime(cbid, data->functionParams, /*outputs_valid=*/false);
    calls.runtime_free_generation =
        event.op == Op::free ? state.generation_of(event.space, event.key) : 0;
    return;
  }
  const int driver_events = calls.in_runtime ? calls.driver_event_count : 0;
  calls.in_runtime = false;
  calls.driver_event_count = 0;
  if (!call_succeeded(CUPTI_CB_DOMAIN_RUNTIME_API, data)) return;
  ApiEvent event = decode_runtime(cbid, data->functionParams, /*outputs_valid=*/true);
  if (event.op == Op::none) return;
  // Already counted by the driver callback that fired inside this runtime call?
  for (int i = 0; i < driver_events; ++i) {
    if (calls.driver_ops[i] == event.op && calls.driver_keys[i] == event.key) return;
  }
  if (event.op == Op::alloc) {
    state.record_alloc(event.space, event.key, event.bytes);
  } else {
    state.record_free(event.space, event.key, calls.runtime_free_generation);
  }
}

void CUPTIAPI on_cupti_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void* cbdata) {
  if (userdata == nullptr || cbdata == nullptr) return;
  auto& state = *static_cast<detail::TrackerState*>(userdata);
  auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    on_driver_call(state, cbid, data);
  } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    on_runtime_call(state, cbid, data);
  }
}

// Subscribes `state` and enables the allocation callbacks; on failure returns why (and leaves
// nothing subscribed).
std::string subscribe(detail::TrackerState& state) {
  CUpti_SubscriberHandle subscriber = nullptr;
  CUptiResult result;
  std::string previous_subscriber;
#ifdef CUpti_SubscriberParams_STRUCT_SIZE
  // cuptiSubscribe_v2 (CUDA 13+) also names the subscriber that got there first.
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "kbv device memory tracker";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name) - 1;
  result = cuptiSubscribe_v2(&subscriber, on_cupti_callback, &state, &params);
  previous_subscriber = old_name;
#else
  result = cuptiSubscribe(&subscriber, on_cupti_callback, &state);
#endif
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    return "cannot track device memory: another CUPTI client is already active (" +
           (previous_subscriber.empty() ? std::string("e.g. nsys, ncu, compute-sanitizer or the "
                                                      "torch profiler")
                                        : previous_subscriber) +
           "); run kbv without profilers or sanitizers to measure peak memory";
  }
  if (result != CUPTI_SUCCESS) {
    return "cannot track device memory: cuptiSubscribe failed with " + cupti_result_text(result) +
           "; check that a CUDA driver and GPU are present and libcupti matches the driver";
  }

  auto enable = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) -> std::string {
    CUptiResult r = cuptiEnableCallback(1, subscriber, domain, cbid);
    if (r == CUPTI_SUCCESS) return {};
    return "cannot track device memory: enabling the CUPTI callback for " +
           std::string(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime") +
           " function id " + std::to_string(cbid) + " failed with " + cupti_result_text(r);
  };
  std::string failure;
  for (CUpti_CallbackId cbid : kDriverCallbacks) {
    if (failure.empty()) failure = enable(CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  for (CUpti_CallbackId cbid : kRuntimeCallbacks) {
    if (failure.empty()) failure = enable(CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
  if (!failure.empty()) {
    cuptiUnsubscribe(subscriber);
    return failure;
  }
  state.subscriber = subscriber;
  return {};
}

}  // namespace

DeviceMemoryTracker::DeviceMemoryTracker() : state_(new detail::TrackerState) {
  state_->error = subscribe(*state_);
  state_->subscribed = state_->error.empty();
}

DeviceMemoryTracker& DeviceMemoryTracker::instance() {
  // Leaked on purpose: cudart frees its allocations from atexit handlers, after function-local
  // statics would be destroyed, and CUPTI would call back into a dead object.
  static DeviceMemoryTracker* tracker = new DeviceMemoryTracker();
  return *tracker;
}

bool DeviceMemoryTracker::available() const {
  return state_->subscribed;
}

std::string DeviceMemoryTracker::error() const {
  return state_->error;
}

void DeviceMemoryTracker::begin_window() {
  if (!available()) return;
  state_->begin_window();
}

WindowStats DeviceMemoryTracker::end_window() {
  if (!available()) return {};
  return state_->end_window();
}

std::int64_t DeviceMemoryTracker::live_bytes() const {
  return state_->live_bytes();
}

}  // namespace kbv::cuda
