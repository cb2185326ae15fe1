// kbv check: the static scan of candidates. Every rule has a positive and a negative case, so
// removing or breaking a rule fails a test; fixtures under scan_fixtures/ are whole hacks.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "scan/scan.hpp"
#include "scan/scan_report.hpp"

namespace kbv::scan {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = KBV_SOURCE_DIR;

std::vector<Finding> with_rule(const std::vector<Finding>& all, std::string_view rule) {
  std::vector<Finding> out;
  for (const auto& f : all)
    if (f.rule == rule) out.push_back(f);
  return out;
}

std::set<std::string> warning_rules(const std::vector<Finding>& all) {
  std::set<std::string> out;
  for (const auto& f : all)
    if (f.severity == "warning") out.insert(f.rule);
  return out;
}

std::string describe(const std::vector<Finding>& all) {
  std::ostringstream out;
  for (const auto& f : all)
    out << "  " << f.line << " " << f.rule << " " << f.severity << ": " << f.excerpt << "\n";
  return out.str();
}

// One rule: a snippet that must trigger it on `line`, and snippets that must not.
struct RuleCase {
  std::string rule;
  std::string positive;
  int line;
  std::vector<std::string> negatives;
};

const std::vector<RuleCase>& rule_cases() {
  static const std::vector<RuleCase> cases = {
      {"silent_fallback",
       R"(import torch
from torch.utils.cpp_extension import load_inline
ext = load_inline(name="x", cpp_sources="", cuda_sources="", functions=["f"])
def run(x):
    try:
        return ext.f(x)
    except Exception:
        return torch.relu(x)
)",
       5,
       {R"(try:
    import triton
except ImportError:
    triton = None
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)",
        R"(class ModelNew(nn.Module):
    def forward(self, x):
        y = ext.f(x)  # try: ... except: would be a fallback
        return y
)"}},
      {"side_stream",
       R"(import torch
class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.s = torch.cuda.Stream()
)",
       5,
       {R"(import torch
# we do not use torch.cuda.Stream() here
class ModelNew(torch.nn.Module):
    """Launches on torch.cuda.Stream()? No: on the current stream."""
    def forward(self, x):
        return ext.f(x)
)",
        R"(src = r"""
torch::Tensor f(torch::Tensor x) {
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    k<<<grid, block, 0, stream>>>(x.data_ptr<float>());
    k<<<grid, block>>>(x.data_ptr<float>());
    return x;
}
""")"}},
      {"threads_or_processes",
       R"(import torch
import threading
)",
       2,
       {R"(src = """
__global__ void k(float* x) { __syncthreads(); }
"""
threads = 256
num_threads = threads
)"}},
      {"torch_attribute_reassignment",
       R"(import torch
y = 1
torch.relu = lambda x: x
)",
       3,
       {R"(y = torch.relu(x)
if torch.relu(x) == y:
    z = torch.zeros(3, dtype=torch.float32)
act = torch.relu
)"}},
      {"timing_tampering",
       R"(import time
time.perf_counter = lambda: 0.0
)",
       2,
       {R"(t0 = time.perf_counter()
torch.cuda.synchronize()
start = torch.cuda.Event(enable_timing=True)
ms = start.elapsed_time(end)
)"}},
      {"comparison_tampering",
       R"(import torch

torch.allclose = lambda *a, **k: True
)",
       3,
       {R"(ok = torch.allclose(a, b, atol=1e-3)
equal = a == b
)"}},
      {"tensor_subclass",
       R"(import torch
class Sneaky(torch.Tensor):
    pass
)",
       2,
       {R"(class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
)"}},
      {"precision_downcast",
       R"(import torch
def forward(self, x):
    return self.ext.f(x.half()).float()
)",
       3,
       {R"(if x.dtype == torch.float16:
    raise TypeError("fp32 only")
if x.dtype in (torch.float16, torch.bfloat16):
    raise TypeError("fp32 only")
src = """
__global__ void k(float4* x) {}  // no __half here
"""
)"}},
      {"tf32_or_matmul_precision",
       R"(import torch
torch.set_float32_matmul_precision("high")
)",
       2,
       {R"(# allow_tf32 stays off: the protocol decides
y = torch.matmul(a, b)
)",
        R"(src = r"""
torch::Tensor matmul_tf32(torch::Tensor a) {
    TORCH_CHECK(a.is_cuda(), "matmul_tf32: CUDA tensors expected");
    return a;
}
"""
ext = load_inline(name="matmul_tf32", cpp_sources=src, functions=["matmul_tf32"])
)"}},
      {"ctypes",
       R"("""Uses no ctypes in the docstring."""
import ctypes
)",
       2,
       {R"("""Uses no ctypes in the docstring."""
ctypes_ok = True
)"}},
      {"introspection",
       R"(import torch
import gc
)",
       2,
       {R"(g = math.gcd(a, b)
gc = 3
self.inspect_me = 1
)"}},
      {"environment_read",
       R"(import os
mode = os.environ.get("KBV_PROTOCOL")
)",
       2,
       {R"(import os
# os.environ is never read
)"}},
      {"file_io",
       R"(import torch
with open("/tmp/ref.pt", "rb") as f:
    ref = f.read()
)",
       2,
       {R"(ext = torch.utils.cpp_extension.load(name="x", sources=["x.cu"])
y = x.reopen()
src = """
// fopen("/tmp/x") in a comment
"""
)"}},
      {"access_policy_window",
       R"(src = r"""
cudaStreamAttrValue attr;
attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
""")",
       3,
       {R"(src = r"""
// no accessPolicyWindow in this kernel
__global__ void k(float* x) {}
""")"}},
      {"result_caching",
       R"(class ModelNew(nn.Module):
    def forward(self, x):
        key = x.data_ptr()
        return self.ext.f(x)
)",
       3,
       {R"(class ModelNew(nn.Module):
    def forward(self, x):
        y = self.ext.f(x.data_ptr(), x.numel())
        return self.fc(y)
)"}},
      {"rng_reseed",
       R"(import torch

torch.manual_seed(0)
)",
       3,
       {R"(g = torch.Generator()
g.manual_seed(0)
seed = 42
)"}},
      {"dynamic_code",
       R"(code = "torch.relu = lambda x: x"
exec(code)
)",
       2,
       {R"(model.eval()
fast = torch.compile(model)
pat = re.compile("x")
)"}},
      {"shape_specialisation",
       R"(def forward(self, x):
    if x.shape == (4096, 16384):
        return x
    return torch.relu(x)
)",
       2,
       {R"(def forward(self, x):
    if x.numel() == 0:
        return x
    n = x.shape[0]
    if x.size(0) > 1024:
        return big(x)
)"}},
      {"syntax_error",
       R"(import torch
def forward(self, x):
    return torch.relu(x
)",
       3,
       {R"(import torch
def forward(self, x):
    return torch.relu(
        x)
)"}},
  };
  return cases;
}

TEST(ScanRules, TheRuleListIsFixed) {
  std::vector<std::string> names;
  for (const auto& r : rules()) names.emplace_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "silent_fallback", "side_stream", "threads_or_processes",
                       "torch_attribute_reassignment", "timing_tampering", "comparison_tampering",
                       "tensor_subclass", "precision_downcast", "tf32_or_matmul_precision",
                       "ctypes", "introspection", "environment_read", "file_io",
                       "access_policy_window", "result_caching", "rng_reseed", "dynamic_code",
                       "shape_specialisation", "syntax_error"}));
  for (const auto& r : rules()) {
    EXPECT_FALSE(r.why.empty()) << r.name;
    EXPECT_EQ(r.why.find('\n'), std::string_view::npos) << r.name << ": why is one line";
    EXPECT_EQ(r.severity, r.name == "shape_specialisation" ? "info" : "warning") << r.name;
  }
}

TEST(ScanRules, EveryRuleHasATestCase) {
  std::set<std::string> covered;
  for (const auto& c : rule_cases()) covered.insert(c.rule);
  for (const auto& r : rules()) EXPECT_TRUE(covered.count(std::string(r.name))) << r.name;
}

TEST(ScanRules, EachPositiveCaseFiresOnItsLine) {
  for (const auto& c : rule_cases()) {
    auto found = with_rule(scan_source(c.positive), c.rule);
    ASSERT_FALSE(found.empty()) << c.rule << " missed:\n" << c.positive;
    EXPECT_EQ(found.front().line, c.line) << c.rule << "\n" << describe(found);
    EXPECT_FALSE(found.front().why.empty());
  }
}

TEST(ScanRules, NoNegativeCaseFires) {
  for (const auto& c : rule_cases())
    for (const auto& negative : c.negatives) {
      auto found = with_rule(scan_source(negative), c.rule);
      EXPECT_TRUE(found.empty()) << c.rule << " fired on:\n" << negative << describe(found);
    }
}

// More positives per rule: the other spellings the rules promise to catch.
struct Spelling {
  std::string rule;
  std::string source;
};

TEST(ScanRules, OtherSpellingsFire) {
  const std::vector<Spelling> spellings = {
      {"silent_fallback",
       "class M(nn.Module):\n    def forward(self, x):\n        try:\n            return f(x)\n"
       "        except RuntimeError:\n            return x.relu()\n"},
      {"silent_fallback",
       "class M(nn.Module):\n    def forward(self, x):\n"
       "        with contextlib.suppress(Exception):\n            return f(x)\n"},
      {"side_stream", "s = r\"\"\"\nauto s = at::cuda::getStreamFromPool();\n\"\"\"\n"},
      {"side_stream", "s = \"cudaStreamCreate(&s);\"\n"},
      {"side_stream", "s = r\"\"\"\nk<<<g, b, 0, cudaStreamPerThread>>>(x);\n\"\"\"\n"},
      {"threads_or_processes", "from concurrent.futures import ThreadPoolExecutor\n"},
      {"threads_or_processes", "import multiprocessing as mp\n"},
      {"threads_or_processes", "pid = os.fork()\n"},
      {"threads_or_processes", "import subprocess\n"},
      {"threads_or_processes", "s = r\"\"\"\nstd::thread t(work);\n\"\"\"\n"},
      {"torch_attribute_reassignment", "torch.nn.functional.gelu = my_gelu\n"},
      {"torch_attribute_reassignment", "F.relu = lambda x: x\n"},
      {"torch_attribute_reassignment", "torch.Tensor.add = fake_add\n"},
      {"torch_attribute_reassignment", "setattr(torch, \"relu\", fake)\n"},
      {"torch_attribute_reassignment",
       "lib = torch.library.Library(\"aten\", \"IMPL\")\n"},
      {"torch_attribute_reassignment",
       "s = r\"\"\"\nTORCH_LIBRARY_IMPL(aten, CUDA, m) { m.impl(\"relu\", my_relu); }\n\"\"\"\n"},
      {"torch_attribute_reassignment", "import torch as t\nt.relu = fake\n"},
      {"torch_attribute_reassignment", "from torch.nn import functional as Fn\nFn.gelu = g\n"},
      {"timing_tampering", "import time as _t\n_t.perf_counter = fake\n"},
      {"comparison_tampering", "import torch as t\nok, t.allclose = 1, fake\n"},
      {"timing_tampering", "time.time = fake_time\n"},
      {"timing_tampering", "torch.cuda.Event.elapsed_time = lambda self, end: 0.001\n"},
      {"timing_tampering", "torch.cuda.synchronize = lambda: None\n"},
      {"timing_tampering", "_orig = torch.cuda.synchronize\n"},
      {"timing_tampering", "@functools.wraps(torch.cuda.synchronize)\ndef s(): pass\n"},
      {"timing_tampering", "setattr(torch.cuda, \"synchronize\", noop)\n"},
      {"timing_tampering",
       "s = r\"\"\"\nextern \"C\" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, "
       "cudaEvent_t b) { *ms = 0.001f; return cudaSuccess; }\n\"\"\"\n"},
      {"comparison_tampering", "torch.testing.assert_close = lambda *a, **k: None\n"},
      {"comparison_tampering", "torch.isclose = fake\n"},
      {"comparison_tampering", "torch.equal = fake\n"},
      {"comparison_tampering", "np.allclose = fake\n"},
      {"comparison_tampering", "setattr(torch, 'allclose', fake)\n"},
      {"tensor_subclass", "class T(Tensor):\n    pass\n"},
      {"tensor_subclass",
       "class T:\n    @classmethod\n    def __torch_function__(cls, f, t, a=(), k=None):\n"
       "        return f(*a)\n"},
      {"tensor_subclass",
       "class T:\n    def __torch_dispatch__(cls, f, t, a=(), k=None):\n        pass\n"},
      {"precision_downcast", "y = x.bfloat16()\n"},
      {"precision_downcast", "y = x.to(torch.float16)\n"},
      {"precision_downcast", "y = x.to(dtype=torch.bfloat16)\n"},
      {"precision_downcast", "with torch.autocast(\"cuda\"):\n    y = f(x)\n"},
      {"precision_downcast", "s = r\"\"\"\n__global__ void k(__half* x) {}\n\"\"\"\n"},
      {"precision_downcast", "s = r\"\"\"\n__global__ void k(__nv_bfloat16* x) {}\n\"\"\"\n"},
      {"precision_downcast", "s = r\"\"\"\nhalf2 v = h[i];\n\"\"\"\n"},
      {"tf32_or_matmul_precision", "torch.backends.cuda.matmul.allow_tf32 = True\n"},
      {"tf32_or_matmul_precision", "torch.backends.cuda.matmul.fp32_precision = \"tf32\"\n"},
      {"tf32_or_matmul_precision",
       "s = r\"\"\"\ncublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);\n\"\"\"\n"},
      {"tf32_or_matmul_precision",
       "s = r\"\"\"\ncublasGemmEx(h, a, b, CUBLAS_COMPUTE_32F_FAST_TF32, algo);\n\"\"\"\n"},
      {"tf32_or_matmul_precision",
       "s = r\"\"\"\nwmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, "
       "wmma::row_major> a;\n\"\"\"\n"},
      {"tf32_or_matmul_precision",
       "s = r\"\"\"\nasm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(o) : \"f\"(v));\n\"\"\"\n"},
      {"ctypes", "from cffi import FFI\n"},
      {"ctypes", "lib = ctypes.CDLL(\"libcudart.so\")\n"},
      {"ctypes", "s = r\"\"\"\nvoid* h = dlopen(\"libcudart.so\", RTLD_NOW);\n\"\"\"\n"},
      {"introspection", "objs = gc.get_objects()\n"},
      {"introspection", "frame = sys._getframe(1)\n"},
      {"introspection", "caller = inspect.stack()[1]\n"},
      {"introspection", "ref = frame.f_back.f_locals\n"},
      {"introspection", "g = fn.__globals__\n"},
      {"environment_read", "v = os.getenv(\"X\")\n"},
      {"environment_read", "s = r\"\"\"\nconst char* v = getenv(\"KBV_SECRET\");\n\"\"\"\n"},
      {"file_io", "ref = torch.load(\"ref.pt\")\n"},
      {"file_io", "import pathlib\n"},
      {"file_io", "names = os.listdir(\".\")\n"},
      {"file_io", "s = r\"\"\"\nFILE* f = fopen(\"/tmp/x\", \"r\");\n\"\"\"\n"},
      {"file_io", "s = r\"\"\"\nstd::ifstream in(\"/tmp/x\");\n\"\"\"\n"},
      {"file_io", "maps = \"/proc/self/maps\"\n"},
      {"access_policy_window",
       "s = r\"\"\"\ncudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20);\n\"\"\"\n"},
      {"access_policy_window",
       "s = r\"\"\"\ncudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &a);"
       "\n\"\"\"\n"},
      {"result_caching", "y = self.cache[x.data_ptr()]\n"},
      {"result_caching", "if id(x) in self.seen:\n    pass\n"},
      {"result_caching", "key = (x.data_ptr(), tuple(x.shape))\n"},
      {"result_caching", "def _key(x):\n    return (x.data_ptr(), tuple(x.shape), x.dtype)\n"},
      {"result_caching", "seen = {x.data_ptr(): out}\n"},
      {"result_caching",
       "class M(nn.Module):\n    @functools.lru_cache(maxsize=None)\n    def forward(self, x):\n"
       "        return f(x)\n"},
      {"result_caching",
       "class M(nn.Module):\n    def forward(self, x):\n        if self.out is None:\n"
       "            self.out = f(x)\n        return self.out\n"},
      {"result_caching", "s = r\"\"\"\nstatic torch::Tensor cached;\n\"\"\"\n"},
      {"rng_reseed", "torch.cuda.manual_seed_all(1)\n"},
      {"rng_reseed", "torch.random.set_rng_state(state)\n"},
      {"rng_reseed", "np.random.seed(0)\n"},
      {"dynamic_code", "m = importlib.import_module(\"x\")\n"},
      {"dynamic_code", "payload = base64.b64decode(s)\n"},
      {"dynamic_code", "t = __import__(\"torch\")\n"},
      {"shape_specialisation", "if x.size(0) == 4096:\n    pass\n"},
      {"shape_specialisation", "if tuple(x.shape) in SHAPES:\n    pass\n"},
      {"shape_specialisation", "if 4096 == x.shape[0]:\n    pass\n"},
      {"shape_specialisation", "s = r\"\"\"\nif (x.size(1) == 16384) return x;\n\"\"\"\n"},
  };
  for (const auto& s : spellings)
    EXPECT_FALSE(with_rule(scan_source(s.source), s.rule).empty())
        << s.rule << " missed:\n" << s.source << "got:\n" << describe(scan_source(s.source));
}

TEST(ScanRules, MoreNegatives) {
  // A comment or docstring that names a hack is not a finding; neither is ordinary torch code.
  const std::string src = R"("""Module docstring: torch.cuda.Stream(), import threading, os.environ,
torch.relu = lambda x: x, time.perf_counter = None, setattr(torch, "allclose", f).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# torch.cuda.Stream() and cudaStreamCreate in a comment
class ModelNew(nn.Module):
    """Class docstring: exec(code), open("/tmp/x"), gc.get_objects()."""
    def __init__(self, beta):
        super().__init__()
        self.beta = beta
        self.act = F.gelu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Docstring: x.half(), torch.manual_seed(0)."""
        y = torch.relu(x) * self.beta
        assert y.shape == x.shape
        return self.act(y).contiguous()
)";
  auto found = scan_source(src);
  EXPECT_TRUE(found.empty()) << describe(found);

  // A weight cache keyed by data_ptr and _version is invalidated on change: info.
  auto weight = scan_source("key = (w.data_ptr(), w._version, w.device)\n");
  ASSERT_EQ(weight.size(), 1u) << describe(weight);
  EXPECT_EQ(weight[0].rule, "result_caching");
  EXPECT_EQ(weight[0].severity, "info");

  // A lru_cache on a helper is info, not a warning.
  auto cached = scan_source("@functools.lru_cache(maxsize=None)\ndef config(n):\n    return n\n");
  ASSERT_EQ(cached.size(), 1u) << describe(cached);
  EXPECT_EQ(cached[0].rule, "result_caching");
  EXPECT_EQ(cached[0].severity, "info");
}

TEST(ScanSource, ScansTheEmbeddedCudaWithItsLineNumbers) {
  const std::string src = R"(import torch
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
// cudaStreamCreate in a C++ comment: skipped
/* std::thread in a block comment: skipped */
torch::Tensor f(torch::Tensor x) {
    cudaStream_t s;
    cudaStreamCreate(&s);
    return x;
}
"""
ext = load_inline(name="f", cpp_sources="torch::Tensor f(torch::Tensor x);", cuda_sources=source)
)";
  auto found = scan_source(src);
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].rule, "side_stream");
  EXPECT_EQ(found[0].line, 10);
  EXPECT_EQ(found[0].excerpt, "cudaStreamCreate(&s);");
}

