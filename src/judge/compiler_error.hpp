#pragma once
// The compiler's own words for a failed extension build, out of the build log, for the verdict's
// reason: "Error building extension 'x'" alone tells a user (or an agent reading the verdict)
// nothing about what to fix; the full log stays in the verdict's build.log_tail.

#include <string>
#include <string_view>

namespace kbv::judge {

// The first diagnostic of the last failed ninja step in `log` (ninja's "FAILED:" line, as torch
// runs it verbose): nvcc's "cuda.cu(10): error: ...", g++'s "main.cpp:5:3: error: ...", the
// linker's "undefined reference", ptxas' and nvcc's "fatal". Only the last step counts: kbv's
// leaner attempts at a CUDA source fail first in the same log, for reasons of their own. Paths
// are cut to the file name; at most `max` characters, printable ASCII only. Empty when the log
// holds no failed step or no diagnostic after it.
std::string first_compiler_error(std::string_view log, std::size_t max = 300);

}  // namespace kbv::judge
