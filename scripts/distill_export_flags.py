"""The Python part of scripts/distill-export-flags.sh (see there)."""
import ast
import subprocess
import sys

import distill_common
from distill_common import LONG, GitRepo, die, dotted, kwarg, last_name, warn

distill_common.set_prefixes("distill-export-flags: error: ",
                            "distill-export-flags: warning: ")


# ------------------------------------------------------------ git, modules
class Module:
    """One parsed Python file: its top-level names and imports."""

    def __init__(self, path, tree, root=""):
        self.path = path
        self.tree = tree
        self.is_pkg = path.endswith("/__init__.py")
        # ROOT: the directory the package tree starts in ("src/")
        d = path[len(root):-3].replace("/", ".")
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


class Repo(GitRepo):
    """Read-only view of one commit of a git directory."""

    def __init__(self, gitdir, rev, slug, flag):
        super().__init__(gitdir)
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
        self.mods = {}

    def module(self, path):
        if path not in self.mods:
            self.mods[path] = Module(path, self.parse_file(path))
        return self.mods[path]

    def require(self, path):
        if path not in self.files:
            die("%s not found in %s@%s" % (path, self.slug, self.commit))
        self.note(path)
        return self.module(path)

    def require_def(self, path, name, kind, what):
        """(module, definition) of top-level NAME in PATH, a KIND."""
        mod = self.require(path)
        d = mod.defs.get(name)
        if not isinstance(d, kind):
            die("%s not found in %s" % (what, path))
        return mod, d

    def require_member(self, path, mod, cls, name, kind, what):
        """(module, definition) of member NAME of class CLS (or a base)."""
        r = self.class_member(mod, cls, name)
        if r is None or not isinstance(r[2], kind):
            die("%s not found in %s" % (what, path))
        return r[1], r[2]

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
def last(node):
    """The last name of a dotted chain (of a call's callee for a call)."""
    if isinstance(node, ast.Call):
        node = node.func
    return last_name(node)


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


def write_list(repo, outpath, title, notes, entries):
    """The output file: the common header, the files read, NOTES, then the
    entries; returns the entries."""
    h = distill_common.header_start(title, "distill-export-flags.sh",
                                    "repository", repo.slug)
    h += distill_common.commit_lines(repo)
    h += ["source: " + p for p in repo.read]
    distill_common.write(outpath, h + notes, entries)
    return entries


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
    mod, fn = repo.require_def("megatron/training/arguments.py",
                               "add_megatron_arguments", ast.FunctionDef,
                               "add_megatron_arguments")
    mf = MegatronFlags(repo)
    mf.scan(mod, fn)
    if len(mf.flags) < 10:
        die("only %d Megatron-LM options found" % len(mf.flags))
    if not mf.derived:
        die("no ArgumentGroupFactory(...).build_group found under "
            "add_megatron_arguments")
    if "megatron/training/argument_utils.py" in repo.files:
        repo.note("megatron/training/argument_utils.py")
    return write_list(
        repo, outpath, "long options of Megatron-LM's pretrain argument "
        "parser (add_megatron_arguments)",
        ["not listed: what an extra_args_provider adds (pretrain_gpt.py's "
         "add_modelopt_args, with nvidia-modelopt installed)",
         "derived from config dataclasses (ArgumentGroupFactory): " +
         ", ".join("%s %d" % (k, v) for k, v in sorted(mf.derived.items()))],
        mf.flags)


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
    mod, trainer = repo.require_def(tr, "Trainer", ast.ClassDef,
                                    "class Trainer")
    cmod, config = repo.require_member(tr, mod, trainer, "Config",
                                       ast.ClassDef, "class Trainer.Config")
    tk = TitanKeys(repo)
    tk.walk(cmod, config, "")
    for s in ("parallelism", "training"):
        if s not in tk.sections:
            die("Trainer.Config has no section %r" % s)
    if not tk.keys:
        die("no torchtitan config key found")
    notes = ["sections: " + " ".join(tk.sections)]
    if tk.suppressed:
        notes.append("annotated tyro.conf.Suppress (no --section.key; not "
                     "listed): " + " ".join(sorted(set(tk.suppressed))))
    return write_list(repo, outpath, "keys of torchtitan's job config "
                      "(Trainer.Config): config.section.key = value, or "
                      "--section.key value", notes, tk.keys)


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
    mod, cls = repo.require_def(cfg, "DeepSpeedConfig", ast.ClassDef,
                                "class DeepSpeedConfig")
    _, fn = repo.require_member(cfg, mod, cls, "__init__", ast.AST,
                                "DeepSpeedConfig.__init__")
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
    notes = []
    if flow.deprecated:
        notes.append("deprecated (still accepted): " +
                     " ".join(sorted(".".join(p) for p in flow.deprecated)))
    if flow.open:
        notes.append("free-form objects (any key inside; not listed): " +
                     " ".join(sorted(".".join(p) or "(root)"
                                     for p in flow.open)))
    return write_list(repo, outpath, "DeepSpeed config JSON key paths read "
                      "by DeepSpeedConfig (deepspeed/runtime/config.py)",
                      notes, keys)