// Two false positives that the hand-written parser produced on a public RL-trained kernel corpus
// (issue 15), gone now that result_caching reads CPython's parse tree.
TEST(ScanSource, CallingALazilyLoadedModuleIsNoSavedOutput) {
  const std::string src = R"(class ModelNew(nn.Module):
    def forward(self, x):
        if self.conv2d is None:
            self.conv2d = load_conv()
        return self.conv2d(x)
)";
  auto found = scan_source(src);
  EXPECT_TRUE(with_rule(found, "result_caching").empty()) << describe(found);
  // ...while returning the saved output itself still is.
  auto saved = scan_source("class M(nn.Module):\n    def forward(self, x):\n        self.y = f(x)\n        return self.y\n");
  EXPECT_EQ(with_rule(saved, "result_caching").size(), 1u) << describe(saved);
}

TEST(ScanSource, PointersInAKernelsArgumentListAreNoCacheKey) {
  const std::string src = R"(class ModelNew(nn.Module):
    def forward(self, A, B):
        C = torch.empty_like(A)
        self.kernel(grid=(n,), block=(256,), args=[A.data_ptr(), B.data_ptr(), C.data_ptr(), n])
        kernel((grid,), (256,), [A.data_ptr(), C.data_ptr()])
        return C
)";
  auto found = scan_source(src);
  EXPECT_TRUE(with_rule(found, "result_caching").empty()) << describe(found);
  // A tuple of pointers that IS used as a key still is.
  auto keyed = scan_source("y = self.cache.get((A.data_ptr(), B.data_ptr()))\n");
  EXPECT_EQ(with_rule(keyed, "result_caching").size(), 1u) << describe(keyed);
}

