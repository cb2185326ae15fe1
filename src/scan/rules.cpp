// The rule table and every literal-triggered rule. Each pattern is a literal (found in one pass
// by LiteralMatcher) plus an optional check run only where the literal occurs; no std::regex.
#include <array>
#include <initializer_list>
#include <optional>

#include "scan/literal_matcher.hpp"
#include "scan/scan.hpp"
#include "scan/scan_context.hpp"

namespace kbv::scan {

namespace detail {
namespace {

constexpr std::size_t kRuleCount = static_cast<std::size_t>(Rule::count);

// Same order as enum Rule.
constexpr std::array<RuleInfo, kRuleCount> kRules = {{
    {"silent_fallback", "warning",
     "an exception handler around the custom kernel (or anywhere in forward) can silently fall "
     "back to PyTorch or hide a failing kernel"},
    {"side_stream", "warning",
     "work on a stream other than torch's current one can escape the timer and race the output "
     "check"},
    {"threads_or_processes", "warning",
     "work in other threads or processes can run outside the timed region or tamper with the "
     "harness"},
    {"torch_attribute_reassignment", "warning",
     "replacing a torch function or global setting changes what the reference and the baseline "
     "compute"},
    {"timing_tampering", "warning",
     "replacing or wrapping timing functions (time, CUDA events, synchronize) can falsify "
     "measured times"},
    {"comparison_tampering", "warning",
     "replacing comparison functions (allclose, isclose, equal, testing) can make wrong outputs "
     "pass"},
    {"tensor_subclass", "warning",
     "a Tensor subclass or __torch_function__/__torch_dispatch__ hook can intercept the "
     "harness's own tensor operations"},
    {"precision_downcast", "warning",
     "computing in fp16/bf16 trades accuracy for speed on an fp32 problem"},
    {"tf32_or_matmul_precision", "warning",
     "TF32 or reduced-precision matmul changes accuracy, and global switches also change the "
     "baseline"},
    {"ctypes", "warning",
     "ctypes, cffi and dlopen reach native code and raw memory outside the extension mechanism"},
    {"introspection", "warning",
     "frame, gc and globals introspection can find the harness's reference outputs or alter its "
     "state"},
    {"environment_read", "warning",
     "reading the environment can detect the harness or its configuration"},
    {"file_io", "warning",
     "files and /proc can hold reference results, or carry state between runs"},
    {"access_policy_window", "warning",
     "persisting-L2 access policies keep data cached across timed calls and outlive the "
     "candidate"},
    {"result_caching", "warning",
     "outputs cached across calls (keyed by data_ptr/id, memoised, or saved on self) skip the "
     "work on repeated timed calls"},
    {"rng_reseed", "warning",
     "reseeding the global RNG makes the harness's random inputs predictable"},
    {"dynamic_code", "warning",
     "exec, eval, dynamic imports and encoded payloads hide code from this scan"},
    {"shape_specialisation", "info",
     "a comparison against a literal shape: legitimate specialisation, but also how test-shape "
     "shortcuts are written"},
    {"syntax_error", "warning",
     "the file is not valid Python for kbv's interpreter, so it cannot be imported; nothing else in "
     "it was scanned"},
}};

struct Emit {
  Rule rule;
  Severity severity;
};

struct Hit {
  const ScanContext& ctx;
  std::string_view view;  // the whole view the literal was found in
  std::size_t begin, end;
  int line;
  Rule rule;  // the pattern's rule

