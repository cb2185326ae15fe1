#pragma once
// Runs the real `kbv` binary against the fake worker (fake_worker.cpp) in a scratch folder:
// a suite, runs, a DB, a build cache and a log of what the worker was asked to do. kbv runs as a
// child whose pid the test knows, so a test can signal it. KBV_TEST_KBV overrides the kbv
// binary (to check that a test fails on an older kbv).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace fs = std::filesystem;

namespace kbv::testing {

inline std::string kbv_exe() {
  const char* over = std::getenv("KBV_TEST_KBV");
  return over && *over ? over : KBV_EXE;
}

struct Started {
  pid_t pid = -1;
  std::string output_path;
};

struct Finished {
  int exit_code = -1;     // -1 when killed by a signal
  int term_signal = 0;
  std::string output;     // stdout and stderr, interleaved
};

class Scratch {
 public:
  explicit Scratch(const std::string& name) {
    root_ = fs::temp_directory_path() / ("kbv-cli-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(root_);
    fs::create_directories(root_ / "suite/level1");
    fs::create_directories(root_ / "runs");
    fs::create_directories(root_ / "cache");
    env_["KBV_WORKER"] = FAKE_WORKER_EXE;
    env_["KBV_CACHE"] = (root_ / "cache").string();
    env_["FAKE_WORKER_LOG"] = (root_ / "worker.log").string();
  }
  ~Scratch() {
    if (!::testing::Test::HasFailure()) fs::remove_all(root_);
  }

  fs::path root() const { return root_; }
  std::string path(const std::string& rel) const { return (root_ / rel).string(); }
  std::string db() const { return path("kbv.db"); }

  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void problem(int id, const std::string& name = "P") const {
    write("suite/level1/" + std::to_string(id) + "_" + name + ".py", "# problem " + std::to_string(id) + "\n");
  }
  // A candidate whose fake worker behaves as `directives` say ("key=value" lines).
  void candidate(const std::string& run, int problem, int sample, const std::vector<std::string>& directives = {}) const {
    std::string text = "# candidate " + run + " " + std::to_string(problem) + " " + std::to_string(sample) + "\n";
    for (const auto& d : directives) text += "# fake-worker: " + d + "\n";
    write("runs/" + run + "/level_1_problem_" + std::to_string(problem) + "_sample_" + std::to_string(sample) + "_kernel.py",
          text);
  }

  // kbv run --problems suite --runs runs --db kbv.db --device cpu --protocol standard, then `extra`
  // (the --db value is at index 6).
  std::vector<std::string> run_args(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a{"run", "--problems", path("suite"), "--runs", path("runs"), "--db", db(), "--device", "cpu",
                               "--protocol", "standard"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  Started start(const std::vector<std::string>& args) const {
    static int counter = 0;
    Started s;
    s.output_path = path("kbv-output-" + std::to_string(++counter) + ".txt");
    std::vector<std::string> argv{kbv_exe()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      auto eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : env_) env[k] = v;
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> cenv;
    for (auto& e : env_strings) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, s.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawn(&s.pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) ADD_FAILURE() << "cannot start " << argv[0] << ": " << rc;
    return s;
  }

  static Finished wait(const Started& s, double timeout_seconds = 120) {
    Finished f;
    int status = 0;
    auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    pid_t done = 0;
    while ((done = ::waitpid(s.pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done == 0) {
      ::kill(s.pid, SIGKILL);
      ::waitpid(s.pid, &status, 0);
      ADD_FAILURE() << "kbv did not finish within " << timeout_seconds << " s";
    }
    if (WIFEXITED(status)) f.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) f.term_signal = WTERMSIG(status);
    std::ifstream in(s.output_path);
    std::stringstream text;
    text << in.rdbuf();
    f.output = text.str();
    return f;
  }

  Finished kbv(const std::vector<std::string>& args, double timeout_seconds = 120) const {
    return wait(start(args), timeout_seconds);
  }

  // What the fake worker was asked to do, one line per invocation.
  std::vector<std::string> worker_log() const {
    std::vector<std::string> out;
    std::ifstream in(path("worker.log"));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::size_t worker_calls(const std::string& kind) const {
    std::size_t n = 0;
    for (const auto& l : worker_log()) n += l.rfind(kind, 0) == 0;
    return n;
  }
  void clear_worker_log() const { fs::remove(path("worker.log")); }

  void set_env(const std::string& k, const std::string& v) { env_[k] = v; }

 private:
  fs::path root_;
  std::map<std::string, std::string> env_;
};

// Waits until `ready` holds, up to `seconds`.
template <typename Ready>
bool eventually(Ready ready, double seconds = 30) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

}  // namespace kbv::testing
