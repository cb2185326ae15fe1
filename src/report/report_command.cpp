#include "report/report_command.hpp"

#include <cstdio>
#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "report/aggregates.hpp"
#include "report/csv_printer.hpp"
#include "report/eval_results_export.hpp"
#include "report/html_printer.hpp"
#include "report/json_printer.hpp"
#include "report/markdown_printer.hpp"
#include "store/result_store.hpp"
#include "store/verdict_spill.hpp"

namespace kbv {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError("cannot write '" + path + "': check that its folder exists and is writable");
  out << text;
  if (!out) throw UsageError("cannot write '" + path + "' (disk full?)");
}

}  // namespace

int run_report_command(const ReportCommand& cmd, std::ostream& out) {
  if (cmd.fields) {
    out << result_fields_markdown();
    return 0;
  }
  if (cmd.db.empty()) throw UsageError("--db FILE is required: the results DB that `kbv run` wrote");
  ResultStore store(cmd.db, ResultStore::Mode::read_only);
  VerdictQuery query;
  query.keep_samples = false;  // the report uses summaries only; the raw samples stay in the DB
  ReportOptions options{cmd.protocol, cmd.db, {}, {}};
  auto records = store.verdicts(query, &options.unreadable);
  if (!store.open_note().empty()) options.notes.push_back(store.open_note());
  for (const auto& spill : pending_spills(cmd.db, cmd.spill_fallback_dir))
    options.notes.push_back(fmt::format("{} holds verdicts a kbv run could not write to this DB (it failed mid-run); they "
                                        "are not in this report until the next kbv run on the DB imports them",
                                        spill));
  for (const auto& u : options.unreadable)
    std::fprintf(stderr, "kbv report: skipped row %lld (%s L%d P%d S%d %s): %s\n", static_cast<long long>(u.id),
                 u.sample.run_name.c_str(), u.sample.level, u.sample.problem_id, u.sample.sample_id, u.protocol.c_str(),
                 u.error.c_str());
  if (!cmd.csv.empty()) {
    if (cmd.protocol.empty()) {
      write_file(cmd.csv, render_csv(records));
    } else {
      std::vector<VerdictRecord> selected;
      for (const auto& r : records)
        if (r.verdict.protocol == cmd.protocol) selected.push_back(r);
      write_file(cmd.csv, render_csv(selected));
    }
  }
  Report report = build_report(std::move(records), options);
  std::string md = render_markdown(report);
  if (!cmd.md.empty()) write_file(cmd.md, md);
  else if (!cmd.quiet) out << md;
  if (!cmd.html.empty()) write_file(cmd.html, render_html(report));
  if (!cmd.json.empty()) write_file(cmd.json, render_json(report));
  return 0;
}

int run_export_command(const ExportCommand& cmd, std::ostream& out) {
  if (cmd.db.empty()) throw UsageError("--db FILE is required: the results DB that `kbv run` wrote");
  if (cmd.out.empty()) throw UsageError("--out DIR is required: where <run>/eval_results.json are written (e.g. your runs/ folder)");
  ExportOptions options{export_format_from_name(cmd.format), cmd.protocol};
  if (cmd.level < 0) throw UsageError(fmt::format("--level {}: write a level number (1, 2, 3...)", cmd.level));
  if (cmd.level > 0) options.level = cmd.level;
  options.force = cmd.force;
  ResultStore store(cmd.db, ResultStore::Mode::read_only);
  std::vector<UnreadableRow> unreadable;
  auto result = export_eval_results(store.verdicts({}, &unreadable), cmd.out, options);
  if (!store.open_note().empty()) out << "kbv export: note: " << store.open_note() << "\n";
  for (const auto& u : unreadable)
    out << fmt::format("kbv export: skipped row {} ({} L{} P{} S{} {}): {}\n", u.id, u.sample.run_name, u.sample.level,
                       u.sample.problem_id, u.sample.sample_id, u.protocol, u.error);
  out << fmt::format("kbv export ({}): eval_results.json from {} v{}", cmd.format, result.protocol, result.protocol_version);
  if (!result.hidden_protocol.empty())
    out << fmt::format(", eval_results_hidden.json from {} v{}", result.hidden_protocol, result.hidden_protocol_version);
  out << fmt::format("; wrote {} file(s) under {}\n", result.files.size(), cmd.out);
  out << fmt::format("  {} sample row(s) written", result.rows);
  if (result.left_out > 0)
    out << fmt::format("; {} verdict(s) left out, as KernelBench writes no row for them: skipped, internal_error, "
                       "problem_error",
                       result.left_out);
  out << "\n";
  if (result.left_out_cuda > 0)
    out << fmt::format("  {} of them skipped: CUDA candidates need a GPU (evaluate them on a machine with one)\n",
                       result.left_out_cuda);
  if (result.rows == 0)
    out << "kbv export: WARNING: the files hold no sample: nothing in the DB was judged under this protocol\n";
  for (const auto& f : result.files) out << "  " << f << "\n";
  return 0;
}

}  // namespace kbv