  std::size_t line_start() const { return ctx.views.line_starts[static_cast<std::size_t>(line)]; }
  std::string_view line_text() const { return ctx.views.line(view, line); }
  std::string_view before() const { return view.substr(line_start(), begin - line_start()); }
  std::string_view after() const {
    auto text = line_text();
    return text.substr(end - line_start());
  }
  Emit emit() const { return {rule, default_severity(rule)}; }
  Emit emit(Rule r) const { return {r, default_severity(r)}; }
};

using Check = std::optional<Emit> (*)(const Hit&);

enum Scope : std::uint8_t { kCode = 1, kStrings = 2, kBoth = 3 };
enum Flags : std::uint8_t { kNone = 0, kCase = 1, kWordStart = 2, kWordEnd = 4, kWord = 6 };

struct Pattern {
  std::string_view literal;
  Rule rule;
  std::uint8_t scope;
  std::uint8_t flags;
  Check check;
};

// ---- helpers --------------------------------------------------------------------------------

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with_word(std::string_view s, std::string_view word) {
  return ends_with(s, word) &&
         (s.size() == word.size() || !is_word(s[s.size() - word.size() - 1]));
}
bool starts_with_word(std::string_view s, std::string_view word) {
  return starts_with(s, word) && (s.size() == word.size() || !is_word(s[word.size()]));
}
std::size_t skip_blanks(std::string_view s, std::size_t p) {
  while (p < s.size() && is_blank(s[p])) ++p;
  return p;
}
// Whether `word` occurs in text with no word character on either side.
bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t p = text.find(word); p != std::string_view::npos; p = text.find(word, p + 1)) {
    std::size_t e = p + word.size();
    if ((p == 0 || !is_word(text[p - 1])) && (e >= text.size() || !is_word(text[e]))) return true;
  }
  return false;
}
// Offset just past the bracket closing the one opened before `p` (depth 1 at p), or npos.
std::size_t past_closing(std::string_view s, std::size_t p, char open, char close,
                         std::size_t limit = 400) {
  int depth = 1;
  for (std::size_t end = std::min(s.size(), p + limit); p < end; ++p) {
    if (s[p] == open) ++depth;
    if (s[p] == close && --depth == 0) return p + 1;
  }
  return std::string_view::npos;
}
// Parses an unsigned integer literal at p; nullopt when there is none.
std::optional<long long> integer_at(std::string_view s, std::size_t p) {
  if (p >= s.size() || s[p] < '0' || s[p] > '9') return std::nullopt;
  long long v = 0;
  for (; p < s.size() && ((s[p] >= '0' && s[p] <= '9') || s[p] == '_'); ++p)
    if (s[p] != '_' && v < (1LL << 40)) v = v * 10 + (s[p] - '0');
  return v;
}
template <typename List>
bool in_list(std::string_view s, const List& list) {
  for (std::string_view x : list)
    if (s == x) return true;
  return false;
}
bool in_list(std::string_view s, std::initializer_list<std::string_view> list) {
  return in_list<std::initializer_list<std::string_view>>(s, list);
}

// ---- torch / timing / comparison reassignment -----------------------------------------------

constexpr std::string_view kComparisonNames[] = {
    "allclose", "isclose", "equal", "assert_close", "assert_allclose", "testing",
    "array_equal", "__eq__"};
constexpr std::string_view kTimingNames[] = {
    "Event", "synchronize", "elapsed_time", "record", "current_stream", "default_stream",
    "Timer", "perf_counter", "perf_counter_ns"};
// Global precision switches: tf32_or_matmul_precision reports them.
constexpr std::string_view kPrecisionSwitches[] = {
    "allow_tf32", "fp32_precision", "allow_fp16_reduced_precision_reduction",
    "allow_bf16_reduced_precision_reduction"};

}  // namespace

std::optional<Rule> classify_name(std::string_view name, bool target) {
  std::string_view root = name.substr(0, name.find('.'));
  auto any_part = [&](const auto& list) {
    std::size_t b = 0;
    while (b <= name.size()) {
      std::size_t e = name.find('.', b);
      if (e == std::string_view::npos) e = name.size();
      if (in_list(name.substr(b, e - b), list)) return true;
      b = e + 1;
    }
    return false;
  };
  if (name.find('.') == std::string_view::npos) return std::nullopt;
  if (root == "time") return Rule::timing_tampering;
  bool torchy = in_list(root, {"torch", "F", "nn"});
  if (!torchy && !in_list(root, {"np", "numpy", "math"})) return std::nullopt;
  if (any_part(kComparisonNames)) return Rule::comparison_tampering;
  if (!torchy) return std::nullopt;
  if (any_part(kTimingNames)) return Rule::timing_tampering;
  if (!target || any_part(kPrecisionSwitches)) return std::nullopt;
  return Rule::torch_attribute_reassignment;
}

