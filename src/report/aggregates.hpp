#pragma once
// The numbers of a report, computed once from stored verdicts; the Markdown, HTML, CSV and JSON
// printers only format them. Definitions (SPEC "Aggregates", docs/report.md):
//  - a problem's result is best-of-k over its samples: compiled if any sample compiled, correct
//    if any is correct, and its speedup is that of its fastest correct sample;
//  - Correct Speedup: geometric mean of those speedups over correct problems;
//  - fast_p: share of problems with a correct sample whose speedup is strictly greater than p
//    (fast_0 is the correctness rate); n/a for p > 0 when a correct problem has no speedup (its
//    baseline was not timed), since whether it is faster is not known;
//  - Mem Efficiency: geometric mean of baseline/candidate peak device memory over correct
//    problems; Mem Efficient %: share of them with strictly less memory; "increase": strictly more;
//  - problems with a `degenerate` flag or a `problem_error` are left out and listed;
//  - `internal_error` verdicts (kbv's own fault) and `skipped` ones are not the candidate's
//    result: they count nowhere; internal errors are listed, and a re-run evaluates them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/result_fields.hpp"
#include "store/result_store.hpp"

namespace kbv {

inline const std::vector<double> kFastPThresholds = {0, 0.5, 0.8, 1, 1.5, 2};

// Geometric mean of positive values; nullopt when there are none (non-positive values skipped).
std::optional<double> geomean(const std::vector<double>& values);

// How verdicts are scored: correctness from `protocol`'s verdicts, speedup against `baseline`.
struct Scoring {
  std::string name;         // "standard", "standard+TF32 baseline", ...
  std::string protocol;
  std::string baseline;     // a series name; "" = each verdict's headline baseline
  std::string description;
};
// The decomposition's scorings, in order: standard, standard+TF32 baseline, standard+hidden
// inputs, verified, strict.
const std::vector<Scoring>& decomposition_scorings();

// The best-of-k result of one problem for one run under one scoring.
struct ProblemScore {
  std::string run;          // run label (run name, plus precision/device/size when those vary)
  int level = 0;
  int problem_id = -1;
  std::string problem_name;
  int samples = 0;
  int compiled_samples = 0;
  int correct_samples = 0;
  bool compiled = false;
  bool correct = false;
  std::size_t best = 0;     // index into the records: the fastest correct sample, else the failure that got furthest
  std::optional<double> speedup;  // of the best sample vs the scoring's baseline (correct problems only)
  std::optional<double> speedup_ci_low;
  std::optional<double> speedup_ci_high;
  std::optional<double> compile_speedup;  // of the best sample vs torch.compile(Model), where it was timed
  std::optional<double> candidate_ms;
  std::optional<double> baseline_ms;
  std::optional<std::int64_t> candidate_memory_bytes;  // MemoryUse::footprint_bytes()
  std::optional<std::int64_t> baseline_memory_bytes;
  std::optional<double> memory_ratio;  // baseline / candidate; nullopt when one side is 0 or unmeasured
  std::map<std::string, int> flag_counts;  // flag name -> samples carrying it

  // Correct, but its speedup rests on the timer's floor (score_problem): no figure, and never fast.
  bool speedup_on_floor = false;
  // Correct, timed on the CPU while the host's cores were contended: no figure, and never fast.
  bool timed_contended = false;

  // Known unless the problem is correct and has no speedup against the scoring's baseline.
  std::optional<bool> fast(double p) const {
    if (p <= 0 || !correct) return correct;
    if (speedup_on_floor || timed_contended) return false;
    if (!speedup) return std::nullopt;
    return *speedup > p;
  }
};

// Scores one problem from the indices of its samples (all the same run, problem and protocol).
// `baseline` "" takes each verdict's headline baseline.
ProblemScore score_problem(const std::vector<VerdictRecord>& records, const std::vector<std::size_t>& samples,
                           const std::string& baseline);

struct Aggregate {
  std::string run;
  int level = 0;  // 0: all levels
  int problems = 0;
  int samples = 0;
  int compiled = 0;       // problems with a compiled sample
  int correct = 0;        // problems with a correct sample
  int timed_correct = 0;  // correct problems with a speedup
  double compile_rate = 0;
  double correctness_rate = 0;
  std::optional<double> correct_speedup;
  // (p, share), p in kFastPThresholds; share nullopt when a correct problem's speed is unknown.
  std::vector<std::pair<double, std::optional<double>>> fast_p;
  int memory_measured = 0;                         // correct problems with both peaks measured
  std::optional<double> memory_efficiency;
  std::optional<double> memory_efficient_share;    // candidate strictly less
  std::optional<double> memory_increase_share;     // candidate strictly more
  std::map<std::string, int> flag_counts;

