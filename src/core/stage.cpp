#include "core/stage.hpp"

namespace kbv {

std::string_view stage_name(Stage s) {
  switch (s) {
    case Stage::setup: return "setup";
    case Stage::sandbox: return "sandbox";
    case Stage::device: return "device";
    case Stage::python: return "python";
    case Stage::waiting: return "waiting";
    case Stage::tracking: return "tracking";
    case Stage::load_problem: return "load_problem";
    case Stage::build: return "build";
    case Stage::built: return "built";
    case Stage::needs_device: return "needs_device";
    case Stage::models: return "models";
    case Stage::correctness: return "correctness";
    case Stage::timing: return "timing";
    case Stage::memory: return "memory";
    case Stage::done: return "done";
  }
  return "unknown";
}

}  // namespace kbv
