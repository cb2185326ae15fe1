// CUPTI Activity API client that lists the kernels run between begin() and end() (see the header).
//
// Threads: CUPTI calls the buffer callbacks from its own worker thread, or from the thread inside
// cuptiActivityFlushAll. The completed-buffer callback decodes records without any lock and takes
// records_mutex_ only to append; begin() / end() serialise on control_mutex_, which the callbacks
// never take, so end() may hold it across the (blocking) flush.
#include "cuda/kernel_tracer.hpp"
#include "cuda/driver_entry.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cxxabi.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kbv::cuda {

namespace {

// The record layout CUPTI writes for CONCURRENT_KERNEL (and KERNEL) with these headers; see
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL in cupti_activity.h. A libcupti of another toolkit
// release may write a newer layout, so the constructor refuses a version mismatch.
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;

// ~250 B per kernel record: one buffer holds ~16k kernels before CUPTI asks for the next.
constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
constexpr std::size_t kBufferAlignment = 8;  // CUPTI requires 8-byte aligned activity buffers
// The most records one window keeps (~100 MB with their names); beyond, they count as dropped.
constexpr std::size_t kMostRecords = std::size_t{1} << 18;

std::string cupti_result_text(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }
  return text;
}

std::string demangle(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;  // extern "C" kernels are not mangled
  std::string result(demangled);
  std::free(demangled);
  return result;
}

// Where and when an activity ran: the fields kernel and copy records share.
template <typename Activity>
void copy_placement(const Activity& a, KernelRecord& r) {
  r.stream_id = a.streamId;
  r.device_id = a.deviceId;
  r.context_id = a.contextId;
  r.start_ns = a.start;
  r.end_ns = a.end;
  r.correlation_id = a.correlationId;
}

KernelRecord to_record(const KernelActivity& k) {
  KernelRecord r;
  r.name = k.name != nullptr ? k.name : "";
  r.demangled = k.name != nullptr ? demangle(k.name) : "";
  copy_placement(k, r);
  r.grid_x = k.gridX;
  r.grid_y = k.gridY;
  r.grid_z = k.gridZ;
  r.block_x = k.blockX;
  r.block_y = k.blockY;
  r.block_z = k.blockZ;
  return r;
}

const char* copy_kind_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "other";
  }
}

KernelRecord to_record(const MemcpyActivity& m) {
  KernelRecord r;
  r.memcpy = true;
  r.bytes = m.bytes;
  r.name = std::string("memcpy ") + copy_kind_name(m.copyKind);
  r.demangled = r.name;
  copy_placement(m, r);
  return r;
}

}  // namespace

namespace detail {

// Everything the CUPTI callbacks touch; lives for the whole process (see instance()).
class TracerState {
 public:
  std::uint8_t* new_buffer() {
    auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
    if (buffer != nullptr) {
      std::lock_guard lock(buffers_mutex_);
      buffers_.insert(buffer);
    }
    return buffer;
  }

  // Decodes a buffer CUPTI hands back and frees it. A buffer we did not allocate (another client
  // registered its callbacks, then we took them back) is left alone: freeing it could corrupt
  // that client's heap, and its records are not ours.
  void take_buffer(std::uint8_t* buffer, std::size_t valid_bytes) {
    {
      std::lock_guard lock(buffers_mutex_);
      if (buffers_.erase(buffer) == 0) return;
    }
    // Runs on CUPTI's thread: nothing may escape it (an exception through CUPTI's frames ends
    // the process). A window's records are capped: a call that launches hundreds of thousands of
    // kernels (an autotuner's first call) would otherwise hold them all in memory, in a process
    // whose memory is limited; what is over the cap counts as dropped, as CUPTI's own losses do.
    std::vector<KernelRecord> decoded;
    std::size_t lost = 0;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
      const bool kernel = record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL;
      if (!kernel && record->kind != CUPTI_ACTIVITY_KIND_MEMCPY) continue;
      try {
        if (kernel) decoded.push_back(to_record(*reinterpret_cast<const KernelActivity*>(record)));
        else decoded.push_back(to_record(*reinterpret_cast<const MemcpyActivity*>(record)));
      } catch (const std::exception&) {
        ++lost;
      }
    }
    std::free(buffer);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;

    std::lock_guard lock(records_mutex_);
    if (!collecting_) return;  // delivered outside a window: not asked for
    dropped_ += dropped + lost;
    for (KernelRecord& r : decoded) {
      if (records_.size() >= kMostRecords) {
        ++dropped_;
        continue;
      }
      try {
        records_.push_back(std::move(r));
      } catch (const std::exception&) {
        ++dropped_;
      }
    }
  }

