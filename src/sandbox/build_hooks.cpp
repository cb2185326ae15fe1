#include "sandbox/build_hooks.hpp"

#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include "core/binding_prelude.hpp"

namespace py = pybind11;

namespace kbv::sandbox {
namespace {

// Runs inside the worker's interpreter before the candidate is imported. Plumbing only: no
// evaluation logic lives here.
constexpr const char* kHookSource = R"PY(
import contextlib, inspect, os, re, shlex, subprocess, sys, time
import torch.utils.cpp_extension as _ext

class KbvNeedsCuda(RuntimeError):
    pass

class KbvNeedsDevice(RuntimeError):
    pass

_OWN_MODULE = re.compile(r"PYBIND11_MODULE\s*\(\s*(?!TORCH_EXTENSION_NAME\b)\w+")

# A CUDA source's own #include <torch/extension.h> costs nvcc's three front-end passes about half
# of the build's CPU (docs/scale.md), and load_inline already puts torch/types.h above it: that
# is torch::Tensor, the factories, TORCH_CHECK and the dtypes, all a kernel's host code uses. The
# line becomes a comment (line numbers stay). A source naming what only the rest of the header
# declares keeps it, as does one whose #if tests a macro it does not define itself (the header
# defines ~2,200 more, TORCH_VERSION_MAJOR among them, and an undefined one is silently 0); one
# that fails to compile without it is compiled again as written.
_TORCH_EXTENSION_H = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][ \t]*(?://[^\n]*)?$', re.M)
_BEYOND_TYPES_H = re.compile(
    r"\b(?:pybind11|PYBIND11_\w+|py::|THP\w+|torch::(?:nn|optim|jit|data|fft|special|linalg|cuda|serialize"
    r"|nested|sparse|python|utils|mps|xpu|autograd)\b)")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)[ \t]*(.*)$")
_BOTH = {"defined", "CUDART_VERSION", "CUDA_VERSION", "NDEBUG"}  # the same either way (flags, cuda*.h)
_AS_WRITTEN = "kbv-cuda-as-written"  # in an extension's build folder: its slim compile failed once
_RAW_STRING = re.compile(r'(?:u8|[uUL])?R"([^ ()\\\t\n]{0,16})\(')

def _in_number(text, i):
    # Whether the ' at i is a digit separator (1'024): the token it is in began with a digit.
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    return j < i and text[j].isdigit()

def _directive_lines(text):
    # The source's preprocessor lines as the preprocessor sees them: line splices deleted first
    # (CR LF too), every comment one space, string, character and raw string literals skipped
    # whole (a "/*" or a "#endif" in one is no comment, no directive).
    text = re.sub(r"\\\n", "", text.replace("\r\n", "\n").replace("\r", "\n"))
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        raw = _RAW_STRING.match(text, i) if c in "uULR" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if raw:
            j = text.find(")" + raw.group(1) + '"', raw.end())
            i = n if j < 0 else j + len(raw.group(1)) + 2
            out.append('""')
            continue
        if c in "\"'" and not (c == "'" and _in_number(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1 if j < n and text[j] == c else j  # an unterminated one ends at its line's end
            continue
        out.append(c)
        i += 1
    return [m.groups() for m in map(_DIRECTIVE.match, "".join(out).split("\n")) if m]

_compiler_macros = None

def _predefined(name):
    # Defined by the compiler itself (the same whatever the source includes): the host compiler's
    # own set, and nvcc's __CUDA*/__NVCC* names. A name a standard or torch header defines
    # (__cpp_lib_to_chars) is not.
    global _compiler_macros
    if name.startswith(("__CUDA", "__NVCC", "__NVCOMPILER", "__HIP", "__has_")):
        return True
    if _compiler_macros is None:
        try:
            dump = subprocess.run(["c++", "-dM", "-E", "-x", "c++", "-std=c++17", "/dev/null"],
                                  capture_output=True, text=True, timeout=60).stdout
            _compiler_macros = set(re.findall(r"^#define (\w+)", dump, re.M))
        except (OSError, subprocess.SubprocessError):
            _compiler_macros = set()
    return name in _compiler_macros

def _tests_header_macros(text):
    # Whether a conditional could take another branch without the header: it tests a name that
    # is neither the compiler's nor, at that point, the source's own (defined outside every
    # conditional, not undefined since; a fall-back "#ifndef X / #define X" is the header's X
    # where the header defines it), directly or through the body of an own macro (parameters
    # aside; one that pastes or stringizes tokens could make any name).
    own, depth = {}, 0
    for word, rest in _directive_lines(text):
        if word in ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"):
            condition = re.sub(r"__has_include(?:_next)?\s*\(\s*(?:<[^>]*>|\"[^\"]*\")\s*\)", "1", rest)
            pending, seen = re.findall(r"\b[A-Za-z_]\w*", condition), set()
            while pending:
                name = pending.pop()
                if name in seen or name in _BOTH or _predefined(name):
                    continue
                seen.add(name)
                if name not in own:
                    return True
                params, body = own[name]
                if "#" in body:
                    return True
                pending += [w for w in re.findall(r"\b[A-Za-z_]\w*", body) if w not in params]
            if word in ("if", "ifdef", "ifndef"):
                depth += 1
        elif word == "endif":
            depth -= 1
        elif word in ("define", "undef"):
            m = re.match(r"(\w+)(\(([^)]*)\))?(.*)", rest)
            if not m:
                continue
            own.pop(m.group(1), None)
            if word == "define" and depth == 0:
                own[m.group(1)] = (set(re.findall(r"\w+", m.group(3) or "")), m.group(4))
    return False

def _include_risk(text, a, own_include_paths, flags_key="extra_cuda_cflags"):
    # Headers of the candidate's own (a quoted or computed include, its include paths, -I or -include in its
    # flags, nvcc's flag variables): they could test the header's macros where kbv does not look.
    # And a -D or -U of its own could name what a left-out header declares (-DDIM=64 is an error
    # in ATen's cat_meta.h under the full header): the leaner compile would build what it does not.
    if own_include_paths or any(os.environ.get(v) for v in (
            "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH")):
        return True
    if any(word == "include" and not rest.startswith("<") for word, rest in _directive_lines(text)):
        return True
    for flag in a.get(flags_key) or []:
        try:
            tokens = shlex.split(str(flag))
        except ValueError:
            return True
        for token in tokens:
            for part in re.split(r"[,=]", token):
                part = part.strip().strip("'\"")
                if re.match(r"-(?:D|U)(?:__CUDA_NO_\w+|NDEBUG)?$", part) and part not in ("-D", "-U"):
                    continue  # nvcc's own half/bfloat16 switches and NDEBUG: tested alike by every variant
                # Every -i option (-isystem, -iprefix, -isysroot, ...), g++'s long forms, a
                # response file: each can bring a header or a macro kbv does not see.
                if re.match(r"-(?:D|U|I|i|optf)|--(?:define-macro|undefine-macro|pre-include|include|imacros|sysroot"
                            r"|system-include|options-file)|@", part):
                    return True
    return False

def _drop_extension_h(sources):
    # The sources with each #include <torch/extension.h> line a comment (new lists: torch inserts
    # into what it is given).
    drop = lambda s: _TORCH_EXTENSION_H.sub("// kbv: torch/extension.h left out here (torch/types.h is above)", s)
    return drop(sources) if isinstance(sources, str) else [drop(str(s)) for s in sources]

def _without_extension_h(sources):
    text = _sources_text(sources)
    if not _TORCH_EXTENSION_H.search(text) or _BEYOND_TYPES_H.search(text) or _tests_header_macros(text):
        return None
    return _drop_extension_h(sources)

# A step further for a source that needs nothing beyond torch/types.h: types.h is all of ATen,
# every one of ~2,500 operators' declarations (ATen/Functions.h); parsing it is most of what
# nvcc's three front ends spend. The lean prelude is torch/types.h as this torch writes it, with
# the same headers in the same order, less three: ATen/Functions.h and ATen/NativeFunctions.h give
# way to the per-operator headers of every operator whose name (or a name it begins, such as
# add_out's add) the source spells, and to Functions.h's own inline overloads (at::var(t, int)
# would otherwise bind to var(t, bool unbiased)); torch/library.h (operator registration) goes.
# So every name the source spells has every overload it has under the full header, and a name it
# needs but does not spell fails to compile, and the source is compiled again with torch/types.h.
_FULL_HEADER = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?:ATen/(?:ATen|Functions|NativeFunctions|DLConvertor|autocast_mode'
                          r'|CachedTensorUtils)\.h|torch/(?:types|torch|all|extension|library)\.h)[>"]', re.M)
# What the lean prelude leaves out besides operators: torch/library.h's names and macros, the
# native implementations' namespace, the raw operator handles (at::_ops::add_Tensor).
_NEEDS_WHOLE_ATEN = re.compile(r"\b(?:TORCH_LIBRARY\w*|Library|CppFunction|dispatch|schema|class_|native|_ops"
                               r"|RegisterOperators|OperatorHandle|Dispatcher)\b")
_NOT_LEAN = "kbv-cuda-not-lean"  # in an extension's build folder: its lean compile failed once
_LEAN_MARK = "// kbv: torch/types.h without the operators this source does not name (lean prelude)"

def _includes(text):
    return re.findall(r'^[ \t]*#[ \t]*include[ \t]*<([^>]+)>', text, re.M)

def _read(path):
    with open(path) as f:
        return f.read()

# torch/types.h's own includes after ATen/ATen.h, less torch/library.h.
_TYPES_H_REST = ["optional", "torch/csrc/autograd/generated/variable_factories.h", "torch/csrc/autograd/variable.h"]
_lean_parts = None

def _lean_torch():
    # (headers, inline overloads, operator names, torch namespace block) of this torch, read from
    # its own headers once; None where they are not laid out as this was written for.
    global _lean_parts
    if _lean_parts is not None:
        return _lean_parts or None
    _lean_parts = False
    try:
        import torch
        inc = os.path.join(os.path.dirname(torch.__file__), "include")
        types_h = _read(os.path.join(inc, "torch/csrc/api/include/torch/types.h"))
        if _includes(types_h) != ["ATen/ATen.h"] + _TYPES_H_REST + ["torch/library.h"]:
            return None
        ns = re.search(r"^namespace torch \{\n(.*?)^\} // namespace torch", types_h, re.M | re.S)
        ops = {f[:-len("_ops.h")] for f in os.listdir(os.path.join(inc, "ATen/ops")) if f.endswith("_ops.h")}
        headers, overloads = [], ""
        for h in _includes(_read(os.path.join(inc, "ATen/ATen.h"))):
            if h not in ("ATen/Functions.h", "ATen/NativeFunctions.h"):
                headers.append(h)
                continue
            text = _read(os.path.join(inc, h))
            # Their own headers, less the generated per-operator ones (X.h and X_native.h of an
            # operator X; hand-written ones, such as ATen/ops/from_blob.h, have no X_ops.h and stay).
            generated = lambda i: i.startswith("ATen/ops/") and re.sub(r"(_native)?\.h$", "", i[len("ATen/ops/"):]) in ops
            headers += [i for i in _includes(text) if not generated(i)]
            if h == "ATen/Functions.h":
                body = text[text.rfind("#include"):]
                body = body[body.index("\n") + 1:]
                end = body.rfind("\n#else")
                overloads = body[:end if end >= 0 else len(body)]
                if "#" in overloads:
                    return None
        if ns is None or not overloads.strip():
            return None
        _lean_parts = (list(dict.fromkeys(headers)), overloads, ops, ns.group(1))
    except (OSError, ValueError, ImportError):
        return None
    return _lean_parts

def _named_operators(text, ops):
    names = set()
    for word in set(re.findall(r"\b[A-Za-z_]\w*", text)):
        for i in range(1, len(word) + 1):
            if (i == len(word) or word[i] == "_") and word[:i] in ops:
                names.add(word[:i])
    return sorted(names)

def _lean_prelude(sources):
    # The lean prelude and the source below it (its own extension.h line a comment), or None.
    parts = _lean_torch()
    if parts is None:
        return None
    text = _sources_text(sources)
    if _BEYOND_TYPES_H.search(text) or _tests_header_macros(text) or _NEEDS_WHOLE_ATEN.search(text):
        return None
    body = _drop_extension_h(sources)
    if _FULL_HEADER.search(_sources_text(body)):
        return None
    headers, overloads, ops, namespace = parts
    lines = [_LEAN_MARK, "#ifndef AT_PER_OPERATOR_HEADERS", "#define AT_PER_OPERATOR_HEADERS", "#endif"]
    lines += [f"#include <{h}>" for h in headers]
    lines += [f"#include <ATen/ops/{op}.h>" for op in _named_operators(text + overloads, ops)]
    lines.append(overloads.strip("\n"))
    lines += [f"#include <{h}>" for h in _TYPES_H_REST]
    lines += ["namespace torch {", namespace.rstrip("\n"), "} // namespace torch", "#include <cuda.h>", "#include <cuda_runtime.h>"]
    # The source's first line is line 4 of cuda.cu, as below load_inline's three (__LINE__,
    # TORCH_CHECK's locations, the compiler's messages).
    lines.append("#line 4")
    prelude = "\n".join(lines)
    return [prelude] + ([body] if isinstance(body, str) else [str(s) for s in body])

def _str_sources(value):
    # What torch itself takes as sources: a str or a list of str (it inserts into the list, and
    # its join takes only str).
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(x, str) for x in value))

def _cuda_attempts(a, inline, build_dir, own_include_paths):
    # The ways to try a load_inline CUDA source before as written, leanest first, each with the
    # marker its failure leaves and the cuda_sources it compiles: lean prelude, then
    # torch/types.h without its extension.h line.
    # Only what torch itself takes: an empty cuda_sources is no CUDA build, and load_inline
    # inserts into a list (a tuple fails there, and must fail here too).
    cuda, cpp = a.get("cuda_sources"), a.get("cpp_sources")
    if not inline or not cuda or a.get("no_implicit_headers") or a.get("sycl_sources"):
        return []
    if not _str_sources(cuda) or not _str_sources(cpp):
        return []
    if _include_risk(_sources_text(cuda), a, own_include_paths):
        return []
    done = lambda marker: os.path.exists(os.path.join(build_dir, marker))
    if done(_AS_WRITTEN):
        return []
    out = []
    lean = _lean_prelude(cuda) if _LEAN and _LEAN_SIGNATURE and not done(_NOT_LEAN) else None
    if lean is not None:
        out.append(("lean", _NOT_LEAN, lean))
    slim = _without_extension_h(cuda)
    if slim is not None:
        out.append(("slim", _AS_WRITTEN, slim))
    return out

def _remember(build_dir, marker):
    with contextlib.suppress(OSError):
        open(os.path.join(build_dir, marker), "w").close()

def _failed_objects(log_path, offset):
    # ninja's account of the attempt (torch runs it verbose, into the log): what failed to build
    # (main.o, cuda.cuda.o, the module's link); None when the log cannot be read.
    try:
        with open(log_path, errors="replace") as f:
            f.seek(offset)
            return set(re.findall(r"^FAILED: (?:\[code=\d+\] )?(\S+)", f.read(), re.M))
    except OSError:
        return None

# main.cpp: load_inline puts torch/extension.h above the candidate's cpp_sources, and with it all
# of torch's C++ frontend (torch/all.h), which a binding does not use: about half of a main.cpp's
# CPU with the PCH (8.1 -> 4.2 s), a third without (21.1 -> 14.1). kbv puts torch/python.h's own
# includes less the frontend's in its place (core/binding_prelude.hpp; the frontend declares no
# pybind11 caster, so a bound function takes what it took) where the cpp_sources name nothing of
# the frontend, test no macro they do not define, and bring no header or -D of their own; one
# whose main.cpp fails so is compiled again with torch/extension.h, and its folder remembers it.
_MAIN_AS_WRITTEN = "kbv-main-as-written"
_BINDING_MARK = "// kbv: torch/extension.h less torch's C++ frontend (lean binding)"
# The frontend's names a binding could spell: its namespaces, and what it declares in namespace
# torch itself that a name of ATen's or c10's could stand in for without a compile error
# (torch::load would find c10::load); the rest of what it declares there fails to compile.
_BEYOND_BINDING = re.compile(
    r"\btorch::(?:nn|optim|jit|data|fft|special|linalg|cuda|serialize|nested|sparse|python|utils|mps|xpu"
    r"|autograd|enumtype|detail)\b|\b(?:pickle_)?(?:load|save)\b")
_WHOLE_FRONTEND = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/(?:torch|all|python)\.h[>"]', re.M)
_binding_layout = None

def _binding_layout_ok(headers, frontend):
    # torch/extension.h is torch/all.h then torch/python.h, and python.h includes kbv's list and
    # the frontend's three, and declares no caster of its own: the layout the list was made for.
    global _binding_layout
    if _binding_layout is None:
        _binding_layout = False
        try:
            import torch
            inc = os.path.join(os.path.dirname(torch.__file__), "include")
            python_h = _read(os.path.join(inc, "torch/csrc/api/include/torch/python.h"))
            _binding_layout = (_includes(_read(os.path.join(inc, "torch/extension.h"))) == ["torch/all.h", "torch/python.h"]
                               and sorted(_includes(python_h)) == sorted(list(headers) + list(frontend))
                               and "type_caster" not in python_h)
        except (OSError, ImportError):
            pass
    return _binding_layout

def _binding_head(a, inline, build_dir, own_include_paths, cfg):
    # The first element of main.cpp's sources in place of load_inline's #include
    # <torch/extension.h> (one line: the judge's kbv/binding.h, precompiled beside torch's; or its
    # includes written out, then #line 2), or None to keep torch's.
    cpp = a.get("cpp_sources")
    if not inline or not _LEAN_BINDING or not _LEAN_SIGNATURE or a.get("no_implicit_headers") or a.get("use_pch"):
        return None
    cuda = a.get("cuda_sources")
    if a.get("sycl_sources") or not _str_sources(cpp) or (cuda is not None and not _str_sources(cuda)):
        return None  # what torch itself would not take, it does not take either
    if os.path.exists(os.path.join(build_dir, _MAIN_AS_WRITTEN)):
        return None
    if not _binding_layout_ok(cfg["binding_headers"], cfg["frontend_of_python_h"]):
        return None
    # What main.cpp will hold: the sources, and the bindings load_inline writes from `functions`
    # as it writes them (names and docstrings go in as they are).
    functions = a.get("functions")
    if isinstance(functions, (str, list)):
        functions = {f: f for f in ([functions] if isinstance(functions, str) else functions)}
    text = _sources_text(cpp) + "\n" + "\n".join(
        f'm.def("{k}", torch::wrap_pybind_function({k}), "{v}");' for k, v in (functions or {}).items())
    if (_BEYOND_BINDING.search(text) or _WHOLE_FRONTEND.search(text) or _tests_header_macros(text)
            or _include_risk(text, a, own_include_paths, "extra_cflags")):
        return None
    if cfg["torch_pch"] and os.path.isfile(os.path.join(cfg["torch_pch"], "kbv", "binding.h")):
        return f"#include <kbv/binding.h>  {_BINDING_MARK}"
    return f"{_BINDING_MARK}\n{cfg['binding_lines']}#line 2"

def _sources_text(value):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return "\n".join(str(v) for v in value)

def _file_text(paths):
    out = []
    for p in ([paths] if isinstance(paths, str) else (paths or [])):
        try:
            with open(p) as f:
                out.append(f.read())
        except OSError:
            pass
    return "\n".join(out)

@contextlib.contextmanager
def _into_log(log_path):
    sys.stdout.flush(); sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1); os.dup2(fd, 2); os.close(fd)
    try:
        yield
    finally:
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(saved[0], 1); os.dup2(saved[1], 2)
        os.close(saved[0]); os.close(saved[1])

@contextlib.contextmanager
def _exclusive(build_dir):
    # torch's own build lock is a plain file: a build killed mid-way (timeout, Ctrl-C, SIGKILL)
    # leaves it behind and every later build of the same source waits on it forever. An flock
    # dies with its process, so holding one we know no live builder remains and can clear it.
    import fcntl
    with open(os.path.join(build_dir, "kbv.flock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        stale = os.path.join(build_dir, "lock")
        if os.path.exists(stale):
            os.remove(stale)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)

_LEAN = True
_LEAN_BINDING = True
# load_inline's no_implicit_headers, which the lean steps need (torch 2.4 on).
_LEAN_SIGNATURE = "no_implicit_headers" in inspect.signature(_ext.load_inline).parameters

def install(cfg, records):
    global _LEAN, _LEAN_BINDING
    _LEAN = cfg["lean_prelude"]
    _LEAN_BINDING = cfg["lean_binding"]
    os.makedirs(cfg["build_dir"], exist_ok=True)
    os.environ["TORCH_EXTENSIONS_DIR"] = cfg["build_dir"]
    if cfg["cuda_arch"]:
        os.environ["TORCH_CUDA_ARCH_LIST"] = cfg["cuda_arch"]

    def wrap(original, text_of, inline=False):
        signature = inspect.signature(original)

        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            a = bound.arguments
            requested = a["name"]
            text = text_of(a)
            is_cuda = bool(a.get("with_cuda")) or bool(a.get("cuda_sources")) or any(
                str(s).endswith((".cu", ".cuh")) for s in (a.get("sources") or []))
            record = {"requested_name": requested, "unique_name": requested, "build_dir": "", "seconds": 0.0,
                      "cuda": is_cuda, "failed": False, "cuda_slim": False, "cuda_lean": False, "main_lean": False}
            records.append(record)
            if is_cuda and not cfg["device_is_cuda"]:
                record["failed"] = True
                raise KbvNeedsCuda(f"extension '{requested}' has CUDA sources; the device is a CPU")
            # nvcc's -arch=native asks the GPU what to build for (and torch then adds no arch of
            # its own): without one nvcc builds for its default arch instead, a different build
            # (or none, for Hopper-only code). Built without the GPU, that is no build to keep.
            if cfg["device_free"] and any("native" in str(f) for f in (a.get("extra_cuda_cflags") or [])):
                record["failed"] = True
                raise KbvNeedsDevice(f"extension '{requested}' asks nvcc for -arch=native: it needs the GPU to see")
            unique = requested
            if not _OWN_MODULE.search(text):
                unique = f"{requested}_kbv_{cfg['source_hash'][:12]}"
            a["name"] = unique
            build_dir = os.path.join(cfg["build_dir"], unique)
            os.makedirs(build_dir, exist_ok=True)
            a["build_directory"] = build_dir
            a["verbose"] = True
            own_include_paths = list(a.get("extra_include_paths") or [])
            if cfg["torch_pch"]:
                a["extra_include_paths"] = [cfg["torch_pch"]] + own_include_paths
                a["extra_cflags"] = list(a.get("extra_cflags") or []) + ["-Winvalid-pch", "-Wno-error=invalid-pch"]
            record.update(unique_name=unique, build_dir=build_dir)
            start = time.monotonic()
            try:
                with _exclusive(build_dir), _into_log(cfg["log_path"]):
                    passed = dict(a)
                    had_header = bool(_TORCH_EXTENSION_H.search(_sources_text(passed.get("cuda_sources"))))
                    binding = _binding_head(a, inline, build_dir, own_include_paths, cfg)
                    steps = _cuda_attempts(a, inline, build_dir, own_include_paths) + [("as written", None, passed.get("cuda_sources"))]
                    i = 0
                    while True:
                        level, marker, cuda_sources = steps[i]
                        if level == "as written" and binding is None:
                            return original(*bound.args, **bound.kwargs)
                        record["cuda_lean"] = level == "lean"
                        record["cuda_slim"] = level == "slim" or (level == "lean" and had_header)
                        record["main_lean"] = binding is not None
                        # load_inline appends to the lists it is given (its includes, the
                        # bindings of `functions`, link flags): the attempt gets copies, so a
                        # retry starts from what the candidate passed.
                        for key, value in passed.items():
                            if isinstance(value, list):
                                a[key] = list(value)
                        if binding is not None or level == "lean":
                            # load_inline's implicit headers written here, as it writes them but
                            # for what kbv puts in place of one: the lines stay where they were.
                            cpp = passed.get("cpp_sources")
                            cpp = [cpp] if isinstance(cpp, str) else list(cpp or [])
                            a["cpp_sources"] = [binding] + _drop_extension_h(cpp) if binding is not None else ["#include <torch/extension.h>"] + cpp
                            if level != "lean" and cuda_sources:
                                cuda_sources = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] + (
                                    [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources))
                            a["no_implicit_headers"] = True
                        if cuda_sources is not None:
                            a["cuda_sources"] = cuda_sources
                        versions = _ext.JIT_EXTENSION_VERSIONER.entries.get(unique)
                        log_offset = os.path.getsize(cfg["log_path"]) if os.path.exists(cfg["log_path"]) else 0
                        try:
                            return original(*bound.args, **bound.kwargs)
                        except RuntimeError as e:
                            if "Error building extension" not in str(e):
                                raise
                            failed = _failed_objects(cfg["log_path"], log_offset)
                            # Only what kbv changed is tried again: a failure of what it left as
                            # written (or of the link) is the candidate's own.
                            if (not failed or failed - {"main.o", "cuda.cuda.o"} or ("main.o" in failed and binding is None)
                                    or ("cuda.cuda.o" in failed and marker is None)):
                                raise
                        # Remembered, so that the evaluation's import (and any later one) builds
                        # nothing again: it starts from the attempt after this one.
                        if "main.o" in failed:
                            _remember(build_dir, _MAIN_AS_WRITTEN)
                            binding = None
                            print(f"kbv: main.cpp of '{requested}' did not compile with kbv's lean binding; compiling it "
                                  "with torch/extension.h", flush=True)
                        if "cuda.cuda.o" in failed:
                            _remember(build_dir, marker)
                            i += 1
                            print(f"kbv: the CUDA source of '{requested}' did not compile " +
                                  ("with kbv's lean torch/types.h; compiling it with torch/types.h" if level == "lean" else
                                   "without its #include <torch/extension.h>; compiling it as written"), flush=True)
                        for key in [k for k in a if k not in passed]:
                            del a[key]
                        a.update(passed)
                        record["cuda_slim"] = record["cuda_lean"] = record["main_lean"] = False
                        # torch's versioner as before the attempt: the same module name (or
                        # the same "_v1" a second call of one name gets) as without it, which
                        # the evaluation's import, from the same attempt at once, must find.
                        if versions is None:
                            _ext.JIT_EXTENSION_VERSIONER.entries.pop(unique, None)
                        else:
                            _ext.JIT_EXTENSION_VERSIONER.entries[unique] = versions
            except BaseException as e:
                record["failed"] = True
                # The compiler's own failure (torch's "Error building extension"), as opposed to
                # an import of the built module that raised: only the first is the same with or
                # without a GPU to see.
                record["compile_failed"] = isinstance(e, RuntimeError) and "Error building extension" in str(e)
                record["error"] = e
                raise
            finally:
                record["seconds"] = time.monotonic() - start

