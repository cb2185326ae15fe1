#include "orchestrate/run_progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace kbv {

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
  std::string line = fmt::format("[build {}/{}] [eval {}/{}] {:.1f} eval/min, ETA {}  {}", built, builds_, done, evals_,
                                 elapsed > 0 ? static_cast<double>(done) * 60.0 / elapsed : 0.0, eta, what);
  if (tty_) {
    if (line.size() > 150) line = line.substr(0, 150);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace kbv