# ------------------------------------------------------- torchtitan models
MODEL_KEYS = (("n_layers", "layers"), ("dim", "dim"), ("n_heads", "heads"),
              ("n_kv_heads", "kv_heads"), ("vocab_size", "vocab"),
              ("num_experts", "experts"), ("top_k", "top_k"))


def flavour_shape(fn):
    """The literal sizes a flavour function sets: `name = 4096` statements
    and `name=4096` keywords, the first of each (MODEL_KEYS)."""
    wanted = {k for k, _ in MODEL_KEYS}
    got = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and \
                node.targets[0].id in wanted and \
                isinstance(node.value, ast.Constant):
            got.setdefault(node.targets[0].id, node.value.value)
        elif isinstance(node, ast.keyword) and node.arg in wanted and \
                isinstance(node.value, ast.Constant):
            got.setdefault(node.arg, node.value.value)
    return got


def baseline_configs(mod):
    """flavour -> the first pretraining config function of a model's
    config_registry.py: `model_spec = model_registry("FLAVOUR", ...)` in a
    function not named for debugging, fine-tuning or a quantisation."""
    out = {}
    for name, fn in mod.defs.items():
        if not isinstance(fn, ast.FunctionDef) or name.startswith("_") or \
                name.startswith("sft_") or "debug" in name:
            continue
        for st in fn.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name) and \
                    st.targets[0].id == "model_spec" and \
                    isinstance(st.value, ast.Call) and \
                    last_name(st.value.func) == "model_registry" and \
                    st.value.args and \
                    isinstance(st.value.args[0], ast.Constant):
                out.setdefault(st.value.args[0].value, name)
    return out


def torchtitan_models(repo, outpath):
    """One line per model flavour torchtitan ships (debug flavours left
    out): module, flavour, its baseline config function and its sizes."""
    entries = []
    dirs = sorted({f.split("/")[2] for f in repo.files
                   if f.startswith("torchtitan/models/") and
                   f.count("/") == 3 and f.endswith("/__init__.py")})
    for d in dirs:
        init = "torchtitan/models/%s/__init__.py" % d
        mod = repo.module(init)
        table = None
        for name, value in mod.assigns.items():
            if name.endswith("_configs") and isinstance(value, ast.Dict):
                table = value
        if table is None:
            continue
        repo.note(init)
        reg = "torchtitan/models/%s/config_registry.py" % d
        configs = {}
        if reg in repo.files:
            configs = baseline_configs(repo.module(reg))
            repo.note(reg)
        for k, v in zip(table.keys, table.values):
            if not isinstance(k, ast.Constant) or "debug" in k.value:
                continue
            fn = mod.defs.get(last_name(v))
            if fn is None:
                warn("%s: flavour %s names no function of the module" %
                     (init, k.value))
                continue
            shape = flavour_shape(fn)
            cols = ["%s=%s" % (out, shape.get(key, "-"))
                    for key, out in MODEL_KEYS]
            entries.append(" ".join([d, k.value, "config=" +
                                     configs.get(k.value, "-")] + cols))
    if not any(e.startswith("llama3 8B ") for e in entries):
        die("torchtitan's llama3 8B flavour not found: the model registry "
            "changed shape")
    notes = ["columns: module flavour config=<baseline config function in "
             "config_registry.py, or - when none> then the literal sizes of "
             "the flavour function (- when not a literal there)"]
    return write_list(repo, outpath, "torchtitan model flavours "
                      "(torchtitan/models/*/__init__.py, *_configs)", notes,
                      entries)


# --------------------------------------------------------- Megatron-Bridge
BRIDGE_RECIPE = "vanilla_gpt_pretrain_1gpu_h100_bf16_config"
BRIDGE_RECIPE_FILE = "src/megatron/bridge/recipes/gpt/h100/vanilla_gpt.py"
BRIDGE_RECIPE_PKG = "src/megatron/bridge/recipes/gpt/h100/__init__.py"


