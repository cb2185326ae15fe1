#include "store/process_identity.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace kbv {
namespace {

// 0 when the process does not exist, is a zombie (dead, not yet reaped) or /proc is not mounted.
std::uint64_t start_ticks_of(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return 0;
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields after it
  // start after the last ')'. Field 22 is the 20th after that.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return 0;
    if (i == 22) return std::stoull(field);
  }
  return 0;
}

}  // namespace

ProcessIdentity this_process() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  ProcessIdentity id;
  id.hostname = host;
  id.pid = ::getpid();
  id.start_ticks = start_ticks_of(id.pid);
  return id;
}

bool process_is_running(std::int64_t pid, std::uint64_t start_ticks) {
  if (pid <= 0) return false;
  std::uint64_t now = start_ticks_of(pid);
  if (now == 0) return false;
  return start_ticks == 0 || now == start_ticks;
}

}  // namespace kbv
