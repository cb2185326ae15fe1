#include "report/aggregates.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/protocol.hpp"
#include "core/speed_bound.hpp"
#include "core/stage_group.hpp"
#include "store/result_store.hpp"

namespace kbv {
namespace {

// Failures ranked by how far the candidate got (lower is further): the sample a per-problem
// table shows when no sample is correct.
int failure_rank(Outcome o) {
  switch (o) {
    case Outcome::correct: return 0;
    case Outcome::incorrect: return 1;
    case Outcome::runtime_error: return 2;
    case Outcome::timeout: return 3;
    case Outcome::crashed: return 4;
    case Outcome::compile_error: return 5;
    default: return 6;
  }
}

int protocol_rank(const std::string& p) {
  if (p == "strict") return 0;
  if (p == "verified") return 1;
  if (p == "standard") return 2;
  return 3;
}

bool has_flag(const Verdict& v, const std::string& name) {
  return std::any_of(v.flags.begin(), v.flags.end(), [&](const Flag& f) { return f.name == name; });
}

std::string degenerate_reason(const Verdict& v) {
  for (const auto& f : v.flags)
    if (f.name == "degenerate" && !f.evidence.empty()) return f.evidence;
  return "reference output is constant or matched by a trivial output under every distribution";
}

using ProblemKeyT = std::tuple<int, int>;  // level, problem id

}  // namespace

std::vector<std::string> run_labels(const std::vector<VerdictRecord>& records) {
  auto device_label = [](const Verdict& v) { return v.device.name.empty() ? v.device.kind : v.device.name; };
  std::set<std::string> precisions, devices, sizes;
  for (const auto& r : records) {
    precisions.insert(r.verdict.precision);
    devices.insert(device_fingerprint(r.verdict.device));
    sizes.insert(r.verdict.problem.size);
  }
  std::vector<std::string> labels;
  labels.reserve(records.size());
  for (const auto& r : records) {
    std::vector<std::string> extra;
    if (precisions.size() > 1) extra.push_back(r.verdict.precision);
    if (devices.size() > 1) extra.push_back(device_label(r.verdict));
    if (sizes.size() > 1) extra.push_back(r.verdict.problem.size);
    std::string l = r.sample.run_name;
    for (std::size_t i = 0; i < extra.size(); ++i) l += (i ? ", " : " [") + extra[i];
    if (!extra.empty()) l += "]";
    labels.push_back(std::move(l));
  }
  return labels;
}

std::vector<std::string> protocols_strictest_first(const std::vector<VerdictRecord>& records) {
  std::set<std::string> present;
  for (const auto& r : records) present.insert(r.verdict.protocol);
  std::vector<std::string> out(present.begin(), present.end());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::make_tuple(protocol_rank(a), a) < std::make_tuple(protocol_rank(b), b);
  });
  return out;
}

std::optional<double> geomean(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) {
      sum += std::log(v);
      ++n;
    }
  if (n == 0) return std::nullopt;
  return std::exp(sum / n);
}

const std::vector<Scoring>& decomposition_scorings() {
  static const std::vector<Scoring> k{
      {"standard", "standard", "eager_tf32_off", "KernelBench: get_inputs() trials, baseline TF32 off"},
      {"standard+TF32 baseline", "standard", "eager_tf32_on",
       "standard correctness, speedup vs the TF32-on baseline: the baseline choice alone"},
      {"standard+hidden inputs", "verified", "eager_tf32_off",
       "verified's four distributions, speedup vs the TF32-off baseline: the hidden inputs alone"},
      {"verified", "verified", "eager_tf32_on", "KernelBench-Verified: four distributions, baseline TF32 on"},
      {"strict", "strict", "eager_tf32_on", "kbv: secret seeds, fresh draws, re-initialised parameters, integrity checks"},
  };
  return k;
}

