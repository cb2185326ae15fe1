// Runs the real kbv binary (and so the real worker, LibTorch and Python) on the example files,
// on the CPU, and checks the verdicts it writes. These are the CPU half of the examples'
// contract (examples/README.md); tests/gpu has the CUDA half.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "kbv_cli.hpp"
#include "orchestrate/device_lock.hpp"

namespace kbv {
namespace {

using testing::CliResult;
using testing::example_candidate;
using testing::fixture;
using testing::FreshTempDir;

const std::string kRelu = testing::example_problem("19_ReLU.py");
const std::string kSwish = testing::example_problem("7_Swish.py");

std::string candidate(const std::string& name) { return example_candidate(name); }

// CPU runs with a short timing budget: the integration tests check the verdict's shape, not
// the figures.
CliResult run_kbv(std::vector<std::string> args, const std::string& builds = "") {
  args.insert(args.end(), {"--time-budget", "0.5"});
  return testing::run_kbv_eval(args, "cpu", 900, builds);
}

// The object files and libraries under `dir`, each with its modification time: what a compiler
// left there. Empty when `dir` is "" or holds none.
std::map<std::string, std::filesystem::file_time_type> compiled_files(const std::string& dir) {
  std::map<std::string, std::filesystem::file_time_type> out;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return out;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    const auto ext = it->path().extension();
    if (it->is_regular_file(ec) && (ext == ".o" || ext == ".so")) out[it->path().string()] = it->last_write_time(ec);
  }
  return out;
}

std::string outcome(const CliResult& r) { return r.outcome(); }
std::string context(const CliResult& r) { return r.context(); }

TEST(EvalCli, ShapeShortcutPassesStandardButFailsVerifiedOnD4) {
  auto standard = run_kbv({kRelu, candidate("relu_shape_shortcut.py"), "--protocol", "standard"});
  EXPECT_EQ(outcome(standard), "correct") << context(standard);
  auto verified = run_kbv({kRelu, candidate("relu_shape_shortcut.py"), "--protocol", "verified"});
  ASSERT_EQ(outcome(verified), "incorrect") << context(verified);
  EXPECT_NE(verified.verdict["reason"].get<std::string>().find("D4_neg"), std::string::npos) << context(verified);
  std::map<std::string, std::string> status;
  for (const auto& d : verified.verdict["correctness"]["distributions"]) status[d["name"]] = d["status"];
  EXPECT_EQ(status["D1_x1"], "pass");
  EXPECT_EQ(status["D4_neg"], "fail");
}

// examples/attacks/copy_sibling.py takes the ModelNew of another candidate beside it. Its folder
// outside /tmp (the test's working folder: the sandbox's tmpfs over the candidate's folder) and
// under /tmp (its private /tmp): it finds no other candidate, and its zeros are incorrect. The
// sibling itself, judged, is correct.
TEST(EvalCli, ACandidateCannotReadTheCandidatesBesideIt) {
  const std::string pid = std::to_string(::getpid());
  for (const std::filesystem::path& dir : {std::filesystem::absolute("kbv-siblings-" + pid), std::filesystem::temp_directory_path() / ("kbv-siblings-" + pid)}) {
    SCOPED_TRACE(dir.string());
    std::filesystem::create_directories(dir / "2");
    std::filesystem::permissions(dir, std::filesystem::perms::all);
    std::ofstream(dir / "2" / "candidate.py") << "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                                                  "    def forward(self, x):\n        return torch.relu(x)\n";
    testing::bundle_attack("copy_sibling", (dir / "1.py").string(), {{"candidates_dir", dir.string()}});
    auto copycat = run_kbv({kRelu, (dir / "1.py").string(), "--protocol", "standard"});
    EXPECT_EQ(outcome(copycat), "incorrect") << context(copycat);
    EXPECT_EQ(copycat.verdict.dump().find("TOOK"), std::string::npos) << context(copycat);
    EXPECT_NE(copycat.verdict.dump().find("files in"), std::string::npos) << "the attack ran and looked: " << context(copycat);
    auto sibling = run_kbv({kRelu, (dir / "2" / "candidate.py").string(), "--protocol", "standard"});
    EXPECT_EQ(outcome(sibling), "correct") << context(sibling);
    std::filesystem::remove_all(dir);
  }
}

// examples/attacks/disk_full_excuse.py takes the disk its build entry lies on (a small tmpfs,
// mounted in a mount namespace of kbv's own) through a file it unlinks and holds, then raises
// ENOSPC: its failure stays its own compile_error, not kbv's internal_error, and the disk is given
// back when its sandbox ends.
TEST(EvalCli, ACandidateCannotBlameTheDiskForItsFailure) {
  testing::FreshTempDir dir("kbv-disk-excuse");
  const std::string disk = (dir.path / "disk").string();
  const std::string json = (dir.path / "v.json").string();
  std::filesystem::create_directories(disk);
  const std::string script = "mount -t tmpfs -o size=200m,mode=755 kbv-test-disk '" + disk + "' || exit 77; mkdir -m 755 '" + disk +
                             "/builds' && '" + testing::kBin + "/kbv' eval '" + kRelu + "' '" + testing::kSource +
                             "/examples/attacks/disk_full_excuse.py' --device cpu --no-timing --quiet --json '" + json +
                             "' --build-dir '" + disk + "/builds' && df -m '" + disk + "' | tail -1";
  ProcessSpec spec;
  spec.argv = {"unshare", "-m", "--propagation", "private", "sh", "-c", script};
  auto r = run_process(spec, Clock::now() + std::chrono::seconds(600));
  if (r.exit_code == 77 || r.output_head.find("unshare failed") != std::string::npos) GTEST_SKIP() << "no mount namespace here: " << r.output_head;
  std::ifstream in(json);
  const auto verdict = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(verdict.is_object()) << r.output_head << r.output_tail;
  EXPECT_EQ(verdict.value("outcome", ""), "compile_error") << verdict.dump().substr(0, 2000);
  EXPECT_NE(verdict.value("reason", "").find("No space left"), std::string::npos) << verdict.dump().substr(0, 2000);
  // df's line: the disk's used MiB back to (almost) nothing.
  const std::string out = r.output_head + r.output_tail;
  const auto at = out.find("kbv-test-disk");
  ASSERT_NE(at, std::string::npos) << out;
  std::istringstream df(out.substr(at));
  std::string name;
  long total = 0, used = -1;
  df >> name >> total >> used;
  EXPECT_GE(used, 0) << out;
  EXPECT_LT(used, 10) << out;
}

TEST(EvalCli, WrongCandidateIsIncorrectWithErrors) {
  auto r = run_kbv({kRelu, candidate("relu_wrong_cpu.py")});
  ASSERT_EQ(outcome(r), "incorrect") << context(r);
  EXPECT_GT(r.verdict["correctness"]["distributions"][0]["max_abs_err"].get<double>(), 1e-3);
}

// An output is the values it stands for, not its memory: torch's lazy negative bit (a negative
// view) is resolved before the judge reads the bytes. The right values in a negative view are
// correct; wrong values whose memory holds the right ones are not.
TEST(EvalCli, ANegativeViewIsJudgedByItsValuesNotItsMemory) {
  auto right = run_kbv({kRelu, fixture("relu_negative_view.py"), "--protocol", "strict", "--no-timing"});
  EXPECT_EQ(outcome(right), "correct") << context(right);
  auto wrong = run_kbv({kRelu, testing::kSource + "/examples/hacks/negative_view_output.py", "--protocol", "strict", "--no-timing"});
  EXPECT_EQ(outcome(wrong), "incorrect") << context(wrong);
}

// A budget too short for the +-1% target: the verdict says so, and how far it got.
TEST(EvalCli, ABudgetThatRunsOutSaysWhy) {
  auto r = testing::run_kbv_eval({kRelu, candidate("relu_shape_shortcut.py"), "--protocol", "standard", "--time-budget", "0.01"},
                                 "cpu");
  ASSERT_EQ(outcome(r), "correct") << context(r);
  ASSERT_EQ(r.verdict["timing"]["stop_reason"], "budget") << context(r);
  bool said = false;
  for (const auto& w : r.verdict["warnings"])
    said = said || (w.get<std::string>().find("not the +-1% target: the time budget ran out") != std::string::npos &&
                    w.get<std::string>().find("noisiest series is") != std::string::npos);
  EXPECT_TRUE(said) << context(r);
}

TEST(EvalCli, CorrectCandidateGetsCpuTimingAgainstOneBaseline) {
  auto r = run_kbv({kRelu, fixture("relu_print_flood.py"), "--protocol", "strict"});
  ASSERT_EQ(outcome(r), "correct") << context(r);
  EXPECT_EQ(r.verdict["correctness"]["distributions"].size(), 10u) << "strict runs 10 distributions";
  const auto& timing = r.verdict["timing"];
  EXPECT_EQ(timing["clock"], "cpu_steady_clock");
  EXPECT_EQ(timing["speedups"].size(), 1u);
  EXPECT_GT(timing["rounds"].get<int>(), 0);
  EXPECT_FALSE(r.verdict.contains("memory")) << "no device memory on the CPU";
  // The candidate printed well over 64 MB per call; the verdict keeps a bounded tail.
  EXPECT_LT(r.verdict["output_tail"].get<std::string>().size(), 100u * 1024);
  EXPECT_EQ(r.process.exit_code, 0);
}

TEST(EvalCli, SegfaultBecomesCrashedAndKbvExitsNormally) {
  auto r = run_kbv({kRelu, candidate("relu_crash_segfault.py")});
  EXPECT_TRUE(r.process.exited) << r.process.describe();
  EXPECT_EQ(r.process.exit_code, 0);
  ASSERT_EQ(outcome(r), "crashed") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("SIGSEGV"), std::string::npos) << context(r);
  EXPECT_EQ(r.verdict["stage"], "correctness");
}