  // Opens a window: forget earlier records, accept new ones.
  void open_window() {
    std::lock_guard lock(records_mutex_);
    records_.clear();
    dropped_ = 0;
    collecting_ = true;
  }

  // Closes the window and hands over what it collected.
  std::vector<KernelRecord> close_window() {
    std::lock_guard lock(records_mutex_);
    collecting_ = false;
    last_dropped_ = dropped_;
    std::vector<KernelRecord> records = std::move(records_);
    records_.clear();
    return records;
  }

  std::uint64_t last_dropped() const {
    std::lock_guard lock(records_mutex_);
    return last_dropped_;
  }

  bool available() const { return available_.load(std::memory_order_acquire); }

  std::string error() const {
    std::lock_guard lock(error_mutex_);
    return error_;
  }

  // Marks the tracer unusable for the rest of the process, keeping the first reason.
  void fail(std::string why) {
    std::lock_guard lock(error_mutex_);
    if (error_.empty()) error_ = std::move(why);
    available_.store(false, std::memory_order_release);
  }

  void set_available() { available_.store(true, std::memory_order_release); }

  std::mutex control_mutex;  // serialises begin() / end(); never taken by the callbacks
  bool window_open = false;  // guarded by control_mutex
  bool copies = false;       // the open (or last) window traces memory copies; control_mutex

 private:
  mutable std::mutex records_mutex_;
  std::vector<KernelRecord> records_;
  bool collecting_ = false;
  std::uint64_t dropped_ = 0;
  std::uint64_t last_dropped_ = 0;

  std::mutex buffers_mutex_;
  std::unordered_set<std::uint8_t*> buffers_;  // handed to CUPTI, not yet returned

  std::atomic<bool> available_{false};
  mutable std::mutex error_mutex_;
  std::string error_;
};

}  // namespace detail

namespace {

// The callbacks carry no user pointer, so they reach the (single, leaked) state through this.
std::atomic<detail::TracerState*> g_state{nullptr};

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  detail::TracerState* state = g_state.load(std::memory_order_acquire);
  *buffer = state != nullptr ? state->new_buffer() : nullptr;  // null: CUPTI drops records
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI on_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                  std::size_t valid_bytes) {
  detail::TracerState* state = g_state.load(std::memory_order_acquire);
  if (state != nullptr && buffer != nullptr) state->take_buffer(buffer, valid_bytes);
}

// Sets up CUPTI for `state`; on failure returns why.
std::string set_up(detail::TracerState& state) {
  std::uint32_t version = 0;
  CUptiResult result = cuptiGetVersion(&version);
  if (result != CUPTI_SUCCESS) {
    return "cannot trace kernels: cuptiGetVersion failed with " + cupti_result_text(result) +
           "; check that libcupti from the CUDA toolkit kbv was built with can be loaded";
  }
  // From CUDA 13 the version reads xxyyzz (toolkit major, minor, CUPTI patch); record layouts
  // change only with a toolkit release, so major and minor must match the headers.
  if (version / 100 != CUPTI_API_VERSION / 100) {
    return "cannot trace kernels: the loaded libcupti has API version " + std::to_string(version) +
           " but kbv was built against " + std::to_string(CUPTI_API_VERSION) +
           "; rebuild kbv with the CUDA toolkit whose libcupti is loaded (check LD_LIBRARY_PATH)";
  }

  int devices = 0;
  cudaError_t cuda_result = cudaGetDeviceCount(&devices);
  if (cuda_result != cudaSuccess || devices == 0) {
    std::string why =
        cuda_result != cudaSuccess ? cudaGetErrorString(cuda_result) : std::string("no device");
    cudaGetLastError();  // leave no error behind for the caller's own checks
    return "cannot trace kernels: no usable CUDA device (" + why +
           "); run on a machine with a GPU and a working driver";
  }

  g_state.store(&state, std::memory_order_release);
  result = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
  if (result != CUPTI_SUCCESS) {
    return "cannot trace kernels: cuptiActivityRegisterCallbacks failed with " +
           cupti_result_text(result) +
           "; another CUPTI client (nsys, ncu, compute-sanitizer) may be attached";
  }
  return {};
}

