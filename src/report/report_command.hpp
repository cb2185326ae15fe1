#pragma once
// `kbv report` and `kbv export`: read the results store, print or write. The CLI only parses
// flags into these structs (apps/kbv/main.cpp).
#include <iosfwd>
#include <string>

namespace kbv {

struct ReportCommand {
  std::string db;        // results DB (required unless fields)
  std::string md;        // Markdown file; "" = stdout
  std::string html;      // self-contained HTML file
  std::string csv;       // one row per verdict, columns = result fields
  std::string json;      // the report as JSON (kbv.report/1)
  std::string protocol;  // headline protocol; "" = strictest present
  bool fields = false;   // print the result-field table (docs/store.md) and exit
  bool quiet = false;    // no Markdown on stdout
  std::string spill_fallback_dir;  // where kbv run may have spilled verdicts besides <db>.spill.jsonl
};

struct ExportCommand {
  std::string db;
  std::string out;       // writes out/<run>/eval_results.json (eval_results_export.hpp)
  std::string protocol;  // "" = the format's default
  std::string format = "kernelbench";  // or "kernelbench-verified" (adds eval_results_hidden.json)
  int level = 0;         // --level L: only this level (0: all; a run of several levels needs one)
  bool force = false;    // --force: replace result files kbv did not write
};

// Return the process exit code; throw UsageError / StoreError for the CLI to print.
int run_report_command(const ReportCommand& cmd, std::ostream& out);
int run_export_command(const ExportCommand& cmd, std::ostream& out);

}  // namespace kbv