TEST(ScanSource, AFileThatDoesNotParseIsOneFinding) {
  auto found = scan_source("import torch\nx = 'unterminated\ny = torch.cuda.Stream()\n");
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].rule, "syntax_error");
  EXPECT_EQ(found[0].line, 2);
  EXPECT_EQ(found[0].excerpt, "x = 'unterminated");
  EXPECT_NE(found[0].why.find("SyntaxError"), std::string::npos) << found[0].why;
}

TEST(ScanSource, ManySourcesInOneBatchKeepTheirOrder) {
  auto found = scan_sources({"import threading\n", "x = (\n", "", "import ctypes\n"});
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].at(0).rule, "threads_or_processes");
  EXPECT_EQ(found[1].at(0).rule, "syntax_error");
  EXPECT_TRUE(found[2].empty());
  EXPECT_EQ(found[3].at(0).rule, "ctypes");
}

TEST(ScanSource, NonAsciiTextKeepsLineNumbersAndExcerpts) {
  auto found = scan_source("# é ü 中文\ns = \"ünïcode\"\nimport ctypes  # ✓\n");
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(found[0].excerpt, "import ctypes  # ✓");
  // A byte order mark: CPython's columns on line 1 skip it, the views keep it blank.
  auto bom = scan_source("\xef\xbb\xbfimport ctypes\ns = \"x\"  # c\n");
  ASSERT_EQ(bom.size(), 1u) << describe(bom);
  EXPECT_EQ(bom[0].rule, "ctypes");
}

