// Every attack of examples/attacks/ (a candidate that has read kbv's source and wants a good
// verdict for a wrong kernel, or to hurt the others) in one `kbv run` beside honest candidates,
// on the CPU, under strict: each ends as a recorded outcome for that candidate alone, every
// other verdict is intact and stored, no process is left behind, nothing leaks, nothing outside
// a sandbox's own folders is written, and the honest candidates are unchanged.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "kbv_cli.hpp"
#include "store/result_store.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

const std::string kAttacks = testing::kSource + "/examples/attacks/";
const std::string kSecret = "kbv-secret-marker-7f3a91";

// Attacks whose kernel is wrong (zeros): never correct. The others compute a right ReLU and
// attack something else: their verdict may be correct, their attack must not work.
const std::vector<std::string> kWrongKernels = {
    "forged_verdict", "late_verdict_escaped", "db_rewrite", "build_cache_overwrite", "reference_patched",
    "deadline_extension", "malformed_messages", "kill_parent", "fork_children", "big_file", "memory_hog",
    // Found by the red team (docstrings say how each worked before its fix):
    "identity_in_timing", "relay_answers_on_arrival", "relay_prequeued_replies", "kill_process_group",
    "shrink_shared_memory", "malformed_descriptor", "library_link_to_device", "build_log_fifo", "library_hard_links",
    "copy_sibling", "oversized_output_view", "overflowing_output_sizes", "explain_decoy_oversized"};
const std::vector<std::string> kRightKernels = {"network_connect", "read_secrets", "write_outside", "write_proc_and_dev",
                                                "unix_socket_out", "survive_evaluation", "process_limit",
                                                "disk_leftovers", "build_log_link", "ptrace_exit_stop",
                                                "removal_name_collision"};
// Problem 40 (Linear + ReLU): an attack on the weights the judge hands over.
const std::vector<std::string> kWrongLinearKernels = {"dodge_reinit_params"};

struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    ::listen(fd, 16);
  }
  ~Listener() { ::close(fd); }
  bool heard_anything() const {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
};

bool process_named(const std::string& comm) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "comm");
    std::string name;
    std::getline(in, name);
    if (name == comm) return true;
  }
  return false;
}

// A unix socket the test listens on, under /tmp, where unix_socket_out.py tries to reach it.
struct UnixListener {
  int fd = -1;
  std::string path;
  explicit UnixListener(const std::string& p) : path(p) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ::unlink(path.c_str());
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::chmod(path.c_str(), 0777);  // even a world-writable socket must be out of reach
    ::listen(fd, 4);
  }
  ~UnixListener() {
    ::close(fd);
    ::unlink(path.c_str());
  }
  bool heard_anything() const {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
};

bool process_with_marker(const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(marker) != std::string::npos && cmd.find("gtest") == std::string::npos) return true;
  }
  return false;
}