class BridgeRepo(Repo):
    """Megatron-Bridge's tree (its package under src/), and for the
    megatron.core and megatron.training modules it imports, Megatron-LM at
    the commit of Megatron-Bridge's 3rdparty/Megatron-LM submodule."""

    def __init__(self, gitdir, rev, slug, flag, mcore_gitdir):
        super().__init__(gitdir, rev, slug, flag)
        line = self.git("ls-tree", self.commit, "3rdparty/Megatron-LM")
        parts = line.split()
        if len(parts) < 3 or parts[1] != "commit":
            die("%s@%s has no 3rdparty/Megatron-LM submodule" %
                (slug, self.commit))
        self.mcore = Repo(mcore_gitdir, parts[2], "NVIDIA/Megatron-LM",
                          "(the submodule's pin)")

    def module(self, path):
        if path not in self.mods:
            self.mods[path] = Module(path, self.parse_file(path), "src/")
        return self.mods[path]

    def module_dotted(self, dotted):
        if not dotted:
            return None
        p = "src/" + dotted.replace(".", "/")
        for cand in (p + ".py", p + "/__init__.py"):
            if cand in self.files:
                self.note(cand)
                return self.module(cand)
        m = self.mcore.module_dotted(dotted)
        if m is not None:
            self.mcore.note(m.path)
        return m

    def header(self, title, notes):
        h = distill_common.header_start(title, "distill-export-flags.sh",
                                        "repository", self.slug)
        h += distill_common.commit_lines(self)
        h += ["megatron-lm (3rdparty/Megatron-LM): " + self.mcore.commit]
        h += ["source: " + p for p in self.read]
        h += ["source (megatron-lm): " + p for p in self.mcore.read]
        return h + notes


def bridge_section_class(repo, mod, value, cc_ann):
    """The class of a ConfigContainer(...) keyword: the constructor it
    calls, else the ConfigContainer field's annotation (one class)."""
    if isinstance(value, ast.Call):
        r = repo.resolve_class(mod, value.func)
        if r is not None:
            return r
    if cc_ann is not None:
        ann_mod, ann = cc_ann
        if isinstance(ann, (ast.Name, ast.Attribute)):
            return repo.resolve_class(ann_mod, ann)
    return None


def bridge(repo, outpath):
    """The keys run_recipe.py's KEY=VALUE overrides can set on the vanilla
    GPT recipe, their annotations, the registered mixed-precision recipes,
    the runner's options and its dataset presets."""
    mod, fn = repo.require_def(BRIDGE_RECIPE_FILE, BRIDGE_RECIPE,
                               ast.FunctionDef, BRIDGE_RECIPE)
    # run_recipe.py finds library recipes in megatron.bridge.recipes.<m>.h100
    pkg = repo.require(BRIDGE_RECIPE_PKG)
    r = repo.resolve_name(pkg, BRIDGE_RECIPE)
    if r is None or r[0] != "def":
        die("%s does not export %s" % (BRIDGE_RECIPE_PKG, BRIDGE_RECIPE))
    call = next((n for n in ast.walk(fn) if isinstance(n, ast.Call) and
                 last(n.func) == "ConfigContainer"), None)
    if call is None:
        die("%s builds no ConfigContainer(...)" % BRIDGE_RECIPE)
    cc = repo.resolve_class(mod, call.func)
    if cc is None:
        die("ConfigContainer not found from %s" % BRIDGE_RECIPE_FILE)
    cc_fields = {name: (m, st.annotation)
                 for name, st, m, _ in dataclass_fields(repo, *cc)}
    entries = []
    for kw in call.keywords:
        section = kw.arg
        if section not in cc_fields:
            die("ConfigContainer has no field %s" % section)
        v = kw.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            entries.append("%s %s" % (section, ast.unparse(
                cc_fields[section][1]).replace(" ", "")))
            continue
        got = bridge_section_class(repo, mod, v, cc_fields[section])
        if got is None:
            die("the class of ConfigContainer's %s in %s not found" %
                (section, BRIDGE_RECIPE))
        fields = dataclass_fields(repo, *got)
        if not fields:
            die("%s (ConfigContainer's %s) has no dataclass fields" %
                (got[1].name, section))
        for name, st, _, _ in fields:
            entries.append("%s.%s %s" % (section, name, ast.unparse(
                st.annotation).replace(" ", "")))
    # mixed_precision="<name>": the factories @register records, under
    # their names and the hyphenated aliases
    mp = repo.require("src/megatron/bridge/training/mixed_precision.py")
    names = []
    for name, d in mp.defs.items():
        if isinstance(d, ast.FunctionDef) and \
                any(last(x) == "register" for x in d.decorator_list):
            names += [name, name.replace("_", "-")]
    if "bf16_mixed" not in names:
        die("no registered bf16_mixed in mixed_precision.py")
    entries += ["mixed_precision=" + n for n in names]
    # the runner's own options and dataset presets
    runner = "scripts/training/run_recipe.py"
    rmod = repo.require(runner)
    for node in ast.walk(rmod.tree):
        if isinstance(node, ast.Call) and last(node.func) == "add_argument":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) \
                        and LONG.match(a.value):
                    entries.append("run_recipe.py " + a.value)
    du = repo.require("src/megatron/bridge/recipes/utils/dataset_utils.py")
    presets = du.assigns.get("DATASET_PRESETS")
    if not isinstance(presets, ast.Dict):
        die("DATASET_PRESETS not found in dataset_utils.py")
    for k in presets.keys:
        if isinstance(k, ast.Constant):
            entries.append("run_recipe.py --dataset " + k.value)
    entries.append("run_recipe.py --recipe " + BRIDGE_RECIPE)
    h = repo.header(
        "what Megatron-Bridge's scripts/training/run_recipe.py accepts for "
        "the recipe %s" % BRIDGE_RECIPE,
        ["columns: section.field annotation (a KEY=VALUE override of the "
         "recipe's ConfigContainer), mixed_precision=<registered recipe>, "
         "run_recipe.py <option> [value]"])
    distill_common.write(outpath, h, entries)
    return entries