TEST(ScanSource, AttributesOfACallResultAreNoTimingFunction) {
  auto found = scan_source("res = time.get_clock_info('monotonic').resolution\nx = torch.cuda.Event(enable_timing=True).query\n");
  EXPECT_TRUE(found.empty()) << describe(found);
}

// Answers bigger than a pipe holds (thousands of strings and comments per file), many files in
// one batch: the helper must not stall while kbv is still writing sources to it.
TEST(ScanSource, ABatchLargerThanThePipesDoesNotStall) {
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "x = \"a\"  # c\n";
  std::vector<std::string_view> batch(12, big);
  auto found = scan_sources(batch);
  ASSERT_EQ(found.size(), batch.size());
  for (const auto& f : found) EXPECT_TRUE(f.empty()) << describe(f);
}

// Megabytes of sources are parsed by one helper per core, each a contiguous run of files: the
// findings must still come back in the sources' order.
TEST(ScanSource, LargeBatchesKeepTheirOrderAcrossHelpers) {
  std::string padding;
  for (int i = 0; i < 2000; ++i) padding += "# padding line to make the file large enough\n";
  const std::string threads = "import threading\n" + padding, native = "import ctypes\n" + padding;
  std::vector<std::string_view> batch;
  for (int i = 0; i < 60; ++i) batch.push_back(i % 3 == 0 ? std::string_view(native) : std::string_view(threads));
  auto found = scan_sources(batch);
  ASSERT_EQ(found.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    ASSERT_EQ(found[i].size(), 1u) << i;
    EXPECT_EQ(found[i][0].rule, i % 3 == 0 ? "ctypes" : "threads_or_processes") << i;
  }
}

