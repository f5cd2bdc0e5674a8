#!/usr/bin/env bash
#===- scripts/distill-serve-flags.sh - serving engines' CLI options -------===#
#
# Usage:
#   scripts/distill-serve-flags.sh [--rev REV] [--out DIR] [--manifest ENGINE=FILE]...
#       [--source-note ENGINE=TEXT]... VLLM_GIT SGLANG_GIT TRTLLM_GIT
#   VLLM_GIT=... SGLANG_GIT=... TRTLLM_GIT=... scripts/distill-serve-flags.sh
#   scripts/distill-serve-flags.sh --self-test
#   (ENGINE: vllm, sglang or trtllm; FILE: lines `PATH UPSTREAM-COMMIT`)
#
# Reads the launch-argument sources of three LLM serving engines from git
# mirrors (bare git directories, as the search tool's `fetch` brings them,
# or clones) with `git show REV:path` (REV defaults to HEAD; nothing needs a
# work tree) and writes, under DIR (default test/data/serve-flags):
#
#   vllm.txt    long options of `vllm serve`: EngineArgs.add_cli_args and
#               AsyncEngineArgs.add_cli_args (vllm/engine/arg_utils.py), the
#               frontend's make_arg_parser and its dataclass-derived args
#               (vllm/entrypoints/openai/cli_args.py), the serve subcommand
#               (vllm/entrypoints/cli/serve.py)
#   sglang.txt  long options of `python -m sglang.launch_server`:
#               ServerArgs.add_cli_args (python/sglang/srt/server_args.py)
#               and, where it calls add_cli_args_from_dataclass, the
#               annotated fields it derives flags from
#   trtllm.txt  options of `trtllm-serve` (its default `serve` command;
#               tensorrt_llm/commands/serve.py click options), exact
#               spelling (TRT-LLM mixes `--tp_size` and `--metrics-log-interval`);
#               the other subcommands' options are listed in the header
#
# Each file starts with `#` lines (repository, full commit, commit date,
# the files read, the options registered as deprecated, and `# values
# --opt: [JSON list]` for each option whose values the source enumerates),
# then one option a line, sorted (byte order) and unique. Only options
# written in the source are listed: argparse's automatic --help is not,
# short options (-tp, -c) are not.
#
# When the repositories are not upstream snapshots but single files gathered
# one by one (e.g. from the search index's stored versions, each at its own
# commit), `--manifest ENGINE=FILE` names each file's upstream commit
# (FILE: lines `PATH COMMIT`, `#` comments): the header then says so
# (`origin:`), gives `source: PATH @ COMMIT` for every file read, calls the
# local commit `scratch-commit:` and omits `commit:`/`commit-date:`; a file
# read that the manifest does not name is an error. `--source-note
# ENGINE=TEXT` adds `# note: TEXT` lines.
#
# How names are derived (read from the sources, not run):
#   * a string argument of `add_argument(...)` / `click.option(...)` that
#     is a whole long option (`--x-y`; click's `--a/--b` gives both);
#   * option strings in list/tuple literals inside the same function
#     (vLLM registers its deprecated guided-decoding options in a loop);
#   * argparse.BooleanOptionalAction adds `--no-X` for each `--X`: either
#     given as `action=`, or implied by vLLM's get_kwargs(Config) for a
#     field whose annotation includes `bool` (and no dataclass); when the
#     Config class is not among the files read, the EngineArgs field named
#     like the option's dest stands in (named in the header);
#   * vLLM frontend classes whose add_cli_args loops over get_kwargs(cls)
#     and registers f"--{key.replace('_', '-')}": every dataclass field of
#     the class and its bases, `_` -> `-`;
#   * SGLang fields annotated A[T, "help"] / A[T, Arg(...)] when
#     add_cli_args calls add_cli_args_from_dataclass: `--` + name with
#     `_` -> `-` (or Arg's cli_name), plus Arg's aliases, skipping no_cli;
#   * helper functions of the same module that add_cli_args calls with the
#     parser are followed.
# Values (`# values`): argparse `choices=` and click.Choice([...]) (plus the
# alias keys of a Choice subclass's second argument) when written as
# literals, module-level names bound to literals or `+` of those; SGLang
# Arg(choices=) else the field's Literal[...]; vLLM get_kwargs(Config) fields
# typed Literal[...] or an alias of one (aliases looked up in the config
# modules and vllm/model_executor/layers/quantization/__init__.py). Values
# computed at run time (plugin registries, list(...)) are not recorded.
# The script stops with an error when an expected file, class or function
# is missing or an engine yields no option, rather than write a short list.
#
# Needs git and python3 (standard library only). `--self-test` builds three
# small synthetic repositories (no engine code) and checks the output.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rev=${SERVE_FLAGS_REV:-HEAD}
out=${SERVE_FLAGS_OUT:-$root/test/data/serve-flags}
self_test=0
pos=()
# Per engine: extra arguments for the Python part (--manifest FILE, --note TEXT)
extra_vllm=() extra_sglang=() extra_trtllm=()
engine_arg() {  # engine_arg OPTION ENGINE=VALUE PYFLAG
  local eng=${2%%=*} val=${2#*=}
  if [ "$eng" = "$2" ] || [ -z "$val" ]; then
    echo "distill-serve-flags: $1 expects ENGINE=VALUE" >&2; exit 2
  fi
  case "$eng" in
    vllm) extra_vllm+=("$3" "$val") ;;
    sglang) extra_sglang+=("$3" "$val") ;;
    trtllm) extra_trtllm+=("$3" "$val") ;;
    *) echo "distill-serve-flags: $1: unknown engine '$eng'" >&2; exit 2 ;;
  esac
}
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) rev=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --manifest) engine_arg "$1" "${2:-}" --manifest; shift 2 ;;
    --source-note) engine_arg "$1" "${2:-}" --note; shift 2 ;;
    --self-test) self_test=1; shift ;;
    -h|--help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "distill-serve-flags: unknown option $1" >&2; exit 2 ;;
    *) pos+=("$1"); shift ;;
  esac