def bridge_map(repo, outpath):
    """scripts/translate_mlm_to_bridge.py's ARG_MAP: Megatron-LM flag ->
    ConfigContainer path and transform."""
    path = "scripts/translate_mlm_to_bridge.py"
    mod = repo.require(path)
    table = mod.assigns.get("ARG_MAP")
    if not isinstance(table, ast.Dict):
        die("ARG_MAP not found in " + path)
    entries = []
    for k, v in zip(table.keys, table.values):
        if not (isinstance(k, ast.Constant) and isinstance(v, ast.Tuple)
                and len(v.elts) == 2):
            die("%s: an ARG_MAP entry is not 'flag': (path, transform)" %
                path)
        target, how = (lit(e) if isinstance(e, ast.Constant) else
                       "<" + ast.unparse(e) + ">" for e in v.elts)
        entries.append("--%s %s %s" % (k.value, target or "-", how or "-"))
    if not any(e.startswith("--tensor-model-parallel-size ") for e in
               entries):
        die("ARG_MAP lacks --tensor-model-parallel-size: it changed shape")
    h = repo.header(
        "Megatron-LM flag -> Megatron-Bridge override "
        "(scripts/translate_mlm_to_bridge.py, ARG_MAP)",
        ["columns: --flag path transform (- for None)"])
    distill_common.write(outpath, h, entries)
    return entries


TARGETS = {
    "megatron": (megatron, "NVIDIA/Megatron-LM", "--megatron-rev"),
    "torchtitan": (torchtitan, "pytorch/torchtitan", "--torchtitan-rev"),
    "deepspeed": (deepspeed, "deepspeedai/DeepSpeed", "--deepspeed-rev"),
    "torchtitan-models": (torchtitan_models, "pytorch/torchtitan",
                          "--torchtitan-rev"),
}

BRIDGE_TARGETS = {"megatron-bridge": bridge, "megatron-bridge-map": bridge_map}

if __name__ == "__main__":
    target, gitdir, rev, outpath = sys.argv[1:5]
    if target in BRIDGE_TARGETS:
        # argv[5]: the Megatron-LM git directory (for megatron.core)
        fn = BRIDGE_TARGETS[target]
        repo = BridgeRepo(gitdir, rev, "NVIDIA-NeMo/Megatron-Bridge",
                          "--bridge-rev", sys.argv[5])
    else:
        fn, slug, flag = TARGETS[target]
        repo = Repo(gitdir, rev, slug, flag)
    got = fn(repo, outpath)
    print("%-10s %s %s  %5d entries -> %s" % (
        target, repo.commit, repo.date, len(got), outpath))