TEST(ScanSource, AFindingIsReportedOncePerRuleAndLine) {
  auto found = scan_source("s = \"cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\"\n");
  EXPECT_EQ(with_rule(found, "side_stream").size(), 1u) << describe(found);
}

TEST(ScanSource, EmptyAndOddInputsDoNotCrash) {
  EXPECT_TRUE(scan_source("").empty());
  EXPECT_TRUE(scan_source("\n\n\n").empty());
  EXPECT_NO_THROW(scan_source("s = \"\"\"never closed\n torch.cuda.Stream("));
  EXPECT_NO_THROW(scan_source("x = 'unterminated\ny = (\n"));
  EXPECT_NO_THROW(scan_source("\\"));
  EXPECT_NO_THROW(scan_cxx_source("/* unterminated"));
}

TEST(ScanFile, HonestExampleHasNoWarnings) {
  for (const char* name : {"relu_cuda.py", "swish_cuda.py", "linear_relu_cuda.py"}) {
    auto found = scan_file(kSource / "examples/candidates" / name);
    EXPECT_TRUE(warning_rules(found).empty()) << name << "\n" << describe(found);
  }
}

TEST(ScanFile, SideStreamCacheHackFixture) {
  auto found = scan_file(kSource / "tests/unit/scan_fixtures/hack_side_stream_cache.py");
  EXPECT_EQ(warning_rules(found),
            (std::set<std::string>{"side_stream", "result_caching", "silent_fallback"}))
      << describe(found);
  auto fallback = with_rule(found, "silent_fallback");
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(fallback[0].line, 48);
  EXPECT_EQ(fallback[0].excerpt, "try:");
  auto streams = with_rule(found, "side_stream");
  ASSERT_EQ(streams.size(), 2u) << describe(found);
  EXPECT_EQ(streams[0].line, 24);  // cudaStreamCreateWithFlags
  EXPECT_EQ(streams[1].line, 27);  // <<<..., 0, side>>>
}