namespace {

// torch.library.Library("aten", "IMPL") / torch.library.impl("aten::add", ...): overrides an
// aten kernel for everyone, the reference included.
std::optional<Emit> check_library_override(const Hit& h) {
  if (h.ctx.views.line(h.ctx.source, h.line).find("aten") == std::string_view::npos)
    return std::nullopt;
  return h.emit();
}

// TORCH_LIBRARY_IMPL(aten, CUDA, m): the same from C++.
std::optional<Emit> check_library_macro(const Hit& h) {
  std::size_t p = skip_blanks(h.view, h.end);
  if (p >= h.view.size() || h.view[p] != '(') return std::nullopt;
  if (!starts_with_word(h.view.substr(skip_blanks(h.view, p + 1)), "aten")) return std::nullopt;
  return h.emit();
}

// A C++ definition (not a call) of a CUDA timing/sync function: symbol interposition.
std::optional<Emit> check_cuda_definition(const Hit& h) {
  std::string_view before = trim(h.before());
  if (before.empty() || !is_word(before.back()) || ends_with_word(before, "return"))
    return std::nullopt;
  std::size_t p = h.end;
  while (p < h.view.size() && is_word(h.view[p])) ++p;
  p = skip_blanks(h.view, p);
  if (p >= h.view.size() || h.view[p] != '(') return std::nullopt;
  return h.emit();
}

// ---- side streams ---------------------------------------------------------------------------

// kernel<<<grid, block, shmem, stream>>>: the stream must be torch's current one (or default).
std::optional<Emit> check_launch(const Hit& h) {
  std::size_t close = h.view.find(">>>", h.end);
  if (close == std::string_view::npos || close - h.end > 600) return std::nullopt;
  std::string_view config = h.view.substr(h.end, close - h.end);
  std::array<std::string_view, 5> args{};
  std::size_t count = 0, start = 0;
  int depth = 0;
  for (std::size_t k = 0; k <= config.size(); ++k) {
    char c = k < config.size() ? config[k] : ',';
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth <= 0) {
      if (count < args.size()) args[count] = trim(config.substr(start, k - start));
      ++count;
      start = k + 1;
    }
  }
  if (count < 4) return std::nullopt;
  std::string_view stream = args[3];
  if (in_list(stream, {"0", "0L", "nullptr", "NULL", "cudaStreamLegacy"}))
    return std::nullopt;
  if (stream.find("cudaStreamPerThread") != std::string_view::npos) return h.emit();
  if (stream.find("getCurrentCUDAStream") != std::string_view::npos) return std::nullopt;
  std::string_view head = dotted_name_at(stream, 0);
  head = head.substr(0, head.find('.'));
  for (const auto& name : h.ctx.current_stream_names)
    if (head == name) return std::nullopt;
  // A stream passed down from a caller that took torch's current stream is fine.
  if (h.ctx.asks_current_stream) return std::nullopt;
  return h.emit();
}

// ---- imports and module use -----------------------------------------------------------------

// `import gc`, `from gc import ...`, `gc.get_objects()`; not a variable that happens to be
// called gc.
std::optional<Emit> check_module_use(const Hit& h) {
  if (h.end < h.view.size() && h.view[h.end] == '.') return h.emit();
  std::string_view t = trim(h.line_text());
  if (starts_with_word(t, "import") || starts_with_word(t, "from")) return h.emit();
  return std::nullopt;
}

// #pragma omp parallel (a literal with a blank would slow the matcher: blanks are skipped).
std::optional<Emit> check_openmp(const Hit& h) {
  if (!starts_with_word(h.view.substr(skip_blanks(h.view, h.end), 4), "omp")) return std::nullopt;
  return h.emit();
}

// exec(...), eval(...), compile(...): the builtins, not model.eval() or torch.compile().
std::optional<Emit> check_builtin_call(const Hit& h) {
  if (h.begin > 0 && h.view[h.begin - 1] == '.') return std::nullopt;
  return h.emit();
}

// ---- tensor subclasses ----------------------------------------------------------------------