        wrapper.__wrapped__ = original
        return wrapper

    _ext.load_inline = wrap(_ext.load_inline,
        lambda a: _sources_text(a.get("cpp_sources")) + _sources_text(a.get("cuda_sources")), inline=True)
    _ext.load = wrap(_ext.load, lambda a: _file_text(a.get("sources")))
    return KbvNeedsCuda
)PY";

py::object& needs_cuda_type() {
  static py::object type;  // set once per worker; the interpreter outlives every use
  return type;
}

}  // namespace

void BuildHooks::preload() {
  // At import, cpp_extension asks torch.cuda.is_available(), which initialises the CUDA driver
  // unless the NVML-based check is on: on for the import alone, as it was before afterwards.
  py::exec(R"PY(
import os
_before = os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK")
os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
try:
    import torch.utils.cpp_extension
finally:
    if _before is None:
        del os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"]
    else:
        os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = _before
)PY",
           py::dict(py::arg("__builtins__") = py::module_::import("builtins")));
}

BuildHooks::BuildHooks(const BuildHookConfig& config) {
  py::dict scope;
  scope["__builtins__"] = py::module_::import("builtins");
  py::exec(kHookSource, scope);
  py::dict cfg;
  cfg["build_dir"] = config.build_dir;
  cfg["source_hash"] = config.source_hash;
  cfg["log_path"] = config.log_path;
  cfg["device_is_cuda"] = config.device_is_cuda;
  cfg["device_free"] = config.device_free;
  cfg["cuda_arch"] = config.cuda_arch;
  cfg["torch_pch"] = config.torch_pch;
  cfg["lean_prelude"] = config.lean_prelude;
  cfg["lean_binding"] = config.lean_binding;
  cfg["binding_lines"] = binding_lines();
  cfg["binding_headers"] = py::cast(std::vector<std::string>(kBindingHeaders.begin(), kBindingHeaders.end()));
  cfg["frontend_of_python_h"] = py::cast(std::vector<std::string>(kFrontendOfPythonH.begin(), kFrontendOfPythonH.end()));
  needs_cuda_type() = scope["install"](cfg, records_);
}

