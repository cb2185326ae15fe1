// The compiler's first diagnostic of a failed extension build, out of the build log as torch's
// verbose ninja writes it there, for the verdict's reason.
#include <gtest/gtest.h>

#include <string>

#include "judge/compiler_error.hpp"

namespace kbv::judge {
namespace {

const std::string kNvcc = "/usr/local/cuda/bin/nvcc -MD -MF cuda.cuda.o.d -DTORCH_EXTENSION_NAME=ln_kbv_dfbc "
                          "-Werror=return-type --compiler-options '-fPIC' -std=c++17 -c /b/dfbc/ln_kbv_dfbc/cuda.cu -o cuda.cuda.o\n";

// A CUDA source whose lean attempt fails (a name the lean header lacks), then as written (its own
// error): the reason is the last attempt's, not the lean one's.
TEST(CompilerError, TheLastFailedStepSpeaksNotKbvsLeanerAttempt) {
  std::string log = "[1/3] c++ -MMD -MF main.o.d -c /b/dfbc/ln_kbv_dfbc/main.cpp -o main.o\n"
                    "FAILED: [code=1] cuda.cuda.o \n" + kNvcc +
                    "/b/dfbc/ln_kbv_dfbc/cuda.cu(12): error: namespace \"torch\" has no member \"OrderedDict\"\n"
                    "1 error detected in the compilation of \"/b/dfbc/ln_kbv_dfbc/cuda.cu\".\n"
                    "ninja: build stopped: subcommand failed.\n"
                    "kbv: the CUDA source of 'ln' did not compile with kbv's lean torch/types.h; compiling it with torch/types.h\n"
                    "[1/2] " + kNvcc +
                    "FAILED: [code=1] cuda.cuda.o \n" + kNvcc +
                    "/b/dfbc/ln_kbv_dfbc/cuda.cu(179): warning #177-D: variable \"torch::kU8\" was declared but never referenced\n"
                    "/b/dfbc/ln_kbv_dfbc/cuda.cu(10): error: identifier \"__shfl_down\" is undefined\n"
                    "          v += __shfl_down(v, offset);\n"
                    "1 error detected in the compilation of \"/b/dfbc/ln_kbv_dfbc/cuda.cu\".\n"
                    "ninja: build stopped: subcommand failed.\n";
  EXPECT_EQ(first_compiler_error(log), "cuda.cu(10): error: identifier \"__shfl_down\" is undefined");
}

TEST(CompilerError, GccsDiagnosticInMainCpp) {
  std::string log = "[1/2] c++ -MMD -MF main.o.d -c /b/x/relu_cpp/main.cpp -o main.o\n"
                    "FAILED: [code=1] main.o \n"
                    "c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=relu_cpp -fPIC -std=c++17 -c /b/x/relu_cpp/main.cpp -o main.o\n"
                    "/b/x/relu_cpp/main.cpp: In function 'at::Tensor relu_forward(at::Tensor)':\n"
                    "/b/x/relu_cpp/main.cpp:9:10: warning: unused variable 'error' [-Wunused-variable]\n"
                    "/b/x/relu_cpp/main.cpp:13:12: error: 'output' was not declared in this scope; did you mean 'out'?\n"
                    "   13 |     return output;\n"
                    "ninja: build stopped: subcommand failed.\n";
  EXPECT_EQ(first_compiler_error(log), "main.cpp:13:12: error: 'output' was not declared in this scope; did you mean 'out'?");
}

TEST(CompilerError, TheLinkersUndefinedReference) {
  std::string log = "FAILED: [code=1] relu.so \n"
                    "c++ main.o cuda.cuda.o -shared -L/t/lib -lc10 -o relu.so\n"
                    "/usr/bin/ld: main.o: in function `pybind11_init_relu(pybind11::module_&)':\n"
                    "main.cpp:(.text+0x1f): undefined reference to `relu_forward(at::Tensor)'\n"
                    "collect2: error: ld returned 1 exit status\n"
                    "ninja: build stopped: subcommand failed.\n";
  EXPECT_EQ(first_compiler_error(log), "main.cpp:(.text+0x1f): undefined reference to `relu_forward(at::Tensor)'");
}

TEST(CompilerError, TheLinkerCannotFindALibrary) {
  std::string log = "FAILED: [code=1] relu.so \n"
                    "c++ main.o -shared -lcublasLt_missing -o relu.so\n"
                    "/usr/bin/ld: cannot find -lcublasLt_missing: No such file or directory\n"
                    "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(first_compiler_error(log), "ld: cannot find -lcublasLt_missing: No such file or directory");
}

TEST(CompilerError, PtxasAndNvccFatal) {
  std::string ptxas = "FAILED: [code=1] cuda.cuda.o \n" + kNvcc +
                      "ptxas error   : Entry function '_Z4kernPf' uses too much shared data (0x20000 bytes, 0xe400 max)\n"
                      "ninja: build stopped: subcommand failed.\n";
  EXPECT_EQ(first_compiler_error(ptxas), "ptxas error   : Entry function '_Z4kernPf' uses too much shared data (0x20000 bytes, 0xe400 max)");
  std::string fatal = "FAILED: [code=1] cuda.cuda.o \n" + kNvcc + "nvcc fatal   : Unsupported gpu architecture 'compute_200'\n";
  EXPECT_EQ(first_compiler_error(fatal), "nvcc fatal   : Unsupported gpu architecture 'compute_200'");
}

// -Werror=... on ninja's command line is no diagnostic, nor is "FAILED:" inside a line the
// candidate printed; a log without a failed step has nothing to say.
TEST(CompilerError, NothingWithoutAFailedStepOrADiagnostic) {
  EXPECT_EQ(first_compiler_error(""), "");
  EXPECT_EQ(first_compiler_error("[1/2] c++ -c main.cpp\n[2/2] c++ main.o -o x.so\n"), "");
  EXPECT_EQ(first_compiler_error("my test FAILED: error: nothing\n" + kNvcc), "");
  EXPECT_EQ(first_compiler_error("FAILED: [code=1] cuda.cuda.o \n" + kNvcc + "ninja: build stopped: subcommand failed.\n"), "");
  EXPECT_EQ(first_compiler_error("FAILED: [code=1] cuda.cuda.o \n" + kNvcc), "");
}

// The log is the candidate's to fill: the reason takes one line of it, printable and bounded.
TEST(CompilerError, OneBoundedPrintableLine) {
  std::string log = "FAILED: [code=1] main.o \n" + kNvcc + "main.cpp:1:1: error: \x1b[31mred\x07 " + std::string(5000, 'x') + "\n";
  std::string got = first_compiler_error(log, 120);
  EXPECT_EQ(got.size(), 120u);
  EXPECT_EQ(got.rfind("main.cpp:1:1: error:  [31mred  x", 0), 0u) << got;
  EXPECT_EQ(got.find('\x1b'), std::string::npos);
}

// Long runs the candidate may write into its own log (a source line nvcc echoes, or the file
// itself) cost a scan, never a deep recursion.
TEST(CompilerError, LongRunsInTheLogAreScannedNotRecursedOver) {
  std::string log = "FAILED: [code=1] main.o \n" + kNvcc + "error" + std::string(200000, ' ') + "x\n" +
                    std::string(100000, '(') + "\n" + "main.cpp:2:1: error" + std::string(50000, ' ') + ": late\n";
  std::string got = first_compiler_error(log, 40);
  EXPECT_EQ(got, "main.cpp:2:1: error" + std::string(21, ' '));
}

// g++ under a UTF-8 locale quotes names with U+2018/U+2019: they read as ASCII quotes.
TEST(CompilerError, GccsTypographicQuotesBecomeAscii) {
  std::string log = "FAILED: [code=1] main.o \n" + kNvcc +
                    "/b/x/main.cpp:13:12: error: \xE2\x80\x98output\xE2\x80\x99 was not declared; \xE2\x80\x9Cx\xE2\x80\x9D \xC3\xA9\n";
  EXPECT_EQ(first_compiler_error(log), "main.cpp:13:12: error: 'output' was not declared; \"x\"   ");
}

}  // namespace
}  // namespace kbv::judge
