// The candidate's side of an evaluation up to its first call: its build (in the sandbox, into
// its build-cache entry), ModelNew, and Model's weights handed over. Every answer from the
// sandbox is checked; its word decides nothing but what it alone can know (what it built, which
// of its state entries took the weights), and even that only as data the judge reports:
// custom_kernel is the judge's own look at the sandbox's processes (judge_evidence.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <regex>

#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "core/cuda_source.hpp"
#include "ipc/message_fields.hpp"
#include "judge/compiler_error.hpp"
#include "judge/judgement.hpp"
#include "judge/profile.hpp"
#include "judge/sandbox_setup.hpp"
#include "torch_host/device.hpp"
#include "torch_host/models.hpp"

namespace kbv::judge {
namespace {

// The end of a file the sandbox wrote (its build log): never through a link, never a FIFO or a
// device, at most `bytes`.
std::string tail_of_file(const std::string& path, std::size_t bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    auto size = static_cast<std::size_t>(st.st_size);
    std::size_t start = size > bytes ? size - bytes : 0;
    out.resize(size - start);
    ssize_t n = ::pread(fd, out.data(), out.size(), static_cast<off_t>(start));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The sandbox's failure was its compiler's (torch's "Error building extension"), not an import
// that raised.
bool compiler_failed(const ipc::Fields& failed) { return failed.has("compiler") && failed.boolean("compiler"); }

// A failed compile's reason with the compiler's first diagnostic (read here, from the log, not
// taken from the sandbox's message): "Error building extension 'x'" says nothing of what to fix.
std::string with_compiler_error(std::string message, const ipc::Fields& failed, const std::string& log_path) {
  if (!compiler_failed(failed)) return message;
  std::string diagnostic = first_compiler_error(tail_of_file(log_path, 256 * 1024));
  return diagnostic.empty() ? message : message + ": " + diagnostic;
}

// The sandbox's account of its extensions, checked field by field.
std::vector<ExtensionBuild> parse_extensions(const nlohmann::json& reply) {
  std::vector<ExtensionBuild> out;
  if (!reply.contains("extensions")) return out;
  ipc::Fields r(reply, reply.value("type", "reply"));
  for (const auto& e : r.array("extensions", 64)) {
    ipc::Fields f(e, "extension");
    ExtensionBuild b;
    b.requested_name = f.str("requested_name", 256);
    b.unique_name = f.str("unique_name", 256);
    b.build_dir = f.str("build_dir", 4096);
    b.seconds = f.number("seconds");
    b.cuda = f.boolean("cuda");
    b.extension_h_left_out = f.has("extension_h_left_out") && f.boolean("extension_h_left_out");
    b.lean_prelude = f.has("lean_prelude") && f.boolean("lean_prelude");
    b.lean_binding = f.has("lean_binding") && f.boolean("lean_binding");
    out.push_back(b);
  }
  return out;
}

// The sandbox says the candidate needs CUDA. Skipped only when the judge sees it too: a CPU
// device and CUDA in the candidate's own source. Otherwise a candidate could turn its failure
// into a skip (left out of every figure) by raising kbv's own exception itself, as it can reach
// it through the hooked load_inline.
Ending needs_cuda_ending(const std::string& message, bool cpu_device, const std::string& candidate_path) {
  if (cpu_device && source_needs_cuda(read_text(candidate_path)))
    return Ending{Outcome::skipped, "candidate needs CUDA (" + message + "); run it with --device cuda"};
  return Ending{Outcome::runtime_error, "the candidate's build stopped: " + message};
}

// The message of a "failed" answer, whatever the sandbox put there.
std::string failure_message(const nlohmann::json& reply, const std::string& fallback) {
  auto it = reply.find("message");
  return it != reply.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

// The sandbox's step seconds (asked for in its hello when profiling): the candidate's process
// reports them, so they go to the profile alone, a few known names, numbers only.
void Judgement::add_sandbox_profile(const nlohmann::json& reply) {
  static const char* const kSteps[] = {"sandbox.hop_page", "sandbox.scrub", "sandbox.tracking", "sandbox.hooks", "sandbox.import"};
  if (!reply.contains("profile") || !reply["profile"].is_object()) return;
  for (const char* step : kSteps)
    if (auto it = reply["profile"].find(step); it != reply["profile"].end() && it->is_number()) profile::add(step, it->get<double>());
}

void Judgement::note_waiting_answer() {
  if (!import_seen_ && sandbox_ && sandbox_->pending()) import_seen_ = Clock::now();
}

void Judgement::await_build() {
  enter(Stage::build);
  // The import began with the sandbox's hello, however long the judge took to get here.
  const auto started = hello_sent_.value_or(Clock::now());
  // An answer already waiting came in time, however long the judge's own work (its rehearsal)
  // kept it from looking: the build limit is the candidate's, and it did not move.
  note_waiting_answer();
  const auto deadline = import_seen_ ? std::max(build_deadline_, Clock::now() + std::chrono::seconds(1)) : build_deadline_;
  nlohmann::json reply;
  try {
    reply = sandbox_->receive("imported", deadline);
  } catch (const RunnerError& e) {
    if (e.kind == RunnerError::Kind::timeout) {
      sandbox_->stop(2.0);
      throw Ending{Outcome::timeout, "timed out after " + std::to_string(static_cast<int>(job_.compile_timeout_seconds)) +
                                         " s in stage 'build'; raise --compile-timeout if the build is just slow"};
    }
    end_with_runner_error(e, "building the candidate");
  }
  // The run timeout counts from the end of the build, as the user reads --run-timeout; a build
  // that ends early only brings the candidate's own deadline closer.
  run_deadline_ = std::min(run_deadline_, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                             std::chrono::duration<double>(job_.run_timeout_seconds)));
  BuildResult build;
  build.seconds = std::chrono::duration<double>(import_seen_.value_or(Clock::now()) - started).count();
  build.build_dir = cache_.dir;
  build.log_path = cache_.log;
  build.log_tail = tail_of_file(cache_.log, 8 * 1024);
  build.extensions = guarded(Outcome::protocol_violation, "the sandbox's build report", [&] { return parse_extensions(reply); });
  build_cache_record(cache_);
  cache_lock_.reset();  // the import is over: the next judge of this source may hand the entry over
  verdict_.build = build;
  // The judge's look at the sandbox's processes, not its report: the import has loaded them.
  observe_custom_kernel(&build);
  if (profile::enabled()) add_sandbox_profile(reply);
  if (reply["type"] == "failed") {
    ipc::Fields f(reply, "failed");
    std::string kind = f.str("kind", 32), message = first_line(f.str("message", 8000));
    if (kind == "needs_cuda") throw needs_cuda_ending(message, !device_.is_cuda(), job_.candidate_path);
    if (kind == "runtime_error") throw Ending{Outcome::runtime_error, message};
    end_if_host_disk_full(message, build.log_tail);
    throw Ending{Outcome::compile_error, with_compiler_error(message, f, cache_.log)};
  }
}

void Judgement::end_if_host_disk_full(const std::string& message, const std::string& log_tail) {
  if (!build_says_disk_full(message, log_tail)) return;
  sandbox_->stop(2.0);  // its open files, unlinked or not, give their blocks back first
  if (auto why = build_failed_for_host_disk(cache_)) throw Ending{Outcome::internal_error, *why};
}

void Judgement::finish_build_only() {
  enter(Stage::build);
  auto started = Clock::now();
  const bool device_free = device_free_build(job_);
  // Built without the GPU, an import that raises or crashes outside an extension's compile may
  // have wanted the device (torch.cuda at import): no verdict; kbv builds it again with the GPU.
  auto needs_device = [&](const std::string& why) {
    enter(Stage::needs_device);
    return Ending{Outcome::skipped, "built without the GPU, the import failed (" + why + "); build it with the GPU"};
  };
  nlohmann::json reply;
  try {
    reply = sandbox_->receive("built", build_deadline_);
  } catch (const RunnerError& e) {
    if (e.kind == RunnerError::Kind::timeout) sandbox_->stop(2.0);
    if (device_free && e.kind == RunnerError::Kind::died) throw needs_device(e.what());
    end_with_runner_error(e, "building the candidate");
  }
  BuildResult build;
  build.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  build.build_dir = cache_.dir;
  build.log_path = cache_.log;
  build.log_tail = tail_of_file(cache_.log, 8 * 1024);
  build.extensions = guarded(Outcome::protocol_violation, "the sandbox's build report", [&] { return parse_extensions(reply); });
  build_cache_record(cache_);
  cache_lock_.reset();  // the import is over: the next judge of this source may hand the entry over
  verdict_.build = build;
  observe_custom_kernel(&build);
  if (reply["type"] == "failed") {
    ipc::Fields f(reply, "failed");
    std::string message = first_line(f.str("message", 8000));
    // kbv run's build phase resolves no device: the job says which it is.
    if (f.str("kind", 32) == "needs_cuda") throw needs_cuda_ending(message, job_.device == "cpu", job_.candidate_path);
    // An extension that failed to compile (the compiler said so, and that failure ended the
    // import) failed for the same reason with the GPU: the architecture is given. Anything else
    // may be the missing GPU's doing.
    if (device_free && !compiler_failed(f)) throw needs_device(message);
    end_if_host_disk_full(message, build.log_tail);
    throw Ending{Outcome::compile_error, with_compiler_error(message, f, cache_.log)};
  }
  enter(Stage::built);
  throw Ending{Outcome::skipped, "build only (kbv run's build phase)"};
}

void Judgement::construct_candidate() {
  enter(Stage::models);
  nlohmann::json init = init_inputs_json();
  nlohmann::json reply;
  try {
    // A fresh ModelNew for each protocol the sandbox serves, under that protocol's TF32 setting.
    reply = sandbox_->request({{"type", "construct"}, {"init_inputs", init}, {"model_seed", model_seed()}, {"tf32", protocol_tf32()}},
                              {}, "constructed", run_deadline_);
  } catch (const RunnerError& e) {
    end_with_runner_error(e, "constructing ModelNew");
  }
  const bool first = !reader_;  // the sandbox's first ModelNew: the twin and the hop page too
  if (first && twin_) {
    try {
      twin_->receive("ready", run_deadline_);
    } catch (const RunnerError& e) {
      throw Ending{Outcome::internal_error, std::string("kbv's twin process failed to start: ") + e.what()};
    }
  }
  if (reply["type"] == "failed") throw Ending{Outcome::runtime_error, first_line(failure_message(reply, "constructing ModelNew failed"))};
  guarded(Outcome::protocol_violation, "the sandbox's state list", [&] {
    ipc::Fields f(reply, "constructed");
    for (const auto& e : f.array("state", 100000)) {
      ipc::Fields entry(e, "state");
      std::vector<std::int64_t> shape;
      for (const auto& d : entry.array("shape", 16)) {
        if (!d.is_number_integer()) throw ipc::ProtocolError("state.shape: not an integer");
        shape.push_back(d.get<std::int64_t>());
      }
      candidate_state_[entry.str("name", 1024)] = shape;
    }
    return 0;
  });
  if (!first) return;
  if (device_.is_cuda()) {
    std::string error;
    if (!sandbox_->attach_cuda(&error) || !twin_->attach_cuda(&error))
      throw Ending{Outcome::internal_error, "the judge cannot map the hop page: " + error};
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) throw Ending{Outcome::internal_error, "cudaStreamCreate failed"};
    stream_ = s;
    c10::cuda::setCurrentCUDAStream(c10::cuda::getStreamFromExternal(s, device_.index()));
  }
  reader_ = std::make_unique<torch_host::OutputReader>(&sandbox_->arena(), std::vector<at::Tensor>{}, device_);
}

void Judgement::hand_over_weights() {
  auto entries = torch_host::state_entries(reference_);
  std::vector<at::Tensor> likes;
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [name, t] : entries) {
    likes.push_back(t);
    names.push_back(name);
  }
  auto block = guarded(Outcome::internal_error, "sharing Model's weights", [&] {
    auto b = torch_host::SharedBlock::allocate(likes, device_);
    for (std::size_t i = 0; i < likes.size(); ++i) b.tensors()[i].copy_(likes[i]);
    torch_host::synchronize(device_);
    return b;
  });
  nlohmann::json reply;
  std::vector<int> fds;
  if (block.fd() >= 0) fds.push_back(block.fd());
  try {
    reply = sandbox_->request({{"type", "weights"}, {"block", block.descriptor()}, {"names", names}}, fds, "weights_loaded", run_deadline_);
  } catch (const RunnerError& e) {
    end_with_runner_error(e, "handing Model's weights to ModelNew");
  }
  if (reply["type"] == "failed") throw Ending{Outcome::runtime_error, first_line(failure_message(reply, "loading weights failed"))};
  guarded(Outcome::protocol_violation, "the sandbox's weight report", [&] {
    ipc::Fields f(reply, "weights_loaded");
    weights_copied_ = static_cast<int>(f.integer("copied", 0, 1 << 30));
    weights_entries_ = static_cast<int>(f.integer("entries", 0, 1 << 30));
    const auto& unmatched = f.array("unmatched", 20);
    if (!unmatched.empty())
      warn("ModelNew state entries without a same-named, same-shaped Model entry (" +
           std::to_string(weights_entries_ - weights_copied_) + ", first '" +
           first_line(unmatched.front().is_string() ? unmatched.front().get<std::string>() : "?", 100) +
           "'): they keep their seeded initialisation");
    return 0;
  });
}

}  // namespace kbv::judge