TEST(ScanFile, TamperHackFixture) {
  auto found = scan_file(kSource / "tests/unit/scan_fixtures/hack_tamper.py");
  EXPECT_EQ(warning_rules(found),
            (std::set<std::string>{"torch_attribute_reassignment", "timing_tampering",
                                   "comparison_tampering", "tf32_or_matmul_precision",
                                   "rng_reseed", "environment_read", "introspection", "file_io",
                                   "tensor_subclass"}))
      << describe(found);
}

TEST(ScanFile, CudaSourceFixtureIsScannedAsCxx) {
  auto found = scan_file(kSource / "tests/unit/scan_fixtures/hack_l2_persist.cu");
  EXPECT_EQ(warning_rules(found), (std::set<std::string>{"access_policy_window", "result_caching",
                                                         "precision_downcast"}))
      << describe(found);
  auto cache = with_rule(found, "result_caching");
  ASSERT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache[0].line, 14);
}

TEST(ScanFile, ShapeShortcutExampleIsInfoOnly) {
  const fs::path path = kSource / "examples/candidates/relu_shape_shortcut.py";
  int shortcut_line = 0;  // the line of `if tuple(x.shape) in _TEST_SHAPES:`
  {
    std::ifstream in(path);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n)
      if (text.find("if tuple(x.shape) in") != std::string::npos) shortcut_line = n;
  }
  ASSERT_GT(shortcut_line, 0);
  auto found = scan_file(path);
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].rule, "shape_specialisation");
  EXPECT_EQ(found[0].severity, "info");
  EXPECT_EQ(found[0].line, shortcut_line);
}

