// `kbv eval PROBLEM C1 C2 ...`: one judge kept warm across a problem's candidates (kbv-judge
// --serve, orchestrate/evaluation_run.hpp run_evaluation_batch), on the CPU. Each candidate still
// gets its own sandbox and its own verdict, whatever the one before it did; a judge that cannot say
// a candidate is wholly gone hands the rest to a fresh judge.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kbv_cli.hpp"

namespace kbv {
namespace {

namespace fs = std::filesystem;
using testing::example_candidate;
using testing::kBin;

const std::string kRelu = testing::example_problem("19_ReLU.py");

struct Batch {
  ProcessResult process;
  std::vector<nlohmann::json> verdicts;  // the --jsonl lines, in order
  std::string context() const {
    std::string out = process.output_head + process.output_tail + "\n";
    for (const auto& v : verdicts) out += v.dump().substr(0, 1500) + "\n";
    return out;
  }
};

class WarmJudge : public ::testing::Test {
 protected:

  // A PyTorch-only ReLU of its own (a distinct file: its own build-cache entry).
  std::string honest(const std::string& name) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                           "        return torch.relu(x)\n# " << name << "\n";
    return path.string();
  }

  Batch eval(const std::vector<std::string>& candidates, std::vector<std::string> extra = {},
             std::map<std::string, std::string> env = {}) {
    const std::string jsonl = (dir_ / "verdicts.jsonl").string();
    ProcessSpec spec;
    spec.argv = {kBin + "/kbv", "eval", kRelu};
    spec.argv.insert(spec.argv.end(), candidates.begin(), candidates.end());
    spec.argv.insert(spec.argv.end(), {"--device", "cpu", "--jsonl", jsonl, "--build-dir", (dir_ / "builds").string(),
                                       "--time-budget", "0.3", "--quiet"});
    spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
    // Without device turns: a gated judge's start-up is folded into "ahead"/"start", and the
    // "python" stage below is how a test tells a judge's first candidate from the others.
    spec.env_set = std::move(env);
    spec.env_set["KBV_DEVICE_LOCK"] = "0";
    Batch b;
    b.process = run_process(spec, Clock::now() + std::chrono::seconds(900));
    std::ifstream in(jsonl);
    for (std::string line; std::getline(in, line);) b.verdicts.push_back(nlohmann::json::parse(line, nullptr, false));
    return b;
  }

