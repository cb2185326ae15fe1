// A stand-in for kbv-worker that speaks its protocol (the job as JSON on stdin; stage, device
// and verdict messages as JSON lines on fd 3) without LibTorch, so the CLI tests of `kbv run`
// and `kbv eval` run anywhere in seconds. What it does is read from the candidate file, lines
// "# fake-worker: key=value":
//   outcome=NAME          the verdict's outcome (default correct)
//   outcome_file=PATH     read the outcome from PATH when it exists (a test changes it between runs)
//   sleep=SECONDS         spend this long in the correctness stage; longer than the job's run
//                         timeout, it stops there with a timeout verdict, as kbv-judge does
//   wait_for=PATH         in the correctness stage, wait until PATH exists
//   build_wait_for=PATH   in a build-only job, wait until PATH exists
//   build_outcome=NAME    a build-only job ends with this outcome (compile_error: a failed build)
//   build_needs_device=1  a device-free build-only job (build_cuda_arch) ends needs_device
// FAKE_WORKER_BUILD_LOG, when set, gets "<candidate> arch=<build_cuda_arch or -> visible=<CUDA_VISIBLE_DEVICES>
// nice=<niceness> policy=<scheduling policy>" per build-only job; FAKE_WORKER_CAPABILITY sets the probed device's capability.
//   reason=TEXT           the verdict's reason (default "fake-worker said <outcome>")
//   empty_identity=1      leave protocol, hashes and device empty, as a worker that failed early
//   print_kb=N            print N KiB on stdout (the verdict's output_tail grows; fills a disk)
//   hang_after_verdict=S  after its verdicts, sleep S seconds before exiting (a judge whose exit
//                         hangs in a stuck CUDA teardown)
//   released_exit=S       after its verdicts, say "released" (the device is free), as kbv-judge
//                         does, then take S seconds to exit (its CUDA context's teardown)
// FAKE_WORKER_LOG, when set, gets one line per invocation: "probe", "build <candidate>" or
// "eval <candidate> <protocol>". FAKE_WORKER_DEVICE_LOG, when set, gets one line per evaluation:
// "<job's device> <CUDA_VISIBLE_DEVICES as the worker sees it, - unset> <candidate> <protocol>".
// Started with --device-gate (kbv run --prestart), it says stages python and waiting and reads
// one byte from fd 5 first, as kbv-judge does; FAKE_WORKER_TURN_LOG, when set, then gets
// "<device> <process start> <turn start> <end> <candidate> <protocols served, +-joined>"
// (steady-clock ns). FAKE_WORKER_PROBE_FAIL=TEXT makes --probe fail with TEXT on stderr, as a
// judge that cannot open the device. Asked for several protocols (job.protocols), it serves them in turn, each
// announced by a "protocol" message, as kbv-judge does.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "core/verdict.hpp"

namespace fs = std::filesystem;