TEST(EvalCli, HangBecomesTimeoutInItsStage) {
  auto start = std::chrono::steady_clock::now();
  auto r = run_kbv({kRelu, candidate("relu_hang.py"), "--run-timeout", "8"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(outcome(r), "timeout") << context(r);
  EXPECT_EQ(r.verdict["stage"], "correctness");
  EXPECT_LT(seconds, 30.0);
  EXPECT_EQ(r.process.exit_code, 0);
  // Before the kill the worker was asked where it hangs: the candidate's own line is in the verdict.
  const std::string tail = r.verdict["output_tail"];
  EXPECT_NE(tail.find("relu_hang.py\", line"), std::string::npos) << tail;
  EXPECT_NE(tail.find("in forward"), std::string::npos) << tail;
}

// Another Python first on PATH, and PYTHONHOME / PYTHONPATH naming a broken standard library
// (a conda or pyenv shell, a Slurm job's module): kbv's Python is the one it was built against,
// so the verdict is the candidate's own, never a crash of kbv's interpreter blamed on it.
TEST(EvalCli, AForeignPythonInTheEnvironmentChangesNothing) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("kbv-foreign-python-" + std::to_string(::getpid()));
  fs::create_directories(root / "bin");
  for (const char* sub : {"lib/python3.11/encodings", "lib/python3/encodings"}) fs::create_directories(root / sub);
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  for (const char* exe : {"bin/python3", "bin/python"}) {
    write(root / exe, "#!/bin/sh\nexit 7\n");
    fs::permissions(root / exe, fs::perms::owner_all);
  }
  for (const char* lib : {"lib/python3.11", "lib/python3"}) {
    write(root / lib / "os.py", "raise SystemExit('foreign standard library')\n");
    write(root / lib / "encodings" / "__init__.py", "raise SystemExit('foreign standard library')\n");
  }
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", ((root / "bin").string() + ":" + old_path).c_str(), 1);
  ::setenv("PYTHONHOME", root.c_str(), 1);
  ::setenv("PYTHONPATH", (root / "lib/python3.11").c_str(), 1);
  auto r = run_kbv({kRelu, candidate("relu_cpp_ext.py"), "--no-timing"});
  ::setenv("PATH", old_path.c_str(), 1);
  ::unsetenv("PYTHONHOME");
  ::unsetenv("PYTHONPATH");
  fs::remove_all(root);
  EXPECT_EQ(outcome(r), "correct") << context(r);
}

TEST(EvalCli, OsExitBecomesCrashed) {
  auto r = run_kbv({kRelu, candidate("relu_exit.py")});
  ASSERT_EQ(outcome(r), "crashed") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("code 3"), std::string::npos) << context(r);
}

