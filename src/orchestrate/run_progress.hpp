#pragma once
// kbv run's progress on stderr: one rewritten line on a terminal, a line per finished job
// otherwise. Safe to call from the builder and evaluator threads.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace kbv {

// The progress line fitted to a terminal `columns` wide (one column left free, so the cursor
// never wraps): the counters stay whole, the description loses its start ("..." marks the cut;
// its end, the file name, says most).
std::string fit_progress_line(const std::string& counters, const std::string& what, std::size_t columns);

// The width of the terminal on stderr, else $COLUMNS, else 80.
std::size_t terminal_columns();

class RunProgress {
 public:
  RunProgress(std::size_t builds, std::size_t evals, bool quiet);

  void built(const std::string& what);
  void evaluated(const std::string& what);
  void finish();  // ends the rewritten line

 private:
  void update(std::size_t built, std::size_t done, const std::string& what);

  std::size_t builds_, evals_;
  std::size_t built_ = 0, done_ = 0;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

}  // namespace kbv