std::vector<ExtensionBuild> BuildHooks::extensions() const {
  std::vector<ExtensionBuild> out;
  for (auto item : records_) {
    py::dict r = item.cast<py::dict>();
    ExtensionBuild e;
    e.requested_name = py::str(r["requested_name"]).cast<std::string>();
    e.unique_name = py::str(r["unique_name"]).cast<std::string>();
    e.build_dir = r["build_dir"].cast<std::string>();
    e.seconds = r["seconds"].cast<double>();
    e.cuda = r["cuda"].cast<bool>();
    e.extension_h_left_out = r["cuda_slim"].cast<bool>();
    e.lean_prelude = r["cuda_lean"].cast<bool>();
    e.lean_binding = r["main_lean"].cast<bool>();
    out.push_back(e);
  }
  return out;
}

bool BuildHooks::failed_in_build() const {
  for (auto item : records_)
    if (item.cast<py::dict>()["failed"].cast<bool>()) return true;
  return false;
}

bool BuildHooks::compile_failed(const py::error_already_set& e) const {
  for (auto item : records_) {
    py::dict r = item.cast<py::dict>();
    if (r.contains("error") && r["error"].ptr() == e.value().ptr() && r["compile_failed"].cast<bool>()) return true;
  }
  return false;
}

bool BuildHooks::is_needs_cuda(const py::error_already_set& e) {
  return needs_cuda_type() && e.matches(needs_cuda_type());
}

}  // namespace kbv::sandbox