TEST(EvalCli, PythonExceptionBecomesRuntimeError) {
  auto r = run_kbv({kRelu, candidate("relu_raises.py")});
  ASSERT_EQ(outcome(r), "runtime_error") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("RuntimeError"), std::string::npos) << context(r);
}

TEST(EvalCli, CompileErrorKeepsTheCompilerLog) {
  auto r = run_kbv({kRelu, candidate("relu_compile_error.py")});
  ASSERT_EQ(outcome(r), "compile_error") << context(r);
  EXPECT_NE(r.verdict["build"]["log_tail"].get<std::string>().find("error"), std::string::npos) << context(r);
  // The reason names what to fix: g++'s own first diagnostic, not only torch's "Error building".
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("main.cpp:"), std::string::npos) << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("'output' was not declared"), std::string::npos) << context(r);
}

TEST(EvalCli, MissingModelNewIsCompileError) {
  auto r = run_kbv({kRelu, fixture("relu_no_model_new.py")});
  ASSERT_EQ(outcome(r), "compile_error") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("ModelNew"), std::string::npos);
}

// kbv checked out or installed under /tmp (containers and CI runners build there), in a folder
// whose name has spaces, and reached through a symlink: the binaries as built, copied there
// (nothing new is built), judge a candidate; the sandbox's private /tmp must not hide them.
TEST(EvalCli, RunsFromACopyUnderTmpInAPathWithSpacesAndThroughASymlink) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("kbv copy with spaces " + std::to_string(::getpid()));
  const fs::path link = fs::temp_directory_path() / ("kbv-link-" + std::to_string(::getpid()));
  struct Cleanup {
    fs::path root, link;
    ~Cleanup() {
      std::error_code ec;
      fs::remove(link, ec);
      fs::remove_all(root, ec);
    }
  } cleanup{root, link};
  fs::create_directories(root / "bin");
  for (const char* b : {"kbv", "kbv-judge", "kbv-sandbox"})
    fs::copy_file(testing::kBin + "/" + b, root / "bin" / b, fs::copy_options::overwrite_existing);
  fs::copy_file(kSwish, root / "7_Swish.py");
  fs::copy_file(fixture("swish_torch.py"), root / "swish torch.py");
  fs::permissions(root, fs::perms::others_read | fs::perms::others_exec, fs::perm_options::add);
  fs::create_directory_symlink(root, link);
  int n = 0;
  for (const fs::path& at : {root, link}) {
    SCOPED_TRACE(at.string());
    ProcessSpec spec;
    const std::string json = testing::build_dir() + "/copy-under-tmp-" + std::to_string(++n) + ".json";
    spec.argv = {(at / "bin" / "kbv").string(), "eval", (at / "7_Swish.py").string(), (at / "swish torch.py").string(),
                 "--device", "cpu", "--no-timing", "--json", json, "--build-dir", testing::build_dir()};
    spec.env_set = {{"KBV_JUDGE", ""}, {"KBV_WORKER", ""}, {"KBV_SANDBOX", ""}};  // the copies find each other, next to kbv
    auto p = run_process(spec, Clock::now() + std::chrono::seconds(600));
    std::ifstream in(json);
    ASSERT_TRUE(in) << p.output_head << p.output_tail;
    auto v = nlohmann::json::parse(in);
    EXPECT_EQ(v.value("outcome", ""), "correct") << v.dump(1).substr(0, 3000);
  }
}