class Attacks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("kbv-attacks-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "suite/level1");
    fs::copy_file(testing::example_problem("19_ReLU.py"), root_ / "suite/level1/19_ReLU.py");
    fs::copy_file(testing::example_problem("40_Linear_ReLU.py"), root_ / "suite/level1/40_Linear_ReLU.py");
    fs::path runs = root_ / "runs" / "attacks";
    fs::create_directories(runs);
    // The attacks travel bundled with their helper and the listeners' addresses (bundle.py): the
    // sandbox imports a copy of the candidate file alone.
    unix_listener_ = std::make_unique<UnixListener>((root_ / "host.sock").string());
    ProcessSpec bundle;
    bundle.argv = {"python3", kAttacks + "bundle.py", "--set", "connect_port=" + std::to_string(listener_.port), "--set",
                   "unix_socket_path=" + unix_listener_->path, "--set", "candidates_dir=" + runs.string()};
    int sample = 0;
    for (const auto& list : {kWrongKernels, kRightKernels})
      for (const auto& name : list) {
        bundle.argv.push_back(kAttacks + name + ".py:" + (runs / ("level_1_problem_19_sample_" + std::to_string(sample) + "_kernel.py")).string());
        sample_of_[name] = sample++;
      }
    for (const auto& name : kWrongLinearKernels) {
      bundle.argv.push_back(kAttacks + name + ".py:" + (runs / ("level_1_problem_40_sample_" + std::to_string(sample) + "_kernel.py")).string());
      sample_of_[name] = sample++;
    }
    ProcessResult bundled = run_process(bundle, Clock::now() + std::chrono::seconds(120));
    ASSERT_TRUE(bundled.exited && bundled.exit_code == 0) << bundled.describe() << bundled.output_head;
    // Honest candidates in the same batch: a C++ extension (built into the shared cache the
    // overwrite attack goes after) and plain PyTorch.
    fs::copy_file(testing::kSource + "/examples/hacks/honest_shape_specialised.py",
                  runs / ("level_1_problem_19_sample_" + std::to_string(sample) + "_kernel.py"));
    sample_of_["honest_extension"] = sample++;
    std::ofstream(runs / ("level_1_problem_19_sample_" + std::to_string(sample) + "_kernel.py"))
        << "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
    sample_of_["honest_torch"] = sample++;

    ProcessSpec spec;
    spec.argv = {testing::kBin + "/kbv", "run", "--problems", (root_ / "suite").string(), "--runs", (root_ / "runs").string(),
                 "--db", (root_ / "kbv.db").string(), "--protocol", "strict", "--time-budget", "0.3", "--build-dir",
                 (root_ / "builds").string(), "--jobs", "2", "--gpus", "cpu", "--run-timeout", "20", "--sandbox-memory", "3"};
    spec.env_set = {{"OPENAI_API_KEY", kSecret}, {"ANTHROPIC_API_KEY", kSecret}};
    spec.keep_tail_bytes = 256 * 1024;
    result_ = run_process(spec, Clock::now() + std::chrono::minutes(30));
    std::this_thread::sleep_for(std::chrono::seconds(4));  // the late daemon would have acted by now
  }
  static void TearDownTestSuite() {
    unix_listener_.reset();
    fs::remove_all(root_);
  }

  static std::map<std::string, Verdict> verdicts() {
    std::map<std::string, Verdict> out;
    ResultStore store((root_ / "kbv.db").string(), ResultStore::Mode::read_only);
    for (const auto& r : store.verdicts())
      for (const auto& [name, s] : sample_of_)
        if (r.sample.sample_id == s) out[name] = r.verdict;
    return out;
  }
  static std::string printed() { return result_.output_head + result_.output_tail; }

  static fs::path root_;
  static std::map<std::string, int> sample_of_;
  static ProcessResult result_;
  static Listener listener_;
  static std::unique_ptr<UnixListener> unix_listener_;
};
fs::path Attacks::root_;
std::map<std::string, int> Attacks::sample_of_;
ProcessResult Attacks::result_;
Listener Attacks::listener_;
std::unique_ptr<UnixListener> Attacks::unix_listener_;

