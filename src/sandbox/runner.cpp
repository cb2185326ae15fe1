#include "sandbox/runner.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <pybind11/pybind11.h>

#include "cuda/shared_memory_scrub.hpp"
#include "cuda/stream_words.hpp"
#include "ipc/hop_words.hpp"
#include "ipc/message_fields.hpp"
#include "ipc/runner_protocol.hpp"
#include "ipc/shared_memory.hpp"
#include "sandbox/build_hooks.hpp"
#include "sandbox/call_trace.hpp"
#include "sandbox/candidate_host.hpp"
#include "torch_host/device.hpp"
#include "torch_host/memory.hpp"
#include "torch_host/python_runtime.hpp"
#include "torch_host/shared_tensor.hpp"

namespace py = pybind11;

namespace kbv::sandbox {
namespace {

// The judge kills the runner when it is done with it; waiting longer than this for a message
// means the judge is gone.
constexpr auto kForever = std::chrono::hours(24);

// The hop page's two words, seen from the runner's stream (GPU only).
struct Hop {
  ipc::SharedMemory page;
  std::uintptr_t start = 0, done = 0;  // device addresses; 0 on the CPU

  void wait_start(std::uint32_t seq) {
    if (!start) return;
    std::string error;
    if (!cuda::stream_wait_word(c10::cuda::getCurrentCUDAStream().stream(), start, seq, &error)) throw std::runtime_error(error);
  }
  void write_done(std::uint32_t seq) {
    if (!done) return;
    std::string error;
    if (!cuda::stream_write_word(c10::cuda::getCurrentCUDAStream().stream(), done, seq, &error)) throw std::runtime_error(error);
  }
};

std::string what_of(const std::exception_ptr& ep) {
  try {
    std::rethrow_exception(ep);
  } catch (py::error_already_set& e) {
    auto text = torch_host::describe_python_error(e);
    return text.one_line().substr(0, 4000);
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// Waits for everything this process queued; a CUDA error (an illegal address in a kernel, an
// earlier sticky error) comes back as text.
std::string synchronize_all(const at::Device& device) {
  if (!device.is_cuda()) return "";
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return "";
  return std::string("CUDA error: ") + cudaGetErrorString(e);
}

}  // namespace

int serve(const std::string& role, ipc::Channel& channel) {
  const bool twin = role == "twin";
  // The interpreter and `import torch` before the job arrives: no candidate code and no CUDA yet,
  // so a sandbox started ahead (kbv run --prestart) does this while the device is another's.
  std::unique_ptr<torch_host::PythonRuntime> python;
  if (!twin) {
    python = std::make_unique<torch_host::PythonRuntime>();
    try {
      BuildHooks::preload();
    } catch (const std::exception&) {
      // the hooks import it again at the job, and report what fails then
    }
  }
  ipc::Message hello = channel.receive(ipc::Clock::now() + kForever);
  if (hello.type() != "hello") return 4;
  ipc::Fields h(hello.body, "hello");
  // Every answer carries the token of the request it answers (the judge refuses any other).
  const std::string hello_token = h.has("token") ? h.str("token", 64) : "";
  auto answer_hello = [&](nlohmann::json answer) {
    answer["token"] = hello_token;
    channel.send(answer);
  };
  at::Device device = at::kCPU;
  // A build beside an evaluation (kbv run --overlap-builds) sees no GPU: the device only says
  // what to build for, and nothing below touches CUDA (no context on the evaluation's device).
  const bool device_free = !twin && h.has("device_free") && h.boolean("device_free") && h.boolean("build_only");
  try {
    device = device_free ? at::Device(h.str("device", 32)) : torch_host::resolve_device(h.str("device", 32));
  } catch (const std::exception& e) {
    answer_hello({{"type", "failed"}, {"stage", "device"}, {"kind", "runtime_error"}, {"message", e.what()}});
    return 0;
  }
  const bool uses_gpu = device.is_cuda() && !device_free;
  // Step seconds for the judge's profile, when it asks (KBV_JUDGE_PROFILE): timing only.
  const bool profiling = !twin && h.has("profile") && h.boolean("profile");
  nlohmann::json profile = nlohmann::json::object();
  auto step_start = std::chrono::steady_clock::now();
  auto step_done = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    profile[name] = std::chrono::duration<double>(now - step_start).count();
    step_start = now;
  };
  // fds: [0] the hop page, [1] the CPU output arena.
  Hop hop;
  std::optional<ipc::SharedMemory> arena;
  if (!hello.fds.empty() && hello.fds[0]) {
    hop.page = ipc::SharedMemory::attach(std::move(hello.fds[0]), ipc::kHopPageBytes);
    if (uses_gpu) {
      std::string error;
      std::uintptr_t base = cuda::register_host_words(hop.page.data(), hop.page.size(), &error);
      if (!base) {
        answer_hello({{"type", "failed"}, {"stage", "device"}, {"kind", "runtime_error"}, {"message", "hop page: " + error}});
        return 0;
      }
      hop.start = base + offsetof(ipc::HopWords, start);
      hop.done = base + offsetof(ipc::HopWords, done);
    }
  }
  step_done("sandbox.hop_page");
  if (hello.fds.size() > 1 && hello.fds[1])
    arena.emplace(ipc::SharedMemory::attach(std::move(hello.fds[1]), static_cast<std::size_t>(h.integer("arena_bytes", 1, std::int64_t{1} << 40))));

  // Loaded before the candidate's code runs, so its import cannot stand in the way.
  std::unique_ptr<cuda::SharedMemoryScrub> scrub;
  if (uses_gpu) {
    std::string error;
    if (device.has_index()) cudaSetDevice(device.index());
    scrub = cuda::SharedMemoryScrub::load(&error);
    if (!scrub) {
      answer_hello({{"type", "failed"}, {"stage", "device"}, {"kind", "runtime_error"}, {"message", "shared-memory scrub: " + error}});
      return 0;
    }
  }
  step_done("sandbox.scrub");

  std::unique_ptr<CandidateHost> host;
  at::Tensor null_work;  // the twin's one tiny kernel per call
  if (twin) {
    if (device.is_cuda()) null_work = at::zeros({1}, at::TensorOptions().device(device));
    if (uses_gpu) {
      // One traced window, as the sandbox's checked calls open: CUPTI's buffers and the marker's
      // page are then in the twin too, which the sandbox's device memory is measured above.
      CallTrace warm;
      warm.begin();
      warm.mark(c10::cuda::getCurrentCUDAStream().stream());
      synchronize_all(device);
      warm.finish();
    }
    answer_hello({{"type", "ready"}});
  } else {
    if (uses_gpu) torch_host::memory_tracking_start(device);
    step_done("sandbox.tracking");
    host = std::make_unique<CandidateHost>(device);
    nlohmann::json answer = host->set_up(h);
    if (profiling) {
      for (const auto& [name, seconds] : host->set_up_seconds().items()) profile[name] = seconds;
      answer["profile"] = profile;
    }
    answer_hello(answer);
    if (answer["type"] != "imported") return 0;
  }

  torch_host::OutputExporter exporter(arena ? &*arena : nullptr, {});
  std::vector<at::Tensor> last_outputs;  // alive until the next call: the judge reads them
  for (;;) {
    ipc::Message m = channel.receive(ipc::Clock::now() + kForever);
    std::string type = m.type();
    ipc::Fields f(m.body, type);
    if (type == "bye") return 0;
    const std::string request_token = f.has("token") ? f.str("token", 64) : "";
    auto answer = [&](nlohmann::json a) {
      a["token"] = request_token;
      channel.send(a);
    };
    if (type == "construct" && host) {
      answer(host->construct(f));
    } else if (type == "weights" && host) {
      answer(host->load_weights(f, m.fds.empty() ? ipc::UniqueFd() : std::move(m.fds[0])));
    } else if (type == "bind" && host) {
      answer(host->bind(f, m.fds.empty() ? ipc::UniqueFd() : std::move(m.fds[0])));
    } else if (type == "call") {
      auto seq = static_cast<std::uint32_t>(f.integer("seq", 1, UINT32_MAX));
      auto slot = static_cast<std::uint32_t>(f.integer("slot", 0, ipc::kMaxSlots - 1));
      std::string token = f.str("token", 64);
      nlohmann::json called{{"type", "called"}, {"seq", seq}, {"token", token}};
      last_outputs.clear();
      // Asked for on the judge's checked calls (not its timed ones): the kernels that outlive
      // the call on other streams (call_trace.hpp).
      CallTrace trace;
      const bool traced = uses_gpu && !twin && f.has("trace") && f.boolean("trace");
      void* call_stream = uses_gpu ? static_cast<void*>(c10::cuda::getCurrentCUDAStream().stream()) : nullptr;
      if (traced) trace.begin();
      hop.wait_start(seq);
      try {
        // Inside the window, as the first work of every call of both runners (checked or timed
        // alike): the twin's hop carries it too, so the candidate's time does not.
        if (scrub) {
          std::string error;
          if (!scrub->queue(c10::cuda::getCurrentCUDAStream().stream(), cuda::SharedMemoryScrub::pattern_for(seq), &error))
            throw std::runtime_error(error);
        }
        if (twin) {
          if (null_work.defined()) null_work.fill_(static_cast<double>(seq & 0xffff));
          called["outputs"] = nlohmann::json::array();
        } else {
          if (!host->has_slot(slot)) throw std::runtime_error("no inputs bound to slot " + std::to_string(slot));
          last_outputs = host->forward(slot);
          if (traced) trace.mark(call_stream);
          exporter.set_inputs(host->slot_tensors(slot));
          called["outputs"] = exporter.describe(last_outputs);
        }
        called["status"] = "ok";
      } catch (...) {
        called["status"] = "error";
        called["error"] = what_of(std::current_exception());
      }
      try {
        hop.write_done(seq);
      } catch (...) {
        // The judge releases its own stream when a call ends in an error.
      }
      channel.send(called);
      const std::string device_error = synchronize_all(device);
      nlohmann::json completed{{"type", "completed"}, {"seq", seq}, {"token", token}, {"error", device_error}};
      if (traced && device_error.empty())
        if (nlohmann::json late = trace.finish(); !late.is_null()) completed["unjoined"] = std::move(late);
      channel.send(completed);
      // A CUDA error at synchronisation is sticky: this context can do nothing more, and while a
      // faulted context lives the driver can hold up other processes' calls that touch its memory
      // (the judge mapping this call's outputs). The judge ends the protocol on the error anyway.
      if (!device_error.empty()) {
        std::fflush(nullptr);
        std::_Exit(ipc::kRunnerExitAfterDeviceError);
      }
    } else if (type == "memory" && host) {
      auto slot = static_cast<std::uint32_t>(f.integer("slot", 0, ipc::kMaxSlots - 1));
      nlohmann::json report{{"type", "memory"}};
      try {
        last_outputs.clear();
        MemoryUse use = torch_host::measure_forward_memory(device, [&] { auto out = host->forward(slot); });
        report["peak_allocated"] = use.peak_allocated_bytes;
        report["peak_device"] = use.peak_device_bytes;
        report["resident"] = torch_host::allocated_bytes(device);
        report["status"] = "ok";
      } catch (...) {
        report["status"] = "error";
        report["error"] = what_of(std::current_exception());
      }
      answer(report);
    } else {
      std::fprintf(stderr, "kbv-sandbox: unexpected message '%s'\n", type.substr(0, 40).c_str());
      return 5;
    }
  }
}

}  // namespace kbv::sandbox
