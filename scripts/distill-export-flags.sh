#!/usr/bin/env bash
#===- scripts/distill-export-flags.sh - training frameworks' option names -===#
#
# Usage:
#   scripts/distill-export-flags.sh [--out DIR] [--megatron-rev R] [--torchtitan-rev R]
#                                   [--deepspeed-rev R] MEGATRON_GIT TORCHTITAN_GIT DEEPSPEED_GIT
#   MEGATRON_GIT=... TORCHTITAN_GIT=... DEEPSPEED_GIT=... scripts/distill-export-flags.sh
#   scripts/distill-export-flags.sh --self-test
#
# Reads the option sources of the three training frameworks that `trident
# export` writes for (docs/exporters.md) from git mirrors (bare git
# directories, as the search tool's `fetch github:OWNER/NAME` brings them, or
# clones) with `git show REV:path`, parses them with Python's `ast` (nothing
# is imported or run) and writes, under DIR (default test/data/export-flags):
#
#   megatron.txt    every long option of Megatron-LM's pretrain argument
#                   parser: add_megatron_arguments (megatron/training/
#                   arguments.py) and every function it hands the parser to
#                   (same module or imported), the literal `--x` strings of
#                   their add_argument calls (`--no-x` too for
#                   argparse.BooleanOptionalAction), and the options
#                   ArgumentGroupFactory(Config, exclude=...).build_group
#                   derives from a config dataclass (megatron/training/
#                   argument_utils.py): field `x_y` (the class's and its
#                   dataclass bases', init=True, not excluded) is `--x-y`; a
#                   bool field defaulting to anything but False is
#                   `--no-x-y` and `--disable-x-y` instead; metadata
#                   {"argparse_meta": {"arg_names": [...]}} replaces the names.
#                   Options an extra_args_provider adds (pretrain_gpt.py's
#                   add_modelopt_args, with nvidia-modelopt only) are not listed.
#   torchtitan.txt  every key of torchtitan's job config, `section.key` (a
#                   nested dataclass gives `section.sub.key`, a top-level
#                   scalar a bare `key`): the fields of the root config class
#                   (Trainer.Config, torchtitan/trainer.py) whose type (or
#                   default_factory) is a dataclass are sections; each
#                   section lists the fields of every class its annotation
#                   names (unions and type aliases followed: the
#                   activation-checkpointing policies) and of its
#                   default_factory class. Fields annotated
#                   tyro.conf.Suppress cannot be set with --section.key and
#                   are left out (named in the header).
#   deepspeed.txt   every DeepSpeed config JSON key path (`bf16.enabled`,
#                   `zero_optimization.stage`, and each enclosing object, e.g.
#                   `bf16`) that DeepSpeedConfig (deepspeed/runtime/config.py)
#                   reads: its __init__ is followed from the config dict
#                   through every function and class it hands (a part of) the
#                   dict to, in any module: `d[K]`, `d.get(K)`, `d.pop(K)`,
#                   `K in d`, and get_scalar_param(d, K, ...), with K a string
#                   or a constant (deepspeed/runtime/constants.py and the
#                   others, star imports followed); `Model(**d)` for a
#                   pydantic model (DeepSpeedConfigModel: extra="forbid") adds
#                   its fields and their aliases, nested models under them.
#                   Objects whose keys are free-form (iterated, or typed
#                   Dict[str, ...]) and deprecated fields are named in the
#                   header.
#
# Each file starts with `#` lines (repository, full commit, commit date, the
# files read), then one entry a line, sorted (byte order) and unique.
#
# REV defaults to the commit docs/exporters.md pins for each framework. A
# mirror without it is an error that names the commit and the mirror's HEAD
# (fetch a newer mirror, or pass --X-rev to distill another commit on
# purpose; the header records which one was read). The script stops with an
# error when an expected file, class or function is missing or a framework
# yields nothing, rather than write a short list.
#
# Needs git and python3 (standard library only). `--self-test` builds three
# small synthetic repositories (no framework code) holding the idioms the
# parser reads, and checks the output.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# The commits docs/exporters.md says the exporters were checked against.
megatron_rev=d98e8a64ddf34856e74b24714e3bedb2f5a39553
torchtitan_rev=b5bcd76c66d0acb1a08b176d9639425bc55e0b2a
deepspeed_rev=edaa7221267243c7be7fb49c5d5f5c4fb97b4641
out=${EXPORT_FLAGS_OUT:-$root/test/data/export-flags}
self_test=0
pos=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --megatron-rev) megatron_rev=$2; shift 2 ;;
    --torchtitan-rev) torchtitan_rev=$2; shift 2 ;;
    --deepspeed-rev) deepspeed_rev=$2; shift 2 ;;
    --self-test) self_test=1; shift ;;
    -h|--help) sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "distill-export-flags: unknown option $1" >&2; exit 2 ;;
    *) pos+=("$1"); shift ;;
  esac
done

py=$(mktemp "${TMPDIR:-/tmp}/distill-export-flags.XXXXXX.py")
work=""
cleanup() { rm -f "$py"; if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

cat >"$py" <<'PYEOF'
import ast
import re
import subprocess
import sys

LONG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def die(msg):
    sys.exit("distill-export-flags: error: " + msg)


def warn(msg):
    sys.stderr.write("distill-export-flags: warning: " + msg + "\n")


# ------------------------------------------------------------ git, modules
class Module:
    """One parsed Python file: its top-level names and imports."""

    def __init__(self, path, tree):
        self.path = path
        self.tree = tree
        self.is_pkg = path.endswith("/__init__.py")
        d = path[:-3].replace("/", ".")
        self.dotted = d[:-len(".__init__")] if self.is_pkg else d
        self.defs = {}      # name -> FunctionDef / ClassDef
        self.assigns = {}   # name -> value node
        self.imports = {}   # name -> (module, attr or None)
        self.stars = []     # modules imported with *
        self.future_annotations = False
        self._top(tree.body)

    def _top(self, body):
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef,
                               ast.ClassDef)):
                self.defs[st.name] = st
            elif isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        self.assigns[t.id] = st.value
            elif isinstance(st, ast.AnnAssign) and st.value is not None \
                    and isinstance(st.target, ast.Name):
                self.assigns[st.target.id] = st.value
            elif isinstance(st, (ast.Import, ast.ImportFrom)):
                if isinstance(st, ast.ImportFrom) and \
                        st.module == "__future__" and \
                        any(a.name == "annotations" for a in st.names):
                    self.future_annotations = True
                import_bindings(self, st, self.imports, self.stars)
            elif isinstance(st, ast.If):
                self._top(st.body)
                self._top(st.orelse)
            elif isinstance(st, ast.Try):
                self._top(st.body)
                for h in st.handlers:
                    self._top(h.body)
                self._top(st.orelse)
                self._top(st.finalbody)
            elif isinstance(st, ast.With):
                self._top(st.body)

    def base_package(self, level):
        parts = self.dotted.split(".")
        if not self.is_pkg:
            parts = parts[:-1]
        if level > 1:
            parts = parts[:len(parts) - (level - 1)]
        return ".".join(parts)


def import_bindings(mod, st, names, stars):
    if isinstance(st, ast.Import):
        for a in st.names:
            if a.asname:
                names[a.asname] = (a.name, None)
            else:
                top = a.name.split(".")[0]
                names[top] = (top, None)
        return
    src = st.module or ""
    if st.level:
        base = mod.base_package(st.level)
        src = base + ("." + src if src and base else src)
    for a in st.names:
        if a.name == "*":
            stars.append(src)
        else:
            names[a.asname or a.name] = (src, a.name)


def local_imports(mod, fn):
    """Names a function imports inside its body."""
    names = {}
    for n in ast.walk(fn):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            import_bindings(mod, n, names, [])
    return names