// importlib compiles a file's raw bytes and lets a byte that is not UTF-8 through in a comment;
// Python run on the file (and KernelBench, which reads it as text) refuses it. So does kbv.
TEST(EvalCli, AFilePythonRefusesIsACompileError) {
  auto r = run_kbv({kRelu, fixture("relu_not_utf8.py"), "--no-timing"});
  ASSERT_EQ(outcome(r), "compile_error") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("utf-8"), std::string::npos) << context(r);
}

TEST(EvalCli, CudaCandidateOnCpuIsSkippedWithoutBuilding) {
  auto r = run_kbv({kRelu, candidate("relu_cuda.py")});
  ASSERT_EQ(outcome(r), "skipped") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("CUDA"), std::string::npos);
  // Refused before compiling: nothing a compiler writes is in its build folder (a figure of
  // seconds would be a timing that load can move).
  EXPECT_TRUE(compiled_files(r.verdict["build"].value("build_dir", "")).empty()) << "must refuse before compiling\n" << context(r);
}

TEST(EvalCli, BrokenProblemIsProblemError) {
  auto r = run_kbv({fixture("broken_problem.py"), candidate("relu_wrong_cpu.py")});
  ASSERT_EQ(outcome(r), "problem_error") << context(r);
  EXPECT_NE(r.verdict["reason"].get<std::string>().find("get_inputs"), std::string::npos) << context(r);
}