done

py=$(mktemp "${TMPDIR:-/tmp}/distill-serve-flags.XXXXXX.py")
work=""
cleanup() { rm -f "$py"; if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

cat >"$py" <<'PYEOF'
import ast
import json
import re
import subprocess
import sys

LONG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def die(msg):
    sys.exit("distill-serve-flags: " + msg)


class Repo:
    """Read-only view of one commit of a git directory."""

    def __init__(self, gitdir, rev):
        self.gitdir = gitdir
        self.commit = self.git("rev-parse", "--verify", rev + "^{commit}").strip()
        self.date = self.git("show", "-s", "--format=%cI", self.commit).strip()
        self.read = []      # files listed in the header, in order
        self.trees = {}

    def git(self, *args):
        r = subprocess.run(["git", "-C", self.gitdir] + list(args),
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("git %s failed in %s: %s" % (" ".join(args), self.gitdir,
                                              r.stderr.strip()))
        return r.stdout

    def exists(self, path):
        r = subprocess.run(["git", "-C", self.gitdir, "cat-file", "-e",
                            self.commit + ":" + path], capture_output=True)
        return r.returncode == 0

    def ls(self, folder):
        txt = self.git("ls-tree", "-r", "--name-only", self.commit, "--",
                       folder.rstrip("/") + "/")
        return [p for p in txt.splitlines() if p.endswith(".py")]

    def note(self, path):
        if path not in self.read:
            self.read.append(path)

    def parse(self, path, record=True):
        if path not in self.trees:
            src = self.git("show", self.commit + ":" + path)
            try:
                self.trees[path] = ast.parse(src, filename=path)
            except SyntaxError as e:
                die("python %d.%d cannot parse %s@%s: %s" % (
                    sys.version_info[0], sys.version_info[1], path,
                    self.commit[:12], e))
        if record:
            self.note(path)
        return self.trees[path]


# ---------------------------------------------------------------- helpers
def sconst(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def dotted(node):
    """'a.b.c' for Name/Attribute chains, else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base + "." + node.attr if base else node.attr
    return ""


def last(node):
    return dotted(node).rsplit(".", 1)[-1]


def kwarg(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
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
    lines = ["# " + h for h in header]
    if flags.deprecated:
        dep = sorted(flags.deprecated)
        lines.append("# registered as deprecated (still accepted): " +
                     " ".join(dep))
    for opt in sorted(flags.values):
        lines.append("# values %s: %s" % (opt, json.dumps(flags.values[opt])))
    lines += sorted(flags.flags)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def header_common(title, repo, slug):
    h = [title, "generated by scripts/distill-serve-flags.sh; do not edit",
         "repo: " + slug]
    if MANIFEST is None:
        h += ["commit: " + repo.commit, "commit-date: " + repo.date]
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
        sys.stderr.write("distill-serve-flags: warning: unresolved field "
                         "metadata: %s\n" % " ".join(unresolved))
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
PYEOF

# The options Trident writes (lib/Serve/Serve.cpp, launchCommand), checked
# after each run: missing ones are reported, not fatal (the report says what
# the engine spells instead); deprecated ones are named.
sanity_vllm="--tensor-parallel-size --pipeline-parallel-size --data-parallel-size
  --enable-expert-parallel --max-num-seqs --max-model-len --kv-cache-dtype
  --gpu-memory-utilization --max-num-batched-tokens --quantization
  --enforce-eager --kv-transfer-config"
sanity_sglang="--model-path --tp-size --pp-size --dp-size --ep-size
  --max-running-requests --context-length --kv-cache-dtype --mem-fraction-static
  --chunked-prefill-size --quantization --disable-cuda-graph
  --disaggregation-mode"
sanity_trtllm="--tp_size --pp_size --ep_size --max_batch_size --max_num_tokens
  --max_seq_len --kv_cache_free_gpu_memory_fraction --backend
  --extra_llm_api_options"

check() {  # check FILE FLAGS...
  local file=$1; shift
  local f miss=() dep=() deps
  deps=" $(sed -n 's/^# registered as deprecated (still accepted): //p' "$file") "
  for f in "$@"; do
    if ! grep -qxF -- "$f" "$file"; then miss+=("$f")
    elif [[ "$deps" == *" $f "* ]]; then dep+=("$f"); fi
  done
  if [ ${#miss[@]} -eq 0 ]; then
    echo "  $(basename "$file"): all ${#@} checked options present"
  else
    echo "  $(basename "$file"): MISSING ${miss[*]}"
  fi
  if [ ${#dep[@]} -gt 0 ]; then
    echo "  $(basename "$file"): registered as deprecated: ${dep[*]}"
  fi
}

run_all() {  # run_all VLLM SGLANG TRTLLM OUTDIR
  mkdir -p "$4"
  python3 "$py" vllm "$1" "$rev" "$4/vllm.txt" ${extra_vllm[@]+"${extra_vllm[@]}"}
  python3 "$py" sglang "$2" "$rev" "$4/sglang.txt" \
    ${extra_sglang[@]+"${extra_sglang[@]}"}
  python3 "$py" trtllm "$3" "$rev" "$4/trtllm.txt" \
    ${extra_trtllm[@]+"${extra_trtllm[@]}"}
}

if [ $self_test = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/distill-serve-flags-test.XXXXXX")
  mkrepo() {  # mkrepo DIR: commit what is in DIR, turn it into a bare repo
    git -C "$1" init -q
    git -C "$1" add -A
    GIT_AUTHOR_DATE=2024-01-02T03:04:05Z GIT_COMMITTER_DATE=2024-01-02T03:04:05Z \
      git -C "$1" -c user.name=t -c user.email=t@t commit -qm fixture
    git clone -q --bare "$1" "$1.git"
  }
  # Synthetic sources: the shapes the parser must read, no engine code.
  mkdir -p "$work/v/vllm/engine" "$work/v/vllm/config" \
           "$work/v/vllm/entrypoints/openai" "$work/v/vllm/entrypoints/cli" \
           "$work/v/vllm/model_executor/layers/quantization"
  cat >"$work/v/vllm/model_executor/layers/quantization/__init__.py" <<'EOF'
QuantMethods = Literal["q1", "q2"]
EOF
  cat >"$work/v/vllm/config/alpha.py" <<'EOF'
@dataclass
class Inner:
    x: int = 0
@config
@dataclass
class AlphaConfig:
    on: bool = False
    maybe: bool | None = None
    size: int = 1
    nested: Inner | None = None
    kind: "Literal['a', 'b']" = "a"
    dt: DtypeT | None = None
DtypeT = Literal["d1", "d2"]
EOF
  cat >"$work/v/vllm/engine/arg_utils.py" <<'EOF'
class EngineArgs:
    absent_on: bool = False
    absent_quant: QuantMethods | None = None
    absent_num: int = 0
    @staticmethod
    def add_cli_args(parser):
        kw = get_kwargs(AlphaConfig)
        ab = get_kwargs(AbsentConfig)
        g = parser.add_argument_group("x")
        g.add_argument("--absent-on", **ab["on"])
        g.add_argument("--absent-quant", **ab["quant"])
        g.add_argument("--absent-num", **ab["num"])
        g.add_argument("--dt", **kw["dt"])
        g.add_argument("--pick", choices=PICKS + ["z"], type=str)
        g.add_argument("--dyn", choices=list(registry), type=str)
        if not ("serve" in sys.argv and "--help" in sys.argv):
            g.add_argument("--model", type=str)
        g.add_argument("--turn-on", **kw["on"])
        g.add_argument("--maybe", "-m", **kw["maybe"])
        g.add_argument("--size", "-s", **kw["size"])
        g.add_argument("--nested", **kw["nested"])
        g.add_argument("--kind", **kw["kind"])
        g.add_argument("--explicit", action=argparse.BooleanOptionalAction)
        g.add_argument("--old", type=int, deprecated=True)
        for arg, t in [("--loop-a", str), ("--loop-b", bool)]:
            g.add_argument(arg, type=t, deprecated=True)
        _helper(parser)
        return parser

class AsyncEngineArgs(EngineArgs):
    @staticmethod
    def add_cli_args(parser, async_args_only=False):
        parser = EngineArgs.add_cli_args(parser)
        parser.add_argument("--log-requests", action=argparse.BooleanOptionalAction)
        return parser

def _helper(parser):
    parser.add_argument("--from-helper", action="store_true",
                        help="see --not-a-flag for details")
PICKS = ["x", "y"]
EOF
  cat >"$work/v/vllm/entrypoints/openai/cli_args.py" <<'EOF'
@config
class BaseFront:
    chat_thing: str | None = None
    flag_thing: bool = False
    @classmethod
    def add_cli_args(cls, parser):
        kw = get_kwargs(cls)
        for key, value in kw.items():
            parser.add_argument(f"--{key.replace('_', '-')}", **value)
        return parser
@config
class Front(BaseFront):
    host: str | None = None
    port: int = 8000
    skip: ClassVar[int] = 3
def make_arg_parser(parser):
    parser.add_argument("model_tag", nargs="?")
    parser.add_argument("--headless", action="store_true")
    parser = Front.add_cli_args(parser)
    parser = AsyncEngineArgs.add_cli_args(parser)
    return parser
EOF
  cat >"$work/v/vllm/entrypoints/cli/serve.py" <<'EOF'
class ServeSubcommand:
    def subparser_init(self, subparsers):
        p = subparsers.add_parser("serve")
        p.add_argument("--from-subcommand", type=int)
        return make_arg_parser(p)
EOF
  mkdir -p "$work/s/python/sglang/srt/arg_groups"
  cat >"$work/s/python/sglang/srt/arg_groups/parallel.py" <<'EOF'
class ParallelPart:
    tp_size: A[int, Arg(help="tp", aliases=["--tensor-parallel-size"])] = 1
    hidden: A[int, Arg(help="x", no_cli=True)] = 0
EOF
  cat >"$work/s/python/sglang/srt/server_args.py" <<'EOF'
_HELP_NAMED = "named help"
CH = ["c1", "c2"]
@dataclasses.dataclass
class ServerArgs(ParallelPart):
    model_path: A[str, Arg(help="p", aliases=["--model"])]
    mem_fraction_static: A[Optional[float], "fraction"] = None
    renamed: A[int, Arg(help="r", cli_name="--other-name")] = 0
    unannotated: int = 0
    old_ep: A[bool, Arg(help="d", action=DeprecatedStoreTrueAction)] = False
    joined: A[int, "a " + "b", NS("x")] = 0
    named: A[int, _HELP_NAMED, NS("x")] = 0
    ns_only: A[Optional[Callable], NS("x")] = None
    hidden_arg: A[bool, Arg(no_cli=True), NS("x")] = False
    opt_bool: A[Optional[bool], Arg(help="o", action=argparse.BooleanOptionalAction)] = None
    mode: A[Literal["null", "p"], "mode", NS("x")] = "null"
    picked: A[Optional[str], Arg(help="x", choices=CH + ["c3"])] = None
    lit_arg: A[Literal["l1", "l2"], Arg(help="x", choices=["l1"])] = "l1"
    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument("--enable-thing", action="store_true")
        parser.add_argument("--gone", action=DeprecatedAction, help="gone")
        parser.add_argument("--config", type=str)
        parser.add_argument("--old-backend", choices=CH, action=DeprecatedAction)
EOF
  mkdir -p "$work/t/tensorrt_llm/commands"
  cat >"$work/t/tensorrt_llm/commands/serve.py" <<'EOF'
LEVELS = ["info", "debug"]
@click.command("serve")
@click.argument("model", type=str)
@click.option("--tensor_parallel_size", "--tp_size", type=int, default=1)
@click.option("--config", "--extra_llm_api_options", "extra_llm_api_options")
@click.option("--on/--off", default=True)
@click.option("-x", "--with-dash", type=int)
@click.option("--backend", type=ChoiceWithAlias(["pytorch", "tensorrt"], {"trt": "tensorrt"}))
@click.option("--lvl", type=click.Choice(LEVELS))
def serve(model, tensor_parallel_size, extra_llm_api_options, on, with_dash):
    pass
@click.command("disaggregated")
@click.option("-c", "--config_file", type=str)
def disaggregated(config_file):
    pass
EOF
  mkrepo "$work/v"; mkrepo "$work/s"; mkrepo "$work/t"
  run_all "$work/v.git" "$work/s.git" "$work/t.git" "$work/out" >/dev/null
  fail=0
  expect() {  # expect FILE OPTIONS...: the file's options are exactly these
    local got want
    got=$(grep -v '^#' "$work/out/$1")
    want=$(shift; printf '%s\n' "$@" | LC_ALL=C sort -u)
    if [ "$got" != "$want" ]; then
      echo "self-test: $1 differs"; diff <(echo "$want") <(echo "$got") || true
      fail=1
    fi
  }
  expect vllm.txt --model --turn-on --no-turn-on --maybe --no-maybe --size \
    --nested --kind --explicit --no-explicit --old --loop-a --loop-b \
    --from-helper --log-requests --no-log-requests --headless --chat-thing \
    --flag-thing --no-flag-thing --host --port --from-subcommand \
    --absent-on --no-absent-on --absent-quant --absent-num --dt --pick --dyn
  expect sglang.txt --tp-size --tensor-parallel-size --model-path --model \
    --mem-fraction-static --other-name --old-ep --enable-thing --gone --config \
    --joined --named --opt-bool --no-opt-bool --mode --picked --lit-arg \
    --old-backend
  expect trtllm.txt --tensor_parallel_size --tp_size --config \
    --extra_llm_api_options --on --off --with-dash --backend --lvl
  values() {  # values FILE: the `# values` lines, exactly these (sorted)
    local got want
    got=$(grep '^# values ' "$work/out/$1" || true)
    want=$(shift; printf '# values %s\n' "$@")
    if [ "$got" != "$want" ]; then
      echo "self-test: $1 values differ"; diff <(echo "$want") <(echo "$got") || true
      fail=1
    fi
  }
  values vllm.txt '--absent-quant: ["q1", "q2"]' '--dt: ["d1", "d2"]' \
    '--kind: ["a", "b"]' '--pick: ["x", "y", "z"]'
  values sglang.txt '--lit-arg: ["l1"]' \
    '--mode: ["null", "p"]' '--old-backend: ["c1", "c2"]' \
    '--picked: ["c1", "c2", "c3"]'
  values trtllm.txt '--backend: ["pytorch", "tensorrt", "trt"]' \
    '--lvl: ["info", "debug"]'
  grep -q '^# --no-X of options whose config class is not among the sources, from the EngineArgs field of the option.s dest: --absent-on$' \
    "$work/out/vllm.txt" || { echo "self-test: EngineArgs bool fallback"; fail=1; }
  grep -q '^# source: vllm/model_executor/layers/quantization/__init__.py$' \
    "$work/out/vllm.txt" || { echo "self-test: values module not listed"; fail=1; }
  # --manifest / --source-note: upstream commits in the header, no pinned
  # `commit:` line, an unlisted file read is an error
  c1=0123456789abcdef0123456789abcdef01234567
  printf '# upstream\ntensorrt_llm/commands/serve.py %s\nother/file.py %s\n' \
    "$c1" "$c1" >"$work/man-t"
  printf 'python/sglang/srt/elsewhere.py %s\n' "$c1" >"$work/man-s"
  if ! bash "$0" --out "$work/out2" --manifest trtllm="$work/man-t" \
      --source-note "trtllm=reassembled from index pages" \
      "$work/v.git" "$work/s.git" "$work/t.git" >/dev/null 2>&1; then
    echo "self-test: --manifest run failed"; fail=1
  else
    t2=$work/out2/trtllm.txt
    if ! { grep -q "^# source: tensorrt_llm/commands/serve.py @ $c1\$" "$t2" &&
           grep -q "^# manifest, not read: other/file.py @ $c1\$" "$t2" &&
           grep -q '^# note: reassembled from index pages$' "$t2" &&
           grep -q '^# origin: .*not one pinned snapshot' "$t2" &&
           grep -q '^# scratch-commit: [0-9a-f]\{40\} ' "$t2" &&
           ! grep -q '^# commit' "$t2" &&
           grep -q '^# commit: ' "$work/out2/vllm.txt"; }; then
      echo "self-test: --manifest header"; fail=1
    fi
  fi
  if bash "$0" --out "$work/out3" --manifest sglang="$work/man-s" \
      "$work/v.git" "$work/s.git" "$work/t.git" >/dev/null 2>"$work/err3" ||
      ! grep -q 'server_args.py was read but the manifest names no upstream commit' \
        "$work/err3"; then
    echo "self-test: a file missing from the manifest is not an error"; fail=1
  fi
  grep -q '^# commit-date: 2024-01-02T03:04:05' "$work/out/vllm.txt" || {
    echo "self-test: no commit date"; fail=1; }
  grep -qE '^# commit: [0-9a-f]{40}$' "$work/out/sglang.txt" || {
    echo "self-test: no full commit"; fail=1; }
  grep -q '^# registered as deprecated (still accepted): --loop-a --loop-b --old$' \
    "$work/out/vllm.txt" || { echo "self-test: vLLM deprecations"; fail=1; }
  grep -q '^# registered as deprecated (still accepted): --gone --old-backend --old-ep$' \
    "$work/out/sglang.txt" || { echo "self-test: SGLang deprecations"; fail=1; }
  # shellcheck disable=SC2016  # the backquotes are literal
  grep -q '^# subcommand `trtllm-serve disaggregated`: --config_file$' \
    "$work/out/trtllm.txt" || { echo "self-test: TRT-LLM subcommand"; fail=1; }
  grep -q '^# source: vllm/config/alpha.py$' "$work/out/vllm.txt" || {
    echo "self-test: config source not listed"; fail=1; }
  if [ $fail = 0 ]; then echo "distill-serve-flags self-test: 1 passed, 0 failed"
  else echo "distill-serve-flags self-test: 0 passed, 1 failed"; exit 1; fi
  exit 0
fi

vllm_git=${pos[0]:-${VLLM_GIT:-}}
sglang_git=${pos[1]:-${SGLANG_GIT:-}}
trtllm_git=${pos[2]:-${TRTLLM_GIT:-}}
if [ -z "$vllm_git" ] || [ -z "$sglang_git" ] || [ -z "$trtllm_git" ]; then
  echo "usage: $0 [--rev REV] [--out DIR] VLLM_GIT SGLANG_GIT TRTLLM_GIT" >&2
  echo "   or: VLLM_GIT=.. SGLANG_GIT=.. TRTLLM_GIT=.. $0;  $0 --self-test" >&2
  exit 2
fi
run_all "$vllm_git" "$sglang_git" "$trtllm_git" "$out"
echo "options Trident writes:"
# shellcheck disable=SC2086
check "$out/vllm.txt" $sanity_vllm
# shellcheck disable=SC2086
check "$out/sglang.txt" $sanity_sglang
# shellcheck disable=SC2086
check "$out/trtllm.txt" $sanity_trtllm