ProblemScore score_problem(const std::vector<VerdictRecord>& records, const std::vector<std::size_t>& samples,
                           const std::string& baseline) {
  ProblemScore p;
  if (samples.empty()) return p;
  const auto& first = records[samples.front()];
  p.level = first.sample.level;
  p.problem_id = first.sample.problem_id;
  p.problem_name = first.verdict.problem.name;
  std::optional<std::size_t> best_correct;
  std::optional<double> best_speedup;
  std::optional<std::size_t> best_failure;
  for (auto i : samples) {
    const auto& r = records[i];
    const auto& v = r.verdict;
    ++p.samples;
    if (p.problem_name.empty()) p.problem_name = v.problem.name;
    if (verdict_compiled(v)) ++p.compiled_samples;
    std::set<std::string> flags;
    for (const auto& f : v.flags) flags.insert(f.name);
    for (const auto& f : flags) ++p.flag_counts[f];
    if (v.outcome == Outcome::correct) {
      ++p.correct_samples;
      const auto* s = verdict_speedup(v, baseline.empty() ? verdict_headline_baseline(v) : baseline);
      std::optional<double> sp = s ? std::optional<double>(s->median) : std::nullopt;
      bool better = !best_correct ||
                    (sp && (!best_speedup || *sp > *best_speedup)) ||
                    (sp && best_speedup && *sp == *best_speedup && r.sample.sample_id < records[*best_correct].sample.sample_id) ||
                    (!sp && !best_speedup && r.sample.sample_id < records[*best_correct].sample.sample_id);
      if (better) {
        best_correct = i;
        best_speedup = sp;
      }
    } else {
      bool better = !best_failure || failure_rank(v.outcome) < failure_rank(records[*best_failure].verdict.outcome) ||
                    (failure_rank(v.outcome) == failure_rank(records[*best_failure].verdict.outcome) &&
                     r.sample.sample_id < records[*best_failure].sample.sample_id);
      if (better) best_failure = i;
    }
  }
  p.compiled = p.compiled_samples > 0;
  p.correct = p.correct_samples > 0;
  p.best = best_correct ? *best_correct : *best_failure;
  const auto& v = records[p.best].verdict;
  std::string b = baseline.empty() ? verdict_headline_baseline(v) : baseline;
  if (const auto* cand = verdict_series(v, "candidate")) p.candidate_ms = cand->median_ms;
  if (const auto* base = verdict_series(v, b)) p.baseline_ms = base->median_ms;
  // A speedup that rests on the timer's floor (half the candidate's samples or more credited the
  // floor: its time is below what timing across processes resolves, or its work ran where the
  // window did not see it) is no figure: the problem is correct, never fast, and left out of the
  // speedup average (the verdict says UNSURE, never FASTER).
  const auto* cand_series = verdict_series(v, "candidate");
  p.speedup_on_floor = p.correct && v.timing && cand_series &&
                       rests_on_floor(v.timing->floor_samples, static_cast<std::size_t>(cand_series->samples));
  // Likewise a CPU timing on a contended host (or one whose contention was never read): its
  // ratio says nothing either way.
  p.timed_contended = p.correct && v.timing && cpu_timing_unreliable(*v.timing);
  if (p.correct) {
    if (const auto* s = p.speedup_on_floor || p.timed_contended ? nullptr : verdict_speedup(v, b)) {
      p.speedup = s->median;
      p.speedup_ci_low = s->ci_low;
      p.speedup_ci_high = s->ci_high;
    }
    if (const auto* s = verdict_speedup(v, baseline_name(BaselineKind::torch_compile))) p.compile_speedup = s->median;
    if (v.memory) {
      p.candidate_memory_bytes = v.memory->candidate.footprint_bytes();
      p.baseline_memory_bytes = v.memory->baseline.footprint_bytes();
      auto c = *p.candidate_memory_bytes, bb = *p.baseline_memory_bytes;
      if (c == 0 && bb == 0) p.memory_ratio = 1.0;
      else if (c > 0 && bb > 0) p.memory_ratio = static_cast<double>(bb) / static_cast<double>(c);
    }
  }
  return p;
}

std::optional<double> Aggregate::fast(double p) const {
  for (const auto& [threshold, share] : fast_p)
    if (threshold == p) return share;
  return std::nullopt;
}