TEST(EvalCli, MissingFileIsAUsageErrorNotAVerdict) {
  auto r = run_kbv({kRelu, "/nonexistent/candidate.py"});
  EXPECT_TRUE(r.process.exited);
  EXPECT_EQ(r.process.exit_code, 2);
  EXPECT_NE(r.output().find("not a readable file"), std::string::npos) << r.output();
}

// Two candidates that both call load_inline(name="my_ext") build into different folders under
// different module names, and both are correct. The folder is the one the other tests of these
// sources use (whichever runs first builds them).
TEST(EvalCli, SameExtensionNameDoesNotCollide) {
  const std::string& builds = testing::shared_build_dir();
  auto relu = run_kbv({kRelu, candidate("relu_cpp_ext.py"), "--no-timing"}, builds);
  auto swish = run_kbv({kSwish, candidate("swish_cpp_ext.py"), "--no-timing"}, builds);
  ASSERT_EQ(outcome(relu), "correct") << context(relu);
  ASSERT_EQ(outcome(swish), "correct") << context(swish);
  const auto& a = relu.verdict["build"]["extensions"][0];
  const auto& b = swish.verdict["build"]["extensions"][0];
  EXPECT_EQ(a["requested_name"], "my_ext");
  EXPECT_EQ(b["requested_name"], "my_ext");
  EXPECT_NE(a["unique_name"], b["unique_name"]);
  EXPECT_NE(a["build_dir"], b["build_dir"]);
  EXPECT_TRUE(relu.verdict["custom_kernel"].get<bool>());
  // Built once: a second evaluation of the same source reuses the build (its compiled files
  // untouched; not a figure of seconds, which load can move).
  const auto built = compiled_files(relu.verdict["build"]["build_dir"].get<std::string>());
  ASSERT_FALSE(built.empty()) << context(relu);
  auto again = run_kbv({kRelu, candidate("relu_cpp_ext.py"), "--no-timing"}, builds);
  ASSERT_EQ(outcome(again), "correct");
  EXPECT_EQ(compiled_files(again.verdict["build"]["build_dir"].get<std::string>()), built) << "compiled again\n" << context(again);
}

