"""The Python part of scripts/distill-serve-flags.sh (see there)."""
import ast
import json
import re
import subprocess
import sys

import distill_common
from distill_common import LONG, GitRepo, die, dotted, kwarg, warn
from distill_common import last_name as last

distill_common.set_prefixes("distill-serve-flags: ",
                            "distill-serve-flags: warning: ")


class Repo(GitRepo):
    """Read-only view of one commit of a git directory."""

    def __init__(self, gitdir, rev):
        super().__init__(gitdir)
        self.commit = self.git("rev-parse", "--verify", rev + "^{commit}").strip()
        self.date = self.git("show", "-s", "--format=%cI", self.commit).strip()
        self.trees = {}

    def exists(self, path):
        r = subprocess.run(["git", "-C", self.gitdir, "cat-file", "-e",
                            self.commit + ":" + path], capture_output=True)
        return r.returncode == 0

    def ls(self, folder):
        txt = self.git("ls-tree", "-r", "--name-only", self.commit, "--",
                       folder.rstrip("/") + "/")
        return [p for p in txt.splitlines() if p.endswith(".py")]

    def parse(self, path, record=True):
        if path not in self.trees:
            self.trees[path] = self.parse_file(path)
        if record:
            self.note(path)
        return self.trees[path]


# ---------------------------------------------------------------- helpers
def sconst(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def split_long(s):
    """Long options in one option string; click writes '--on/--off'."""
    return [p for p in s.split("/") if LONG.match(p)]


def type_names(node):
    """Every identifier or string in an annotation (strings parsed too)."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            try:
                names |= type_names(ast.parse(n.value, mode="eval").body)
            except SyntaxError:
                pass
    return names


class ClassIndex:
    """Class definitions of a set of modules: fields (annotations), bases."""

    def __init__(self):
        self.classes = {}   # name -> (path, ClassDef)

    def add_module(self, path, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, (path, node))

    def get(self, name):
        return self.classes.get(name)

    def fields(self, name, repo=None, seen=None):
        """[(field, annotation)] of the class and its bases, bases first."""
        seen = seen if seen is not None else set()
        if name in seen or name not in self.classes:
            return []
        seen.add(name)
        path, cls = self.classes[name]
        if repo is not None:
            repo.note(path)
        out = []
        for b in cls.bases:
            out += self.fields(last(b), repo, seen)
        own = []
        for st in cls.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                tn = type_names(st.annotation)
                if "ClassVar" in tn or "InitVar" in tn:
                    continue
                own.append((st.target.id, st.annotation))
        names = {n for n, _ in own}
        return [f for f in out if f[0] not in names] + own

    def is_dataclass_name(self, name):
        ent = self.classes.get(name)
        if not ent:
            return False
        for d in ent[1].decorator_list:
            t = d.func if isinstance(d, ast.Call) else d
            if last(t) in ("dataclass", "config"):
                return True
        return False


class Flags:
    def __init__(self):
        self.flags = set()
        self.deprecated = set()
        self.values = {}    # option -> the values the source enumerates

    def add(self, opt, boolopt=False, deprecated=False, values=None):
        names = [opt] + (["--no-" + opt[2:]] if boolopt else [])
        for n in names:
            self.flags.add(n)
            if deprecated:
                self.deprecated.add(n)
        if values:
            self.values[opt] = values


# ------------------------------------------------------ enumerated values
def module_assigns(tree):
    """Top-level NAME = value (and NAME: T = value) of a module."""
    out = {}
    for st in tree.body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = st.value
        elif isinstance(st, ast.AnnAssign) and st.value is not None and \
                isinstance(st.target, ast.Name):
            out[st.target.id] = st.value
    return out


def static_values(node, assigns, depth=0):
    """The values of a choices expression when they are written in the
    source: a list/tuple/set of constants, a module-level name bound to one,
    or `+` of those. None when any part is computed (a call, a loop)."""
    if depth > 8 or node is None:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for e in node.elts:
            if isinstance(e, ast.Constant) and not isinstance(e.value, bool) \
                    and isinstance(e.value, (str, int, float)):
                out.append(str(e.value))
            else:
                sub = static_values(e, assigns, depth + 1)
                if sub is None:
                    return None
                out += sub
        return out
    if isinstance(node, ast.Name) and node.id in assigns:
        return static_values(assigns[node.id], assigns, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a = static_values(node.left, assigns, depth + 1)
        b = static_values(node.right, assigns, depth + 1)
        return None if a is None or b is None else a + b
    return None


def literal_values(ann, resolve, depth=0):
    """The values of the Literal[...] types in an annotation (through
    Optional/Union/`|`, string annotations and aliases that `resolve(name)`
    returns the bound expression of); None when it names no Literal."""
    if depth > 8 or ann is None:
        return None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            return literal_values(ast.parse(ann.value, mode="eval").body,
                                  resolve, depth + 1)
        except SyntaxError:
            return None
    if isinstance(ann, ast.Subscript):
        sl = ann.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if last(ann.value) == "Literal":
            out = []
            for e in elts:
                if isinstance(e, ast.Constant) and e.value is not None and \
                        not isinstance(e.value, bool):
                    out.append(str(e.value))
            return out
        if last(ann.value) in ("Optional", "Union", "Annotated", "A",
                               "SkipValidation"):
            if last(ann.value) in ("Annotated", "A"):
                elts = elts[:1]
            found, out = False, []
            for e in elts:
                v = literal_values(e, resolve, depth + 1)
                if v is not None:
                    found, out = True, out + v
            return out if found else None
        return None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        a = literal_values(ann.left, resolve, depth + 1)
        b = literal_values(ann.right, resolve, depth + 1)
        if a is None and b is None:
            return None
        return (a or []) + (b or [])
    if isinstance(ann, (ast.Name, ast.Attribute)):
        bound = resolve(last(ann))
        if bound is not None:
            return literal_values(bound, resolve, depth + 1)
    return None


def dedupe(vals):
    out = []
    for v in vals or []:
        if v not in out:
            out.append(v)
    return out


def module_functions(tree):
    """Module-level functions and class methods: name -> FunctionDef;
    'Class.method' as well as 'method'."""
    funcs = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            funcs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    funcs[node.name + "." + m.name] = m
    return funcs


def method(tree, cls, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and m.name == name:
                    return m
    return None


def is_deprecated_call(call):
    dep = kwarg(call, "deprecated")
    if isinstance(dep, ast.Constant) and dep.value is True:
        return True
    act = kwarg(call, "action")
    return act is not None and "deprecat" in dotted(act).lower()


def scan_argparse(fn, tree, flags, index=None, repo=None, kw_bool=None,
                  seen=None, kw_values=None):
    """Options registered in an argparse-building function (and the helpers
    of the same module that it hands the parser to)."""
    seen = seen if seen is not None else set()
    if id(fn) in seen:
        return
    seen.add(id(fn))
    funcs = module_functions(tree)
    assigns = module_assigns(tree)
    # `x_kwargs = get_kwargs(SomeConfig)` (vLLM)
    kwvars = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and last(node.value.func) == "get_kwargs" and node.value.args:
            cls = last(node.value.args[0])
            for t in node.targets:
                if isinstance(t, ast.Name):
                    kwvars[t.id] = cls
    # `for arg, t in [("--a", str), ...]: g.add_argument(arg, ...)`
    loopvars = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and \
                isinstance(node.iter, (ast.List, ast.Tuple)):
            tgt = node.target
            for el in node.iter.elts:
                if isinstance(tgt, ast.Name):
                    pairs = [(tgt.id, el)]
                elif isinstance(tgt, ast.Tuple) and \
                        isinstance(el, ast.Tuple) and \
                        len(el.elts) == len(tgt.elts):
                    pairs = [(t.id, e) for t, e in zip(tgt.elts, el.elts)
                             if isinstance(t, ast.Name)]
                else:
                    pairs = []
                for name, e in pairs:
                    s = sconst(e)
                    if s is not None and LONG.match(s):
                        loopvars.setdefault(name, []).append(s)
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and last(node.func) == "add_argument":
            opts = []
            for a in node.args:
                s = sconst(a)
                if s is not None and LONG.match(s):
                    opts.append(s)
                elif isinstance(a, ast.Name) and a.id in loopvars:
                    opts += loopvars[a.id]
            act = kwarg(node, "action")
            boolopt = act is not None and last(act) == "BooleanOptionalAction"
            values = None
            dest = opts[0][2:].replace("-", "_") if opts else None
            for k in node.keywords:
                if k.arg is None and isinstance(k.value, ast.Subscript):
                    var = dotted(k.value.value)
                    key = sconst(k.value.slice)
                    if var not in kwvars or key is None:
                        continue
                    if not boolopt and act is None and kw_bool is not None \
                            and kw_bool(kwvars[var], key, dest):
                        boolopt = True
                    if kw_values is not None:
                        values = kw_values(kwvars[var], key, dest)
            if kwarg(node, "choices") is not None:
                values = static_values(kwarg(node, "choices"), assigns)
            dep = is_deprecated_call(node)
            for o in opts:
                flags.add(o, boolopt, dep, dedupe(values))
        elif isinstance(node, (ast.List, ast.Tuple)):
            for e in ast.walk(node):
                s = sconst(e)
                if s is not None and LONG.match(s):
                    flags.add(s)
        elif isinstance(node, ast.Call):
            # follow same-module helpers given the parser
            passes_parser = any(isinstance(a, ast.Name) and "parser" in a.id
                                for a in node.args) or any(
                isinstance(k.value, ast.Name) and "parser" in k.value.id
                for k in node.keywords)
            name = dotted(node.func)
            target = None
            if passes_parser:
                if name in funcs:
                    target = funcs[name]
                elif "." in name:
                    cls, meth = name.rsplit(".", 1)
                    cls = cls.rsplit(".", 1)[-1]
                    if cls in ("self", "cls"):
                        cands = [f for k, f in funcs.items()
                                 if k.endswith("." + meth)]
                        target = cands[0] if len(cands) == 1 else None
                    else:
                        target = funcs.get(cls + "." + meth)
            if target is not None and last(node.func) != "add_cli_args":
                scan_argparse(target, tree, flags, index, repo, kw_bool, seen,
                              kw_values)


def write(path, header, flags):
    h = list(header)
    if flags.deprecated:
        h.append("registered as deprecated (still accepted): " +
                 " ".join(sorted(flags.deprecated)))
    for opt in sorted(flags.values):
        h.append("values %s: %s" % (opt, json.dumps(flags.values[opt])))
    distill_common.write(path, h, flags.flags)


def header_common(title, repo, slug):
    h = distill_common.header_start(title, "distill-serve-flags.sh", "repo",
                                    slug)
    if MANIFEST is None:
        h += distill_common.commit_lines(repo)
    else:
        h += ["origin: single files as the search index stores them, each at "
              "its own upstream commit (below) -- not one pinned snapshot of "
              "the repository",
              "scratch-commit: %s (a local git repository holding those "
              "files; not an upstream commit)" % repo.commit]
    return h


def header_sources(repo):
    """`source:` lines: with a manifest, each file's upstream commit; a file
    read but missing from the manifest is an error (the header would lie)."""
    if MANIFEST is None:
        return ["source: " + p for p in repo.read]
    out = []
    for p in repo.read:
        if p not in MANIFEST:
            die("%s was read but the manifest names no upstream commit for "
                "it" % p)
        out.append("source: %s @ %s" % (p, MANIFEST[p]))
    out += ["manifest, not read: %s @ %s" % (p, c)
            for p, c in MANIFEST.items() if p not in repo.read]
    return out + ["note: " + n for n in NOTES]


# ------------------------------------------------------------------- vLLM
# Modules outside vllm/config that define the Literal aliases EngineArgs
# annotates its fields with (read for enumerated values only).
VLLM_VALUE_MODULES = ["vllm/model_executor/layers/quantization/__init__.py"]


def vllm(repo, outpath):
    index = ClassIndex()
    cfg_files = []
    if repo.exists("vllm/config.py"):
        cfg_files.append("vllm/config.py")
    if repo.exists("vllm/config"):
        cfg_files += repo.ls("vllm/config")
    assigns = {}    # path -> module-level bindings
    for p in cfg_files + [m for m in VLLM_VALUE_MODULES if repo.exists(m)]:
        t = repo.parse(p, record=False)
        index.add_module(p, t)
        assigns[p] = module_assigns(t)
    used = set()
    fallback_bools = set()
    ea_fields = {}  # EngineArgs field -> annotation (filled below)

    def resolver(first):
        """Alias lookup: the module `first` first, then every module read."""
        def resolve(name):
            for p in [first] + sorted(assigns):
                if p in assigns and name in assigns[p]:
                    used.add(p)
                    return assigns[p][name]
            return None
        return resolve

    def is_bool(ann):
        tn = type_names(ann)
        return "bool" in tn and not any(index.is_dataclass_name(t)
                                        for t in tn)

    def config_field(cls, field):
        """(module, annotation) of Config.field; (None, None) when the class
        is not among the sources; (path, None) when it lacks the field."""
        ent = index.get(cls)
        if ent is None:
            return None, None
        for name, ann in index.fields(cls):
            if name == field:
                used.add(ent[0])
                return ent[0], ann
        return ent[0], None

    def kw_bool(cls, field, dest=None):
        path, ann = config_field(cls, field)
        if path is not None:
            return ann is not None and is_bool(ann)
        # Config class not among the sources: EngineArgs declares the dest
        # it stores into (from_cli_args reads the fields by dest).
        if dest in ea_fields and is_bool(ea_fields[dest]):
            fallback_bools.add("--" + dest.replace("_", "-"))
            return True
        return False

    def kw_values(cls, field, dest=None):
        path, ann = config_field(cls, field)
        if path is not None:
            return literal_values(ann, resolver(path)) if ann is not None \
                else None
        if dest in ea_fields:
            return literal_values(ea_fields[dest], resolver(au))
        return None

    flags = Flags()
    au = "vllm/engine/arg_utils.py"
    if not repo.exists(au):
        die("%s not found at %s" % (au, repo.commit))
    tree = repo.parse(au)
    index.add_module(au, tree)
    assigns[au] = module_assigns(tree)
    ea_fields.update(index.fields("EngineArgs"))
    fn = method(tree, "EngineArgs", "add_cli_args")
    if fn is None:
        die("EngineArgs.add_cli_args not found in " + au)
    scan_argparse(fn, tree, flags, index, repo, kw_bool, kw_values=kw_values)
    afn = method(tree, "AsyncEngineArgs", "add_cli_args")
    if afn is not None:
        scan_argparse(afn, tree, flags, index, repo, kw_bool,
                      kw_values=kw_values)

    ca = "vllm/entrypoints/openai/cli_args.py"
    if repo.exists(ca):
        ctree = repo.parse(ca)
        index.add_module(ca, ctree)
        funcs = module_functions(ctree)
        mk = funcs.get("make_arg_parser")
        if mk is None:
            die("make_arg_parser not found in " + ca)
        scan_argparse(mk, ctree, flags, index, repo, kw_bool)
        # Frontend dataclasses registered field by field
        for node in ast.walk(mk):
            if isinstance(node, ast.Call) and last(node.func) == "add_cli_args":
                cname = dotted(node.func).rsplit(".", 1)[0].rsplit(".", 1)[-1]
                if index.get(cname) is None or \
                        index.get(cname)[0] != ca:
                    continue
                if not derives_fields(ctree, cname, index):
                    scan_class_method(ctree, cname, flags, index, repo,
                                      kw_bool)
                    continue
                for fname, ann in index.fields(cname, repo):
                    opt = "--" + fname.replace("_", "-")
                    tn = type_names(ann)
                    isb = "bool" in tn and not any(
                        index.is_dataclass_name(t) for t in tn)
                    flags.add(opt, isb)
    sv = "vllm/entrypoints/cli/serve.py"
    if repo.exists(sv):
        stree = repo.parse(sv)
        for f in module_functions(stree).values():
            scan_argparse(f, stree, flags, index, repo, kw_bool)
    for p in cfg_files + VLLM_VALUE_MODULES:
        if p in used and p != au:
            repo.note(p)
    if not flags.flags:
        die("no vLLM option found")
    h = header_common("long options of `vllm serve`", repo,
                      "vllm-project/vllm")
    h += header_sources(repo)
    if fallback_bools:
        h.append("--no-X of options whose config class is not among the "
                 "sources, from the EngineArgs field of the option's dest: " +
                 " ".join(sorted(fallback_bools)))
    write(outpath, h, flags)
    return flags


def derives_fields(tree, cname, index, seen=None):
    """Does cname (or a base) register its fields with an f-string '--{..}'
    built from get_kwargs(cls)?"""
    seen = seen if seen is not None else set()
    ent = index.get(cname)
    if ent is None or cname in seen:
        return False
    seen.add(cname)
    cls = ent[1]
    for m in cls.body:
        if isinstance(m, ast.FunctionDef) and m.name == "add_cli_args":
            has_kwargs = any(isinstance(n, ast.Call) and
                             last(n.func) == "get_kwargs"
                             for n in ast.walk(m))
            has_fstr = any(isinstance(n, ast.JoinedStr) and n.values and
                           sconst(n.values[0]) is not None and
                           sconst(n.values[0]).startswith("--")
                           for n in ast.walk(m))
            return has_kwargs and has_fstr
    return any(derives_fields(tree, last(b), index, seen) for b in cls.bases)


def scan_class_method(tree, cname, flags, index, repo, kw_bool):
    fn = method(tree, cname, "add_cli_args")
    if fn is not None:
        scan_argparse(fn, tree, flags, index, repo, kw_bool)


# ----------------------------------------------------------------- SGLang
def annotated_meta(ann):
    """For A[T, meta...] / Annotated[T, meta...]: the metadata nodes."""
    if isinstance(ann, ast.Subscript) and last(ann.value) in ("A", "Annotated"):
        sl = ann.slice
        if isinstance(sl, ast.Tuple) and len(sl.elts) >= 2:
            return sl.elts[1:]
    return None


def meta_kind(m, assigns, depth=0):
    """How add_cli_args_from_dataclass reads one Annotated metadata item:
    ("arg", Arg call), ("help", None) for a help text (a string, an
    f-string, a concatenation), (None, None) for anything it skips (NS(...),
    other calls, non-string constants), ("unknown", None) for a name whose
    value is not visible here."""
    if isinstance(m, ast.Call):
        return ("arg", m) if last(m.func) == "Arg" else (None, None)
    if sconst(m) is not None or isinstance(m, (ast.JoinedStr, ast.BinOp)):
        return ("help", None)
    if isinstance(m, ast.Constant):
        return (None, None)
    if isinstance(m, ast.Name) and m.id in assigns and depth < 5:
        return meta_kind(assigns[m.id], assigns, depth + 1)
    return ("unknown", None)


def sglang(repo, outpath):
    sa = "python/sglang/srt/server_args.py"
    if not repo.exists(sa):
        die("%s not found at %s" % (sa, repo.commit))
    tree = repo.parse(sa)
    index = ClassIndex()
    index.add_module(sa, tree)
    if repo.exists("python/sglang/srt/arg_groups"):
        for p in repo.ls("python/sglang/srt/arg_groups"):
            index.add_module(p, repo.parse(p, record=False))
    fn = method(tree, "ServerArgs", "add_cli_args")
    if fn is None:
        die("ServerArgs.add_cli_args not found in " + sa)
    flags = Flags()
    scan_argparse(fn, tree, flags, index, repo)
    derived = 0
    unresolved = []
    assigns = {}    # module-level NAME = value, for metadata given by name
    for st in tree.body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    assigns[t.id] = st.value
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and \
                last(node.func) == "add_cli_args_from_dataclass":
            if len(node.args) < 2:
                die("add_cli_args_from_dataclass call without a class")
            cname = last(node.args[1])
            if cname in ("cls", "self"):
                cname = "ServerArgs"
            if index.get(cname) is None:
                die("class %s (add_cli_args_from_dataclass) not found" % cname)
            only = kwarg(node, "fields")
            only = None if only is None else {
                sconst(e) for e in ast.walk(only) if sconst(e) is not None}
            for fname, ann in index.fields(cname, repo):
                if only is not None and fname not in only:
                    continue
                meta = annotated_meta(ann)
                if meta is None:
                    continue
                arg, kind = None, None
                for m in meta:
                    kind, arg = meta_kind(m, assigns)
                    if kind is not None:
                        break
                if kind is None:
                    continue    # no help string / Arg: not registered
                if kind == "unknown":
                    unresolved.append(fname)
                names, boolopt, dep = [], False, False
                # add_cli_args_from_dataclass: Arg(choices=) wins, else the
                # Literal[...] of the field's type; none with an action.
                values = literal_values(ann, assigns.get)
                if arg is not None and kwarg(arg, "choices") is not None:
                    values = static_values(kwarg(arg, "choices"), assigns)
                if arg is not None:
                    nc = kwarg(arg, "no_cli")
                    if isinstance(nc, ast.Constant) and nc.value is True:
                        continue
                    cn = sconst(kwarg(arg, "cli_name")) \
                        if kwarg(arg, "cli_name") is not None else None
                    names.append(cn if cn else "--" + fname.replace("_", "-"))
                    al = kwarg(arg, "aliases")
                    if al is not None:
                        names += [sconst(e) for e in ast.walk(al)
                                  if sconst(e) is not None]
                    act = kwarg(arg, "action")
                    if act is not None:
                        boolopt = last(act) == "BooleanOptionalAction"
                        dep = "deprecat" in dotted(act).lower()
                        values = None
                else:
                    names.append("--" + fname.replace("_", "-"))
                for n in names:
                    for o in split_long(n):
                        flags.add(o, boolopt, dep, dedupe(values))
                        derived += 1
    if not flags.flags:
        die("no SGLang option found")
    h = header_common("long options of `python -m sglang.launch_server`",
                      repo, "sgl-project/sglang")
    h += header_sources(repo)
    if derived:
        h.append("%d options derived from annotated dataclass fields" % derived)
    if unresolved:
        h.append("fields whose metadata is a name not resolved here, taken as "
                 "registered: " + " ".join(unresolved))
        warn("unresolved field metadata: " + " ".join(unresolved))
    write(outpath, h, flags)
    return flags


# ----------------------------------------------------------------- TRT-LLM
def trtllm(repo, outpath):
    sv = "tensorrt_llm/commands/serve.py"
    if not repo.exists(sv):
        die("%s not found at %s" % (sv, repo.commit))
    tree = repo.parse(sv)
    assigns = module_assigns(tree)
    commands = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        cmd = None
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and last(d.func) == "command":
                cmd = sconst(d.args[0]) if d.args else None
                cmd = cmd or sconst(kwarg(d, "name") or ast.Constant(None)) \
                    or node.name
        if cmd is None:
            continue
        fl = Flags()
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and last(d.func) == "option":
                values = None
                ty = kwarg(d, "type")
                # click.Choice([...]) or a Choice subclass taking the choices
                # first and an {alias: choice} dict second
                if isinstance(ty, ast.Call) and "Choice" in last(ty.func) \
                        and ty.args:
                    values = static_values(ty.args[0], assigns)
                    if values is not None and len(ty.args) > 1 and \
                            isinstance(ty.args[1], ast.Dict):
                        values += [sconst(k) for k in ty.args[1].keys
                                   if sconst(k) is not None]
                for a in d.args:
                    s = sconst(a)
                    if s is None:
                        continue
                    for o in split_long(s):
                        fl.add(o, values=dedupe(values))
        commands[cmd] = fl
    if "serve" not in commands:
        die("no click command 'serve' in " + sv)
    flags = commands["serve"]
    if not flags.flags:
        die("the serve command has no option")
    h = header_common("options of `trtllm-serve` (its `serve` command)",
                      repo, "NVIDIA/TensorRT-LLM")
    h += header_sources(repo)
    for name in sorted(commands):
        if name != "serve":
            h.append("subcommand `trtllm-serve %s`: %s" % (
                name, " ".join(sorted(commands[name].flags)) or "(none)"))
    write(outpath, h, flags)
    return flags


ENGINES = {"vllm": vllm, "sglang": sglang, "trtllm": trtllm}

MANIFEST = None     # upstream path -> upstream commit (--manifest)
NOTES = []          # --note lines for the header


def read_manifest(path):
    """Lines `PATH COMMIT` (40 hex digits); `#` starts a comment."""
    out = {}
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        die("cannot read manifest %s: %s" % (path, e))
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not re.match(r"[0-9a-f]{40}\Z", parts[1]):
            die("%s:%d: expected `PATH COMMIT` (40 hex digits)" % (path, n))
        out[parts[0]] = parts[1]
    if not out:
        die("manifest %s names no file" % path)
    return out


if __name__ == "__main__":
    engine, gitdir, rev, outpath = sys.argv[1:5]
    rest = sys.argv[5:]
    while rest:
        if rest[0] == "--manifest" and len(rest) > 1:
            MANIFEST = read_manifest(rest[1])
        elif rest[0] == "--note" and len(rest) > 1:
            NOTES.append(rest[1])
        else:
            die("bad argument " + rest[0])
        rest = rest[2:]
    repo = Repo(gitdir, rev)
    fl = ENGINES[engine](repo, outpath)
    print("%-7s %s %s  %4d options -> %s" % (
        engine, repo.commit, repo.date, len(fl.flags), outpath))
