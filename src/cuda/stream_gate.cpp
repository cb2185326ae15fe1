#include "cuda/stream_gate.hpp"
#include "cuda/driver_entry.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace kbv::cuda {
namespace {

using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// One mapped pinned word for the whole process, never freed: a stream that still has a wait
// queued can never read freed memory. Gate n waits until the word reaches n (wrap-safe compare),
// and opening gate n raises it to at least n, so each gate has its own value to wait for.
struct Flag {
  std::uint32_t* host = nullptr;
  CUdeviceptr device = 0;
  WaitValue32 wait = nullptr;
  std::string error;
  std::atomic<std::uint32_t> generation{0};
};

Flag& flag() {
  static Flag* f = [] {
    auto* f = new Flag;
    f->wait = driver_function<WaitValue32>("cuStreamWaitValue32");
    if (!f->wait) {
      f->error = "the driver has no cuStreamWaitValue32";
      return f;
    }
    void* host = nullptr;
    if (cudaError_t e = cudaHostAlloc(&host, sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable);
        e != cudaSuccess) {
      f->error = std::string("cudaHostAlloc: ") + cudaGetErrorString(e);
      cudaGetLastError();
      return f;
    }
    f->host = static_cast<std::uint32_t*>(host);
    __atomic_store_n(f->host, 0u, __ATOMIC_SEQ_CST);
    void* device = nullptr;
    if (cudaError_t e = cudaHostGetDevicePointer(&device, host, 0); e != cudaSuccess) {
      f->error = std::string("cudaHostGetDevicePointer: ") + cudaGetErrorString(e);
      cudaGetLastError();
      f->host = nullptr;
      return f;
    }
    f->device = reinterpret_cast<CUdeviceptr>(device);
    return f;
  }();
  return *f;
}

// Raises the word to at least `value` (wrap-safe), releasing gate `value` and any older one.
void raise_flag(std::uint32_t value) {
  std::uint32_t* word = flag().host;
  std::uint32_t seen = __atomic_load_n(word, __ATOMIC_SEQ_CST);
  while (static_cast<std::int32_t>(seen - value) < 0 &&
         !__atomic_compare_exchange_n(word, &seen, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
}

}  // namespace

struct StreamGate::State {
  std::chrono::milliseconds timeout;
  std::uint32_t value = 0;  // what the gated stream waits for
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  bool timed_out = false;
  std::thread watchdog;  // opens the gate when the timeout passes first
};

StreamGate::StreamGate(std::chrono::milliseconds timeout) : state_(std::make_shared<State>()) {
  state_->timeout = timeout;
}

StreamGate::~StreamGate() {
  open();
  if (state_->watchdog.joinable()) state_->watchdog.join();
}

bool StreamGate::close(void* cuda_stream) {
  if (state_->value != 0) {
    error_ = "the gate was closed already";
    return false;
  }
  Flag& f = flag();
  if (!f.host) {
    error_ = f.error;
    return false;
  }
  const std::uint32_t value = f.generation.fetch_add(1) + 1;
  CUresult r = f.wait(static_cast<CUstream>(cuda_stream), f.device, value, CU_STREAM_WAIT_VALUE_GEQ);
  if (r != CUDA_SUCCESS) {
    error_ = "cuStreamWaitValue32 failed with CUresult " + std::to_string(static_cast<int>(r));
    return false;
  }
  state_->value = value;
  state_->watchdog = std::thread([s = state_] {
    std::unique_lock<std::mutex> lock(s->mutex);
    if (!s->cv.wait_for(lock, s->timeout, [&] { return s->open; })) {
      s->timed_out = true;
      s->open = true;
      raise_flag(s->value);
    }
  });
  return true;
}

void StreamGate::open() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->open || state_->value == 0) {
      state_->open = true;
      return;
    }
    state_->open = true;
    raise_flag(state_->value);
  }
  state_->cv.notify_all();
}

bool StreamGate::timed_out() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->timed_out;
}

}  // namespace kbv::cuda