namespace {

FILE* g_messages = nullptr;

void send(const nlohmann::json& message) {
  std::fprintf(g_messages, "%s\n", message.dump().c_str());
  std::fflush(g_messages);
}

void stage(const std::string& name) { send({{"event", "stage"}, {"stage", name}}); }

void log_line(const std::string& line, const char* log = "FAKE_WORKER_LOG") {
  if (const char* path = std::getenv(log)) std::ofstream(path, std::ios::app) << line << "\n";
}

std::map<std::string, std::string> directives(const std::string& candidate_path) {
  std::map<std::string, std::string> out;
  std::ifstream in(candidate_path);
  const std::string tag = "# fake-worker: ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(tag, 0) != 0) continue;
    auto kv = line.substr(tag.size());
    auto eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

void wait_for(const std::string& path) {
  while (!fs::exists(path)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

kbv::DeviceInfo fake_device() {
  kbv::DeviceInfo d;
  d.kind = "cpu";
  d.name = "Fake CPU";
  if (const char* cap = std::getenv("FAKE_WORKER_CAPABILITY")) d.capability = cap;
  return d;
}

// Field `n` of /proc/self/stat (19: niceness, 41: scheduling policy; the name before them has
// no spaces here).
std::string own_stat(int n) {
  std::ifstream in("/proc/self/stat");
  std::string field;
  for (int i = 0; i < n && in >> field; ++i) {
  }
  return field;
}

}  // namespace

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  const long long process_start = steady_ns();
  g_messages = ::fdopen(3, "w");
  if (!g_messages) return 3;
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  kbv::WorkerJob job = nlohmann::json::parse(input).get<kbv::WorkerJob>();
  if (argc > 1 && std::string(argv[1]) == "--probe") {
    log_line("probe");
    if (const char* fail = std::getenv("FAKE_WORKER_PROBE_FAIL"); fail && *fail) {
      std::fprintf(stderr, "%s\n", fail);  // as a judge that cannot open the device
      return 1;
    }
    send({{"event", "device"}, {"device", kbv::device_to_json(fake_device())}});
    return 0;
  }
  auto d = directives(job.candidate_path);
  const bool gated = argc > 1 && std::string(argv[1]) == "--device-gate";
  if (gated) {
    stage("python");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // an interpreter starting
    stage("waiting");
    char go = 0;
    if (::read(kbv::kDeviceGateFd, &go, 1) != 1) return 0;  // closed unopened: kbv is stopping
  }
  const long long turn_start = steady_ns();
  stage("setup");
  if (job.build_only) {
    log_line("build " + job.candidate_path);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    log_line(job.candidate_path + " arch=" + (job.build_cuda_arch.empty() ? "-" : job.build_cuda_arch) +
                 " visible=" + (visible ? (*visible ? visible : "(empty)") : "-") + " nice=" + own_stat(19) + " policy=" + own_stat(41),
             "FAKE_WORKER_BUILD_LOG");
    stage("build");
    if (d.count("build_wait_for")) wait_for(d["build_wait_for"]);
    kbv::Verdict v;
    v.protocol = job.protocol;
    v.protocol_version = kbv::protocol_by_name(job.protocol).version;
    v.outcome = kbv::Outcome::skipped;
    v.stage = "built";
    if (d.count("build_outcome")) {
      v.outcome = kbv::outcome_from_name(d["build_outcome"]).value_or(kbv::Outcome::internal_error);
      v.stage = "build";
    }
    // Its import wants the GPU: built without it, the judge says so and kbv builds it again.
    if (d["build_needs_device"] == "1" && !job.build_cuda_arch.empty()) v.stage = "needs_device";
    v.problem.sha256 = kbv::sha256_file(job.problem_path);
    v.candidate.sha256 = kbv::sha256_file(job.candidate_path);
    v.device = fake_device();
    kbv::BuildResult build;
    build.build_dir = job.build_root + "/" + v.candidate.sha256.substr(0, 16);
    fs::create_directories(build.build_dir);
    v.build = build;
    send({{"event", "verdict"}, {"verdict", v}});
    return 0;
  }
  // Every protocol asked for, one after another, as one judge's sandbox serves them: after an
  // outcome other than correct or incorrect it stops, and kbv gives the rest to a fresh one.
  std::string served;
  for (const std::string& protocol : kbv::job_protocols(job)) {
    send({{"event", "protocol"}, {"protocol", protocol}});
    log_line("eval " + job.candidate_path + " " + protocol);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    log_line(job.device + " " + (visible ? (*visible ? visible : "(empty)") : "-") + " " + job.candidate_path + " " + protocol,
             "FAKE_WORKER_DEVICE_LOG");
    stage("build");
    stage("correctness");
    if (d.count("print_kb")) {
      std::string kib(1023, 'x');
      for (int i = 0; i < std::stoi(d["print_kb"]); ++i) std::printf("%s\n", kib.c_str());
      std::fflush(stdout);
    }
    std::string outcome = d.count("outcome") ? d["outcome"] : "correct";
    if (d.count("sleep")) {
      // The judge enforces the run timeout itself; kbv only holds a backstop far behind it.
      const double asked = std::stod(d["sleep"]);
      const bool over = job.run_timeout_seconds > 0 && asked > job.run_timeout_seconds;
      std::this_thread::sleep_for(std::chrono::duration<double>(over ? job.run_timeout_seconds : asked));
      if (over) outcome = "timeout";
    }
    if (d.count("wait_for")) wait_for(d["wait_for"]);
    if (outcome != "timeout" && d.count("outcome_file") && fs::exists(d["outcome_file"]))
      std::ifstream(d["outcome_file"]) >> outcome;

    nlohmann::json v = kbv::Verdict{};
    v["outcome"] = outcome;  // as written: a name kbv does not know must reach it as such
    v["stage"] = outcome == "timeout" ? "correctness" : "done";
    v["reason"] = d.count("reason") ? d["reason"] : outcome == "correct" ? "" : "fake-worker said " + outcome;
    if (d["empty_identity"] != "1") {
      v["protocol"] = protocol;
      v["protocol_version"] = kbv::protocol_by_name(protocol).version;
      v["precision"] = job.precision;
      v["problem"]["sha256"] = kbv::sha256_file(job.problem_path);
      v["problem"]["path"] = job.problem_path;
      v["problem"]["size"] = job.size;
      v["candidate"]["sha256"] = kbv::sha256_file(job.candidate_path);
      v["candidate"]["path"] = job.candidate_path;
      v["device"] = kbv::device_to_json(fake_device());
    } else {
      v["protocol"] = "";
      v["device"] = kbv::device_to_json(kbv::DeviceInfo{});
    }
    stage("done");
    send({{"event", "verdict"}, {"verdict", v}});
    served += (served.empty() ? "" : "+") + protocol;
    if (outcome != "correct" && outcome != "incorrect") break;
  }
  // The turn ends when the device is said to be free: stamped before saying so, since kbv may hand
  // the next judge its turn before this process runs again (a loaded machine).
  const long long turn_end = steady_ns();
  if (d.count("released_exit")) send({{"event", "released"}});
  log_line(job.device + " " + std::to_string(process_start) + " " + std::to_string(turn_start) + " " + std::to_string(turn_end) +
               " " + job.candidate_path + " " + served,
           "FAKE_WORKER_TURN_LOG");
  if (d.count("hang_after_verdict")) std::this_thread::sleep_for(std::chrono::duration<double>(std::stod(d["hang_after_verdict"])));
  if (d.count("released_exit")) std::this_thread::sleep_for(std::chrono::duration<double>(std::stod(d["released_exit"])));
  return 0;
}