Aggregate aggregate_problems(const std::string& run, int level, const std::vector<const ProblemScore*>& problems) {
  Aggregate a;
  a.run = run;
  a.level = level;
  a.problems = static_cast<int>(problems.size());
  std::vector<double> speedups, memory;
  int efficient = 0, increase = 0;
  for (const auto* p : problems) {
    a.samples += p->samples;
    a.compiled += p->compiled;
    a.correct += p->correct;
    for (const auto& [f, n] : p->flag_counts) a.flag_counts[f] += n;
    if (!p->correct) continue;
    if (p->speedup) {
      ++a.timed_correct;
      speedups.push_back(*p->speedup);
    }
    if (p->candidate_memory_bytes && p->baseline_memory_bytes) {
      ++a.memory_measured;
      efficient += *p->candidate_memory_bytes < *p->baseline_memory_bytes;
      increase += *p->candidate_memory_bytes > *p->baseline_memory_bytes;
      if (p->memory_ratio) memory.push_back(*p->memory_ratio);
    }
  }
  double n = a.problems > 0 ? a.problems : 1;
  a.compile_rate = a.compiled / n;
  a.correctness_rate = a.correct / n;
  a.correct_speedup = geomean(speedups);
  for (double p : kFastPThresholds) {
    int count = 0;
    bool known = true;
    for (const auto* ps : problems) {
      auto f = ps->fast(p);
      known = known && f.has_value();
      count += f.value_or(false);
    }
    a.fast_p.emplace_back(p, known ? std::optional<double>(a.problems > 0 ? count / n : 0.0) : std::nullopt);
  }
  a.memory_efficiency = geomean(memory);
  if (a.memory_measured > 0) {
    a.memory_efficient_share = static_cast<double>(efficient) / a.memory_measured;
    a.memory_increase_share = static_cast<double>(increase) / a.memory_measured;
  }
  return a;
}