TEST(ScanFile, MissingFileThrows) {
  EXPECT_THROW(scan_file(kSource / "no/such/candidate.py"), ScanError);
  EXPECT_THROW(scan_targets(kSource / "no/such/folder"), ScanError);
  auto files = scan_targets(kSource / "tests/unit/scan_fixtures");
  EXPECT_EQ(files.size(), 3u);
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end()));
}

TEST(ScanReport, TextAndJson) {
  std::vector<FileFindings> files = {
      {"a.py", scan_source("import threading\nimport ctypes\n")},
      {"b.py", {}},
  };
  std::string text = format_file_findings(files[0]);
  EXPECT_NE(text.find("a.py:1  threads_or_processes  import threading  ("), std::string::npos)
      << text;
  EXPECT_NE(format_file_findings(files[1]).find("b.py: no findings"), std::string::npos);
  std::string summary = format_summary(files);
  EXPECT_NE(summary.find("2 files scanned, 1 with findings: 2 warnings, 0 info"),
            std::string::npos)
      << summary;
  auto j = check_report_json(files);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["files"][0]["findings"][1]["rule"], "ctypes");
  EXPECT_EQ(j["files"][0]["findings"][1]["line"], 2);
  EXPECT_EQ(j["summary"]["by_rule"]["ctypes"], 1);
  EXPECT_EQ(j["summary"]["warnings"], 2);
}

