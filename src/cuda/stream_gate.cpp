#include "cuda/stream_gate.hpp"

#include <condition_variable>
#include <mutex>

#include <cuda_runtime_api.h>

namespace kbv::cuda {

struct StreamGate::State {
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  bool timed_out = false;
};

StreamGate::StreamGate(std::chrono::milliseconds timeout) : state_(std::make_shared<State>()) {
  state_->timeout = timeout;
}

StreamGate::~StreamGate() {
  open();
  if (gate_stream_) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(gate_stream_));  // the host function is done
    cudaStreamDestroy(static_cast<cudaStream_t>(gate_stream_));
  }
  if (opened_event_) cudaEventDestroy(static_cast<cudaEvent_t>(opened_event_));
  cudaGetLastError();  // ours: not to be blamed on the caller's next launch
}

bool StreamGate::close(void* cuda_stream) {
  if (gate_stream_) {
    error_ = "the gate was closed already";
    return false;
  }
  auto fail = [&](const char* what, cudaError_t e) {
    error_ = std::string(what) + ": " + cudaGetErrorString(e);
    cudaGetLastError();
    return false;
  };
  cudaStream_t gate = nullptr;
  cudaEvent_t opened = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&gate, cudaStreamNonBlocking); e != cudaSuccess)
    return fail("cudaStreamCreateWithFlags", e);
  gate_stream_ = gate;
  if (cudaError_t e = cudaEventCreateWithFlags(&opened, cudaEventDisableTiming); e != cudaSuccess)
    return fail("cudaEventCreateWithFlags", e);
  opened_event_ = opened;
  // The host function owns a reference: if the gate's destructor cannot wait for it, the state
  // outlives the gate; if CUDA never runs it (a broken context), one small object leaks.
  auto* shared = new std::shared_ptr<State>(state_);
  if (cudaError_t e = cudaLaunchHostFunc(gate, &StreamGate::wait_for_open, shared); e != cudaSuccess) {
    delete shared;
    return fail("cudaLaunchHostFunc", e);
  }
  if (cudaError_t e = cudaEventRecord(opened, gate); e != cudaSuccess) return fail("cudaEventRecord", e);
  if (cudaError_t e = cudaStreamWaitEvent(static_cast<cudaStream_t>(cuda_stream), opened, 0); e != cudaSuccess)
    return fail("cudaStreamWaitEvent", e);
  return true;
}

void StreamGate::open() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->open = true;
  }
  state_->cv.notify_all();
}

bool StreamGate::timed_out() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->timed_out;
}

void StreamGate::wait_for_open(void* state) {
  std::unique_ptr<std::shared_ptr<State>> owned(static_cast<std::shared_ptr<State>*>(state));
  State& s = **owned;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (!s.cv.wait_for(lock, s.timeout, [&] { return s.open; })) s.timed_out = true;
}

}  // namespace kbv::cuda
