// Every usage error of every command exits 2 before any work (no worker started, not even the
// device probe), with a message that says what to write; CLI11's own parse errors included.
#include "cli_harness.hpp"

namespace kbv {
namespace {

using testing::Scratch;

struct UsageCase {
  std::string name;
  std::vector<std::string> args;  // "{suite}", "{runs}", "{db}", "{problem}", "{candidate}", "{dir}" are filled in
  std::string says;               // part of the message
  friend void PrintTo(const UsageCase& c, std::ostream* os) { *os << c.name; }
};

class UsageErrors : public ::testing::TestWithParam<UsageCase> {};

std::vector<std::string> fill(const Scratch& s, std::vector<std::string> args) {
  std::map<std::string, std::string> at{{"{suite}", s.path("suite")},
                                        {"{runs}", s.path("runs")},
                                        {"{db}", s.db()},
                                        {"{problem}", s.path("suite/level1/1_P.py")},
                                        {"{candidate}", s.path("runs/m/level_1_problem_1_sample_0_kernel.py")},
                                        {"{dir}", s.path("")}};
  for (auto& a : args)
    if (at.count(a)) a = at[a];
  return args;
}

TEST_P(UsageErrors, ExitsTwoBeforeAnyWork) {
  Scratch s("usage-" + GetParam().name);
  s.problem(1);
  s.candidate("m", 1, 0);
  auto r = s.kbv(fill(s, GetParam().args));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(GetParam().says), std::string::npos) << r.output;
  EXPECT_TRUE(s.worker_log().empty()) << "a worker was started for a usage error";
  EXPECT_FALSE(fs::exists(s.db())) << "no DB is created for a usage error";
}

const std::vector<std::string> kRun{"run", "--problems", "{suite}", "--runs", "{runs}", "--db", "{db}", "--device", "cpu"};
std::vector<std::string> run_with(std::vector<std::string> extra) {
  auto a = kRun;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
std::vector<std::string> eval_with(std::vector<std::string> extra) {
  std::vector<std::string> a{"eval", "{problem}", "{candidate}", "--device", "cpu"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, UsageErrors,
    ::testing::Values(
        UsageCase{"run_timeout_zero", run_with({"--run-timeout", "0"}), "--run-timeout 0 is not a positive number"},
        UsageCase{"run_timeout_negative", run_with({"--run-timeout", "-5"}), "--run-timeout"},
        UsageCase{"run_timeout_nan", run_with({"--run-timeout", "nan"}), "--run-timeout nan"},
        UsageCase{"compile_timeout_nan", run_with({"--compile-timeout", "nan"}), "--compile-timeout nan"},
        UsageCase{"compile_timeout_zero", run_with({"--compile-timeout", "0"}), "--compile-timeout 0"},
        UsageCase{"time_budget_zero", run_with({"--time-budget", "0"}), "--time-budget 0"},
        UsageCase{"time_budget_nan", run_with({"--time-budget", "nan"}), "--time-budget nan"},
        UsageCase{"jobs_zero", run_with({"--jobs", "0"}), "--jobs 0 must be at least 1"},
        UsageCase{"store_wait_zero", run_with({"--store-wait", "0"}), "--store-wait 0"},
        UsageCase{"unknown_protocol", run_with({"--protocol", "fast"}), "--protocol"},
        UsageCase{"run_device_gpu", run_with({"--device", "gpu"}), "write cuda or cuda:N"},
        UsageCase{"run_gpus_gpu", {"run", "--problems", "{suite}", "--runs", "{runs}", "--db", "{db}", "--gpus", "gpu"},
                  "write cuda or cuda:N"},
        UsageCase{"run_unknown_flag", run_with({"--fast"}), "--help"},
        UsageCase{"run_missing_problems", {"run", "--runs", "{runs}", "--db", "{db}"}, "--problems"},
        UsageCase{"run_build_dir_unusable", run_with({"--build-dir", "/proc/version/builds"}), "--build-dir"},
        UsageCase{"run_db_folder_missing", {"run", "--problems", "{suite}", "--runs", "{runs}", "--db", "/nonexistent-kbv/kbv.db",
                                            "--device", "cpu"},
                  "does not exist"},
        UsageCase{"eval_tolerance_negative", eval_with({"--tolerance", "-1"}), "--tolerance -1"},
        UsageCase{"eval_tolerance_nan", eval_with({"--tolerance", "nan"}), "--tolerance nan"},
        UsageCase{"eval_run_timeout_zero", eval_with({"--run-timeout", "0"}), "--run-timeout 0"},
        UsageCase{"eval_compile_timeout_nan", eval_with({"--compile-timeout", "nan"}), "--compile-timeout nan"},
        UsageCase{"eval_json_unwritable", eval_with({"--json", "/nonexistent-kbv/verdict.json"}), "--json"},
        UsageCase{"eval_device_gpu", {"eval", "{problem}", "{candidate}", "--device", "gpu"}, "write cuda or cuda:N"},
        UsageCase{"eval_unknown_protocol", eval_with({"--protocol", "fast"}), "--protocol"},
        UsageCase{"audit_jobs_zero", {"audit", "{suite}", "--jobs", "0"}, "--jobs 0"},
        UsageCase{"report_json_unwritable", {"report", "--db", "{db}", "--json", "/nonexistent-kbv/r.json"}, "--json"},
        UsageCase{"generate_samples_zero",
                  {"generate", "--problems", "{suite}", "--model", "m", "--run", "r", "--samples", "0"}, "--samples 0"},
        UsageCase{"no_subcommand", {}, "--help"}),
    [](const auto& info) { return info.param.name; });

TEST(Protocols, AProtocolGivenTwiceIsEvaluatedOnceWithANote) {
  Scratch s("dup-protocol");
  s.problem(1);
  s.candidate("m", 1, 0);
  auto r = s.kbv(s.run_args({"--protocol", "standard,standard"}));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--protocol standard given more than once"), std::string::npos) << r.output;
  EXPECT_EQ(s.worker_calls("eval"), 1u);
}

TEST(Devices, GpusIsStillAcceptedAndMeansDevice) {
  Scratch s("gpus-alias");
  s.problem(1);
  s.candidate("m", 1, 0);
  auto r = s.kbv({"run", "--problems", s.path("suite"), "--runs", s.path("runs"), "--db", s.db(), "--gpus", "cpu"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(s.worker_calls("eval"), 1u);
}

}  // namespace
}  // namespace kbv