// The current driver context, fetched through the runtime so that kbv_cuda need not link
// libcuda (the worker must still load on machines without a driver). Null when none.
CUcontext current_context() {
  using CtxGetCurrent = CUresult(CUDAAPI*)(CUcontext*);
  static CtxGetCurrent get_current = driver_function<CtxGetCurrent>("cuCtxGetCurrent");
  CUcontext context = nullptr;
  if (get_current == nullptr || get_current(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

}  // namespace

KernelTracer::KernelTracer() : state_(new detail::TracerState) {
  std::string why = set_up(*state_);
  if (why.empty()) {
    state_->set_available();
  } else {
    state_->fail(std::move(why));
  }
}

KernelTracer& KernelTracer::instance() {
  // Leaked on purpose: CUPTI may deliver buffers from its thread during exit, after
  // function-local statics would be destroyed.
  static KernelTracer* tracer = new KernelTracer();
  return *tracer;
}

bool KernelTracer::available() const {
  return state_->available();
}

std::string KernelTracer::error() const {
  return state_->error();
}

void KernelTracer::begin(bool with_memcpy) {
  std::lock_guard control(state_->control_mutex);
  if (!available()) return;
  if (state_->window_open) {
    // begin() twice: restart the window. Kernel collection is still enabled; copies as asked.
    state_->open_window();
    if (with_memcpy && !state_->copies)
      state_->copies = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS;
    else if (!with_memcpy && state_->copies)
      state_->copies = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS;
    return;
  }
  state_->open_window();
  // Take the buffers back in case another client registered its own callbacks since the last
  // window (the header explains what this cannot cover). Re-registering with no kind enabled is
  // what CUPTI's own clients (Kineto) do at every trace start; a failure here leaves the earlier
  // registration in place, so it is not fatal.
  cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
  CUptiResult result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) {
    state_->close_window();
    state_->fail(
        "cannot trace kernels: enabling CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL failed with " +
        cupti_result_text(result) +
        (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? std::string("; another CUPTI client (nsys, ncu, compute-sanitizer, the "
                           "torch profiler) is active: run kbv without it")
             : std::string("; check that the driver supports this libcupti")));
    return;
  }
  // Copies are a bonus: a refusal leaves kernel tracing as it was (copies_traced() says so).
  state_->copies = with_memcpy && cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS;
  state_->window_open = true;
}

bool KernelTracer::copies_traced() const {
  std::lock_guard control(state_->control_mutex);
  return state_->copies;
}

std::vector<KernelRecord> KernelTracer::end() {
  std::lock_guard control(state_->control_mutex);
  if (!state_->window_open) return {};
  state_->window_open = false;
  // Disable first so nothing launched from here on is recorded, then force out every buffer,
  // including partly filled ones; the caller synchronised, so their records are complete.
  CUptiResult disabled = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (state_->copies && cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS && disabled == CUPTI_SUCCESS)
    disabled = CUPTI_ERROR_UNKNOWN;
  CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::vector<KernelRecord> records = state_->close_window();
  if (disabled != CUPTI_SUCCESS) {
    state_->fail("kernel tracing left enabled: cuptiActivityDisable failed with " +
                 cupti_result_text(disabled) +
                 "; timings of this process may carry CUPTI's "
                 "per-launch overhead, restart the worker");
  } else if (flushed != CUPTI_SUCCESS) {
    state_->fail("kernel trace incomplete: cuptiActivityFlushAll failed with " +
                 cupti_result_text(flushed));
  }
  return records;
}

std::uint64_t KernelTracer::dropped_records() const {
  return state_->last_dropped();
}

std::uint64_t KernelTracer::timestamp_now() {
  std::uint64_t now = 0;
  if (cuptiGetTimestamp(&now) != CUPTI_SUCCESS) return 0;
  return now;
}

std::uint32_t KernelTracer::stream_id_of(void* cuda_stream) {
  // cudaStreamLegacy (0x1) and cudaStreamPerThread (0x2) are not real handles: name them the
  // way cuptiGetStreamIdEx expects, as the null stream with or without the per-thread flag.
  CUstream stream = static_cast<CUstream>(cuda_stream);
  std::uint8_t per_thread = 0;
  if (cuda_stream == static_cast<void*>(cudaStreamLegacy)) {
    stream = nullptr;
  } else if (cuda_stream == static_cast<void*>(cudaStreamPerThread)) {
    stream = nullptr;
    per_thread = 1;
  }
  std::uint32_t id = 0;
  if (cuptiGetStreamIdEx(nullptr, stream, per_thread, &id) == CUPTI_SUCCESS) return id;
  // The null stream belongs to a context; name the current one in case CUPTI did not look.
  if (stream == nullptr) {
    CUcontext context = current_context();
    if (context != nullptr &&
        cuptiGetStreamIdEx(context, stream, per_thread, &id) == CUPTI_SUCCESS) {
      return id;
    }
  }
  return kUnknownStream;
}

}  // namespace kbv::cuda