Report build_report(std::vector<VerdictRecord> records, const ReportOptions& options) {
  Report report;
  report.source = options.source;
  report.generated_at = utc_now_iso();

  // Current version of each protocol; older versions are noted and left out.
  std::map<std::string, int> latest;
  for (const auto& r : records) latest[r.verdict.protocol] = std::max(latest[r.verdict.protocol], r.verdict.protocol_version);
  std::map<std::string, int> older;
  std::vector<VerdictRecord> kept;
  kept.reserve(records.size());
  for (auto& r : records) {
    if (r.verdict.protocol_version != latest[r.verdict.protocol]) {
      ++older[r.verdict.protocol];
      continue;
    }
    kept.push_back(std::move(r));
  }
  report.records = std::move(kept);
  const auto& recs = report.records;
  report.notes.insert(report.notes.end(), options.notes.begin(), options.notes.end());
  report.unreadable = options.unreadable;
  if (!report.unreadable.empty())
    report.notes.push_back(fmt::format("{} row(s) of the DB could not be read and are left out (listed under Unreadable rows)",
                                       report.unreadable.size()));
  for (const auto& [p, n] : older)
    report.notes.push_back(fmt::format("{} verdict(s) under an older version of protocol {} left out (v{} is current)", n, p,
                                       latest[p]));

  report.protocols = protocols_strictest_first(report.records);
  if (!options.protocol.empty()) {
    if (!latest.count(options.protocol)) {
      std::string present;
      for (const auto& p : report.protocols) present += (present.empty() ? "" : ", ") + p;
      throw UsageError(fmt::format("no verdicts under protocol '{}' in {}; present: {}", options.protocol,
                                   options.source.empty() ? "the results DB" : options.source,
                                   present.empty() ? "none" : present));
    }
    report.protocol = options.protocol;
  } else if (!report.protocols.empty()) {
    report.protocol = report.protocols.front();
  }
  report.protocol_version = report.protocol.empty() ? 0 : latest[report.protocol];

  std::set<std::string> precisions, devices, device_names;
  for (const auto& r : recs) {
    precisions.insert(r.verdict.precision);
    devices.insert(device_fingerprint(r.verdict.device));
    device_names.insert(r.verdict.device.name.empty() ? r.verdict.device.kind : r.verdict.device.name);
  }
  report.devices.assign(device_names.begin(), device_names.end());
  std::vector<std::string> labels = run_labels(recs);
  std::set<std::string> run_set(labels.begin(), labels.end());
  report.runs.assign(run_set.begin(), run_set.end());
  {
    std::map<std::string, EvaluationCost> costs;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      auto& c = costs[labels[i]];
      c.run = labels[i];
      ++c.evaluations;
      c.worker_seconds += recs[i].verdict.wall_seconds;
      add_stage_groups(recs[i].verdict.stage_seconds, c.group_seconds);
    }
    for (auto& [run, c] : costs) report.costs.push_back(std::move(c));
  }

  // Problems left out of every aggregate. Degeneracy depends on the distributions: ReLU is
  // degenerate under standard's and verified's draws (the input or zeros pass them all) but not
  // under strict's mixed-sign ones. So a problem is left out when strict found it degenerate, or,
  // without strict verdicts, when every protocol present did; otherwise it stays, with a note.
  std::map<ProblemKeyT, ExcludedProblem> excluded;
  std::map<ProblemKeyT, std::set<std::string>> present, degenerate_in;
  std::map<ProblemKeyT, ExcludedProblem> degenerate_first;
  for (const auto& r : recs) {
    ProblemKeyT k{r.sample.level, r.sample.problem_id};
    const auto& v = r.verdict;
    present[k].insert(v.protocol);
    if (has_flag(v, "degenerate")) {
      degenerate_in[k].insert(v.protocol);
      auto& e = degenerate_first[k];
      if (e.kind.empty() || v.protocol == "strict")
        e = {r.sample.level, r.sample.problem_id, v.problem.name, "degenerate", degenerate_reason(v)};
    }
  }
  for (const auto& [k, protocols] : degenerate_in) {
    bool strict_says = protocols.count("strict") > 0;
    bool all_say = !present[k].count("strict") && protocols == present[k];
    if (strict_says || all_say) {
      excluded[k] = degenerate_first[k];
    } else {
      std::string list;
      for (const auto& p : protocols) list += (list.empty() ? "" : ", ") + p;
      report.notes.push_back(fmt::format("level {} problem {} ({}) is degenerate under {} (a trivial output passes all their "
                                         "distributions) but not under the others; it is kept",
                                         std::get<0>(k), std::get<1>(k), degenerate_first[k].problem_name, list));
    }
  }
  // A problem is left out when no candidate got past it (every verdict of it a problem_error): it
  // is then the problem that is broken. A problem_error beside other verdicts of the same problem
  // is that one evaluation's failure (its candidate may have caused it, e.g. by holding the
  // device's memory) and counts against that candidate; one candidate cannot remove a problem
  // from everyone's figures.
  std::map<ProblemKeyT, std::pair<int, int>> problem_errors;  // (problem_error verdicts, all verdicts)
  std::map<ProblemKeyT, const VerdictRecord*> first_error;
  for (const auto& r : recs) {
    ProblemKeyT k{r.sample.level, r.sample.problem_id};
    if (r.verdict.outcome == Outcome::skipped || r.verdict.outcome == Outcome::internal_error) continue;
    auto& [errors, all] = problem_errors[k];
    ++all;
    if (r.verdict.outcome == Outcome::problem_error) {
      ++errors;
      if (!first_error.count(k)) first_error[k] = &r;
    }
  }
  for (const auto& [k, counts] : problem_errors)
    if (counts.first > 0 && counts.first == counts.second && !excluded.count(k)) {
      const auto& r = *first_error[k];
      excluded[k] = {r.sample.level, r.sample.problem_id, r.verdict.problem.name, "problem_error", r.verdict.reason};
    }
  for (const auto& [k, e] : excluded) report.excluded.push_back(e);

  // Samples grouped by (protocol, run label, problem), skipped ones left out.
  using GroupKey = std::tuple<std::string, std::string, int, int>;
  std::map<GroupKey, std::vector<std::size_t>> groups;
  std::map<std::string, int> skipped;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    if (excluded.count({r.sample.level, r.sample.problem_id})) continue;
    if (r.verdict.outcome == Outcome::skipped) {
      ++skipped[r.verdict.protocol];
      continue;
    }
    if (r.verdict.outcome == Outcome::internal_error) {
      report.internal_errors.push_back(i);
      continue;
    }
    groups[{r.verdict.protocol, labels[i], r.sample.level, r.sample.problem_id}].push_back(i);
  }
  for (const auto& [p, n] : skipped)
    report.notes.push_back(fmt::format("{} sample(s) under {} were skipped (not evaluated, e.g. a CUDA-only candidate on the CPU) and are not counted",
                                       n, p));
  if (!report.internal_errors.empty())
    report.notes.push_back(fmt::format("{} verdict(s) are kbv's own internal errors, not the candidates' results: they count "
                                       "in no figure (listed under Internal errors); the next kbv run evaluates them again",
                                       report.internal_errors.size()));
  if (devices.size() > 1) report.notes.push_back("verdicts come from more than one device; runs are labelled by device");
  if (precisions.size() > 1) report.notes.push_back("verdicts use more than one precision; runs are labelled by precision");

  if (groups.empty() && !recs.empty()) {
    std::size_t cuda = 0, other_skips = 0;
    for (const auto& r : recs)
      if (r.verdict.outcome == Outcome::skipped) {
        if (r.verdict.reason.rfind("candidate needs CUDA", 0) == 0) ++cuda;
        else ++other_skips;
      }
    std::vector<std::string> parts;
    if (cuda) parts.push_back(fmt::format("{} skipped: CUDA candidates need a GPU, and the run had none", cuda));
    if (other_skips) parts.push_back(fmt::format("{} skipped for another reason", other_skips));
    if (!report.internal_errors.empty())
      parts.push_back(fmt::format("{} internal_error (kbv's own fault), the first: {}", report.internal_errors.size(),
                                  recs[report.internal_errors.front()].verdict.reason));
    if (!excluded.empty()) parts.push_back(fmt::format("{} problem(s) excluded", excluded.size()));
    report.nothing_judged = fmt::format("Nothing was judged: none of the {} verdict(s) in this DB says anything about a "
                                        "kernel ({}). The tables would be empty and are left out.",
                                        recs.size(), fmt::join(parts, "; "));
  }

  // Headline: the chosen protocol, its own baseline.
  if (!report.protocol.empty()) {
    for (const auto& [k, idx] : groups) {
      if (std::get<0>(k) != report.protocol) continue;
      auto score = score_problem(recs, idx, "");
      score.run = std::get<1>(k);
      report.problems.push_back(std::move(score));
    }
    if (!report.problems.empty()) report.baseline = verdict_headline_baseline(report.best(report.problems.front()).verdict);
    for (const auto& run : report.runs) {
      std::vector<const ProblemScore*> all;
      std::map<int, std::vector<const ProblemScore*>> by_level;
      for (const auto& p : report.problems)
        if (p.run == run) {
          all.push_back(&p);
          by_level[p.level].push_back(&p);
        }
      if (all.empty()) continue;
      report.overall.push_back(aggregate_problems(run, 0, all));
      for (const auto& [level, ps] : by_level) report.per_level.push_back(aggregate_problems(run, level, ps));
    }
  }

  // Decomposition: the same problems under each scoring whose protocol is present.
  for (const auto& s : decomposition_scorings())
    if (latest.count(s.protocol)) report.scorings.push_back(s);
  for (const auto& run : report.runs) {
    std::map<std::string, std::set<ProblemKeyT>> by_protocol;
    for (const auto& [k, idx] : groups)
      if (std::get<1>(k) == run) by_protocol[std::get<0>(k)].insert({std::get<2>(k), std::get<3>(k)});
    if (by_protocol.empty()) continue;
    std::set<ProblemKeyT> common = by_protocol.begin()->second;
    for (const auto& [p, set] : by_protocol) {
      std::set<ProblemKeyT> both;
      std::set_intersection(common.begin(), common.end(), set.begin(), set.end(), std::inserter(both, both.end()));
      common = std::move(both);
    }
    DecompositionRow row;
    row.run = run;
    row.problems = static_cast<int>(common.size());
    std::optional<std::map<ProblemKeyT, std::optional<bool>>> standard_fast1;
    for (const auto& s : report.scorings) {
      DecompositionCell cell;
      cell.scoring = s.name;
      if (by_protocol.count(s.protocol) && !common.empty()) {
        std::vector<ProblemScore> scores;
        for (const auto& pk : common)
          scores.push_back(score_problem(recs, groups.at({s.protocol, run, std::get<0>(pk), std::get<1>(pk)}), s.baseline));
        std::vector<const ProblemScore*> ptrs;
        std::map<ProblemKeyT, std::optional<bool>> fast1;
        for (const auto& sc : scores) {
          ptrs.push_back(&sc);
          fast1[{sc.level, sc.problem_id}] = sc.fast(1.0);
        }
        cell.scores = aggregate_problems(run, 0, ptrs);
        if (s.name == "standard") standard_fast1 = fast1;
        else if (standard_fast1) {
          int moved = 0;
          bool known = true;
          for (const auto& [pk, f] : fast1) {
            const auto& before = standard_fast1->at(pk);
            known = known && f && before;
            moved += f && before && *f != *before;
          }
          if (known) cell.moved = static_cast<double>(moved) / static_cast<double>(fast1.size());
        }
      }
      row.cells.push_back(std::move(cell));
    }
    report.decomposition.push_back(std::move(row));
  }
  return report;
}

}  // namespace kbv
