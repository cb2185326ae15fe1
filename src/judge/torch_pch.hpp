#pragma once
// A precompiled torch/extension.h shared by every candidate's load_inline build (issue 14: the
// build cost). torch's main.cpp of every extension starts with that header, and parsing it is
// ~25 s of CPU each time; with the PCH the same compile takes ~8 s (bench/RESULTS.md).
//
// Trust: the PCH is made by kbv-judge (which never runs candidate code) into
// <build root>/torch-pch, which sandboxes only read. Every build gets `-I<build root>/torch-pch`
// and `-Winvalid-pch` whether the PCH exists or not, so a build's flags (torch's rebuild
// signature) never depend on it; g++ uses a variant only when it is valid for the compile
// (same compiler, same -O level and macros), else it parses the header as before.
#include <string>

namespace kbv::judge {

// <build root>/torch-pch, created (mode 0755) when missing.
std::string torch_pch_root(const std::string& build_root);

// Makes the missing variants (-O0, -O2, -O3) under a lock, each written aside and renamed in
// whole. Prints what it did as one JSON object on `out`. Returns 0 when at least the default
// variant is present afterwards.
int make_torch_pch(const std::string& build_root, std::string* summary);

}  // namespace kbv::judge