std::optional<Emit> check_class_bases(const Hit& h) {
  std::size_t p = skip_blanks(h.view, h.end);
  std::string_view name = dotted_name_at(h.view, p);
  if (name.empty()) return std::nullopt;
  p = skip_blanks(h.view, p + name.size());
  if (p >= h.view.size() || h.view[p] != '(') return std::nullopt;
  std::size_t close = past_closing(h.view, p + 1, '(', ')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view bases = h.view.substr(p, close - p);
  for (auto base : {"Tensor", "_TensorBase", "TensorBase", "Parameter"})
    if (has_word(bases, base)) return h.emit();
  return std::nullopt;
}

// ---- precision ------------------------------------------------------------------------------

// torch.float16 as a target dtype; not `x.dtype == torch.float16` (a dtype check).
std::optional<Emit> check_dtype_target(const Hit& h) {
  std::string_view before = trim(h.before());
  // Look through a tuple or set being tested: `x.dtype in (torch.float16, torch.bfloat16)`.
  for (;;) {
    if (ends_with(before, ",")) {
      before = trim(before.substr(0, before.size() - 1));
      while (!before.empty() && (is_word(before.back()) || before.back() == '.'))
        before.remove_suffix(1);
      before = trim(before);
    } else if (ends_with(before, "(") || ends_with(before, "[") || ends_with(before, "{")) {
      std::string_view inner = trim(before.substr(0, before.size() - 1));
      if (!inner.empty() && is_word(inner.back()) && !ends_with_word(inner, "in")) break;  // a call
      before = inner;
    } else {
      break;
    }
  }
  if (ends_with(before, "==") || ends_with(before, "!=") || ends_with_word(before, "is") ||
      ends_with_word(before, "not") || ends_with_word(before, "in"))
    return std::nullopt;
  return h.emit();
}

// ---- result caching -------------------------------------------------------------------------

// data_ptr() / id(x) used as a key, as CPython's parser sees it (python_facts.py): a
// subscript, a dict key, a set member, hash(), .get/.setdefault/.pop, the left of `in`, or a
// value assigned to a name containing "key" or "cache", also inside a tuple. A list (say
// `args=[A.data_ptr(), ...]` of a kernel launch) is not hashable, hence no key. A key that also
// holds `._version` caches something derived from a parameter (a transposed weight) and is
// invalidated when it changes: info, not a warning.
std::optional<Emit> check_key_use(const Hit& h) {
  if (!h.ctx.facts) return std::nullopt;
  std::optional<Emit> found;
  for (auto [line, versioned] : h.ctx.facts->key_uses)
    if (line == h.line && (!found || !versioned))
      found = Emit{Rule::result_caching, versioned ? Severity::info : Severity::warning};
  return found;
}

// @functools.lru_cache / @cache / @cached_property: on forward a warning; elsewhere info (fine
// for configs, but a tensor argument makes it an id()-keyed output cache).
std::optional<Emit> check_cache_decorator(const Hit& h) {
  if (!h.ctx.facts) return std::nullopt;
  for (auto [line, forward] : h.ctx.facts->cache_decorators)
    if (line == h.line) return Emit{Rule::result_caching, forward ? Severity::warning : Severity::info};
  return std::nullopt;
}

// C++: `static torch::Tensor cached;` keeps a tensor across calls.
std::optional<Emit> check_static_tensor(const Hit& h) {
  std::string_view rest = h.after();
  std::size_t stop = rest.find_first_of("=;(");
  if (rest.substr(0, stop).find("Tensor") == std::string_view::npos) return std::nullopt;
  return h.emit();
}

// ---- rng ------------------------------------------------------------------------------------

// torch.manual_seed(, torch.cuda.manual_seed_all(, np.random.seed(, random.seed(; not a
// private generator's g.manual_seed(.
std::optional<Emit> check_rng(const Hit& h) {
  std::size_t q = h.begin;
  while (q > 0 && (is_word(h.view[q - 1]) || h.view[q - 1] == '.')) --q;
  std::string_view owner = h.view.substr(q, h.begin - q);
  std::size_t p = h.end;
  while (p < h.view.size() && is_word(h.view[p])) ++p;
  p = skip_blanks(h.view, p);
  if (p >= h.view.size() || h.view[p] != '(') return std::nullopt;
  if (starts_with(owner, "torch.") || owner == "cuda." || ends_with(owner, "random."))
    return h.emit();
  return std::nullopt;
}

// ---- shapes ---------------------------------------------------------------------------------

bool literal_shape_value(std::string_view s, std::size_t p) {
  p = skip_blanks(s, p);
  if (auto v = integer_at(s, p)) return *v > 1;  // 0 and 1: empty and broadcast guards
  if (p < s.size() && (s[p] == '(' || s[p] == '[' || s[p] == '{'))
    return integer_at(s, skip_blanks(s, p + 1)).has_value();
  return starts_with(s.substr(p), "torch.Size(");
}

// x.shape == (4096, 16384), x.size(0) != 4096, tuple(x.shape) in TEST_SHAPES, 4096 == x.size(1).
std::optional<Emit> check_shape(const Hit& h) {
  const std::string_view v = h.view;
  std::size_t p = h.end;
  if (v[h.end - 1] == '(') p = past_closing(v, p, '(', ')', 80);
  if (p == std::string_view::npos) return std::nullopt;
  if (p < v.size() && v[p] == '[') p = past_closing(v, p + 1, '[', ']', 80);
  if (p == std::string_view::npos) return std::nullopt;
  while (p < v.size() && (is_blank(v[p]) || v[p] == ')')) ++p;
  std::string_view rest = v.substr(p, 16);
  if (starts_with(rest, "==") || starts_with(rest, "!=")) {
    if (literal_shape_value(v, p + 2)) return h.emit();
    return std::nullopt;
  }
  if (starts_with_word(rest, "in") ||
      (starts_with_word(rest, "not") && starts_with_word(trim(rest.substr(3)), "in")))
    return h.emit();
  // The literal on the left.
  std::size_t q = h.begin;
  while (q > h.line_start() && (is_word(v[q - 1]) || v[q - 1] == '.')) --q;
  while (q > h.line_start() && is_blank(v[q - 1])) --q;
  if (q < h.line_start() + 2) return std::nullopt;
  std::string_view op = v.substr(q - 2, 2);
  if (op != "==" && op != "!=") return std::nullopt;
  q -= 2;
  while (q > h.line_start() && is_blank(v[q - 1])) --q;
  std::size_t d = q;
  while (d > h.line_start() && v[d - 1] >= '0' && v[d - 1] <= '9') --d;
  if (d < q && (d == h.line_start() || !is_word(v[d - 1])) && *integer_at(v, d) > 1)
    return h.emit();
  return std::nullopt;
}

// ---- silent fallback ------------------------------------------------------------------------

std::optional<Emit> check_in_forward(const Hit& h) {
  if (!h.ctx.in_forward(h.line)) return std::nullopt;
  return h.emit();
}

// ---- the table ------------------------------------------------------------------------------

const std::vector<Pattern>& patterns() {
  using R = Rule;
  static const std::vector<Pattern> table = {
      // silent_fallback (try/except is found from the block structure, python_blocks.cpp)
      {"suppress(", R::silent_fallback, kCode, kWordStart, check_in_forward},

      // side_stream
      {".Stream(", R::side_stream, kCode, kCase, nullptr},
      {"ExternalStream(", R::side_stream, kCode, kCase | kWordStart, nullptr},
      {".set_stream(", R::side_stream, kCode, kCase, nullptr},
      {"cudaStreamCreate", R::side_stream, kStrings, kCase | kWordStart, nullptr},
      {"cuStreamCreate", R::side_stream, kStrings, kCase | kWordStart, nullptr},
      {"getStreamFromPool", R::side_stream, kStrings, kCase | kWordStart, nullptr},
      {"getStreamFromExternal", R::side_stream, kStrings, kCase | kWordStart, nullptr},
      {"setCurrentCUDAStream", R::side_stream, kStrings, kCase | kWordStart, nullptr},
      {"cudaStreamNonBlocking", R::side_stream, kStrings, kCase | kWord, nullptr},
      {"cudaStreamPerThread", R::side_stream, kStrings, kCase | kWord, nullptr},
      {"<<<", R::side_stream, kStrings, kNone, check_launch},

      // threads_or_processes
      {"threading", R::threads_or_processes, kCode, kCase | kWord, check_module_use},
      {"_thread", R::threads_or_processes, kCode, kCase | kWord, check_module_use},
      {"multiprocessing", R::threads_or_processes, kCode, kCase | kWord, check_module_use},
      {"concurrent", R::threads_or_processes, kCode, kCase | kWord, check_module_use},
      {"subprocess", R::threads_or_processes, kCode, kCase | kWord, check_module_use},
      {"ThreadPoolExecutor", R::threads_or_processes, kCode, kCase | kWord, nullptr},
      {"ProcessPoolExecutor", R::threads_or_processes, kCode, kCase | kWord, nullptr},
      {"os.fork", R::threads_or_processes, kCode, kCase | kWordStart, nullptr},
      {"os.system(", R::threads_or_processes, kCode, kCase | kWordStart, nullptr},
      {"os.popen(", R::threads_or_processes, kCode, kCase | kWordStart, nullptr},
      {"os.spawn", R::threads_or_processes, kCode, kCase | kWordStart, nullptr},
      {"std::thread", R::threads_or_processes, kStrings, kCase | kWord, nullptr},
      {"std::jthread", R::threads_or_processes, kStrings, kCase | kWord, nullptr},
      {"std::async", R::threads_or_processes, kStrings, kCase | kWord, nullptr},
      {"pthread_create", R::threads_or_processes, kStrings, kCase | kWord, nullptr},
      {"#pragma", R::threads_or_processes, kStrings, kCase | kWordEnd, check_openmp},
      {"fork(", R::threads_or_processes, kStrings, kCase | kWordStart, nullptr},
      {"popen(", R::threads_or_processes, kStrings, kCase | kWordStart, nullptr},
      {"system(", R::threads_or_processes, kStrings, kCase | kWordStart, check_builtin_call},

      // torch_attribute_reassignment, timing_tampering, comparison_tampering by assignment,
      // setattr/delattr or a kept reference: from the parse tree (python_rules.cpp)
      {"torch.library", R::torch_attribute_reassignment, kCode, kCase | kWordStart,
       check_library_override},
      {"TORCH_LIBRARY_IMPL", R::torch_attribute_reassignment, kStrings, kCase | kWord,
       check_library_macro},
      {"TORCH_LIBRARY_FRAGMENT", R::torch_attribute_reassignment, kStrings, kCase | kWord,
       check_library_macro},
      {"cudaEvent", R::timing_tampering, kStrings, kCase | kWordStart, check_cuda_definition},
      {"cuEvent", R::timing_tampering, kStrings, kCase | kWordStart, check_cuda_definition},
      {"cudaDeviceSynchronize", R::timing_tampering, kStrings, kCase | kWord,
       check_cuda_definition},
      {"cudaStreamSynchronize", R::timing_tampering, kStrings, kCase | kWord,
       check_cuda_definition},

      // tensor_subclass
      {"class", R::tensor_subclass, kCode, kCase | kWord, check_class_bases},
      {"__torch_function__", R::tensor_subclass, kCode, kCase, nullptr},
      {"__torch_dispatch__", R::tensor_subclass, kCode, kCase, nullptr},
      {"TorchDispatchMode", R::tensor_subclass, kCode, kCase | kWord, nullptr},
      {"TorchFunctionMode", R::tensor_subclass, kCode, kCase | kWord, nullptr},
      {"_make_subclass", R::tensor_subclass, kCode, kCase | kWord, nullptr},
      {"_make_wrapper_subclass", R::tensor_subclass, kCode, kCase | kWord, nullptr},
      {"torch.overrides", R::tensor_subclass, kCode, kCase | kWord, nullptr},

      // precision_downcast
      {".half()", R::precision_downcast, kBoth, kCase, nullptr},
      {".bfloat16()", R::precision_downcast, kBoth, kCase, nullptr},
      {"torch.float16", R::precision_downcast, kCode, kCase | kWord, check_dtype_target},
      {"torch.half", R::precision_downcast, kCode, kCase | kWord, check_dtype_target},
      {"torch.bfloat16", R::precision_downcast, kCode, kCase | kWord, check_dtype_target},
      {"torch.float8", R::precision_downcast, kCode, kCase | kWordStart, check_dtype_target},
      {"autocast", R::precision_downcast, kCode, kCase | kWord, nullptr},
      {"torch.amp", R::precision_downcast, kCode, kCase | kWord, nullptr},
      {"cuda.amp", R::precision_downcast, kCode, kCase | kWord, nullptr},
      {"__half", R::precision_downcast, kStrings, kCase | kWordStart, nullptr},
      {"__nv_bfloat16", R::precision_downcast, kStrings, kCase | kWordStart, nullptr},
      {"__nv_fp8", R::precision_downcast, kStrings, kCase | kWordStart, nullptr},
      {"half2", R::precision_downcast, kStrings, kCase | kWord, nullptr},
      {"__float2half", R::precision_downcast, kStrings, kCase | kWordStart, nullptr},
      {"__float2bfloat16", R::precision_downcast, kStrings, kCase | kWordStart, nullptr},
      {"kHalf", R::precision_downcast, kStrings, kCase | kWord, nullptr},
      {"kBFloat16", R::precision_downcast, kStrings, kCase | kWord, nullptr},
      {"::Half", R::precision_downcast, kStrings, kCase | kWordEnd, nullptr},
      {"::BFloat16", R::precision_downcast, kStrings, kCase | kWordEnd, nullptr},
      {".f16", R::precision_downcast, kStrings, kCase | kWordEnd, nullptr},
      {".bf16", R::precision_downcast, kStrings, kCase | kWordEnd, nullptr},

      // tf32_or_matmul_precision: switches and TF32 APIs, not identifiers like matmul_tf32
      {"allow_tf32", R::tf32_or_matmul_precision, kBoth, kCase | kWord, nullptr},
      {"set_float32_matmul_precision", R::tf32_or_matmul_precision, kBoth, kCase, nullptr},
      {"fp32_precision", R::tf32_or_matmul_precision, kBoth, kCase, nullptr},
      {"reduced_precision_reduction", R::tf32_or_matmul_precision, kBoth, kCase, nullptr},
      {"AllowTF32", R::tf32_or_matmul_precision, kStrings, kCase, nullptr},
      {"Float32MatmulPrecision", R::tf32_or_matmul_precision, kStrings, kCase, nullptr},
      {"cublasSetMathMode", R::tf32_or_matmul_precision, kStrings, kCase | kWord, nullptr},
      {"CUBLAS_COMPUTE_32F_FAST", R::tf32_or_matmul_precision, kStrings, kCase | kWordStart,
       nullptr},
      {"CUBLAS_TF32_TENSOR_OP_MATH", R::tf32_or_matmul_precision, kStrings, kCase | kWord,
       nullptr},
      {"CUBLAS_TENSOR_OP_MATH", R::tf32_or_matmul_precision, kStrings, kCase | kWord, nullptr},
      {"__float_to_tf32", R::tf32_or_matmul_precision, kStrings, kCase | kWord, nullptr},
      // wmma::precision::tf32, PTX cvt.rna.tf32.f32 / mma ...tf32, Triton input_precision="tf32"
      {"tf32", R::tf32_or_matmul_precision, kStrings, kWordStart, nullptr},

      // ctypes
      {"ctypes", R::ctypes, kCode, kCase | kWord, check_module_use},
      {"_ctypes", R::ctypes, kCode, kCase | kWord, check_module_use},
      {"cffi", R::ctypes, kCode, kCase | kWord, check_module_use},
      {"CDLL", R::ctypes, kCode, kCase | kWord, nullptr},
      {"dlopen", R::ctypes, kStrings, kCase | kWord, nullptr},
      {"dlsym", R::ctypes, kStrings, kCase | kWord, nullptr},

      // introspection
      {"gc", R::introspection, kCode, kCase | kWord, check_module_use},
      {"inspect", R::introspection, kCode, kCase | kWord, check_module_use},
      {"builtins", R::introspection, kCode, kCase | kWord, check_module_use},
      {"_getframe", R::introspection, kCode, kCase | kWord, nullptr},
      {"currentframe", R::introspection, kCode, kCase | kWord, nullptr},
      {"f_back", R::introspection, kCode, kCase | kWord, nullptr},
      {"f_locals", R::introspection, kCode, kCase | kWord, nullptr},
      {"f_globals", R::introspection, kCode, kCase | kWord, nullptr},
      {"tb_frame", R::introspection, kCode, kCase | kWord, nullptr},
      {"gi_frame", R::introspection, kCode, kCase | kWord, nullptr},
      {"__globals__", R::introspection, kCode, kCase, nullptr},
      {"__builtins__", R::introspection, kCode, kCase, nullptr},
      {"__closure__", R::introspection, kCode, kCase, nullptr},
      {"__subclasses__", R::introspection, kCode, kCase, nullptr},
      {"sys.modules", R::introspection, kCode, kCase | kWord, nullptr},
      {"settrace", R::introspection, kCode, kCase | kWord, nullptr},
      {"setprofile", R::introspection, kCode, kCase | kWord, nullptr},
      {"get_referrers", R::introspection, kCode, kCase | kWord, nullptr},

      // environment_read
      {"environ", R::environment_read, kBoth, kCase | kWord, nullptr},
      {"getenv", R::environment_read, kBoth, kCase | kWord, nullptr},
      {"secure_getenv", R::environment_read, kStrings, kCase | kWord, nullptr},
      {"putenv", R::environment_read, kBoth, kCase | kWord, nullptr},
      {"setenv", R::environment_read, kBoth, kCase | kWord, nullptr},

      // file_io
      {"open(", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"pathlib", R::file_io, kCode, kCase | kWord, check_module_use},
      {"Path(", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"os.listdir", R::file_io, kCode, kCase | kWord, nullptr},
      {"os.scandir", R::file_io, kCode, kCase | kWord, nullptr},
      {"os.walk", R::file_io, kCode, kCase | kWord, nullptr},
      {"os.remove", R::file_io, kCode, kCase | kWord, nullptr},
      {"os.unlink", R::file_io, kCode, kCase | kWord, nullptr},
      {"glob", R::file_io, kCode, kCase | kWord, check_module_use},
      {"shutil", R::file_io, kCode, kCase | kWord, check_module_use},
      {"pickle", R::file_io, kCode, kCase | kWord, check_module_use},
      {"tempfile", R::file_io, kCode, kCase | kWord, check_module_use},
      {"torch.load(", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"torch.save(", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"np.load(", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"np.save", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"numpy.load(", R::file_io, kCode, kCase | kWordStart, nullptr},
      {"/proc/", R::file_io, kBoth, kCase, nullptr},
      {"/dev/shm", R::file_io, kBoth, kCase, nullptr},
      {"fopen(", R::file_io, kStrings, kCase | kWordStart, nullptr},
      {"freopen(", R::file_io, kStrings, kCase | kWordStart, nullptr},
      {"open(", R::file_io, kStrings, kCase | kWordStart, check_builtin_call},
      {"opendir(", R::file_io, kStrings, kCase | kWordStart, nullptr},
      {"ifstream", R::file_io, kStrings, kCase | kWord, nullptr},
      {"ofstream", R::file_io, kStrings, kCase | kWord, nullptr},
      {"fstream", R::file_io, kStrings, kCase | kWord, nullptr},
      {"mmap(", R::file_io, kStrings, kCase | kWordStart, nullptr},

      // access_policy_window (any case: cudaAccessPolicyWindow, accessPolicyWindow, ...)
      {"accesspolicywindow", R::access_policy_window, kBoth, kNone, nullptr},
      {"persistingl2", R::access_policy_window, kBoth, kNone, nullptr},
      {"hitprop", R::access_policy_window, kBoth, kNone, nullptr},
      {"missprop", R::access_policy_window, kBoth, kNone, nullptr},
      {"accessproperty", R::access_policy_window, kBoth, kNone, nullptr},

      // result_caching (outputs saved on self in forward: python_rules.cpp)
      {"data_ptr()", R::result_caching, kCode, kCase | kWordStart, check_key_use},
      {"id(", R::result_caching, kCode, kCase | kWordStart, check_key_use},
      {"lru_cache", R::result_caching, kCode, kCase | kWord, check_cache_decorator},
      {"cache", R::result_caching, kCode, kCase | kWord, check_cache_decorator},
      {"cached_property", R::result_caching, kCode, kCase | kWord, check_cache_decorator},
      {"weakref", R::result_caching, kCode, kCase | kWord, check_module_use},
      {"static", R::result_caching, kStrings, kCase | kWord, check_static_tensor},

      // rng_reseed
      {"manual_seed", R::rng_reseed, kCode, kCase | kWordStart, check_rng},
      {"set_rng_state", R::rng_reseed, kCode, kCase | kWordStart, check_rng},
      {"seed", R::rng_reseed, kCode, kCase | kWord, check_rng},
      {"seed_all", R::rng_reseed, kCode, kCase | kWord, check_rng},

      // dynamic_code
      {"exec(", R::dynamic_code, kCode, kCase | kWordStart, check_builtin_call},
      {"eval(", R::dynamic_code, kCode, kCase | kWordStart, check_builtin_call},
      {"compile(", R::dynamic_code, kCode, kCase | kWordStart, check_builtin_call},
      {"__import__", R::dynamic_code, kCode, kCase | kWord, nullptr},
      {"importlib", R::dynamic_code, kCode, kCase | kWord, check_module_use},
      {"base64", R::dynamic_code, kCode, kCase | kWord, check_module_use},
      {"marshal", R::dynamic_code, kCode, kCase | kWord, check_module_use},
      {"zlib", R::dynamic_code, kCode, kCase | kWord, check_module_use},
      {"codecs", R::dynamic_code, kCode, kCase | kWord, check_module_use},

      // shape_specialisation (info)
      {".shape", R::shape_specialisation, kCode, kCase | kWordEnd, check_shape},
      {".size(", R::shape_specialisation, kBoth, kCase, check_shape},
      {".numel()", R::shape_specialisation, kBoth, kCase, check_shape},
      {".sizes()", R::shape_specialisation, kStrings, kCase, check_shape},
  };
  return table;
}

// The patterns of one view, and a matcher over their literals.
struct ViewMatcher {
  std::vector<const Pattern*> patterns;
  LiteralMatcher matcher;

  explicit ViewMatcher(std::uint8_t scope) {
    std::vector<std::string_view> literals;
    for (const auto& p : detail::patterns())
      if (p.scope & scope) {
        patterns.push_back(&p);
        literals.push_back(p.literal);
      }
    matcher = LiteralMatcher(literals);
  }

  void run(ScanContext& ctx, std::string_view view) const {
    matcher.scan(view, [&](std::uint32_t id, std::size_t end) {
      const Pattern& p = *patterns[id];
      const std::size_t begin = end - p.literal.size();
      if ((p.flags & kCase) && view.substr(begin, p.literal.size()) != p.literal) return;
      if ((p.flags & kWordStart) && begin > 0 && is_word(view[begin - 1])) return;
      if ((p.flags & kWordEnd) && end < view.size() && is_word(view[end])) return;
      Hit hit{ctx, view, begin, end, ctx.views.line_of(begin), p.rule};
      if (!p.check) {
        ctx.mark(p.rule, hit.line, default_severity(p.rule));
      } else if (auto e = p.check(hit)) {
        ctx.mark(e->rule, hit.line, e->severity);
      }
    });
  }
};

}  // namespace

Severity default_severity(Rule rule) {
  return kRules[static_cast<std::size_t>(rule)].severity == "info" ? Severity::info
                                                                   : Severity::warning;
}

void run_literal_rules(ScanContext& ctx) {
  static const ViewMatcher code(kCode);
  static const ViewMatcher strings(kStrings);
  if (ctx.python) code.run(ctx, ctx.views.code);
  strings.run(ctx, ctx.views.strings);
}

}  // namespace detail

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> all(detail::kRules.begin(), detail::kRules.end());
  return all;
}

}  // namespace kbv::scan
