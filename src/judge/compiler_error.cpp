#include "judge/compiler_error.hpp"

#include <cctype>

namespace kbv::judge {
namespace {

// A diagnostic line: "error:" or "fatal:" (gcc, nvcc; ptxas pads them: "error   :"), not a
// warning that quotes a name "error" nor -Werror=... on a command line; or the linker's. A plain
// scan, not std::regex: the log is the candidate's to fill, and libstdc++'s regex recurses per
// character on long runs.
bool is_diagnostic(std::string_view line) {
  if (line.find("undefined reference") != std::string_view::npos || line.find("cannot find -l") != std::string_view::npos) return true;
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::string_view word : {std::string_view("error"), std::string_view("fatal")}) {
    for (auto at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
      if (at > 0 && word_char(line[at - 1])) continue;
      auto after = line.find_first_not_of(' ', at + word.size());
      if (after != std::string_view::npos && line[after] == ':') return true;
    }
  }
  return false;
}

// "/root/.cache/kbv/builds/abc/relu_kbv_abc/cuda.cu(10): error: ..." -> "cuda.cu(10): error: ...":
// the build folder's path says nothing the user needs, and holds the machine's layout.
std::string_view without_leading_path(std::string_view line) {
  auto end = line.find_first_of(":( ");
  if (line.empty() || line[0] != '/' || end == std::string_view::npos) return line;
  auto slash = line.rfind('/', end);
  return line.substr(slash + 1);
}

// One line of plain text, the same under any locale: g++'s quotes under a UTF-8 locale
// (U+2018/2019, U+201C/201D) as ' and ", and any other byte outside printable ASCII (a terminal
// escape the candidate put in its source, say) as a space.
std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < max; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80) {
      unsigned char q = static_cast<unsigned char>(text[i + 2]);
      if (q == 0x98 || q == 0x99 || q == 0x9C || q == 0x9D) {
        out += (q <= 0x99) ? '\'' : '"';
        i += 2;
        continue;
      }
    }
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : ' ';
  }
  return out;
}

}  // namespace

std::string first_compiler_error(std::string_view log, std::size_t max) {
  // ninja prints "FAILED: [code=1] target" at the start of a line, then the command, then its
  // output.
  std::size_t failed = std::string_view::npos;
  for (std::size_t at = log.rfind("FAILED: "); at != std::string_view::npos; at = at ? log.rfind("FAILED: ", at - 1) : std::string_view::npos) {
    if (at == 0 || log[at - 1] == '\n') {
      failed = at;
      break;
    }
  }
  if (failed == std::string_view::npos) return {};
  std::size_t line_start = log.find('\n', failed);  // skip the FAILED line
  if (line_start == std::string_view::npos) return {};
  line_start = log.find('\n', line_start + 1);       // and the command ninja ran
  while (line_start != std::string_view::npos && line_start + 1 < log.size()) {
    std::size_t begin = line_start + 1, end = log.find('\n', begin);
    std::string_view line = log.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
    // The end of this step's output: ninja's own summary, or the next step kbv or ninja began.
    if (line.rfind("ninja: ", 0) == 0 || line.rfind("FAILED: ", 0) == 0) break;
    if (is_diagnostic(line)) {
      auto first = line.find_first_not_of(" \t");
      return printable(without_leading_path(line.substr(first == std::string_view::npos ? 0 : first)), max);
    }
    line_start = end;
  }
  return {};
}

}  // namespace kbv::judge
