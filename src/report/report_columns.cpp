#include "report/report_columns.hpp"

#include <fmt/format.h>

#include "core/stage_group.hpp"
#include "report/verdict_text.hpp"

namespace kbv {

std::string format_rate(std::optional<double> share) {
  return share ? fmt::format("{:.1f}%", *share * 100) : "n/a";
}
std::string format_speedup(std::optional<double> ratio) {
  if (!ratio) return "n/a";
  return *ratio >= 100 ? fmt::format("{:.0f}x", *ratio) : fmt::format("{:.2f}x", *ratio);
}
std::string format_ms(std::optional<double> ms) {
  if (!ms) return "n/a";
  if (*ms >= 100) return fmt::format("{:.1f}", *ms);
  return *ms >= 1 ? fmt::format("{:.3f}", *ms) : fmt::format("{:.4f}", *ms);
}
std::string format_level(int level) { return level == 0 ? "all" : std::to_string(level); }
std::string format_flag_counts(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [f, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", f, n);
  return out;
}

namespace {

using A = const Aggregate&;
std::optional<double> num(double v) { return v; }

AggregateColumn fast_column(double p) {
  std::string h = fmt::format("fast_{}", p);
  std::string help = p == 0 ? "fast_0: share of problems with a correct sample (= correctness rate)"
                            : fmt::format("share of problems with a correct sample strictly faster than {}x the baseline", p);
  return {h, help, [p](A a) { return format_rate(a.fast(p)); }, [p](A a) { return a.fast(p); }};
}

std::vector<AggregateColumn> make_aggregate_columns() {
  std::vector<AggregateColumn> c{
      {"run", "run (model)", [](A a) { return a.run; }, nullptr},
      {"level", "KernelBench level; all = every level", [](A a) { return format_level(a.level); },
       [](A a) { return num(a.level); }},
      {"problems", "problems scored (degenerate and broken problems left out)", [](A a) { return std::to_string(a.problems); },
       [](A a) { return num(a.problems); }},
      {"samples", "candidate files evaluated", [](A a) { return std::to_string(a.samples); }, [](A a) { return num(a.samples); }},
      {"compiled", "share of problems with a sample that built", [](A a) { return format_rate(a.compile_rate); },
       [](A a) { return num(a.compile_rate); }},
      {"correct", "share of problems with a correct sample", [](A a) { return format_rate(a.correctness_rate); },
       [](A a) { return num(a.correctness_rate); }},
      {"Correct Speedup", "geometric mean over correct problems of the best sample's speedup vs the protocol's baseline",
       [](A a) { return format_speedup(a.correct_speedup) + (a.timed_correct < a.correct ? fmt::format(" ({} timed)", a.timed_correct) : ""); },
       [](A a) { return a.correct_speedup; }},
  };
  for (double p : kFastPThresholds) c.push_back(fast_column(p));
  c.push_back({"Mem Efficiency", "geometric mean over correct problems of baseline / candidate peak device memory (>1: leaner)",
               [](A a) { return format_speedup(a.memory_efficiency); }, [](A a) { return a.memory_efficiency; }});
  c.push_back({"Mem Efficient %", "share of correct problems whose kernel uses strictly less peak device memory than the baseline",
               [](A a) { return format_rate(a.memory_efficient_share); }, [](A a) { return a.memory_efficient_share; }});
  c.push_back({"Mem increase %", "share of correct problems whose kernel uses strictly more peak device memory than the baseline",
               [](A a) { return format_rate(a.memory_increase_share); }, [](A a) { return a.memory_increase_share; }});
  return c;
}

using RP = const Report&;
using P = const ProblemScore&;

std::string ci_text(P p) {
  if (!p.speedup_ci_low || !p.speedup_ci_high) return "";
  return fmt::format("[{:.2f}, {:.2f}]", *p.speedup_ci_low, *p.speedup_ci_high);
}

// At most `n` bytes, cut at a UTF-8 boundary, with "..." when cut.
std::string shorten(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "...";
}

std::optional<double> bytes_num(std::optional<std::int64_t> b) {
  return b ? std::optional<double>(static_cast<double>(*b)) : std::nullopt;
}

std::vector<ProblemColumn> make_problem_columns() {
  return {
      {"run", "run (model)", [](RP, P p) { return p.run; }, nullptr},
      {"level", "KernelBench level", [](RP, P p) { return std::to_string(p.level); }, [](RP, P p) { return num(p.level); }},
      {"id", "problem id", [](RP, P p) { return std::to_string(p.problem_id); }, [](RP, P p) { return num(p.problem_id); }},
      {"problem", "problem name", [](RP, P p) { return p.problem_name; }, nullptr},
      {"correct/samples", "correct samples of the problem's samples",
       [](RP, P p) { return fmt::format("{}/{}", p.correct_samples, p.samples); },
       [](RP, P p) { return num(p.samples ? static_cast<double>(p.correct_samples) / p.samples : 0); }},
      {"best", "the sample shown: the fastest correct one, else the failure that got furthest",
       [](RP r, P p) { return std::to_string(r.best(p).sample.sample_id); }, nullptr},
      {"outcome", "outcome of the sample shown", [](RP r, P p) { return std::string(outcome_name(r.best(p).verdict.outcome)); }, nullptr},
      {"speedup", "speedup of the sample shown vs the protocol's baseline (median of per-round ratios)",
       [](RP, P p) { return format_speedup(p.speedup); }, [](RP, P p) { return p.speedup; }},
      {"95% CI", "confidence interval of that speedup", [](RP, P p) { return ci_text(p); }, [](RP, P p) { return p.speedup_ci_low; }},
      {"vs compile", "speedup of the sample shown vs torch.compile(Model); empty unless run with --torch-compile",
       [](RP, P p) { return p.compile_speedup ? format_speedup(p.compile_speedup) : ""; }, [](RP, P p) { return p.compile_speedup; }},
      {"kernel ms", "median candidate time", [](RP, P p) { return format_ms(p.candidate_ms); }, [](RP, P p) { return p.candidate_ms; }},
      {"baseline ms", "median baseline time", [](RP, P p) { return format_ms(p.baseline_ms); }, [](RP, P p) { return p.baseline_ms; }},
      {"kernel mem", "candidate device memory: held between calls + peak of one forward",
       [](RP, P p) { return p.candidate_memory_bytes ? format_bytes(*p.candidate_memory_bytes) : "n/a"; },
       [](RP, P p) { return bytes_num(p.candidate_memory_bytes); }},
      {"baseline mem", "baseline device memory: held between calls + peak of one forward",
       [](RP, P p) { return p.baseline_memory_bytes ? format_bytes(*p.baseline_memory_bytes) : "n/a"; },
       [](RP, P p) { return bytes_num(p.baseline_memory_bytes); }},
      {"mem ratio", "baseline / candidate device memory (>1: leaner)",
       [](RP, P p) { return format_speedup(p.memory_ratio); }, [](RP, P p) { return p.memory_ratio; }},
      {"flags", "integrity flags over the problem's samples", [](RP, P p) { return format_flag_counts(p.flag_counts); }, nullptr},
      {"reason", "why the sample shown is not correct", [](RP r, P p) { return shorten(r.best(p).verdict.reason, 160); }, nullptr},
  };
}

using DR = const DecompositionRow&;
using DC = const DecompositionCell&;

std::vector<DecompositionColumn> make_decomposition_columns() {
  return {
      {"run", "run (model)", [](DR r, DC) { return r.run; }, nullptr},
      {"scoring", "protocol choice (correctness inputs + baseline)", [](DR, DC c) { return c.scoring; }, nullptr},
      {"problems", "problems this run has verdicts for under every protocol it ran",
       [](DR r, DC) { return std::to_string(r.problems); }, [](DR r, DC) { return num(r.problems); }},
      {"correct", "share of problems with a correct sample",
       [](DR, DC c) { return c.scores ? format_rate(c.scores->correctness_rate) : "n/a"; },
       [](DR, DC c) { return c.scores ? std::optional<double>(c.scores->correctness_rate) : std::nullopt; }},
      {"Correct Speedup", "geometric mean of the best correct sample's speedup vs this scoring's baseline",
       [](DR, DC c) { return c.scores ? format_speedup(c.scores->correct_speedup) : "n/a"; },
       [](DR, DC c) { return c.scores ? c.scores->correct_speedup : std::nullopt; }},
      {"fast_1", "share of problems correct and strictly faster than the baseline",
       [](DR, DC c) { return c.scores ? format_rate(c.scores->fast(1.0)) : "n/a"; },
       [](DR, DC c) { return c.scores ? c.scores->fast(1.0) : std::nullopt; }},
      {"moved vs standard", "share of problems whose fast_1 differs from the standard scoring",
       [](DR, DC c) { return c.moved ? format_rate(c.moved) : (c.scoring == "standard" ? "-" : "n/a"); },
       [](DR, DC c) { return c.moved; }},
  };
}

std::vector<CostColumn> make_cost_columns() {
  using C = const EvaluationCost&;
  std::vector<CostColumn> cols = {
      {"run", "run (model)", [](C c) { return c.run; }, nullptr},
      {"evaluations", "verdicts of this run, every protocol", [](C c) { return std::to_string(c.evaluations); },
       [](C c) { return num(c.evaluations); }},
      {"worker hours", "sum of the evaluations' wall time", [](C c) { return fmt::format("{:.2f}", c.worker_seconds / 3600); },
       [](C c) { return std::optional<double>(c.worker_seconds / 3600); }},
      {"s per evaluation", "mean wall time of one evaluation (worker start to exit)",
       [](C c) { return c.evaluations ? fmt::format("{:.1f}", c.worker_seconds / c.evaluations) : "n/a"; },
       [](C c) { return c.evaluations ? std::optional<double>(c.worker_seconds / c.evaluations) : std::nullopt; }},
  };
  for (std::string_view g : kStageGroups) {
    std::string group(g);
    auto share = [group](C c) -> std::optional<double> {
      double total = 0;
      for (const auto& [name, seconds] : c.group_seconds) total += seconds;
      auto it = c.group_seconds.find(group);
      if (total <= 0) return std::nullopt;
      return (it == c.group_seconds.end() ? 0.0 : it->second) / total;
    };
    cols.push_back({group, "share of the evaluations' time spent in " + group + " stages (stage_seconds)",
                    [share](C c) { return format_rate(share(c)); }, share});
  }
  return cols;
}

}  // namespace

ListedRows internal_error_rows(const Report& report) {
  ListedRows out{{"run", "level", "id", "sample", "protocol", "reason"}, {}};
  for (std::size_t i : report.internal_errors) {
    const auto& r = report.records[i];
    out.rows.push_back({r.sample.run_name, std::to_string(r.sample.level), std::to_string(r.sample.problem_id),
                        std::to_string(r.sample.sample_id), r.verdict.protocol, shorten(r.verdict.reason, 300)});
  }
  return out;
}

ListedRows unreadable_rows(const Report& report) {
  ListedRows out{{"row id", "run", "level", "id", "sample", "protocol", "error"}, {}};
  for (const auto& u : report.unreadable)
    out.rows.push_back({std::to_string(u.id), u.sample.run_name, std::to_string(u.sample.level),
                        std::to_string(u.sample.problem_id), std::to_string(u.sample.sample_id), u.protocol,
                        shorten(u.error, 300)});
  return out;
}

const std::vector<CostColumn>& cost_columns() {
  static const auto c = make_cost_columns();
  return c;
}

const std::vector<AggregateColumn>& aggregate_columns() {
  static const auto c = make_aggregate_columns();
  return c;
}
const std::vector<ProblemColumn>& problem_columns() {
  static const auto c = make_problem_columns();
  return c;
}
const std::vector<DecompositionColumn>& decomposition_columns() {
  static const auto c = make_decomposition_columns();
  return c;
}

}  // namespace kbv
