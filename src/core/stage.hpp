#pragma once
// The stages an evaluation passes through, in order; the judge announces each (Verdict::stage,
// stage_seconds) so that a timeout or a crash says where it happened.
#include <string_view>

namespace kbv {

enum class Stage {
  setup,         // reading the job and the files
  sandbox,       // starting the candidate's sandbox and the twin
  device,        // the judge's CUDA context
  python,        // the judge's interpreter and `import torch`
  waiting,       // started ahead (kbv run --prestart): interpreters up, CUDA untouched, the device another evaluation's
  tracking,      // CUPTI allocation tracking for the baseline's memory
  load_problem,  // importing the problem, building Model
  build,         // the sandbox imports the candidate (its extensions build here)
  built,         // a build-only job ended here (kbv run's build phase)
  needs_device,  // a device-free build-only job ended here: the candidate's import needs the GPU
  models,        // ModelNew made in the sandbox, Model's weights handed over
  correctness,   // every distribution, and the strict checks on those calls
  timing,        // candidate and baselines through the same hop, outputs checked at random
  memory,        // peak and resident device memory
  done,
};

std::string_view stage_name(Stage s);

}  // namespace kbv