  std::optional<double> fast(double p) const;
};

Aggregate aggregate_problems(const std::string& run, int level, const std::vector<const ProblemScore*>& problems);

struct ExcludedProblem {
  int level = 0;
  int problem_id = -1;
  std::string problem_name;
  std::string kind;    // "degenerate" or "problem_error"
  std::string reason;
};

struct DecompositionCell {
  std::string scoring;
  std::optional<Aggregate> scores;  // nullopt: this run has no verdicts under the scoring's protocol
  // Share of problems whose fast_1 differs from "standard"; nullopt when either side's fast_1 is
  // unknown for some problem (a baseline that was not timed).
  std::optional<double> moved;
};

struct DecompositionRow {
  std::string run;
  int problems = 0;  // problems this run has verdicts for under every protocol it was run under
  std::vector<DecompositionCell> cells;  // one per Report::scorings
};

// What evaluating a run cost: worker wall time over every verdict of the run (all protocols),
// by stage group (core/stage_group.hpp). Verdicts written before stage_seconds existed count in
// `evaluations` and `worker_seconds` only.
struct EvaluationCost {
  std::string run;
  int evaluations = 0;
  double worker_seconds = 0;                   // sum of wall_seconds
  std::map<std::string, double> group_seconds;  // stage group -> seconds
};

struct ReportOptions {
  std::string protocol;  // headline protocol; "" picks the strictest present (strict, verified, standard)
  std::string source;    // shown in the header (the DB path)
  std::vector<UnreadableRow> unreadable;  // rows the store could not read: named in the report
  std::vector<std::string> notes;         // from the caller (how the DB was opened, pending spill files)
};

struct Report {
  std::string source;
  std::string generated_at;
  std::string protocol;       // headline protocol and version
  int protocol_version = 0;
  std::string baseline;       // its headline baseline
  std::vector<std::string> protocols;  // present (current versions), strictest first
  std::vector<std::string> runs;       // labels, sorted
  std::vector<std::string> devices;
  std::vector<std::string> notes;      // what a reader must know (mixed versions, skipped samples)
  // Set when the DB holds verdicts but none says anything about a kernel (all skipped or kbv's
  // internal errors): the printers show it as a banner instead of empty tables.
  std::string nothing_judged;
  std::vector<Aggregate> overall;      // per run, headline protocol
  std::vector<Aggregate> per_level;    // per run and level, headline protocol
  std::vector<Scoring> scorings;       // decomposition columns (protocol present in the DB)
  std::vector<DecompositionRow> decomposition;
  std::vector<ProblemScore> problems;  // per run and problem, headline protocol
  std::vector<ExcludedProblem> excluded;
  std::vector<EvaluationCost> costs;   // per run
  std::vector<VerdictRecord> records;  // every verdict considered; ProblemScore::best indexes it
  std::vector<std::size_t> internal_errors;  // indices into records: kbv's own failures, counted nowhere
  std::vector<UnreadableRow> unreadable;     // rows of the DB that could not be read, skipped

  const VerdictRecord& best(const ProblemScore& p) const { return records[p.best]; }
};

// Throws UsageError when options.protocol has no verdicts.
Report build_report(std::vector<VerdictRecord> records, const ReportOptions& options);

// The run label of each record: its run name, plus "[precision, device, size]" for whichever of
// those vary among `records` (so best-of-k never mixes them). Same order as `records`.
std::vector<std::string> run_labels(const std::vector<VerdictRecord>& records);
// Protocols present, strictest first (strict, verified, standard, then others by name).
std::vector<std::string> protocols_strictest_first(const std::vector<VerdictRecord>& records);

}  // namespace kbv