  const testing::FreshTempDir fresh_{std::string("kbv-warm-judge-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()};
  const fs::path& dir_ = fresh_.path;
};

// The judge's interpreter start-up is a stage of its own ("python"): only a judge's first
// candidate has it.
bool warm(const nlohmann::json& verdict) {
  return verdict.is_object() && verdict.contains("stage_seconds") && !verdict["stage_seconds"].contains("python");
}

// Each candidate's own verdict, in order, from one judge: a wrong output, a crash and a hang
// between honest candidates change nothing for the ones after them.
TEST_F(WarmJudge, OneJudgeGivesEachCandidateItsOwnVerdictInOrder) {
  const std::vector<std::string> candidates = {honest("first.py"), example_candidate("relu_wrong_cpu.py"),
                                               example_candidate("relu_crash_segfault.py"), example_candidate("relu_hang.py"),
                                               honest("last.py")};
  Batch b = eval(candidates, {"--run-timeout", "8"});
  ASSERT_EQ(b.process.exit_code, 0) << b.context();
  ASSERT_EQ(b.verdicts.size(), candidates.size()) << b.context();
  const std::vector<std::string> expected = {"correct", "incorrect", "crashed", "timeout", "correct"};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_EQ(b.verdicts[i].value("outcome", ""), expected[i]) << i << "\n" << b.context();
    EXPECT_EQ(b.verdicts[i]["candidate"].value("path", ""), fs::absolute(candidates[i]).string()) << b.context();
  }
  EXPECT_FALSE(warm(b.verdicts.front())) << "the first candidate pays the judge's start-up\n" << b.context();
  for (std::size_t i = 1; i < candidates.size(); ++i) EXPECT_TRUE(warm(b.verdicts[i])) << i << "\n" << b.context();
  // A sandbox (and a uid) of its own each.
  std::set<std::int64_t> uids;
  for (const auto& v : b.verdicts) uids.insert(v["isolation"].value("outer_uid", std::int64_t{-1}));
  EXPECT_EQ(uids.size(), candidates.size()) << b.context();
}

// Without a PID namespace or a cgroup the judge cannot say a candidate's processes are all gone:
// it evaluates no other candidate beside what may be left, and each gets a fresh judge.
TEST_F(WarmJudge, AJudgeThatCannotSayACandidateIsGoneHandsTheRestToAFreshJudge) {
  Batch b = eval({honest("a.py"), honest("b.py"), honest("c.py")}, {"--no-timing"},
                 {{"KBV_SANDBOX_NAMESPACES", "0"}, {"KBV_SANDBOX_CGROUP", "0"}});
  ASSERT_EQ(b.process.exit_code, 0) << b.context();
  ASSERT_EQ(b.verdicts.size(), 3u) << b.context();
  for (const auto& v : b.verdicts) {
    EXPECT_EQ(v.value("outcome", ""), "correct") << b.context();
    EXPECT_FALSE(warm(v)) << b.context();
  }
}

// Step name -> times run, summed over every profile file the judges wrote into `dir`.
std::map<std::string, long> profile_counts(const fs::path& dir) {
  std::map<std::string, long> counts;
  for (const auto& file : fs::directory_iterator(dir)) {
    std::ifstream in(file.path());
    std::string protocol, step;
    double seconds = 0;
    long count = 0;
    while (in >> protocol >> step >> seconds >> count) counts[step] += count;
  }
  return counts;
}

// The audit of a draw for triviality (a property of the problem and the draw) is done once per
// draw by a warm judge: verified's draws are the same for every candidate. Strict's are each
// candidate's own (a secret each: a candidate that saw its draws, and left them where the next
// could read them, would tell the next one which of its calls are checked), so each is audited.
TEST_F(WarmJudge, AJudgeAuditsEachDrawOnceAndStrictDrawsAreEachCandidatesOwn) {
  for (const std::string protocol : {"verified", "strict"}) {
    const fs::path profile = dir_ / ("profile-" + protocol);
    fs::create_directories(profile);
    Batch b = eval({honest("a.py"), honest("b.py"), honest("c.py")}, {"--no-timing", "--protocol", protocol},
                   {{"KBV_JUDGE_PROFILE", profile.string()}});
    ASSERT_EQ(b.process.exit_code, 0) << b.context();
    ASSERT_EQ(b.verdicts.size(), 3u) << b.context();
    std::vector<std::string> draws;  // each candidate's distributions and what passed them trivially
    for (const auto& v : b.verdicts) {
      ASSERT_EQ(v.value("outcome", ""), "correct") << b.context();
      std::string d;
      for (const auto& dist : v["correctness"]["distributions"]) d += dist.value("name", "") + "=" + dist.value("trivial_pass", "") + ";";
      draws.push_back(d);
    }
    EXPECT_EQ(draws[0], draws[1]) << b.context();
    EXPECT_EQ(draws[0], draws[2]) << b.context();
    const auto counts = profile_counts(profile);
    const long compared = counts.count("correctness.trivial_pass") ? counts.at("correctness.trivial_pass") : 0;
    const long audited = counts.count("correctness.trivial_pass.audit") ? counts.at("correctness.trivial_pass.audit") : 0;
    ASSERT_GT(compared, 0) << b.context();
    if (protocol == "verified") EXPECT_EQ(compared, 3 * audited) << "every candidate's draws audited again\n" << b.context();
    else EXPECT_EQ(compared, audited) << "a strict draw taken as an earlier candidate's\n" << b.context();
  }
}

// A candidate cannot leave anything for the candidates after it in its build-cache folder (the one
// place it may write that outlives it): the folder is 0700 again, the judge's to hand over, once its
// sandbox has ended, whatever mode the candidate gave it. The follower is wrong exactly when it
// finds the scout's note. Red team, session 25.
TEST_F(WarmJudge, ACandidateLeavesNothingInItsBuildFolderForTheNext) {
  if (::geteuid() != 0) GTEST_SKIP() << "without root every sandbox runs as kbv's own uid: no folder mode separates them";
  const fs::path scout = dir_ / "scout.py", follower = dir_ / "follower.py";
  std::ofstream(scout) << "import os, torch\n"
                          "d = os.environ['TORCH_EXTENSIONS_DIR']\n"
                          "open(os.path.join(d, 'leak.txt'), 'w').write('the draws')\n"
                          "os.chmod(d, 0o755)\n"
                          "os.chmod(os.path.join(d, 'leak.txt'), 0o644)\n\n\n"
                          "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n";
  std::ofstream(follower) << "import glob, os, torch\n"
                             "root = os.path.dirname(os.environ['TORCH_EXTENSIONS_DIR'])\n"
                             "FOUND = [p for p in glob.glob(os.path.join(root, '*', 'leak.txt')) if open(p).read()]\n"
                             "print('follower found', FOUND, 'in', sorted(os.listdir(root)))\n\n\n"
                             "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                             "        return torch.relu(x) + (1.0 if FOUND else 0.0)\n";
  Batch b = eval({scout.string(), follower.string()}, {"--no-timing"});
  ASSERT_EQ(b.process.exit_code, 0) << b.context();
  ASSERT_EQ(b.verdicts.size(), 2u) << b.context();
  EXPECT_EQ(b.verdicts[0].value("outcome", ""), "correct") << b.context();
  EXPECT_EQ(b.verdicts[1].value("outcome", ""), "correct") << "the follower read the scout's note\n" << b.context();
  // The follower did look: it listed the build root and saw the scout's folder there.
  EXPECT_NE(b.verdicts[1].value("output_tail", "").find("follower found []"), std::string::npos) << b.context();
  EXPECT_TRUE(fs::exists(dir_ / "builds")) << b.context();
}

TEST_F(WarmJudge, OneJsonFileForSeveralCandidatesIsAUsageError) {
  ProcessSpec spec;
  spec.argv = {kBin + "/kbv", "eval", kRelu, honest("a.py"), honest("b.py"), "--device", "cpu", "--json", (dir_ / "v.json").string()};
  ProcessResult r = run_process(spec, Clock::now() + std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 2) << r.output_head;
  EXPECT_NE(r.output_head.find("--jsonl"), std::string::npos) << r.output_head;
}


// examples/attacks/copy_sibling.py in a/ looks for a ModelNew in b/. kbv eval hides from every
// sandbox the folder of each candidate on its command line, and those --hide-from-candidates names
// (the Python API's batch split over several kbv processes), and the host's user data (the working
// folder's top-level folder) is private as a whole: either way the attack finds nothing and its
// zeros are incorrect. Outside /tmp, with the private folders off (KBV_SANDBOX_READONLY=0), it
// takes b's ModelNew: the control that shows the attack works.
TEST_F(WarmJudge, NoCandidateOfABatchSeesIntoAnotherCandidatesFolder) {
  const fs::path base = fs::absolute("kbv-batch-folders-" + std::to_string(::getpid()));
  fs::remove_all(base);
  for (const char* sub : {"a", "b"}) fs::create_directories(base / sub);
  for (const fs::path& d : {base, base / "a", base / "b"}) fs::permissions(d, fs::perms::all);
  const std::string other = (base / "b" / "candidate.py").string();
  std::ofstream(other) << "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                          "    def forward(self, x):\n        return torch.relu(x)\n";
  const std::string attacker = (base / "a" / "attack.py").string();
  testing::bundle_attack("copy_sibling", attacker, {{"candidates_dir", (base / "b").string()}});
  auto took = [](const nlohmann::json& v) { return v.dump().find("TOOK") != std::string::npos; };
  auto looked = [](const nlohmann::json& v) { return v.dump().find("files in") != std::string::npos; };

  Batch both = eval({attacker, other}, {"--no-timing"});
  ASSERT_EQ(both.verdicts.size(), 2u) << both.context();
  EXPECT_EQ(both.verdicts[0].value("outcome", ""), "incorrect") << both.context();
  EXPECT_FALSE(took(both.verdicts[0])) << both.context();
  EXPECT_TRUE(looked(both.verdicts[0])) << "the attack ran and looked\n" << both.context();
  EXPECT_EQ(both.verdicts[1].value("outcome", ""), "correct") << both.context();

  Batch told = eval({attacker}, {"--no-timing", "--hide-from-candidates", (base / "b").string()});
  ASSERT_EQ(told.verdicts.size(), 1u) << told.context();
  EXPECT_EQ(told.verdicts[0].value("outcome", ""), "incorrect") << told.context();
  EXPECT_FALSE(took(told.verdicts[0])) << told.context();

  if (base.string().rfind("/tmp/", 0) != 0) {
    Batch open = eval({attacker}, {"--no-timing"}, {{"KBV_SANDBOX_READONLY", "0"}});
    ASSERT_EQ(open.verdicts.size(), 1u) << open.context();
    EXPECT_TRUE(took(open.verdicts[0])) << "with the private folders off, b/ is in sight: the attack must work\n" << open.context();
  } else {
    ::testing::Test::RecordProperty("control", "skipped: the working folder is under /tmp, which every sandbox replaces");
  }
  fs::remove_all(base);
}

}  // namespace
}  // namespace kbv
