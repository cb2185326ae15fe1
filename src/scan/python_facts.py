# What `kbv check` needs to know about a Python candidate, from CPython's own parser (ast.parse
# compiles the source to a tree and never executes it). Run by kbv_scan as
# `python -I -S -c <this file>`; reads files from stdin as "<byte count>\n<bytes>" and answers
# one JSON line per file. Positions are byte offsets and 0-based lines, as the C++ side counts;
# ast's col_offset is already a UTF-8 byte offset. One pass over the tree per file: the parse
# itself is most of the cost.
import ast
import bisect
import json
import sys

CACHE_DECORATORS = ("lru_cache", "cache", "cached_property")
KEY_METHODS = ("get", "setdefault", "pop")
QUOTES = (b'"""', b"'''")
INDEX = getattr(ast, "Index", ())  # Python < 3.9 wraps a subscript's slice in ast.Index
TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


def dotted(node):
    """'torch.cuda.Stream' for a Name/Attribute chain; through a call, the part before it."""
    parts = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Call):
            node, parts = node.func, []
        elif isinstance(node, ast.Subscript):
            node, parts = node.value, []
        else:
            return None


def plain_dotted(node):
    """'torch.cuda.synchronize' for a chain of names only; None through a call or subscript
    (`time.get_clock_info(...).resolution` names no attribute of time)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def children(node):
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item
        elif isinstance(value, ast.AST):
            yield value


def self_attribute(node):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def assign_targets(node):
    return node.targets if isinstance(node, ast.Assign) else [node.target]  # AugAssign, AnnAssign


class File:
    def __init__(self, data, tree):
        self.data = data
        self.line_starts = [0]
        pos = data.find(b"\n")
        while pos >= 0:
            self.line_starts.append(pos + 1)
            pos = data.find(b"\n", pos + 1)
        self.bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # ast's line 1 columns skip it
        self.tree = tree
        self.strings = []  # [begin, end, body begin, body end, statement]
        self.statement_strings = set()
        self.assigns, self.functions, self.tries, self.key_places = [], [], [], []
        self.aliases = {}  # local name -> module path it was imported as
        self.setattrs, self.wraps = [], []
        self.collect()

    def offset(self, line, col):
        if line - 1 >= len(self.line_starts):
            return len(self.data)
        return self.line_starts[line - 1] + col + (self.bom if line == 1 else 0)

    # ---- one walk -------------------------------------------------------------------------
    def collect(self):
        stack = [self.tree]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Constant and isinstance(node.value, (str, bytes)) or kind is ast.JoinedStr:
                self.add_string(node)
                continue  # an f-string's parts are inside its span
            if kind is ast.Expr and isinstance(node.value, (ast.Constant, ast.JoinedStr)):
                self.statement_strings.add(node.value)  # a docstring, or prose as a comment
            elif kind in (ast.Assign, ast.AnnAssign, ast.AugAssign):
                self.assigns.append(node)
                if kind is not ast.AugAssign and node.value is not None:
                    for t in assign_targets(node):
                        name = (dotted(t) or "").lower()
                        if "key" in name or "cache" in name:
                            self.key_places.append(node.value)
            elif kind in FUNCTION:
                self.functions.append(node)
            elif kind is ast.Return and isinstance(node.value, ast.Tuple):
                self.key_places.append(node.value)  # `return (x.data_ptr(), x.shape)`: a key helper
            elif kind in TRY:
                if node.handlers:
                    self.tries.append(node)
            elif kind is ast.Subscript:
                self.key_places.append(node.slice.value if isinstance(node.slice, INDEX) else node.slice)
            elif kind is ast.Dict:
                self.key_places.extend(k for k in node.keys if k is not None)
            elif kind is ast.Set:
                self.key_places.extend(node.elts)
            elif kind is ast.Compare:
                if isinstance(node.ops[0], (ast.In, ast.NotIn)):
                    self.key_places.append(node.left)
            elif kind is ast.Call and node.args:
                f = node.func
                if isinstance(f, ast.Name) and f.id == "hash":
                    self.key_places.extend(node.args)
                elif isinstance(f, ast.Attribute) and f.attr in KEY_METHODS:
                    self.key_places.append(node.args[0])
                callee = dotted(f) or ""
                if callee in ("setattr", "delattr"):
                    self.setattrs.append(node)
                elif callee.rsplit(".", 1)[-1] == "wraps":
                    self.wraps.append(node.args[0])
            elif kind is ast.Import:
                for a in node.names:
                    if a.asname:
                        self.aliases[a.asname] = a.name
            elif kind is ast.ImportFrom and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = node.module + "." + a.name
            stack.extend(children(node))

    def add_string(self, node):
        begin = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        b = begin
        while b < end and self.data[b:b + 1] not in (b'"', b"'"):
            b += 1  # r, b, f, u prefixes
        opening = 3 if self.data[b:b + 3] in QUOTES else 1
        closing = 3 if self.data[end - 3:end] in QUOTES and end - 3 >= b + 3 else 1
        self.strings.append([begin, end, b + opening, max(b + opening, end - closing), node])

    # ---- facts ----------------------------------------------------------------------------
    def comments(self):
        """A '#' outside every string literal starts a comment, up to the end of its line."""
        spans = sorted((s[0], s[1]) for s in self.strings)
        starts = [s[0] for s in spans]
        out, pos = [], self.data.find(b"#")
        while pos >= 0:
            i = bisect.bisect_right(starts, pos) - 1
            if i >= 0 and spans[i][0] <= pos < spans[i][1]:
                pos = self.data.find(b"#", spans[i][1])
                continue
            end = self.data.find(b"\n", pos)
            end = len(self.data) if end < 0 else end
            out.append([pos, end])
            pos = self.data.find(b"#", end)
        return out

    def extension_names(self):
        names = []

        def add(name):
            if name and name not in names:
                names.append(name)

        for node in self.assigns:
            value = node.value
            if isinstance(value, ast.Call):
                callee = dotted(value.func) or ""
                last = callee.rsplit(".", 1)[-1]
                if last == "load_inline" or (last == "load" and (callee == "load" or callee.endswith("cpp_extension.load"))):
                    for t in assign_targets(node):
                        add(dotted(t))
        for f in self.functions:  # triton.jit kernels are custom kernels too
            if any("triton.jit" in (dotted(d) or "") for d in f.decorator_list):
                add(f.name)
        for _ in range(2):  # aliases (self.ext = ext), and an alias of an alias
            for node in self.assigns:
                value = node.value
                if isinstance(value, (ast.Name, ast.Attribute)) and dotted(value) in names:
                    for t in assign_targets(node):
                        add(dotted(t))
        return names

    def forwards(self):
        out = []
        for f in self.functions:
            if f.name != "forward":
                continue
            assigned, returns = set(), []
            for n in ast.walk(f):
                if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    for target in assign_targets(n):
                        for leaf in ast.walk(target):
                            if not isinstance(getattr(leaf, "ctx", None), ast.Store):
                                continue
                            if isinstance(leaf, ast.Attribute):
                                attr = self_attribute(leaf)  # self.X = ...
                            elif isinstance(leaf, ast.Subscript):
                                attr = self_attribute(leaf.value)  # self.X[key] = ...
                            else:
                                attr = None
                            if attr:
                                assigned.add(attr)
                elif isinstance(n, ast.Return) and n.value is not None:
                    values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
                    for v in values:
                        # self.out or self.cache[key]; never self.conv(x), a call of a module
                        attr = self_attribute(v.value if isinstance(v, ast.Subscript) else v)
                        if attr:
                            returns.append([n.lineno - 1, attr])
            out.append([f.lineno - 1, getattr(f, "end_lineno", f.lineno), sorted(assigned), returns])
        return out

    def try_facts(self):
        out = []
        for t in self.tries:
            names = set()
            for stmt in t.body:
                for n in ast.walk(stmt):
                    if isinstance(n, (ast.Name, ast.Attribute)):
                        name = dotted(n)
                        if name:
                            names.add(name)
            out.append([t.lineno - 1, sorted(names)])
        return out

    def key_uses(self):
        """data_ptr() / id(x) anywhere in a key place (`str(id(self))` builds a key too), except
        inside a list, which cannot be hashed: `args=[A.data_ptr(), ...]` is no key."""
        out = []
        for place in self.key_places:
            versioned = False
            calls = []
            stack = [place]
            while stack:
                n = stack.pop()
                if isinstance(n, (ast.List, ast.ListComp)):
                    continue
                if isinstance(n, ast.Attribute) and n.attr == "_version":
                    versioned = True
                if isinstance(n, ast.Call):
                    f = n.func
                    if (isinstance(f, ast.Attribute) and f.attr == "data_ptr" and not n.args) or \
                       (isinstance(f, ast.Name) and f.id == "id" and len(n.args) == 1):
                        calls.append(n)
                stack.extend(children(n))
            out.extend([c.lineno - 1, int(versioned)] for c in calls)
        return out

    def resolve(self, name):
        """`t.relu` after `import torch as t` is torch.relu; `F.gelu` after
        `import torch.nn.functional as F` is torch.nn.functional.gelu."""
        root, dot, rest = name.partition(".")
        module = self.aliases.get(root)
        return module + dot + rest if module else name

    def attribute_assignments(self):
        """(line, name) of every attribute stored to: `torch.relu = f`, `a, torch.x = ...`,
        `torch.x += 1`, and setattr/delattr(obj, "name")."""
        out = []
        for node in self.assigns:
            for target in assign_targets(node):
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.ctx, ast.Store):
                        name = plain_dotted(leaf)
                        if name:
                            out.append([leaf.lineno - 1, self.resolve(name)])
        for call in self.setattrs:
            name = plain_dotted(call.args[0])
            if not name:
                continue
            attr = "?"
            if len(call.args) > 1 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
                attr = call.args[1].value
            out.append([call.lineno - 1, self.resolve(name) + "." + attr])
        return out

    def references(self):
        """(line, name) of a function kept aside to wrap or restore it: `_orig =
        torch.cuda.synchronize` (a bare name as an assigned value), `functools.wraps(torch.x)`."""
        out = []
        values = [n.value for n in self.assigns if not isinstance(n, ast.AugAssign) and n.value is not None]
        for v in values + self.wraps:
            name = plain_dotted(v)
            if name:
                out.append([v.lineno - 1, self.resolve(name)])
        return out

    def cache_decorators(self):
        out = []
        for f in self.functions:
            for d in f.decorator_list:
                if (dotted(d) or "").rsplit(".", 1)[-1] in CACHE_DECORATORS:
                    out.append([d.lineno - 1, int(f.name == "forward")])
        return out

    def answer(self):
        strings = [s[:4] + [int(s[4] in self.statement_strings)] for s in self.strings]
        return {
            "comments": self.comments(),
            "strings": strings,
            "forwards": self.forwards(),
            "tries": self.try_facts(),
            "key_uses": self.key_uses(),
            "cache_decorators": self.cache_decorators(),
            "extension_names": self.extension_names(),
            "attribute_assignments": self.attribute_assignments(),
            "references": self.references(),
        }


def facts_of(data):
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError) as e:  # ValueError: NUL bytes
        line = getattr(e, "lineno", None) or 1
        return {"error": {"line": max(line, 1) - 1, "message": f"{type(e).__name__}: {getattr(e, 'msg', str(e))}"}}
    return File(data, tree).answer()


def main():
    stdin, stdout = sys.stdin.buffer, sys.stdout
    while True:
        header = stdin.readline()
        if not header:
            break
        data = stdin.read(int(header))
        try:
            answer = facts_of(data)
        except (RecursionError, MemoryError) as e:
            answer = {"error": {"line": 0, "message": f"{type(e).__name__}: nested too deeply to parse"}}
        except Exception as e:  # a bug here must cost one file, not the whole check
            answer = {"error": {"line": 0, "message": f"kbv's parser helper failed on this file: {type(e).__name__}: {e}"}}
        stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        stdout.flush()


main()
