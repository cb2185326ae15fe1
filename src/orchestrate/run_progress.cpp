#include "orchestrate/run_progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace kbv {

std::string fit_progress_line(const std::string& counters, const std::string& what, std::size_t columns) {
  const std::size_t room = columns > 1 ? columns - 1 : 0;
  if (counters.size() >= room) return counters.substr(0, room);
  std::string line = counters + "  " + what;
  if (line.size() <= room) return line;
  const std::size_t keep = room > counters.size() + 5 ? room - counters.size() - 5 : 0;  // "  ..."
  std::size_t from = what.size() - keep;
  while (from < what.size() && (static_cast<unsigned char>(what[from]) & 0xC0) == 0x80) ++from;  // whole UTF-8 characters
  return counters + "  ..." + what.substr(from);
}

std::size_t terminal_columns() {
  winsize ws{};
  if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* env = std::getenv("COLUMNS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n > 0 && n < 10000) return static_cast<std::size_t>(n);
  }
  return 80;
}

RunProgress::RunProgress(std::size_t builds, std::size_t evals, bool quiet)
    : builds_(builds), evals_(evals), quiet_(quiet), tty_(::isatty(2)), start_(std::chrono::steady_clock::now()) {}

void RunProgress::built(const std::string& what) {
  std::size_t built, done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    built = ++built_;
    done = done_;
  }
  update(built, done, what);
}

void RunProgress::evaluated(const std::string& what) {
  std::size_t built, done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    built = built_;
    done = ++done_;
  }
  update(built, done, what);
}

void RunProgress::finish() {
  if (tty_ && !quiet_) std::fputs("\n", stderr);
}

void RunProgress::update(std::size_t built, std::size_t done, const std::string& what) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = "-";
  if (done > 0 && evals_ > done) {
    double left = elapsed / static_cast<double>(done) * static_cast<double>(evals_ - done);
    eta = fmt::format("{}m{:02}s", static_cast<int>(left) / 60, static_cast<int>(left) % 60);
  }
  std::string counters = fmt::format("[build {}/{}] [eval {}/{}] {:.1f} eval/min, ETA {}", built, builds_, done, evals_,
                                     elapsed > 0 ? static_cast<double>(done) * 60.0 / elapsed : 0.0, eta);
  if (tty_) {
    // Fitted on every update: a line longer than the terminal wraps, and "\r" then rewrites
    // only its last row, leaving a trail of stale rows.
    std::fprintf(stderr, "\r\033[K%s", fit_progress_line(counters, what, terminal_columns()).c_str());
  } else {
    std::fprintf(stderr, "%s  %s\n", counters.c_str(), what.c_str());
  }
  std::fflush(stderr);
}

}  // namespace kbv