// One kbv run serves every expectation (ctest runs each test in its own process).
TEST_F(Attacks, EveryAttackEndsAsItsOwnRecordedOutcome) {
  {
    SCOPED_TRACE("TheRunFinishesAndStoresEveryVerdict");
    EXPECT_TRUE(result_.exited && result_.exit_code == 0) << result_.describe() << "\n" << printed().substr(0, 20000);
    auto v = verdicts();
    EXPECT_EQ(v.size(), sample_of_.size()) << printed().substr(0, 20000);
  }
  {
    SCOPED_TRACE("NoWrongKernelIsJudgedCorrect");
    auto v = verdicts();
    std::vector<std::string> wrong = kWrongKernels;
    wrong.insert(wrong.end(), kWrongLinearKernels.begin(), kWrongLinearKernels.end());
    for (const auto& name : wrong) {
      ASSERT_TRUE(v.count(name)) << name << " has no stored verdict";
      EXPECT_NE(v[name].outcome, Outcome::correct) << name << ": " << v[name].reason;
      EXPECT_NE(v[name].outcome, Outcome::internal_error) << name << " is the candidate's doing, not kbv's: " << v[name].reason;
    }
    // It writes its stage messages into the channel (protocol_violation) or sleeps out the
    // run limit (timeout): either way it ends within the limit it was given (20 s).
    const auto& d = v["deadline_extension"];
    EXPECT_TRUE(d.outcome == Outcome::timeout || d.outcome == Outcome::protocol_violation) << d.reason;
    EXPECT_LT(d.wall_seconds, 20 + 30) << "the run limit held: " << d.reason;
  }
  {
    SCOPED_TRACE("HonestCandidatesAreUnchanged");
    auto v = verdicts();
    for (const std::string name : {"honest_extension", "honest_torch"}) {
      EXPECT_EQ(v[name].outcome, Outcome::correct) << name << ": " << v[name].reason;
      for (const auto& f : v[name].flags) EXPECT_NE(f.name, "build_cache_tampered") << name << ": " << f.evidence;
    }
    for (const auto& name : kRightKernels)
      EXPECT_EQ(v[name].outcome, Outcome::correct) << name << ": " << v[name].reason;
  }
  {
    SCOPED_TRACE("TheStoreHoldsWhatTheJudgeDecided");
    // db_rewrite and the late daemon set every outcome to correct if they could write the DB.
    auto v = verdicts();
    EXPECT_NE(v["db_rewrite"].outcome, Outcome::correct);
    EXPECT_NE(v["late_verdict_escaped"].outcome, Outcome::correct);
    EXPECT_NE(v["forged_verdict"].outcome, Outcome::correct);
  }
  {
    SCOPED_TRACE("NoProcessIsLeftBehind");
    EXPECT_FALSE(process_with_marker("kbv-attack-child")) << "fork_children left a process";
    EXPECT_FALSE(process_named("kbv-survivor")) << "survive_evaluation left a process";
    EXPECT_FALSE(process_named("kbv-relay")) << "survive_evaluation left its relay";
    EXPECT_FALSE(process_named("kbv-ptracer")) << "ptrace_exit_stop's tracer outlived its sandbox";
    EXPECT_FALSE(process_with_marker("kbv-attack-late-verdict")) << "the setsid daemon survived";
  }
  {
    SCOPED_TRACE("NoSecretLeaks");
    auto v = verdicts();
    for (const auto& [name, verdict] : v) EXPECT_EQ(nlohmann::json(verdict).dump().find(kSecret), std::string::npos) << name;
    EXPECT_NE(v["read_secrets"].output_tail.find("ATTACK read_secrets"), std::string::npos)
        << "the attack ran and reported: " << v["read_secrets"].output_tail.substr(0, 2000);
  }
  {
    SCOPED_TRACE("NothingIsWrittenOutsideTheSandbox");
    EXPECT_FALSE(fs::exists(root_ / "runs" / "attacks" / "kbv_attack_marker.py"));
    EXPECT_FALSE(fs::exists(root_ / "suite" / "level1" / "kbv_attack_marker.py"));
    auto python = testing::kSource;  // torch's own folder: found through the venv's python
    ProcessSpec which;
    which.argv = {"python3", "-c", "import torch, os; print(os.path.dirname(torch.__file__))"};
    auto r = run_process(which, Clock::now() + std::chrono::seconds(60));
    std::string torch_dir = r.output_head.substr(0, r.output_head.find('\n'));
    if (!torch_dir.empty()) EXPECT_FALSE(fs::exists(fs::path(torch_dir) / "kbv_attack_marker.py")) << torch_dir;
    // No file of big_file's grew past the 1 GiB file-size limit.
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) EXPECT_LE(it->file_size(ec), 1ull << 30) << it->path();
  }
  {
    SCOPED_TRACE("EveryVerdictSaysWhatIsolatedIt");
    auto v = verdicts();
    const auto& iso = v["honest_torch"].isolation;
    ASSERT_TRUE(iso.is_object()) << "the verdict records the sandbox's isolation";
    for (const char* key : {"pid_namespace", "network_namespace", "landlock_abi", "warnings"}) EXPECT_TRUE(iso.contains(key)) << key;
  }
  {
    SCOPED_TRACE("TheRedTeamsSideEffectsDoNotLand");
    auto v = verdicts();
    EXPECT_FALSE(fs::exists("/dev/kbv_redteam_marker")) << v["write_proc_and_dev"].output_tail;
    fs::remove("/dev/kbv_redteam_marker");
    EXPECT_EQ(v["write_proc_and_dev"].output_tail.find("WROTE"), std::string::npos) << v["write_proc_and_dev"].output_tail;
    EXPECT_EQ(v["write_proc_and_dev"].output_tail.find("CREATED"), std::string::npos) << v["write_proc_and_dev"].output_tail;
    EXPECT_EQ(v["ptrace_exit_stop"].output_tail.find("PID 1 seized"), std::string::npos) << v["ptrace_exit_stop"].output_tail;
    EXPECT_NE(v["process_limit"].output_tail.find("refused after"), std::string::npos)
        << "1100 processes must not all start: " << v["process_limit"].output_tail.substr(0, 2000);
    // Nothing a candidate wrote into its private tmp stays once its evaluation is over.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec))
      if (e.path().filename().string().rfind("kbv-sandbox-", 0) == 0)
        for (fs::recursive_directory_iterator it(e.path(), ec), end; !ec && it != end; it.increment(ec))
          EXPECT_EQ(it->path().filename().string().rfind("leftover_", 0), std::string::npos) << it->path();
    // The judge never reads the build log through a link: nothing outside the build folder lands in a verdict.
    const auto& build = v["build_log_link"].build;
    if (build) EXPECT_TRUE(build->log_tail.empty() || build->log_tail.find("[user]") == std::string::npos) << build->log_tail;
  }
  {
    SCOPED_TRACE("NothingReachesTheNetwork");
    EXPECT_FALSE(listener_.heard_anything());
    EXPECT_FALSE(unix_listener_->heard_anything()) << "a host unix socket under /tmp was reached";
  }
}

}  // namespace
}  // namespace kbv