// A build killed mid-way leaves torch's lock file in the extension's build folder; the next
// evaluation of the same source must not wait on it forever. In the shared build folder (the
// build is the other tests'): the lock is removed again at the end, whatever happened.
TEST(EvalCli, StaleBuildLockFromAKilledBuildDoesNotHang) {
  const std::string& builds = testing::shared_build_dir();
  auto first = run_kbv({kRelu, candidate("relu_cpp_ext.py"), "--no-timing"}, builds);
  ASSERT_EQ(outcome(first), "correct") << context(first);
  std::string ext_dir = first.verdict["build"]["extensions"][0]["build_dir"];
  struct RemoveLock {
    std::string path;
    ~RemoveLock() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_lock{ext_dir + "/lock"};
  std::ofstream(remove_lock.path) << "";  // what a SIGKILLed torch build leaves
  auto again = run_kbv({kRelu, candidate("relu_cpp_ext.py"), "--no-timing", "--compile-timeout", "60"}, builds);
  EXPECT_EQ(outcome(again), "correct") << context(again);
}

// Several kbv eval of one source, started at once on one new build folder: one builds, the others
// wait for that build and load it, and each gets the verdict one evaluation alone gets. As root
// each judge hands the entry to its own sandbox's uid: done while another sandbox was building
// there, that took the entry away from it, and its candidate was blamed for a PermissionError.
TEST(EvalCli, ConcurrentEvalsOfOneSourceOnANewBuildFolderAgree) {
  namespace fs = std::filesystem;
  const FreshTempDir dir("kbv-concurrent-builds");
  const fs::path& root = dir.path;
  fs::create_directories(root / "builds");
  constexpr int kEvals = 3;
  std::vector<ProcessResult> processes(kEvals);
  std::vector<std::thread> evals;
  for (int i = 0; i < kEvals; ++i)
    evals.emplace_back([&, i] {
      ProcessSpec spec;
      spec.argv = {testing::kBin + "/kbv", "eval", kRelu, candidate("relu_cpp_ext.py"), "--device", "cpu", "--no-timing",
                   "--json", (root / ("verdict-" + std::to_string(i) + ".json")).string(), "--build-dir",
                   (root / "builds").string()};
      processes[i] = run_process(spec, Clock::now() + std::chrono::seconds(800));
    });
  for (auto& t : evals) t.join();
  std::set<std::string> flags_seen;
  std::string log_path;
  for (int i = 0; i < kEvals; ++i) {
    SCOPED_TRACE("evaluation " + std::to_string(i));
    CliResult r{processes[i], nlohmann::json()};
    std::ifstream in(root / ("verdict-" + std::to_string(i) + ".json"));
    if (in) r.verdict = nlohmann::json::parse(in, nullptr, false);
    EXPECT_EQ(outcome(r), "correct") << context(r);
    EXPECT_EQ(context(r).find("PermissionError"), std::string::npos) << context(r);
    std::string flags;
    if (r.verdict.is_object())
      for (const auto& f : r.verdict.value("flags", nlohmann::json::array())) flags += f.value("name", "") + " ";
    flags_seen.insert(flags);
    if (r.verdict.is_object() && r.verdict.contains("build")) log_path = r.verdict["build"].value("log_path", "");
  }
  EXPECT_EQ(flags_seen.size(), 1u) << "every verdict with the same flags";
  for (const auto& flags : flags_seen) EXPECT_EQ(flags.find("build_cache_tampered"), std::string::npos) << flags;
  // Built once: every other evaluation found the build done (torch's ninja, verbose into the log).
  std::ifstream in(log_path);
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int loaded = 0;
  for (auto at = log.find("ninja: no work to do"); at != std::string::npos; at = log.find("ninja: no work to do", at + 1)) ++loaded;
  EXPECT_EQ(loaded, kEvals - 1) << log;
}

// Separate kbv evals on one device take turns (orchestrate/device_lock.hpp): a timed one waits
// while another holds the device's lock, and runs once it is free; an untimed one runs beside
// other untimed ones. The lock is held here by the test itself, so nothing depends on timing.
TEST(EvalCli, ATimedEvalWaitsForTheDeviceAnotherEvalHolds) {
  namespace fs = std::filesystem;
  const FreshTempDir dir("kbv-device-lock");
  const fs::path& root = dir.path;
  fs::create_directories(root / "locks");
  const std::string relu = (root / "relu_torch.py").string();
  std::ofstream(relu) << "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
  auto eval = [&](const std::string& json, std::vector<std::string> extra) {
    ProcessSpec spec;
    spec.argv = {testing::kBin + "/kbv", "eval", kRelu, relu, "--device", "cpu", "--json", json, "--build-dir", (root / "builds").string()};
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    spec.env_set = {{"KBV_LOCK_DIR", (root / "locks").string()}, {"KBV_DEVICE_LOCK", "1"}};  // scripts/test.sh turns it off
    return run_process(spec, Clock::now() + std::chrono::seconds(600));
  };
  kbv::DeviceLock other((root / "locks").string(), "cpu");
  ASSERT_TRUE(other.acquire(false));  // another evaluation, untimed, has the CPU

  // An untimed one runs beside it.
  ProcessResult untimed = eval((root / "untimed.json").string(), {"--no-timing"});
  EXPECT_EQ(untimed.exit_code, 0) << untimed.output_tail;
  EXPECT_TRUE(fs::exists(root / "untimed.json")) << untimed.output_tail;

  // A timed one waits until the other has let go.
  ProcessResult timed;
  std::thread t([&] { timed = eval((root / "timed.json").string(), {"--time-budget", "0.3"}); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_FALSE(fs::exists(root / "timed.json")) << "it ran while another evaluation had the device";
  other.release();
  t.join();
  EXPECT_EQ(timed.exit_code, 0) << timed.output_tail;
  EXPECT_NE((timed.output_head + timed.output_tail).find("waiting for the cpu"), std::string::npos) << timed.output_tail;
  std::ifstream in(root / "timed.json");
  ASSERT_TRUE(in) << timed.output_tail;
  auto verdict = nlohmann::json::parse(in, nullptr, false);
  EXPECT_EQ(verdict.value("outcome", ""), "correct") << verdict.dump(1).substr(0, 3000);
}

}  // namespace
}  // namespace kbv