// Micro-benchmark: the candidate files of examples/ and runs/ (if present), scanned until 2000
// files, in batches of 500 (one Python parser process each, as `kbv check` does for a folder).
// The bar is deliberately low (loaded 2-core CI machines, Debug builds); the number is printed
// and recorded as the test property files_per_second. CPU time counts this process only, not
// the parser's.
TEST(ScanBench, ThousandsOfFilesPerSecond) {
  std::vector<std::string> sources;
  for (const char* dir : {"examples", "runs"}) {
    if (!fs::is_directory(kSource / dir)) continue;
    for (const auto& path : scan_targets(kSource / dir)) {
      if (path.extension() != ".py") continue;
      std::ifstream in(path, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      sources.push_back(std::move(text).str());
    }
  }
  ASSERT_FALSE(sources.empty());
  constexpr std::size_t kFiles = 2000, kBatch = 500;
  std::size_t bytes = 0, findings = 0;
  const std::clock_t cpu_start = std::clock();
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < kFiles; first += kBatch) {
    std::vector<std::string_view> batch;
    for (std::size_t i = first; i < first + kBatch; ++i) {
      batch.push_back(sources[i % sources.size()]);
      bytes += batch.back().size();
    }
    for (const auto& f : scan_sources(batch)) findings += f.size();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  double per_second = kFiles / seconds;
  // Wall time counts other processes on a shared machine; CPU time is the scan's own cost.
  std::cout << "[ScanBench] " << kFiles << " files (" << sources.size() << " distinct, "
            << bytes / kFiles << " B average): " << per_second << " files/s wall ("
            << bytes / seconds / 1e6 << " MB/s), " << kFiles / cpu_seconds
            << " files/s of one core's CPU time\n";
  RecordProperty("files_per_second", static_cast<int>(per_second));
  EXPECT_GT(findings, 0u);
  EXPECT_GT(per_second, 100.0);
}

}  // namespace
}  // namespace kbv::scan