class Repo:
    """Read-only view of one commit of a git directory."""

    def __init__(self, gitdir, rev, slug, flag):
        self.gitdir = gitdir
        self.slug = slug
        r = subprocess.run(["git", "-C", gitdir, "rev-parse", "--git-dir"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("%s is not a git directory (%s)" % (gitdir, r.stderr.strip()))
        r = subprocess.run(["git", "-C", gitdir, "rev-parse", "--verify",
                            "-q", rev + "^{commit}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            head = subprocess.run(
                ["git", "-C", gitdir, "log", "-1", "--format=%H %cI", "HEAD"],
                capture_output=True, text=True).stdout.strip() or "(none)"
            die("commit %s of %s is not in %s (its HEAD: %s); fetch a newer "
                "mirror (the search tool's `fetch github:%s`), or pass "
                "%s REV to distill another commit on purpose" % (
                    rev, slug, gitdir, head, slug, flag))
        self.commit = r.stdout.strip()
        self.date = self.git("show", "-s", "--format=%cI",
                             self.commit).strip()
        self.files = set(self.git("ls-tree", "-r", "--name-only",
                                  self.commit).splitlines())
        self.read = []
        self.mods = {}

    def git(self, *args):
        r = subprocess.run(["git", "-C", self.gitdir] + list(args),
                           capture_output=True, text=True)
        if r.returncode != 0:
            die("git %s failed in %s: %s" % (" ".join(args), self.gitdir,
                                              r.stderr.strip()))
        return r.stdout

    def note(self, path):
        if path not in self.read:
            self.read.append(path)

    def module(self, path):
        if path not in self.mods:
            src = self.git("show", self.commit + ":" + path)
            try:
                tree = ast.parse(src, filename=path)
            except SyntaxError as e:
                die("python %d.%d cannot parse %s@%s: %s" % (
                    sys.version_info[0], sys.version_info[1], path,
                    self.commit[:12], e))
            self.mods[path] = Module(path, tree)
        return self.mods[path]

    def require(self, path):
        if path not in self.files:
            die("%s not found in %s@%s" % (path, self.slug, self.commit))
        self.note(path)
        return self.module(path)

    def module_dotted(self, dotted):
        if not dotted:
            return None
        p = dotted.replace(".", "/")
        for cand in (p + ".py", p + "/__init__.py"):
            if cand in self.files:
                return self.module(cand)
        return None

    # A resolved name: ("def", Module, FunctionDef/ClassDef),
    # ("value", Module, expr) or ("module", Module, None).
    def resolve_name(self, mod, name, local=None, depth=0):
        if depth > 30:
            return None
        if local and name in local:
            return self.resolve_import(local[name], depth + 1)
        if name in mod.defs:
            return ("def", mod, mod.defs[name])
        if name in mod.imports:
            return self.resolve_import(mod.imports[name], depth + 1)
        if name in mod.assigns:
            return ("value", mod, mod.assigns[name])
        for s in mod.stars:
            m = self.module_dotted(s)
            if m is not None and not name.startswith("_"):
                r = self.resolve_name(m, name, None, depth + 1)
                if r is not None:
                    return r
        return None

    def resolve_import(self, imp, depth=0):
        src, attr = imp
        if attr is None:
            m = self.module_dotted(src)
            return ("module", m, None) if m is not None else None
        m = self.module_dotted(src)
        if m is not None:
            r = self.resolve_name(m, attr, None, depth + 1)
            if r is not None:
                return r
        sub = self.module_dotted(src + "." + attr if src else attr)
        return ("module", sub, None) if sub is not None else None

    def resolve_expr(self, mod, node, local=None):
        if isinstance(node, ast.Name):
            return self.resolve_name(mod, node.id, local)
        if isinstance(node, ast.Attribute):
            base = self.resolve_expr(mod, node.value, local)
            if base is None:
                return None
            kind, m, d = base
            if kind == "module":
                r = self.resolve_name(m, node.attr)
                if r is None:
                    sub = self.module_dotted(m.dotted + "." + node.attr)
                    r = ("module", sub, None) if sub is not None else None
                return r
            if kind == "def" and isinstance(d, ast.ClassDef):
                return self.class_member(m, d, node.attr)
        return None

    def class_member(self, mod, cls, name, depth=0):
        """A nested class or method of a class or of its bases."""
        if depth > 20:
            return None
        for st in cls.body:
            if isinstance(st, (ast.ClassDef, ast.FunctionDef,
                               ast.AsyncFunctionDef)) and st.name == name:
                return ("def", mod, st)
        for b in cls.bases:
            r = self.resolve_expr(mod, b)
            if r and r[0] == "def" and isinstance(r[2], ast.ClassDef):
                got = self.class_member(r[1], r[2], name, depth + 1)
                if got is not None:
                    return got
        return None

    def resolve_class(self, mod, node, local=None):
        r = self.resolve_expr(mod, node, local)
        if r and r[0] == "def" and isinstance(r[2], ast.ClassDef):
            return r[1], r[2]
        return None

    def bases(self, mod, cls, local=None):
        out = []
        for b in cls.bases:
            r = self.resolve_class(mod, b, local)
            if r is not None:
                out.append(r)
        return out

    def ancestors(self, mod, cls, seen=None):
        """(module, ClassDef) of the class and every base found here."""
        seen = seen if seen is not None else set()
        key = (mod.path, cls.lineno, cls.name)
        if key in seen:
            return []
        seen.add(key)
        out = [(mod, cls)]
        for bm, bc in self.bases(mod, cls):
            out += self.ancestors(bm, bc, seen)
        return out

    def base_names(self, mod, cls):
        """Names of every base, found here or not (BaseModel, ...)."""
        names = set()
        for m, c in self.ancestors(mod, cls):
            names.add(c.name)
            for b in c.bases:
                names.add(last(b))
        return names

    def sconst(self, mod, node, local=None, depth=0):
        """The string a node stands for: a literal or a constant's name."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if depth > 20 or not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        r = self.resolve_expr(mod, node, local)
        if r and r[0] == "value":
            got = self.sconst(r[1], r[2], None, depth + 1)
            if got is not None:
                self.note(r[1].path)   # a constants module read
            return got
        return None


# ---------------------------------------------------------------- helpers
def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base + "." + node.attr if base else node.attr
    return ""


def last(node):
    if isinstance(node, ast.Call):
        node = node.func
    return dotted(node).rsplit(".", 1)[-1]


def kwarg(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def lit(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def is_dataclass(cls):
    for d in cls.decorator_list:
        if last(d) == "dataclass":
            return True
    return False


def annotation_names(node):
    return {last(n) for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute))}


def own_fields(cls):
    """Annotated class-body names, in order: [(name, AnnAssign)]."""
    out = []
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            names = annotation_names(st.annotation)
            if "ClassVar" in names or "InitVar" in names or \
                    "KW_ONLY" in names:
                continue
            out.append((st.target.id, st))
    return out


def dataclass_fields(repo, mod, cls, seen=None):
    """dataclasses.fields(): the dataclass bases' fields, then the class's
    own if it is a dataclass; [(name, AnnAssign, module, ClassDef)]."""
    seen = seen if seen is not None else set()
    key = (mod.path, cls.lineno)
    if key in seen:
        return []
    seen.add(key)
    got = {}
    for bm, bc in repo.bases(mod, cls):
        for f in dataclass_fields(repo, bm, bc, seen):
            got[f[0]] = f
    if is_dataclass(cls):
        for name, st in own_fields(cls):
            got[name] = (name, st, mod, cls)
    return list(got.values())


def field_call(st):
    v = st.value
    if isinstance(v, ast.Call) and last(v.func) == "field":
        return v
    return None


def write(path, header, entries):
    lines = ["# " + h for h in header]
    lines += sorted(set(entries))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def header_common(title, repo):
    return [title, "generated by scripts/distill-export-flags.sh; do not edit",
            "repository: " + repo.slug, "commit: " + repo.commit,
            "commit-date: " + repo.date]


# --------------------------------------------------------------- Megatron
def megatron_bool(ann, future):
    """Does ArgumentGroupFactory._extract_type give `bool` here?"""
    if future or (isinstance(ann, ast.Constant) and
                  isinstance(ann.value, str)):
        return False    # a string annotation is no type object
    if isinstance(ann, ast.Name):
        return ann.id == "bool"
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        elts = []

        def flat(n):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
                flat(n.left)
                flat(n.right)
            else:
                elts.append(n)
        flat(ann)
        if len(elts) >= 2 and isinstance(elts[1], ast.Constant) and \
                elts[1].value is None:
            return megatron_bool(elts[0], future)
        return False
    if isinstance(ann, ast.Subscript):
        base = last(ann.value)
        sl = ann.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if base == "Optional":
            return megatron_bool(elts[0], future)
        if base == "Union":
            if len(elts) >= 2 and isinstance(elts[1], ast.Constant) and \
                    elts[1].value is None:
                return megatron_bool(elts[0], future)
            return False
        if base in ("list", "List") and len(elts) == 1:
            return megatron_bool(elts[0], future)
    return False


class MegatronFlags:
    def __init__(self, repo):
        self.repo = repo
        self.flags = set()
        self.derived = {}       # class name -> count
        self.seen = set()
        self.factory = None     # (module path, ClassDef) of the factory

    def add(self, opt):
        self.flags.add(opt)

    def is_factory(self, mod, node, local):
        r = self.repo.resolve_class(mod, node, local)
        if r is None:
            return last(node) == "ArgumentGroupFactory"
        return any(c.name == "ArgumentGroupFactory"
                   for _, c in self.repo.ancestors(*r))

    def scan(self, mod, fn):
        key = (mod.path, fn.lineno, fn.name)
        if key in self.seen:
            return
        self.seen.add(key)
        self.repo.note(mod.path)
        local = local_imports(mod, fn)
        factories = {}
        lists = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                v = node.value
                if isinstance(v, ast.Call) and self.is_factory(mod, v.func,
                                                               local):
                    factories[name] = v
                elif isinstance(v, (ast.List, ast.Tuple)):
                    lists[name] = v
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            fname = last(node.func)
            if fname == "add_argument":
                opts = []
                for a in node.args:
                    s = repo_str(self.repo, mod, a, local)
                    if s is not None and LONG.match(s):
                        opts.append(s)
                act = kwarg(node, "action")
                boolopt = act is not None and \
                    last(act) == "BooleanOptionalAction"
                for o in opts:
                    self.add(o)
                    if boolopt:
                        self.add("--no-" + o[2:])
                continue
            if fname == "build_group" and \
                    isinstance(node.func, ast.Attribute):
                recv = node.func.value
                call = None
                if isinstance(recv, ast.Call) and \
                        self.is_factory(mod, recv.func, local):
                    call = recv
                elif isinstance(recv, ast.Name) and recv.id in factories:
                    call = factories[recv.id]
                if call is not None:
                    self.derive(mod, fn, call, local, lists)
                continue
            # a function handed the parser: follow it
            hands = [a for a in node.args if isinstance(a, ast.Name)] + \
                [k.value for k in node.keywords
                 if isinstance(k.value, ast.Name)]
            if not any("parser" in a.id for a in hands):
                continue
            r = self.repo.resolve_expr(mod, node.func, local)
            if r and r[0] == "def" and \
                    isinstance(r[2], (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.scan(r[1], r[2])

    def derive(self, mod, fn, call, local, lists):
        src = call.args[0] if call.args else kwarg(call, "src_cfg_class")
        if src is None:
            die("%s: ArgumentGroupFactory call without a class (line %d)" % (
                mod.path, call.lineno))
        found = self.repo.resolve_class(mod, src, local)
        if found is None:
            die("%s: class %s (ArgumentGroupFactory, line %d) not found" % (
                mod.path, dotted(src), call.lineno))
        ex = call.args[1] if len(call.args) > 1 else kwarg(call, "exclude")
        exclude = set()
        if ex is not None:
            if isinstance(ex, ast.Name):
                ex = lists.get(ex.id) or mod.assigns.get(ex.id)
            vals = lit(ex) if ex is not None else None
            if not isinstance(vals, (list, tuple)):
                die("%s: exclude list of ArgumentGroupFactory(%s) (line %d) "
                    "is not a literal" % (mod.path, dotted(src), call.lineno))
            exclude = set(vals)
        cmod, cls = found
        n = 0
        for name, st, fmod, fcls in dataclass_fields(self.repo, cmod, cls):
            self.repo.note(fmod.path)
            if name in exclude:
                continue
            fc = field_call(st)
            default = st.value
            meta = None
            if fc is not None:
                init = kwarg(fc, "init")
                if isinstance(init, ast.Constant) and init.value is False:
                    continue
                default = kwarg(fc, "default")
                if default is None:
                    default = kwarg(fc, "default_factory") or \
                        ast.Constant("<missing>")
                md = kwarg(fc, "metadata")
                if md is not None:
                    if not isinstance(md, ast.Dict):
                        die("%s: metadata of %s.%s is not a dict literal" % (
                            fmod.path, fcls.name, name))
                    for k, v in zip(md.keys, md.values):
                        if k is not None and lit(k) == "argparse_meta":
                            meta = v
            names = ["--" + name.replace("_", "-")]
            if megatron_bool(st.annotation, fmod.future_annotations):
                is_false = isinstance(default, ast.Constant) and \
                    default.value is not None and default.value == False  # noqa: E712
                if not is_false:
                    names = ["--no-" + name.replace("_", "-"),
                             "--disable-" + name.replace("_", "-")]
            if meta is not None:
                if not isinstance(meta, ast.Dict):
                    die("%s: argparse_meta of %s.%s is not a dict literal" % (
                        fmod.path, fcls.name, name))
                for k, v in zip(meta.keys, meta.values):
                    if k is not None and lit(k) == "arg_names":
                        got = lit(v)
                        if not isinstance(got, (list, tuple)) or \
                                not all(isinstance(x, str) for x in got):
                            die("%s: arg_names of %s.%s is not a literal "
                                "list of strings" % (fmod.path, fcls.name,
                                                     name))
                        names = list(got)
            for o in names:
                if LONG.match(o):
                    self.add(o)
                    n += 1
        self.derived[cls.name] = self.derived.get(cls.name, 0) + n


def repo_str(repo, mod, node, local):
    return repo.sconst(mod, node, local)


def megatron(repo, outpath):
    args = "megatron/training/arguments.py"
    mod = repo.require(args)
    fn = mod.defs.get("add_megatron_arguments")
    if not isinstance(fn, ast.FunctionDef):
        die("add_megatron_arguments not found in " + args)
    mf = MegatronFlags(repo)
    mf.scan(mod, fn)
    if len(mf.flags) < 10:
        die("only %d Megatron-LM options found" % len(mf.flags))
    if not mf.derived:
        die("no ArgumentGroupFactory(...).build_group found under "
            "add_megatron_arguments")
    if "megatron/training/argument_utils.py" in repo.files:
        repo.note("megatron/training/argument_utils.py")
    h = header_common("long options of Megatron-LM's pretrain argument "
                      "parser (add_megatron_arguments)", repo)
    h += ["source: " + p for p in repo.read]
    h.append("not listed: what an extra_args_provider adds (pretrain_gpt.py's "
             "add_modelopt_args, with nvidia-modelopt installed)")
    h.append("derived from config dataclasses (ArgumentGroupFactory): " +
             ", ".join("%s %d" % (k, v) for k, v in sorted(mf.derived.items())))
    write(outpath, h, mf.flags)
    return mf.flags


# ------------------------------------------------------------- torchtitan
class TitanKeys:
    def __init__(self, repo):
        self.repo = repo
        self.keys = set()
        self.suppressed = []
        self.sections = []

    def classes_of(self, mod, ann, local=None, depth=0):
        """The dataclasses an annotation names (aliases, unions, Optional,
        Annotated followed); list/dict/... element types are not."""
        out = []
        if depth > 20 or ann is None:
            return out
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return out
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self.classes_of(mod, ann.left, local, depth + 1) + \
                self.classes_of(mod, ann.right, local, depth + 1)
        if isinstance(ann, ast.Subscript):
            base = last(ann.value)
            sl = ann.slice
            elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            if base == "Annotated":
                return self.classes_of(mod, elts[0], local, depth + 1)
            if base in ("Optional", "Union"):
                return [c for e in elts
                        for c in self.classes_of(mod, e, local, depth + 1)]
            return out
        if isinstance(ann, (ast.Name, ast.Attribute)):
            r = self.repo.resolve_expr(mod, ann, local)
            if r is None:
                return out
            kind, m, d = r
            if kind == "def" and isinstance(d, ast.ClassDef):
                if any(is_dataclass(c) for _, c in
                       self.repo.ancestors(m, d)):
                    out.append((m, d))
            elif kind == "value":
                out += self.classes_of(m, d, None, depth + 1)
        return out

    def suppressed_ann(self, ann):
        for n in ast.walk(ann):
            if isinstance(n, (ast.Name, ast.Attribute)) and \
                    last(n) == "Suppress":
                return True
        return False

    def walk(self, mod, cls, prefix, depth=0, seen=()):
        key = (mod.path, cls.lineno)
        if depth > 8 or key in seen:
            return
        seen = seen + (key,)
        self.repo.note(mod.path)
        for name, st, fmod, fcls in dataclass_fields(self.repo, mod, cls):
            self.repo.note(fmod.path)
            path = prefix + name
            fc = field_call(st)
            if fc is not None:
                init = kwarg(fc, "init")
                if isinstance(init, ast.Constant) and init.value is False:
                    continue
            if self.suppressed_ann(st.annotation):
                self.suppressed.append(path)
                continue
            subs = self.classes_of(fmod, st.annotation)
            if fc is not None:
                dfl = kwarg(fc, "default_factory")
                if dfl is not None and isinstance(dfl, (ast.Name,
                                                        ast.Attribute)):
                    r = self.repo.resolve_class(fmod, dfl)
                    if r is not None and any(
                            is_dataclass(c) for _, c in
                            self.repo.ancestors(*r)):
                        subs.append(r)
            if subs:
                if depth == 0:
                    self.sections.append(name)
                done = set()
                for sm, sc in subs:
                    if (sm.path, sc.lineno) in done:
                        continue
                    done.add((sm.path, sc.lineno))
                    self.walk(sm, sc, path + ".", depth + 1, seen)
            else:
                self.keys.add(path)


def torchtitan(repo, outpath):
    tr = "torchtitan/trainer.py"
    mod = repo.require(tr)
    trainer = mod.defs.get("Trainer")
    if not isinstance(trainer, ast.ClassDef):
        die("class Trainer not found in " + tr)
    r = repo.class_member(mod, trainer, "Config")
    if r is None or not isinstance(r[2], ast.ClassDef):
        die("class Trainer.Config not found in " + tr)
    tk = TitanKeys(repo)
    tk.walk(r[1], r[2], "")
    for s in ("parallelism", "training"):
        if s not in tk.sections:
            die("Trainer.Config has no section %r" % s)
    if not tk.keys:
        die("no torchtitan config key found")
    h = header_common("keys of torchtitan's job config (Trainer.Config): "
                      "config.section.key = value, or --section.key value",
                      repo)
    h += ["source: " + p for p in repo.read]
    h.append("sections: " + " ".join(tk.sections))
    if tk.suppressed:
        h.append("annotated tyro.conf.Suppress (no --section.key; not "
                 "listed): " + " ".join(sorted(set(tk.suppressed))))
    write(outpath, h, tk.keys)
    return tk.keys


# -------------------------------------------------------------- DeepSpeed
# Abstract values: ("P", path tuple) a part of the config dict,
# ("S", str) a string.
class DSFlow:
    def __init__(self, repo):
        self.repo = repo
        self.paths = set()
        self.open = set()
        self.deprecated = set()
        self.memo = {}
        self.active = set()
        self.models = set()

    def record(self, p):
        for i in range(1, len(p) + 1):
            self.paths.add(p[:i])

    def is_model(self, mod, cls):
        return bool({"BaseModel", "DeepSpeedConfigModel"} &
                    self.repo.base_names(mod, cls))

    # -- pydantic models
    def model_keys(self, mod, cls, prefixes, depth=0):
        if depth > 10:
            return
        self.models.add(cls.name)
        fields = {}
        for m, c in reversed(self.repo.ancestors(mod, cls)):
            if not self.is_model(m, c):
                continue
            self.repo.note(m.path)
            for st in c.body:
                if isinstance(st, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "model_config"
                        for t in st.targets):
                    extra = kwarg(st.value, "extra") \
                        if isinstance(st.value, ast.Call) else None
                    if extra is not None and lit(extra) in ("allow",
                                                            "ignore"):
                        for p in prefixes:
                            self.open.add(p)
            for name, st in own_fields(c):
                if name.startswith("_"):
                    continue
                fields[name] = (st, m)
        for name, (st, m) in fields.items():
            names = [name]
            fc = st.value if isinstance(st.value, ast.Call) and \
                last(st.value.func) == "Field" else None
            dep = False
            if fc is not None:
                for kw in ("alias", "validation_alias"):
                    a = kwarg(fc, kw)
                    s = self.repo.sconst(m, a) if a is not None else None
                    if s:
                        names.append(s)
                d = kwarg(fc, "deprecated")
                if isinstance(d, ast.Constant) and d.value is True:
                    dep = True
                extra = kwarg(fc, "json_schema_extra")
                if isinstance(extra, ast.Dict):
                    for k, v in zip(extra.keys, extra.values):
                        if k is not None and lit(k) == "deprecated" and \
                                lit(v) is True:
                            dep = True
            subs = []
            free = False
            for n in ast.walk(st.annotation):
                if isinstance(n, ast.Subscript) and \
                        last(n.value) in ("Dict", "dict", "Mapping"):
                    free = True
                if isinstance(n, (ast.Name, ast.Attribute)):
                    if last(n) in ("Dict", "dict") and not any(
                            isinstance(s, ast.Subscript) and s.value is n
                            for s in ast.walk(st.annotation)):
                        free = True
                    r = self.repo.resolve_class(m, n)
                    if r is not None and self.is_model(*r):
                        subs.append(r)
            for p in prefixes:
                for nm in names:
                    path = p + (nm,)
                    self.record(path)
                    if dep:
                        self.deprecated.add(path)
                    if free and not subs:
                        self.open.add(path)
            for sm, sc in subs:
                self.model_keys(sm, sc, [p + (nm,) for p in prefixes
                                         for nm in names], depth + 1)

    # -- functions
    def call_function(self, mod, fn, args, keywords, self_env, cls_ctx,
                      method):
        """Bind a call's values to the parameters and analyse the body."""
        params = fn.args.posonlyargs + fn.args.args
        if method and params:
            params = params[1:]
        env = {}
        for p, v in zip(params, args):
            env[p.arg] = v
        names = {p.arg for p in params} | {a.arg for a in fn.args.kwonlyargs}
        for k, v in keywords.items():
            if k in names:
                env[k] = v
        # unbound parameters: their defaults (constants)
        pos_defaults = fn.args.defaults
        for p, dflt in zip(params[len(params) - len(pos_defaults):],
                           pos_defaults):
            if p.arg not in env:
                s = self.repo.sconst(mod, dflt)
                if s is not None:
                    env[p.arg] = frozenset({("S", s)})
        for p, dflt in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
            if p.arg not in env and dflt is not None:
                s = self.repo.sconst(mod, dflt)
                if s is not None:
                    env[p.arg] = frozenset({("S", s)})
        env.update(self_env)
        key = (mod.path, fn.lineno, fn.name,
               frozenset((k, v) for k, v in env.items() if v))
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            return frozenset()
        self.active.add(key)
        self.repo.note(mod.path)
        ret = self.body(mod, fn, env, cls_ctx)
        self.active.discard(key)
        self.memo[key] = ret
        return ret

    def body(self, mod, fn, env, cls_ctx):
        local = local_imports(mod, fn)
        env = {k: set(v) for k, v in env.items()}
        ctx = (mod, fn, env, local, cls_ctx)

        def target_name(t):
            if isinstance(t, ast.Name):
                return t.id
            if isinstance(t, ast.Attribute) and \
                    isinstance(t.value, ast.Name) and t.value.id == "self":
                return "self." + t.attr
            return None
        nodes = list(ast.walk(fn))
        for _ in range(3):     # assignments, to a fixed point
            before = sum(len(v) for v in env.values())
            for n in nodes:
                if isinstance(n, (ast.Assign, ast.AnnAssign)) and \
                        n.value is not None:
                    targets = n.targets if isinstance(n, ast.Assign) \
                        else [n.target]
                    vals = None
                    for t in targets:
                        name = target_name(t)
                        if name is None:
                            continue
                        if vals is None:
                            vals = self.eval(n.value, ctx)
                        env.setdefault(name, set()).update(vals)
                elif isinstance(n, ast.NamedExpr):
                    env.setdefault(n.target.id, set()).update(
                        self.eval(n.value, ctx))
                elif isinstance(n, ast.For) and \
                        isinstance(n.target, ast.Name):
                    env.setdefault(n.target.id, set()).update(
                        self.literal_strs(n.iter, ctx))
            if sum(len(v) for v in env.values()) == before:
                break
        ret = set()
        for n in nodes:
            if isinstance(n, ast.For):
                it = n.iter
                src = it.func.value if isinstance(it, ast.Call) and \
                    isinstance(it.func, ast.Attribute) and \
                    it.func.attr in ("items", "keys", "values") else it
                for v in self.eval(src, ctx):
                    if v[0] == "P":
                        self.open.add(v[1])
            if isinstance(n, ast.Return) and n.value is not None:
                ret |= self.eval(n.value, ctx)
            elif isinstance(n, (ast.Call, ast.Subscript, ast.Compare)):
                self.eval(n, ctx)
        return frozenset(v for v in ret if v[0] == "P")

    def paths_of(self, vals):
        return [v[1] for v in vals if v[0] == "P"]

    def strs_of(self, vals):
        return [v[1] for v in vals if v[0] == "S"]

    def keyed(self, dvals, kvals):
        out = set()
        for p in self.paths_of(dvals):
            for s in self.strs_of(kvals):
                self.record(p + (s,))
                out.add(("P", p + (s,)))
        return out

    def eval(self, node, ctx):
        mod, fn, env, local, cls_ctx = ctx
        if node is None:
            return set()
        if isinstance(node, ast.Constant):
            return {("S", node.value)} if isinstance(node.value, str) \
                else set()
        if isinstance(node, ast.Name):
            if node.id in env:
                return set(env[node.id])
            s = self.repo.sconst(mod, node, local)
            return {("S", s)} if s is not None else set()
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return set(env.get("self." + node.attr, ()))
            s = self.repo.sconst(mod, node, local)
            return {("S", s)} if s is not None else set()
        if isinstance(node, ast.Subscript):
            return self.keyed(self.eval(node.value, ctx),
                              self.eval(node.slice, ctx))
        if isinstance(node, ast.IfExp):
            return self.eval(node.body, ctx) | self.eval(node.orelse, ctx)
        if isinstance(node, ast.BoolOp):
            out = set()
            for v in node.values:
                out |= self.eval(v, ctx)
            return out
        if isinstance(node, ast.Compare):
            left = self.eval(node.left, ctx)
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)):
                    self.keyed(self.eval(right, ctx), left)
            return set()
        if isinstance(node, ast.Call):
            return self.eval_call(node, ctx)
        if isinstance(node, (ast.DictComp, ast.ListComp, ast.SetComp,
                             ast.GeneratorExp)):
            # `{k: d.get(k) for k in ("a", "b")}`: keys a, b of d; as a
            # dict it stands for d itself (a model built from it reads d)
            env2 = dict(env)
            loop = set()
            for g in node.generators:
                if isinstance(g.target, ast.Name):
                    env2[g.target.id] = self.literal_strs(g.iter, ctx)
                    loop.add(g.target.id)
            ctx2 = (mod, fn, env2, local, cls_ctx)
            if isinstance(node, ast.DictComp):
                vals = self.eval(node.value, ctx2)
                if isinstance(node.key, ast.Name) and node.key.id in loop:
                    return {("P", v[1][:-1]) for v in vals
                            if v[0] == "P" and v[1]}
                return set()
            self.eval(node.elt, ctx2)
            return set()
        return set()

    def literal_strs(self, node, ctx):
        """The strings of a literal tuple/list/set (or a constant naming
        one)."""
        mod, local = ctx[0], ctx[3]
        if isinstance(node, (ast.Name, ast.Attribute)) and \
                not (isinstance(node, ast.Name) and node.id in ctx[2]):
            r = self.repo.resolve_expr(mod, node, local)
            if r and r[0] == "value":
                mod, node, local = r[1], r[2], None
        if not isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return set()
        out = set()
        for e in node.elts:
            s = self.repo.sconst(mod, e, local)
            if s is not None:
                out.add(("S", s))
        return out

    def eval_call(self, node, ctx):
        mod, fn, env, local, cls_ctx = ctx
        f = node.func
        if isinstance(f, ast.Attribute):
            if f.attr in ("get", "pop", "setdefault") and node.args:
                recv = self.eval(f.value, ctx)
                if self.paths_of(recv):
                    out = self.keyed(recv, self.eval(node.args[0], ctx))
                    if f.attr == "get" and len(node.args) > 1:
                        out |= {v for v in self.eval(node.args[1], ctx)
                                if v[0] == "P"}
                    return out
            if f.attr in ("keys", "copy") and not node.args:
                return {v for v in self.eval(f.value, ctx) if v[0] == "P"}
            if f.attr in ("copy", "deepcopy") and dotted(f.value) == "copy" \
                    and node.args:
                return {v for v in self.eval(node.args[0], ctx)
                        if v[0] == "P"}
        if isinstance(f, ast.Name) and f.id == "dict" and node.args:
            return {v for v in self.eval(node.args[0], ctx) if v[0] == "P"}
        args = [frozenset(self.eval(a, ctx)) if not isinstance(a, ast.Starred)
                else frozenset() for a in node.args]
        keywords = {}
        spread = set()
        for k in node.keywords:
            vals = frozenset(self.eval(k.value, ctx))
            if k.arg is None:
                spread |= vals
            else:
                keywords[k.arg] = vals
        carries = any(v[0] == "P" for vs in list(args) +
                      list(keywords.values()) + [spread] for v in vs)
        self_env = {k: frozenset(v) for k, v in env.items()
                    if k.startswith("self.") and v}
        # self.method(...)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == "self" and cls_ctx is not None:
            if not carries and not self_env:
                return set()
            r = self.repo.class_member(cls_ctx[0], cls_ctx[1], f.attr)
            if r and isinstance(r[2], (ast.FunctionDef,
                                       ast.AsyncFunctionDef)):
                return set(self.call_function(r[1], r[2], args, keywords,
                                              self_env, cls_ctx, True))
            return set()
        if not carries:
            return set()
        r = self.repo.resolve_expr(mod, f, local)
        if r is None or r[0] != "def":
            return set()
        _, m, d = r
        if isinstance(d, ast.ClassDef):
            if self.is_model(m, d):
                ps = self.paths_of(spread)
                if ps:
                    self.model_keys(m, d, ps)
                return set()
            init = self.repo.class_member(m, d, "__init__")
            if init and isinstance(init[2], ast.FunctionDef):
                self.call_function(init[1], init[2], args, keywords, {},
                                   (m, d), True)
            return set()
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return set(self.call_function(m, d, args, keywords, {}, None,
                                          False))
        return set()


def deepspeed(repo, outpath):
    cfg = "deepspeed/runtime/config.py"
    mod = repo.require(cfg)
    cls = mod.defs.get("DeepSpeedConfig")
    if not isinstance(cls, ast.ClassDef):
        die("class DeepSpeedConfig not found in " + cfg)
    init = repo.class_member(mod, cls, "__init__")
    if init is None:
        die("DeepSpeedConfig.__init__ not found in " + cfg)
    fn = init[2]
    params = [a.arg for a in fn.args.args]
    if len(params) < 2:
        die("DeepSpeedConfig.__init__ takes no config")
    flow = DSFlow(repo)
    flow.call_function(mod, fn, [frozenset({("P", ())})], {}, {},
                       (mod, cls), True)
    keys = {".".join(p) for p in flow.paths}
    for k in ("train_batch_size", "zero_optimization.stage", "bf16.enabled"):
        if k not in keys:
            die("DeepSpeed key %s not found: the config reader changed "
                "shape" % k)
    h = header_common("DeepSpeed config JSON key paths read by "
                      "DeepSpeedConfig (deepspeed/runtime/config.py)", repo)
    h += ["source: " + p for p in repo.read]
    if flow.deprecated:
        h.append("deprecated (still accepted): " +
                 " ".join(sorted(".".join(p) for p in flow.deprecated)))
    if flow.open:
        h.append("free-form objects (any key inside; not listed): " +
                 " ".join(sorted(".".join(p) or "(root)" for p in flow.open)))
    write(outpath, h, keys)
    return keys


TARGETS = {
    "megatron": (megatron, "NVIDIA/Megatron-LM", "--megatron-rev"),
    "torchtitan": (torchtitan, "pytorch/torchtitan", "--torchtitan-rev"),
    "deepspeed": (deepspeed, "deepspeedai/DeepSpeed", "--deepspeed-rev"),
}

if __name__ == "__main__":
    target, gitdir, rev, outpath = sys.argv[1:5]
    fn, slug, flag = TARGETS[target]
    repo = Repo(gitdir, rev, slug, flag)
    got = fn(repo, outpath)
    print("%-10s %s %s  %5d entries -> %s" % (
        target, repo.commit, repo.date, len(got), outpath))
PYEOF

# What Trident writes (docs/exporters.md), checked after each run; missing
# ones are reported, not fatal (test/tools/export-flags.test fails on them).
sanity_megatron="--num-layers --tensor-model-parallel-size
  --pipeline-model-parallel-size --context-parallel-size
  --expert-model-parallel-size --expert-tensor-parallel-size
  --num-virtual-stages-per-pipeline-rank --decoder-first-pipeline-num-layers
  --decoder-last-pipeline-num-layers --pipeline-model-parallel-layout
  --sequence-parallel --micro-batch-size --global-batch-size --seq-length
  --recompute-granularity --recompute-method --recompute-num-layers
  --use-distributed-optimizer --use-megatron-fsdp
  --data-parallel-sharding-strategy --ckpt-format --overlap-grad-reduce
  --bf16 --fp16 --fp8-format"
sanity_torchtitan="parallelism.data_parallel_replicate_degree
  parallelism.data_parallel_shard_degree parallelism.fsdp_reshard_after_forward
  parallelism.tensor_parallel_degree parallelism.enable_sequence_parallel
  parallelism.context_parallel_degree parallelism.expert_parallel_degree
  parallelism.pipeline_parallel_degree parallelism.pipeline_parallel_schedule
  parallelism.num_pp_microbatches parallelism.module_fqns_per_model_part
  training.num_tokens_per_microbatch_per_dp_rank
  training.num_tokens_per_train_step training.max_context_length
  training.mixed_precision_param"
sanity_deepspeed="train_batch_size train_micro_batch_size_per_gpu
  gradient_accumulation_steps bf16 bf16.enabled fp16 fp16.enabled
  zero_optimization zero_optimization.stage tensor_parallel
  tensor_parallel.autotp_size expert_parallel expert_parallel.enabled
  expert_parallel.autoep_size"

check() {  # check FILE ENTRIES...
  local file=$1; shift
  local f miss=()
  for f in "$@"; do
    grep -qxF -- "$f" "$file" || miss+=("$f")
  done
  if [ ${#miss[@]} -eq 0 ]; then
    echo "  $(basename "$file"): all $# entries Trident writes are listed"
  else
    echo "  $(basename "$file"): MISSING ${miss[*]}"
  fi
}

run_all() {  # run_all MEGATRON TORCHTITAN DEEPSPEED OUTDIR
  mkdir -p "$4"
  PYTHONHASHSEED=0 python3 "$py" megatron "$1" "$megatron_rev" "$4/megatron.txt"
  PYTHONHASHSEED=0 python3 "$py" torchtitan "$2" "$torchtitan_rev" "$4/torchtitan.txt"
  PYTHONHASHSEED=0 python3 "$py" deepspeed "$3" "$deepspeed_rev" "$4/deepspeed.txt"
}

if [ $self_test = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/distill-export-flags-test.XXXXXX")
  mkrepo() {  # mkrepo DIR: commit what is in DIR, turn it into a bare repo
    git -C "$1" init -q
    git -C "$1" add -A
    GIT_AUTHOR_DATE=2024-01-02T03:04:05Z GIT_COMMITTER_DATE=2024-01-02T03:04:05Z \
      git -C "$1" -c user.name=t -c user.email=t@t commit -qm fixture
    git clone -q --bare "$1" "$1.git"
  }
  # Synthetic sources: the shapes the parser must read, no framework code.
  # --- Megatron-LM
  m=$work/m
  mkdir -p "$m/megatron/training/config" "$m/megatron/core/transformer"
  cat >"$m/megatron/core/parallel_config.py" <<'EOF'
from dataclasses import dataclass, field
@dataclass
class ParallelConfig:
    tensor_model_parallel_size: int = 1
    sequence_parallel: bool = False
    perform_initialization: bool = field(
        default=True, metadata={"argparse_meta": {"arg_names": ["--no-initialization"]}})
    overlap_flush: bool = field(default=False, metadata={"argparse_meta": {"default": None}})
    callback: Callable = None
EOF
  cat >"$m/megatron/core/transformer/transformer_config.py" <<'EOF'
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Optional
from ..parallel_config import ParallelConfig
@dataclass
class TransformerConfig(ParallelConfig):
    num_layers: int = field(default=0, metadata={"argparse_meta": {"default": None}})
    add_bias_linear: bool = True
    """docstring of a field"""
    maybe_flag: Optional[bool] = None
    zero_flag: bool = 0
    fp8: Optional[Literal['e4m3', 'hybrid']] = field(
        default=None, metadata={"argparse_meta": {"arg_names": ["--fp8-format"]}})
    derived: int = field(init=False, default=0)
    registry: ClassVar[dict] = {}
    excluded_thing: int = 3
EOF
  cat >"$m/megatron/core/transformer/__init__.py" <<'EOF'
from .transformer_config import TransformerConfig
EOF
  cat >"$m/megatron/training/config/train.py" <<'EOF'
from __future__ import annotations
from dataclasses import dataclass, field
@dataclass(kw_only=True)
class TrainingConfig:
    micro_batch_size: int | None = None
    string_bool: bool = True
    renamed: int = field(default=1, metadata={"argparse_meta": {"arg_names": ["--a-name", "--b-name"]}})
EOF
  cat >"$m/megatron/training/config/__init__.py" <<'EOF'
from megatron.training.config.train import (
    TrainingConfig,
)
EOF
  cat >"$m/megatron/training/argument_utils.py" <<'EOF'
class ArgumentGroupFactory:
    def build_group(self, parser, title=None):
        pass
EOF
  cat >"$m/megatron/training/extra_args.py" <<'EOF'
def add_extra_args(parser):
    parser.add_argument("--from-other-module", type=int)
    return parser
EOF
  cat >"$m/megatron/training/arguments.py" <<'EOF'
import argparse
from megatron.core.transformer import TransformerConfig
from megatron.training.argument_utils import ArgumentGroupFactory
from megatron.training.extra_args import add_extra_args

def add_megatron_arguments(parser):
    parser = _add_network_size_args(parser)
    parser = _add_training_args(parser)
    parser = add_extra_args(parser)
    return parser

def parse_args(extra_args_provider=None):
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser = add_megatron_arguments(parser)
    if extra_args_provider is not None:
        parser = extra_args_provider(parser)

def _add_network_size_args(parser):
    exclude = ["callback", "excluded_thing"]
    factory = ArgumentGroupFactory(TransformerConfig, exclude=exclude)
    group = factory.build_group(parser, "transformer")
    group = parser.add_argument_group(title="network size")
    group.add_argument("--max-position-embeddings", type=int, default=None,
                       help="see --not-an-option")
    group.add_argument("--no-position-embedding", action="store_false",
                       dest="add_position_embedding")
    group.add_argument("--rl-thing", action=argparse.BooleanOptionalAction)
    return parser

def _add_training_args(parser):
    from megatron.training.config import TrainingConfig
    ArgumentGroupFactory(TrainingConfig).build_group(parser, "training")
    group = parser.add_argument_group(title="training")
    group.add_argument("--train-iters", "-t", type=int)
    return parser

def _add_never_called(parser):
    parser.add_argument("--never-registered")
EOF
  # --- torchtitan
  t=$work/t
  mkdir -p "$t/torchtitan/config" "$t/torchtitan/components"
  cat >"$t/torchtitan/config/configurable.py" <<'EOF'
from dataclasses import dataclass
class Configurable:
    @dataclass(kw_only=True, slots=True)
    class Config:
        def build(self):
            pass
EOF
  cat >"$t/torchtitan/config/configs.py" <<'EOF'
from dataclasses import dataclass, field
@dataclass(kw_only=True, slots=True)
class TrainingConfig:
    steps: int = 10
    mixed_precision_param: Literal["bfloat16", "float32"] = "bfloat16"
@dataclass(kw_only=True, slots=True)
class Inner:
    depth: int = 1
@dataclass(kw_only=True, slots=True)
class ParallelismConfig:
    tensor_parallel_degree: int = 1
    module_fqns_per_model_part: list[list[str]] | None = None
    nested: Inner = field(default_factory=Inner)
    computed: int = field(init=False, default=0)
EOF
  cat >"$t/torchtitan/config/__init__.py" <<'EOF'
from .configurable import Configurable
from .configs import ParallelismConfig, TrainingConfig
EOF
  cat >"$t/torchtitan/components/opt.py" <<'EOF'
from dataclasses import dataclass
from typing import Annotated
import tyro
from torchtitan.config import Configurable
class BaseOpt(Configurable):
    @dataclass(kw_only=True, slots=True)
    class Config(Configurable.Config):
        lr: float = 1e-3
        hidden: Annotated[int, tyro.conf.Suppress] = 0
class FancyOpt(BaseOpt):
    @dataclass(kw_only=True, slots=True)
    class Config(BaseOpt.Config):
        fancy: bool = False
EOF
  cat >"$t/torchtitan/components/ac.py" <<'EOF'
from dataclasses import dataclass
from typing import Annotated
import tyro
from torchtitan.config import Configurable
class AC(Configurable):
    @dataclass(kw_only=True, slots=True)
    class Config(Configurable.Config):
        preserve_rng_state: bool = True
class FullAC(AC):
    @dataclass(kw_only=True, slots=True)
    class Config(AC.Config):
        pass
class BudgetAC(AC):
    @dataclass(kw_only=True, slots=True)
    class Config(AC.Config):
        memory_budget: float = 0.5
ACConfig = (
    Annotated[FullAC.Config, tyro.conf.subcommand("full")]
    | Annotated[BudgetAC.Config, tyro.conf.subcommand("budget")]
    | Annotated[None, tyro.conf.subcommand("none")]
)
EOF
  cat >"$t/torchtitan/trainer.py" <<'EOF'
from dataclasses import dataclass, field
from typing import Annotated
import tyro
from torchtitan.config import Configurable
from torchtitan.config.configs import ParallelismConfig, TrainingConfig
from torchtitan.components.opt import BaseOpt, FancyOpt
from torchtitan.components.ac import ACConfig, FullAC
class Trainer(Configurable):
    @dataclass(kw_only=True, slots=True)
    class Config(Configurable.Config):
        model_spec: Annotated[object | None, tyro.conf.Suppress] = None
        dump_folder: str = "./outputs"
        training: TrainingConfig = field(default_factory=TrainingConfig)
        parallelism: ParallelismConfig = field(default_factory=ParallelismConfig)
        optimizer: BaseOpt.Config = field(default_factory=FancyOpt.Config)
        activation_checkpoint: ACConfig = field(default_factory=FullAC.Config)
EOF
  # --- DeepSpeed
  d=$work/d
  mkdir -p "$d/deepspeed/runtime/zero" "$d/deepspeed/runtime/activation_checkpointing" \
           "$d/deepspeed/module_inject"
  cat >"$d/deepspeed/runtime/constants.py" <<'EOF'
TRAIN_BATCH_SIZE = "train_batch_size"
GRADIENT_CLIPPING = "gradient_clipping"
COMM_TYPE = "communication_data_type"
CHECKPOINT = "checkpoint"
TAG_VALIDATION = "tag_validation"
EOF
  cat >"$d/deepspeed/runtime/config_utils.py" <<'EOF'
from pydantic import BaseModel, ConfigDict
class DeepSpeedConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
class DeepSpeedConfigObject(object):
    pass
def get_scalar_param(param_dict, param_name, param_default_value):
    return param_dict.get(param_name, param_default_value)
EOF
  cat >"$d/deepspeed/runtime/zero/offload.py" <<'EOF'
from deepspeed.runtime.config_utils import DeepSpeedConfigModel
class OffloadConfig(DeepSpeedConfigModel):
    device: str = "none"
EOF
  cat >"$d/deepspeed/runtime/zero/config.py" <<'EOF'
from typing import Optional, Dict, Any
from pydantic import Field
from deepspeed.runtime.config_utils import get_scalar_param, DeepSpeedConfigModel
from .offload import OffloadConfig
ZERO_OPTIMIZATION = "zero_optimization"
def read_zero_config_deprecated(param_dict):
    d = {}
    d["allgather_bucket_size"] = get_scalar_param(param_dict, "allgather_size", 5e8)
    return d
def get_zero_config(param_dict):
    if ZERO_OPTIMIZATION in param_dict:
        zero_config_dict = param_dict[ZERO_OPTIMIZATION]
        if isinstance(zero_config_dict, bool):
            zero_config_dict = read_zero_config_deprecated(param_dict)
    else:
        zero_config_dict = {}
    return DeepSpeedZeroConfig(**zero_config_dict)
class DeepSpeedZeroConfig(DeepSpeedConfigModel):
    stage: int = 0
    prefetch_bucket_size: int = Field(5e7, ge=0, alias="stage3_prefetch_bucket_size")
    offload_param: Optional[OffloadConfig] = None
    cpu_offload: Optional[bool] = Field(None, json_schema_extra={"deprecated": True, "new_param": "offload_optimizer"})
    loco: Optional[Dict[str, Any]] = None
    _private: int = 0
EOF
  cat >"$d/deepspeed/runtime/activation_checkpointing/config.py" <<'EOF'
from deepspeed.runtime.config_utils import get_scalar_param, DeepSpeedConfigObject
ACT_CHKPT_PARTITION_ACTIVATIONS = 'partition_activations'
ACT_CHKPT = 'activation_checkpointing'
ACT_CHKPT_DEFAULT = {ACT_CHKPT_PARTITION_ACTIVATIONS: False}
class DeepSpeedActivationCheckpointingConfig(DeepSpeedConfigObject):
    def __init__(self, param_dict):
        super(DeepSpeedActivationCheckpointingConfig, self).__init__()
        if ACT_CHKPT in param_dict.keys():
            act_chkpt_config_dict = param_dict[ACT_CHKPT]
        else:
            act_chkpt_config_dict = ACT_CHKPT_DEFAULT
        self._initialize(act_chkpt_config_dict)
    def _initialize(self, act_chkpt_config_dict):
        self.partition_activations = get_scalar_param(act_chkpt_config_dict, ACT_CHKPT_PARTITION_ACTIVATIONS, False)
EOF
  cat >"$d/deepspeed/runtime/precision_config.py" <<'EOF'
from deepspeed.runtime.config_utils import DeepSpeedConfigModel
BFLOAT16 = "bf16"
BFLOAT16_OLD = "bfloat16"
def get_bfloat16_config(param_dict):
    bf16_config_dict = param_dict.get(BFLOAT16, None)
    if bf16_config_dict is None:
        bf16_config_dict = param_dict.get(BFLOAT16_OLD, {})
    return DeepSpeedBF16Config(**bf16_config_dict)
class DeepSpeedBF16Config(DeepSpeedConfigModel):
    enabled: bool = False
EOF
  cat >"$d/deepspeed/runtime/monitor.py" <<'EOF'
from deepspeed.runtime.config_utils import DeepSpeedConfigModel
def get_monitor_config(param_dict):
    monitor_dict = {key: param_dict.get(key, {}) for key in ("tensorboard", "wandb")}
    return MonitorConfig(**monitor_dict)
class TBConfig(DeepSpeedConfigModel):
    enabled: bool = False
class MonitorConfig(DeepSpeedConfigModel):
    tensorboard: TBConfig = {}
    wandb: TBConfig = {}
EOF
  cat >"$d/deepspeed/module_inject/ep_config.py" <<'EOF'
def parse_ep_config(param_dict):
    config = object()
    config.enabled = param_dict.get("enabled", False)
    config.size = param_dict.get("ep_size", 1)
    return config
EOF
  cat >"$d/deepspeed/runtime/config.py" <<'EOF'
import copy
from .constants import *
from .config_utils import get_scalar_param
from .zero.config import get_zero_config
from .activation_checkpointing.config import DeepSpeedActivationCheckpointingConfig
from .precision_config import get_bfloat16_config
from . import monitor
LOOPED = ("loop_a", TRAIN_BATCH_SIZE)
EXPERT_PARALLEL = "expert_parallel"
def get_expert_parallel_config(param_dict):
    if EXPERT_PARALLEL in param_dict:
        from deepspeed.module_inject.ep_config import parse_ep_config
        return parse_ep_config(param_dict[EXPERT_PARALLEL])
    return None
def get_communication_data_type(param_dict, comm_type=COMM_TYPE, dflt=None):
    return get_scalar_param(param_dict, comm_type, dflt)
def get_pipeline_config(param_dict):
    config = {"stages": "auto"}
    for key, val in param_dict.get("pipeline", {}).items():
        config[key] = val
    return config
def get_checkpoint_params(param_dict):
    return param_dict.get(CHECKPOINT, {})
def unused(param_dict):
    return param_dict["never_read"]
class DeepSpeedConfig(object):
    def __init__(self, config, mpu=None):
        if isinstance(config, dict):
            self._param_dict = config
        else:
            self._param_dict = hjson.load(open(config, "r"))
        if "sequence_parallel_size" in config:
            pass
        self._initialize_params(copy.copy(self._param_dict))
        self._do_warning_check()
    def _initialize_params(self, param_dict):
        self.train_batch_size = get_scalar_param(param_dict, TRAIN_BATCH_SIZE, None)
        self.gradient_clipping = param_dict.get(GRADIENT_CLIPPING, 0.0)
        self.zero_config = get_zero_config(param_dict)
        self.ac = DeepSpeedActivationCheckpointingConfig(param_dict)
        self.bf16 = get_bfloat16_config(param_dict)
        self.comm = get_communication_data_type(param_dict)
        self.pipeline = get_pipeline_config(param_dict)
        self.ep = get_expert_parallel_config(param_dict)
        checkpoint_params = get_checkpoint_params(param_dict)
        self.tag = checkpoint_params.get(TAG_VALIDATION, "Warn")
        self.monitor = monitor.get_monitor_config(param_dict)
        for name in LOOPED:
            self.looped = param_dict.get(name)
    def _do_warning_check(self):
        vocabulary_size = self._param_dict.get("vocabulary_size", None)
EOF
  mkrepo "$m"; mkrepo "$t"; mkrepo "$d"
  megatron_rev=HEAD; torchtitan_rev=HEAD; deepspeed_rev=HEAD
  run_all "$m.git" "$t.git" "$d.git" "$work/out" >/dev/null
  fail=0
  expect() {  # expect FILE ENTRIES...: the file's entries are exactly these
    local got want
    got=$(grep -v '^#' "$work/out/$1")
    want=$(shift; printf '%s\n' "$@" | LC_ALL=C sort -u)
    if [ "$got" != "$want" ]; then
      echo "self-test: $1 differs"; diff <(echo "$want") <(echo "$got") || true
      fail=1
    fi
  }
  expect megatron.txt --tensor-model-parallel-size --sequence-parallel \
    --no-initialization --overlap-flush --num-layers --no-add-bias-linear \
    --disable-add-bias-linear --no-maybe-flag --disable-maybe-flag --zero-flag \
    --fp8-format --max-position-embeddings --no-position-embedding --rl-thing \
    --no-rl-thing --micro-batch-size --string-bool --a-name --b-name \
    --train-iters --from-other-module
  expect torchtitan.txt dump_folder training.steps \
    training.mixed_precision_param parallelism.tensor_parallel_degree \
    parallelism.module_fqns_per_model_part parallelism.nested.depth \
    optimizer.lr optimizer.fancy activation_checkpoint.preserve_rng_state \
    activation_checkpoint.memory_budget
  expect deepspeed.txt sequence_parallel_size train_batch_size \
    gradient_clipping zero_optimization zero_optimization.stage \
    zero_optimization.prefetch_bucket_size \
    zero_optimization.stage3_prefetch_bucket_size \
    zero_optimization.offload_param zero_optimization.offload_param.device \
    zero_optimization.cpu_offload zero_optimization.loco allgather_size \
    activation_checkpointing activation_checkpointing.partition_activations \
    bf16 bf16.enabled bfloat16 bfloat16.enabled communication_data_type \
    pipeline expert_parallel expert_parallel.enabled expert_parallel.ep_size \
    checkpoint checkpoint.tag_validation vocabulary_size tensorboard \
    tensorboard.enabled wandb wandb.enabled loop_a
  grep -q '^# commit-date: 2024-01-02T03:04:05' "$work/out/megatron.txt" || {
    echo "self-test: no commit date"; fail=1; }
  grep -qE '^# commit: [0-9a-f]{40}$' "$work/out/deepspeed.txt" || {
    echo "self-test: no full commit"; fail=1; }
  grep -q '^# source: megatron/training/config/train.py$' "$work/out/megatron.txt" || {
    echo "self-test: dataclass source not listed"; fail=1; }
  grep -q '^# annotated tyro.conf.Suppress (no --section.key; not listed): model_spec optimizer.hidden$' \
    "$work/out/torchtitan.txt" || { echo "self-test: torchtitan suppressed"; fail=1; }
  grep -q '^# deprecated (still accepted): zero_optimization.cpu_offload$' \
    "$work/out/deepspeed.txt" || { echo "self-test: DeepSpeed deprecated"; fail=1; }
  grep -q '^# free-form objects (any key inside; not listed): pipeline zero_optimization.loco$' \
    "$work/out/deepspeed.txt" || { echo "self-test: DeepSpeed free-form"; fail=1; }
  # a pinned commit that the mirror lacks is an error naming it
  if msg=$(python3 "$py" deepspeed "$d.git" 0123456789abcdef0123456789abcdef01234567 \
      "$work/out/x.txt" 2>&1); then
    echo "self-test: a missing commit was accepted"; fail=1
  elif ! grep -q 'commit 0123456789abcdef0123456789abcdef01234567 of deepspeedai/DeepSpeed is not in' <<<"$msg"; then
    echo "self-test: missing-commit message: $msg"; fail=1
  fi
  if [ $fail = 0 ]; then echo "distill-export-flags self-test: 1 passed, 0 failed"
  else echo "distill-export-flags self-test: 0 passed, 1 failed"; exit 1; fi
  exit 0
fi

megatron_git=${pos[0]:-${MEGATRON_GIT:-}}
torchtitan_git=${pos[1]:-${TORCHTITAN_GIT:-}}
deepspeed_git=${pos[2]:-${DEEPSPEED_GIT:-}}
if [ -z "$megatron_git" ] || [ -z "$torchtitan_git" ] || [ -z "$deepspeed_git" ]; then
  echo "usage: $0 [--out DIR] [--X-rev REV] MEGATRON_GIT TORCHTITAN_GIT DEEPSPEED_GIT" >&2
  echo "   or: MEGATRON_GIT=.. TORCHTITAN_GIT=.. DEEPSPEED_GIT=.. $0;  $0 --self-test" >&2
  exit 2
fi
run_all "$megatron_git" "$torchtitan_git" "$deepspeed_git" "$out"
echo "entries Trident writes:"
# shellcheck disable=SC2086
check "$out/megatron.txt" $sanity_megatron
# shellcheck disable=SC2086
check "$out/torchtitan.txt" $sanity_torchtitan
# shellcheck disable=SC2086
check "$out/deepspeed.txt" $sanity_deepspeed
