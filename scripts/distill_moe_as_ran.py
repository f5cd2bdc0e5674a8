"""The Python part of scripts/distill-moe-as-ran.sh (see there).

Replays, without importing or running anything, what Megatron-Bridge's
performance launcher did for one benchmark row: run_script.py's main() is
read with `ast` at the release's tag and walked by a small partial evaluator
(constants, attribute writes, calls into the repository's own functions and
dataclasses, `if` on known values) with the launcher's own argparse defaults
plus the row's model / GPU / precision / GPU count. Values the sources cannot
decide (a Megatron-Core default, a Hugging Face config field, torch state)
are Unknown; an `if` on an Unknown runs both ways, and a branch that ends in
`raise` is dropped (the benchmark ran). The program stops with an error when
the token-dispatcher settings would depend on such an Unknown, when a file,
function or tag it needs is missing, or when the walk cannot follow code that
touches the model config, rather than guess.
"""
import ast
import copy
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile

import distill_common
from distill_common import GitRepo, die, dotted

distill_common.set_prefixes("distill-moe-as-ran: ", "distill-moe-as-ran: warning: ")

# ------------------------------------------------------------ fixed inputs
# Megatron-Core defaults for fields no Megatron-Bridge source assigns on the
# path (TransformerConfig / ModelParallelConfig dataclass defaults).
MCORE_DEFAULTS = {
    "moe_token_dispatcher_type": (
        "allgather", "Megatron-Core default: megatron/core/transformer/"
        "transformer_config.py TransformerConfig.moe_token_dispatcher_type"),
    "overlap_moe_expert_parallel_comm": (
        False, "Megatron-Core default: megatron/core/model_parallel_config.py "
        "ModelParallelConfig.overlap_moe_expert_parallel_comm"),
    "moe_enable_deepep": (
        False, "Megatron-Core default: TransformerConfig.moe_enable_deepep"),
}

# What torch.cuda.get_device_properties(0) returns on the benchmark machines
# (DGX-H100: compute capability 9.0).
DEVICES = {"h100": {"major": 9, "minor": 0, "name": "NVIDIA H100 80GB HBM3",
                    "multi_processor_count": 132}}

# Hugging Face config.json fields of the checkpoints the recipes build from
# (AutoBridge.from_hf_pretrained(...)); source: huggingface.co/<name>/
# blob/main/config.json. Fields not listed are Unknown.
HF_CONFIGS = {
    "Qwen/Qwen3-30B-A3B": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
        "num_hidden_layers": 48, "hidden_size": 2048,
        "intermediate_size": 6144, "moe_intermediate_size": 768,
        "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
        "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936,
        "max_position_embeddings": 40960, "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0, "tie_word_embeddings": False,
        "attention_bias": False, "initializer_range": 0.02,
        "torch_dtype": "bfloat16", "rope_scaling": None,
    },
}

# Models: how each launcher generation names them on its command line.
MODELS = {
    "qwen3_30b_a3b": {"family": "qwen", "recipe": "qwen3_30b_a3b",
                      "name": "qwen3", "size": "30b_a3b"},
    "deepseek_v3": {"family": "deepseek", "recipe": "deepseek_v3",
                    "name": "deepseek", "size": "v3"},
}

# The benchmark rows (test/data/validation/moe_cases.json ids). fp8: the FP8
# recipe of the H100 runs (current scaling; the only H100 FP8 preset of
# these models, and "FP8-CS" in the 25.11 table); alt_fp8: further recipes
# the published table shows for the row, replayed too and required to agree.
DEFAULT_SPEC = {
    "docs_rev": "v0.6.0",
    "cases": [
        {"id": "mbridge_25.09_DeepSeekV3_1024gpu_fp8", "release": "25.09",
         "model": "deepseek_v3", "gpu": "h100", "gpus": 1024, "fp8": "cs",
         "alt_fp8": ["ss"]},
        {"id": "mbridge_25.09_Qwen3_30B_a3B_16gpu_fp8", "release": "25.09",
         "model": "qwen3_30b_a3b", "gpu": "h100", "gpus": 16, "fp8": "cs"},
        {"id": "mbridge_25.11_Qwen3_30B_a3B_16gpu_FP8-CS", "release": "25.11",
         "model": "qwen3_30b_a3b", "gpu": "h100", "gpus": 16, "fp8": "cs"},
        {"id": "mbridge_26.02_Qwen3_30B_a3B_16gpu_FP8", "release": "26.02",
         "model": "qwen3_30b_a3b", "gpu": "h100", "gpus": 16, "fp8": "cs"},
        {"id": "mbridge_26.02.01_Qwen3_30B_a3B_16gpu_FP8",
         "release": "26.02.01", "model": "qwen3_30b_a3b", "gpu": "h100",
         "gpus": 16, "fp8": "cs"},
        {"id": "mbridge_26.04_Qwen3_30B_a3B_16gpu_FP8", "release": "26.04",
         "model": "qwen3_30b_a3b", "gpu": "h100", "gpus": 16, "fp8": "cs"},
        {"id": "mbridge_26.04.01_Qwen3_30B_a3B_16gpu_FP8",
         "release": "26.04.01", "model": "qwen3_30b_a3b", "gpu": "h100",
         "gpus": 16, "fp8": "cs"},
        {"id": "mbridge_26.06_Qwen3_30B_a3B_16gpu_FP8", "release": "26.06",
         "model": "qwen3_30b_a3b", "gpu": "h100", "gpus": 16, "fp8": "cs"},
    ],
}

PERF = "scripts/performance"
ROOTS = [PERF, "src"]           # sys.path of run_script.py in the container
TRACKED = ("moe_token_dispatcher_type", "moe_flex_dispatcher_backend",
           "moe_enable_deepep", "overlap_moe_expert_parallel_comm")
# Settings reported with --details (not part of the JSON).
DETAILS = {
    "model": ["tensor_model_parallel_size", "pipeline_model_parallel_size",
              "virtual_pipeline_model_parallel_size", "context_parallel_size",
              "expert_model_parallel_size", "expert_tensor_parallel_size",
              "sequence_parallel", "moe_token_dispatcher_type",
              "moe_flex_dispatcher_backend", "moe_enable_deepep",
              "moe_hybridep_num_sms", "moe_shared_expert_overlap",
              "cuda_graph_impl", "cuda_graph_scope", "enable_cuda_graph",
              "recompute_granularity", "recompute_method",
              "recompute_num_layers", "recompute_modules", "mtp_num_layers",
              "moe_permute_fusion", "moe_router_fusion",
              "moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity",
              "moe_router_force_load_balancing",
              "pipeline_model_parallel_layout"],
    "train": ["micro_batch_size", "global_batch_size", "manual_gc",
              "manual_gc_interval"],
    "comm_overlap": ["overlap_moe_expert_parallel_comm", "delay_wgrad_compute",
                     "tp_comm_overlap"],
}
STEP_BUDGET = 3000000
_MISSING = object()
SCALARS = (str, int, float, bool, type(None))


# ---------------------------------------------------------------- values
class Unsupported(Exception):
    """The walk cannot follow this code (soft unless config is touched)."""


class Fatal(Exception):
    """The result would be a guess: stop."""


class Raised(Exception):
    """A `raise` statement was reached."""


class StopRun(Exception):
    def __init__(self, recipe):
        super().__init__("pretrain reached")
        self.recipe = recipe


class Unknown:
    __slots__ = ("why",)

    def __init__(self, why):
        self.why = why

    def __repr__(self):
        return "<unknown: %s>" % self.why

    def __deepcopy__(self, memo):
        return self


def unk(v):
    return isinstance(v, Unknown)


_oids = itertools.count(1)


class Obj:
    """An instance (or namespace) the walk builds: attribute dict, class,
    and the history of attribute writes (attr, value, (file, line), via)."""

    def __init__(self, label, cls=None, config=False):
        self.label = label
        self.cls = cls
        self.config = config
        self.attrs = {}
        self.hist = []
        self.oid = next(_oids)

    def __repr__(self):
        return "<%s #%d>" % (self.label, self.oid)

    def __deepcopy__(self, memo):
        n = Obj.__new__(Obj)
        memo[id(self)] = n
        n.label, n.cls, n.config = self.label, self.cls, self.config
        n.oid = next(_oids)
        n.attrs = copy.deepcopy(self.attrs, memo)
        n.hist = list(self.hist)
        return n


class _Shared:
    def __deepcopy__(self, memo):
        return self


class ExtRef(_Shared):
    """Something outside the repository (torch, omegaconf, megatron.core)."""

    def __init__(self, name, opaque=False):
        self.name = name
        self.opaque = opaque

    def __repr__(self):
        return "<ext %s>" % self.name


class Lazy(_Shared):
    """An import, resolved on first use."""

    def __init__(self, mod, attr=None):
        self.mod = mod
        self.attr = attr


class FuncRef(_Shared):
    def __init__(self, module, node, self_obj=None, owner=None, closure=None,
                 kind="function"):
        self.module = module
        self.node = node
        self.self_obj = self_obj
        self.owner = owner          # ClassRef defining it (for super())
        self.closure = closure      # enclosing frame's locals
        self.kind = kind            # function / staticmethod / classmethod

    @property
    def name(self):
        return self.node.name

    def bind(self, obj):
        return FuncRef(self.module, self.node, obj, self.owner, self.closure,
                       self.kind)


class LambdaRef(_Shared):
    def __init__(self, module, node, closure):
        self.module = module
        self.node = node
        self.closure = closure


class ClassRef(_Shared):
    def __init__(self, module, node):
        self.module = module
        self.node = node
        self.name = node.name
        self._attrs = None

    def __repr__(self):
        return "<class %s>" % self.name


class ModuleRef(_Shared):
    def __init__(self, module):
        self.module = module


class Stub(_Shared):
    def __init__(self, name, fn, self_obj=None):
        self.name = name
        self.fn = fn
        self.self_obj = self_obj


class SuperRef(_Shared):
    def __init__(self, owner, obj):
        self.owner = owner
        self.obj = obj


class BoundBuiltin(_Shared):
    def __init__(self, target, name):
        self.target = target
        self.name = name


class YDict(dict):
    """A YAML mapping: a dict that remembers the file and line of each key."""

    def __init__(self, path, *a):
        super().__init__(*a)
        self.path = path
        self.lines = {}


class ConfView(_Shared):
    """create_omegaconf_dict_config(recipe): the recipe plus the YAML/CLI
    overrides merged into it, applied back by apply_overrides()."""

    def __init__(self, recipe, overrides):
        self.recipe = recipe
        self.overrides = overrides


class ParserStub(_Shared):
    def __init__(self, args):
        self.args = args


class BridgeStub(_Shared):
    def __init__(self, hf_path):
        self.hf_path = hf_path


# ------------------------------------------------------------------- YAML
def _yaml_scalar(s, path, ln):
    s = s.strip()
    if s.startswith("[") and s.endswith("]"):
        inner = s[1:-1].strip()
        return [_yaml_scalar(x, path, ln) for x in inner.split(",")] if inner else []
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        return s[1:-1]
    low = s.lower()
    if low in ("null", "~", ""):
        return None
    if low == "true":
        return True
    if low == "false":
        return False
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        pass
    if s[0] in "{&*!|>":
        raise Fatal("%s:%d: YAML construct not supported: %s" % (path, ln, s))
    return s


def _strip_comment(line):
    q = None
    for i, ch in enumerate(line):
        if q:
            if ch == q:
                q = None
        elif ch in "\"'":
            q = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def parse_yaml(text, path):
    """The YAML subset the performance configs use: nested block mappings of
    scalars and flow lists; `key:` with nothing under it is null."""
    root = YDict(path)
    stack = [(-1, root)]
    opened = []
    for ln, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).rstrip()
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        indent = len(line) - len(line.lstrip(" "))
        s = line.strip()
        if s.startswith("- ") or s == "-":
            raise Fatal("%s:%d: YAML block lists are not supported" % (path, ln))
        key, sep, rest = s.partition(":")
        if not sep:
            raise Fatal("%s:%d: expected `key: value`" % (path, ln))
        key = key.strip().strip("\"'")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        parent.lines[key] = ln
        if rest.strip() == "":
            child = YDict(path)
            parent[key] = child
            opened.append((parent, key))
            stack.append((indent, child))
        else:
            parent[key] = _yaml_scalar(rest, path, ln)
    for parent, key in reversed(opened):
        if isinstance(parent[key], YDict) and not parent[key]:
            parent[key] = None
    return root


def ymerge(a, b):
    """OmegaConf.merge of plain mappings: b's keys win, mappings merge."""
    out = YDict(getattr(a, "path", getattr(b, "path", "?")))
    for src in (a, b):
        if src is None:
            continue
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(out.get(k), dict):
                v = ymerge(out[k], v)
            out[k] = v
            if isinstance(src, YDict) and k in src.lines:
                out.lines[k] = (src.path, src.lines[k])
    return out


def yloc(d, k):
    if not isinstance(d, YDict) or k not in d.lines:
        return None
    v = d.lines[k]
    return v if isinstance(v, tuple) else (d.path, v)


# ------------------------------------------------------------------- repo
class Repo(GitRepo):
    def __init__(self, gitdir):
        super().__init__(gitdir)
        self.files = set()
        self.texts = {}

    def at(self, rev):
        r = subprocess.run(["git", "-C", self.gitdir, "rev-parse", "--verify",
                            "-q", rev + "^{commit}"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            return None
        self.commit = r.stdout.strip()
        out = self.git("ls-tree", "-r", "--name-only", self.commit)
        self.files = set(out.splitlines())
        self.texts = {}
        return self.commit

    def exists(self, path):
        return path in self.files

    def has_dir(self, path):
        if not hasattr(self, "_dirs") or self._dirs[0] is not self.files:
            dirs = set()
            for f in self.files:
                parts = f.split("/")
                for i in range(1, len(parts)):
                    dirs.add("/".join(parts[:i]))
            self._dirs = (self.files, dirs)
        return path in self._dirs[1]

    def show(self, path):
        if path not in self.texts:
            if path not in self.files:
                raise Fatal("%s is missing at %s" % (path, self.commit[:12]))
            self.texts[path] = self.git("show", self.commit + ":" + path)
        return self.texts[path]

    def grep(self, pattern, under):
        r = subprocess.run(["git", "-C", self.gitdir, "grep", "-l", "-F", "-e",
                            pattern, self.commit, "--", under],
                           capture_output=True, text=True)
        return [ln.split(":", 1)[1] for ln in r.stdout.splitlines() if ":" in ln]


class Module:
    def __init__(self, path, root, dotted_name, is_pkg, tree):
        self.path = path
        self.root = root
        self.dotted = dotted_name
        self.is_pkg = is_pkg
        self.tree = tree
        self.globals = {"__name__": dotted_name, "__file__": path}
        self.loaded = False
        self.funcs = {}

    @property
    def package(self):
        if self.is_pkg:
            return self.dotted
        return self.dotted.rpartition(".")[0]


class Frame:
    def __init__(self, module, name, locals_=None, owner=None, self_obj=None,
                 closure=None):
        self.module = module
        self.name = name
        self.locals = {} if locals_ is None else locals_
        self.owner = owner
        self.self_obj = self_obj
        self.closure = closure


# -------------------------------------------------------------- evaluator
class Interp:
    def __init__(self, repo, device, launcher_args):
        self.repo = repo
        self.device = device
        self.launcher_args = launcher_args     # Obj of argparse values
        self.modules = {}
        self.undo = []
        self.frames = []
        self.loc = None
        self.files = []
        self.steps = 0
        self.notes = []
        self.flag_reads = {}                    # launcher flags consulted
        self.owners = {}                        # id(attrs) -> Obj
        self.ext_methods = []                   # unresolved config methods
        self.stubs_fn = {
            "megatron.bridge.training.pretrain.pretrain": self.st_pretrain,
            "megatron.bridge.training.utils.omegaconf_utils."
            "create_omegaconf_dict_config": self.st_create_conf,
            "megatron.bridge.training.utils.omegaconf_utils."
            "apply_overrides": self.st_apply_overrides,
            "megatron.bridge.training.utils.omegaconf_utils."
            "parse_hydra_overrides": self.st_parse_hydra,
            "argument_parser.parse_cli_args": self.st_parse_cli_args,
        }
        self.stubs_method = {
            ("AutoBridge", "from_hf_pretrained"): self.st_from_hf_pretrained,
            ("MegatronModelBridge", "provider_bridge"): self.st_generic_provider,
        }
        self.stubs_ext = {
            "torch.cuda.get_device_properties": self.st_device,
            "torch.cuda.is_available": lambda a, k: True,
            "torch.cuda.device_count": lambda a, k: 8,
            "importlib.import_module": self.st_import_module,
            "dataclasses.replace": self.st_replace,
            "dataclasses.fields": lambda a, k: Unknown("dataclasses.fields"),
            "copy.deepcopy": lambda a, k: copy.deepcopy(a[0]),
            "copy.copy": lambda a, k: copy.deepcopy(a[0]),
            "os.path.exists": self.st_exists,
            "os.path.isfile": self.st_exists,
            "omegaconf.OmegaConf.load": self.st_yaml_load,
            "omegaconf.OmegaConf.create":
                lambda a, k: a[0] if a and a[0] is not None else YDict("?"),
            "omegaconf.OmegaConf.merge": self.st_yaml_merge,
            "omegaconf.OmegaConf.to_container": lambda a, k: a[0],
            "omegaconf.OmegaConf.is_dict": lambda a, k: isinstance(a[0], (dict, ConfView)),
        }

    # ---- bookkeeping
    def note_file(self, path):
        if path not in self.files:
            self.files.append(path)

    def via(self):
        names = [f.name for f in self.frames[1:] if f.name not in ("<module>", "<lambda>")]
        return " > ".join(names[-3:])

    def where(self):
        if not self.loc:
            return "?"
        return "%s:%d" % self.loc

    def setitem(self, d, k, v):
        self.undo.append(("d", d, k, d.get(k, _MISSING)))
        d[k] = v

    def set_attr(self, obj, name, v, loc=None):
        self.setitem(obj.attrs, name, v)
        self.owners[id(obj.attrs)] = obj
        self.undo.append(("h", obj, len(obj.hist)))
        obj.hist.append((name, v, loc or self.loc, self.via()))

    def list_mut(self, lst):
        self.undo.append(("l", lst, list(lst)))

    def rollback(self, mark):
        while len(self.undo) > mark:
            e = self.undo.pop()
            if e[0] == "d":
                if e[3] is _MISSING:
                    e[1].pop(e[2], None)
                else:
                    e[1][e[2]] = e[3]
            elif e[0] == "h":
                del e[1].hist[e[2]:]
            else:
                e[1][:] = e[2]

    def collect(self, mark):
        out = {}
        for e in self.undo[mark:]:
            if e[0] == "d":
                out[("d", id(e[1]), e[2])] = ("d", e[1], e[2], e[1].get(e[2], _MISSING))
            elif e[0] == "h":
                key = ("h", id(e[1]))
                if key not in out:
                    out[key] = ("h", e[1], e[2], list(e[1].hist[e[2]:]))
            else:
                out[("l", id(e[1]))] = ("l", e[1], None, list(e[1]))
        return out

    def tick(self):
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise Fatal("step budget exceeded (too many undecidable branches)")

    # ---- fork on an undecidable condition
    def fork(self, run_a, run_b, test_node, top):
        cond = ast.unparse(test_node) if hasattr(ast, "unparse") else "?"
        where = "%s:%d" % (self.frames[-1].module.path, test_node.lineno)
        mark = len(self.undo)

        def run(fn):
            try:
                return fn()
            except Raised as e:
                return ("raise", str(e))
        sa = run(run_a)
        wa = self.collect(mark)
        self.rollback(mark)
        sb = run(run_b)
        wb = self.collect(mark)
        self.rollback(mark)
        if sa and sa[0] == "raise" and sb and sb[0] == "raise":
            raise Raised(sa[1])
        if sa and sa[0] == "raise":
            self.replay(wb)
            return sb
        if sb and sb[0] == "raise":
            self.replay(wa)
            return sa
        if top:
            sa = sa or ("ret", None)
            sb = sb or ("ret", None)
        if (sa and sa[0]) != (sb and sb[0]):
            raise Unsupported("branches of `if %s` (%s) end differently" % (cond, where))
        self.merge(wa, wb, cond, where)
        if sa and sa[0] == "ret":
            if same(sa[1], sb[1]):
                return sa
            return ("ret", Unknown("depends on `%s` (%s)" % (cond, where)))
        return sa

    def replay(self, writes):
        for key, (kind, c, k, v) in writes.items():
            if kind == "d":
                if v is _MISSING:
                    if k in c:
                        self.undo.append(("d", c, k, c[k]))
                        del c[k]
                else:
                    self.setitem(c, k, v)
            elif kind == "l":
                self.list_mut(c)
                c[:] = v
            else:
                self.undo.append(("h", c, len(c.hist)))
                c.hist.extend(v)

    def merge(self, wa, wb, cond, where):
        keys = list(wa) + [k for k in wb if k not in wa]
        merged_attr = {}
        for key in keys:
            kind = key[0]
            if kind == "h":
                continue
            a, b = wa.get(key), wb.get(key)
            c, k = (a or b)[1], (a or b)[2]
            if kind == "l":
                if a and b and a[3] == b[3]:
                    self.list_mut(c)
                    c[:] = a[3]
                continue
            cur = c.get(k, _MISSING)
            va = a[3] if a else cur
            vb = b[3] if b else cur
            if same(va, vb):
                v = va
            else:
                owner = self.owners.get(id(c))
                if owner is not None and owner.config and k in TRACKED:
                    raise Fatal("%s of %s depends on `%s` (%s), which the "
                                "sources do not decide: %s vs %s" % (
                                    k, owner.label, cond, where, show(va), show(vb)))
                v = Unknown("depends on `%s` (%s)" % (cond, where))
            if v is _MISSING:
                if k in c:
                    self.undo.append(("d", c, k, c[k]))
                    del c[k]
            else:
                self.setitem(c, k, v)
            merged_attr[(id(c), k)] = v
        for key in [k for k in keys if k[0] == "h"]:
            a, b = wa.get(key), wb.get(key)
            obj = (a or b)[1]
            ent = (a or b)[3]
            keep = [e for e in ent if not unk(merged_attr.get((id(obj.attrs), e[0])))]
            self.undo.append(("h", obj, len(obj.hist)))
            obj.hist.extend(keep)

    # ---- modules and imports
    def find_module(self, name):
        for root in ROOTS:
            base = root + "/" + name.replace(".", "/")
            if self.repo.exists(base + ".py"):
                return base + ".py", root, False
            if self.repo.exists(base + "/__init__.py"):
                return base + "/__init__.py", root, True
        for root in ROOTS:
            base = root + "/" + name.replace(".", "/")
            if self.repo.has_dir(base):
                return base + "/", root, True      # namespace package
        return None

    def load(self, name):
        hit = self.find_module(name)
        if hit is None:
            return None
        path, root, is_pkg = hit
        if path in self.modules:
            return self.modules[path]
        try:
            tree = ast.parse(self.repo.show(path) if not path.endswith("/") else "",
                             filename=path)
        except SyntaxError as e:
            raise Fatal("python %d.%d cannot parse %s: %s" % (
                sys.version_info[0], sys.version_info[1], path, e))
        mod = Module(path, root, name, is_pkg, tree)
        self.modules[path] = mod
        self.exec_module(mod)
        return mod

    def module_by_path(self, path):
        for root in ROOTS:
            if path.startswith(root + "/"):
                rel = path[len(root) + 1:-3]
                if rel.endswith("/__init__"):
                    rel = rel[:-9]
                return self.load(rel.replace("/", "."))
        raise Fatal("%s is outside %s" % (path, ", ".join(ROOTS)))

    def exec_module(self, mod):
        frame = Frame(mod, "<module>", mod.globals)
        self.frames.append(frame)
        saved = self.loc
        try:
            for st in mod.tree.body:
                self.loc = (mod.path, st.lineno)
                try:
                    self.exec_block([st], top=False)
                except (Unsupported, Raised) as e:
                    for t in bound_names(st):
                        mod.globals[t] = Unknown("module-level %s:%d: %s" % (
                            mod.path, st.lineno, e))
        finally:
            self.frames.pop()
            self.loc = saved
        mod.loaded = True

    def absolute(self, frame, node):
        if not node.level:
            return node.module
        pkg = frame.module.package.split(".") if frame.module.package else []
        if node.level > 1:
            pkg = pkg[:len(pkg) - (node.level - 1)]
        return ".".join(pkg + ([node.module] if node.module else []))

    def resolve_lazy(self, lz):
        mod = self.load(lz.mod)
        if lz.attr is None:
            return ModuleRef(mod) if mod else ExtRef(lz.mod)
        if mod is None:
            return ExtRef(lz.mod + "." + lz.attr)
        return self.module_attr(mod, lz.attr)

    def module_attr(self, mod, name):
        if name in mod.globals:
            v = mod.globals[name]
            if isinstance(v, Lazy):
                v = self.resolve_lazy(v)
                mod.globals[name] = v
            return v
        sub = self.load(mod.dotted + "." + name) if mod.is_pkg else None
        if sub is not None:
            return ModuleRef(sub)
        return Unknown("%s has no %s" % (mod.path, name))

    def module_has(self, mod, name):
        if name in mod.globals:
            return True
        return mod.is_pkg and self.find_module(mod.dotted + "." + name) is not None

    def star_import(self, frame, name):
        mod = self.load(name)
        if mod is None:
            return
        names = mod.globals.get("__all__")
        if not isinstance(names, list):
            names = [n for n in mod.globals if not n.startswith("_")]
        for n in names:
            if isinstance(n, str) and n in mod.globals:
                frame.locals[n] = mod.globals[n]

    # ---- statements
    def exec_block(self, stmts, top):
        work = list(stmts)
        i = 0
        while i < len(work):
            st = work[i]
            i += 1
            self.tick()
            self.loc = (self.frames[-1].module.path, st.lineno)
            if isinstance(st, ast.If):
                c = self.truth(self.safe_eval(st.test))
                if unk(c):
                    rest = work[i:]
                    return self.fork(lambda: self.exec_block(st.body + rest, top),
                                     lambda: self.exec_block(st.orelse + rest, top),
                                     st.test, top)
                work = (st.body if c else st.orelse) + work[i:]
                i = 0
                continue
            if isinstance(st, (ast.With, ast.AsyncWith)):
                work = st.body + work[i:]
                i = 0
                continue
            if isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
                work = st.body + st.orelse + st.finalbody + work[i:]
                i = 0
                continue
            sig = self.exec_stmt(st)
            if sig:
                return sig
        return None

    def exec_stmt(self, st):
        fr = self.frames[-1]
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return None
            self.eval(st.value)
        elif isinstance(st, ast.Assign):
            v = self.eval(st.value)
            for t in st.targets:
                self.assign(t, v)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.eval(st.value))
        elif isinstance(st, ast.AugAssign):
            cur = self.eval(st.target)
            self.assign(st.target, binop(st.op, cur, self.eval(st.value)))
        elif isinstance(st, ast.Return):
            return ("ret", self.eval(st.value) if st.value is not None else None)
        elif isinstance(st, ast.Raise):
            raise Raised("%s:%d: %s" % (fr.module.path, st.lineno,
                                        ast.unparse(st.exc) if st.exc is not None else "raise"))
        elif isinstance(st, (ast.Pass, ast.Assert, ast.Global, ast.Nonlocal, ast.Delete)):
            pass
        elif isinstance(st, ast.Import):
            for a in st.names:
                if a.asname:
                    self.setitem(fr.locals, a.asname, Lazy(a.name))
                else:
                    top_name = a.name.split(".")[0]
                    self.setitem(fr.locals, top_name, Lazy(top_name))
        elif isinstance(st, ast.ImportFrom):
            base = self.absolute(fr, st)
            for a in st.names:
                if a.name == "*":
                    self.star_import(fr, base)
                else:
                    self.setitem(fr.locals, a.asname or a.name, Lazy(base, a.name))
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = "function"
            for d in st.decorator_list:
                n = dotted(d.func if isinstance(d, ast.Call) else d)
                if n.endswith("staticmethod"):
                    kind = "staticmethod"
                elif n.endswith("classmethod"):
                    kind = "classmethod"
            closure = fr.locals if fr.name != "<module>" else None
            self.setitem(fr.locals, st.name, FuncRef(fr.module, st, closure=closure, kind=kind))
        elif isinstance(st, ast.ClassDef):
            self.setitem(fr.locals, st.name, ClassRef(fr.module, st))
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            return self.exec_for(st)
        elif isinstance(st, ast.While):
            raise Unsupported("while loop at %s" % self.where())
        elif isinstance(st, ast.Break):
            return ("brk",)
        elif isinstance(st, ast.Continue):
            return ("cont",)
        else:
            raise Unsupported("%s statement at %s" % (type(st).__name__, self.where()))
        return None

    def exec_for(self, st):
        it = self.eval(st.iter)
        items = iter_values(it)
        if items is None:
            # Undecidable loop: run the body once with an unknown item; any
            # write it makes becomes Unknown.
            mark = len(self.undo)
            try:
                self.assign(st.target, Unknown("loop item at %s" % self.where()))
                self.exec_block(st.body, top=False)
            except (Unsupported, Raised):
                pass
            w = self.collect(mark)
            self.rollback(mark)
            for key, (kind, c, k, v) in w.items():
                if kind == "d":
                    owner = self.owners.get(id(c))
                    if owner is not None and owner.config and k in TRACKED:
                        raise Fatal("%s is written in a loop over an unknown "
                                    "sequence at %s" % (k, self.where()))
                    self.setitem(c, k, Unknown("written in loop at %s" % self.where()))
            return None
        for item in items:
            self.assign(st.target, item)
            sig = self.exec_block(st.body, top=False)
            if sig and sig[0] == "brk":
                return None
            if sig and sig[0] == "ret":
                return sig
        else:
            if st.orelse:
                return self.exec_block(st.orelse, top=False)
        return None

    def assign(self, t, v):
        fr = self.frames[-1]
        if isinstance(t, ast.Name):
            self.setitem(fr.locals, t.id, v)
        elif isinstance(t, ast.Attribute):
            obj = self.eval(t.value)
            self.set_on(obj, t.attr, v)
        elif isinstance(t, (ast.Tuple, ast.List)):
            if isinstance(v, ParserStub):
                v = (v.args, [])
            if isinstance(v, (tuple, list)) and len(v) == len(t.elts):
                for tt, vv in zip(t.elts, v):
                    self.assign(tt, vv)
            else:
                for tt in t.elts:
                    self.assign(tt, Unknown("unpacked from %s" % show(v)))
        elif isinstance(t, ast.Subscript):
            c = self.eval(t.value)
            k = self.eval(t.slice)
            if isinstance(c, dict) and not unk(k):
                self.setitem(c, k, v)
            elif isinstance(c, list) and isinstance(k, int):
                self.list_mut(c)
                c[k] = v
        elif isinstance(t, ast.Starred):
            self.assign(t.value, Unknown("starred"))
        else:
            raise Unsupported("assignment target %s" % type(t).__name__)

    def set_on(self, obj, name, v):
        if isinstance(obj, Obj):
            self.set_attr(obj, name, v)
        elif isinstance(obj, SuperRef):
            self.set_attr(obj.obj, name, v)
        elif name in TRACKED:
            raise Fatal("%s is set on %s at %s, which the walk lost track of" % (
                name, show(obj), self.where()))

    # ---- expressions
    def safe_eval(self, node):
        try:
            return self.eval(node)
        except Unsupported as e:
            return Unknown(str(e))

    def eval(self, n):
        self.tick()
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return self.lookup(n.id)
        if isinstance(n, ast.Attribute):
            return self.getattr_(self.eval(n.value), n.attr)
        if isinstance(n, ast.Call):
            return self.eval_call(n)
        if isinstance(n, ast.Compare):
            left = self.eval(n.left)
            result = True
            for op, rn in zip(n.ops, n.comparators):
                right = self.eval(rn)
                r = compare(op, left, right)
                if r is False:
                    return False
                if unk(r):
                    result = r
                left = right
            return result
        if isinstance(n, ast.BoolOp):
            isand = isinstance(n.op, ast.And)
            pending = None
            last = None
            for vn in n.values:
                v = self.eval(vn)
                t = self.truth(v)
                last = v
                if unk(t):
                    pending = Unknown("`%s` undecided" % ast.unparse(vn))
                    continue
                if isand and not t:
                    return v if pending is None else pending
                if not isand and t:
                    return v if pending is None else pending
            return last if pending is None else pending
        if isinstance(n, ast.UnaryOp):
            v = self.eval(n.operand)
            if isinstance(n.op, ast.Not):
                t = self.truth(v)
                return t if unk(t) else (not t)
            if unk(v) or not isinstance(v, (int, float)):
                return Unknown("unary op")
            if isinstance(n.op, ast.USub):
                return -v
            if isinstance(n.op, ast.UAdd):
                return +v
            return Unknown("unary op")
        if isinstance(n, ast.BinOp):
            return binop(n.op, self.eval(n.left), self.eval(n.right))
        if isinstance(n, ast.IfExp):
            c = self.truth(self.eval(n.test))
            if unk(c):
                a, b = self.eval(n.body), self.eval(n.orelse)
                return a if same(a, b) else Unknown("`%s` undecided" % ast.unparse(n.test))
            return self.eval(n.body if c else n.orelse)
        if isinstance(n, ast.List):
            return [self.eval(e) for e in n.elts if not isinstance(e, ast.Starred)]
        if isinstance(n, ast.Tuple):
            return tuple(self.eval(e) for e in n.elts if not isinstance(e, ast.Starred))
        if isinstance(n, ast.Set):
            vals = [self.eval(e) for e in n.elts]
            return vals
        if isinstance(n, ast.Dict):
            d = {}
            for k, v in zip(n.keys, n.values):
                if k is None:
                    src = self.eval(v)
                    if isinstance(src, dict):
                        d.update(src)
                    continue
                kk = self.eval(k)
                try:
                    vv = self.eval(v)
                except Unsupported as e:
                    vv = Unknown(str(e))
                if not unk(kk):
                    d[kk] = vv
            return d
        if isinstance(n, ast.Subscript):
            c = self.eval(n.value)
            k = self.eval(n.slice)
            return subscript(c, k)
        if isinstance(n, ast.Slice):
            parts = [self.eval(x) if x is not None else None for x in (n.lower, n.upper, n.step)]
            if any(unk(p) for p in parts):
                return Unknown("slice")
            return slice(*parts)
        if isinstance(n, ast.JoinedStr):
            out = []
            for v in n.values:
                if isinstance(v, ast.Constant):
                    out.append(str(v.value))
                    continue
                x = self.eval(v.value)
                if unk(x) or not isinstance(x, SCALARS) or v.format_spec is not None:
                    return Unknown("f-string")
                if v.conversion == ord("r"):
                    x = repr(x)
                out.append(str(x))
            return "".join(out)
        if isinstance(n, ast.Lambda):
            return LambdaRef(self.frames[-1].module, n, self.frames[-1].locals)
        if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.comprehension(n)
        if isinstance(n, ast.DictComp):
            return self.comprehension(n)
        if isinstance(n, ast.NamedExpr):
            v = self.eval(n.value)
            self.assign(n.target, v)
            return v
        if isinstance(n, ast.Starred):
            return self.eval(n.value)
        raise Unsupported("%s expression at %s" % (type(n).__name__, self.where()))

    def comprehension(self, n):
        if len(n.generators) != 1:
            return Unknown("nested comprehension")
        g = n.generators[0]
        items = iter_values(self.eval(g.iter))
        if items is None:
            return Unknown("comprehension over unknown")
        fr = self.frames[-1]
        tmp = Frame(fr.module, fr.name, dict(fr.locals), fr.owner, fr.self_obj, fr.closure)
        self.frames.append(tmp)
        out = {} if isinstance(n, ast.DictComp) else []
        try:
            for it in items:
                self.assign(g.target, it)
                ok = True
                for cond in g.ifs:
                    t = self.truth(self.eval(cond))
                    if unk(t):
                        return Unknown("comprehension filter undecided")
                    if not t:
                        ok = False
                        break
                if not ok:
                    continue
                if isinstance(n, ast.DictComp):
                    k = self.eval(n.key)
                    if unk(k):
                        return Unknown("comprehension key")
                    out[k] = self.eval(n.value)
                else:
                    out.append(self.eval(n.elt))
        finally:
            self.frames.pop()
        return out

    def truth(self, v):
        if unk(v):
            return v
        if isinstance(v, (Obj, FuncRef, ClassRef, ModuleRef, Stub, LambdaRef, YDict)):
            return True if not isinstance(v, YDict) else bool(v)
        if isinstance(v, ExtRef):
            return Unknown("truth of %s" % v.name)
        if isinstance(v, (ConfView, ParserStub, BridgeStub, SuperRef, BoundBuiltin)):
            return True
        if isinstance(v, (list, tuple, dict, str, int, float, bool, type(None))):
            if isinstance(v, (list, tuple)) and not v:
                return False
            return bool(v)
        return Unknown("truth of %s" % type(v).__name__)

    def lookup(self, name):
        fr = self.frames[-1]
        for scope in (fr.locals, fr.closure, fr.module.globals):
            if scope is not None and name in scope:
                v = scope[name]
                if isinstance(v, Lazy):
                    v = self.resolve_lazy(v)
                    scope[name] = v
                return v
        if name in BUILTINS:
            return BoundBuiltin(None, name)
        if name == "__name__":
            return fr.module.dotted
        return Unknown("name %s" % name)

    # ---- attributes
    def getattr_(self, o, name):
        if unk(o):
            return Unknown("%s.%s" % (o.why, name))
        if isinstance(o, Obj):
            if o is self.launcher_args:
                if name not in o.attrs:
                    raise Fatal("run_script reads args.%s, which the launcher's "
                                "argument parser does not define" % name)
                self.flag_reads[name] = o.attrs[name]
            if name in o.attrs:
                return o.attrs[name]
            if o.cls is not None:
                hit = self.class_lookup(o.cls, name)
                if hit is not _MISSING:
                    return self.bind_member(hit, o)
                if name in MCORE_DEFAULTS and self.has_external_base(o.cls):
                    return MCORE_DEFAULTS[name][0]
            return Unknown("%s.%s not set" % (o.label, name))
        if isinstance(o, ClassRef):
            stub = self.stubs_method.get((o.name, name))
            if stub:
                return Stub("%s.%s" % (o.name, name), lambda a, k, o=o, stub=stub: stub(o, a, k))
            hit = self.class_lookup(o, name)
            if hit is _MISSING:
                return Unknown("%s.%s" % (o.name, name))
            if isinstance(hit, tuple) and hit[0] == "fn":
                f = hit[1]
                return f.bind(o) if f.kind == "classmethod" else f
            return hit[1] if isinstance(hit, tuple) else hit
        if isinstance(o, SuperRef):
            mro = self.mro(o.obj.cls if isinstance(o.obj, Obj) else o.obj)
            names = [c.name if isinstance(c, ClassRef) else None for c in mro]
            start = names.index(o.owner.name) + 1 if o.owner.name in names else 1
            for c in mro[start:]:
                if not isinstance(c, ClassRef):
                    break
                stub = self.stubs_method.get((c.name, name))
                if stub:
                    return Stub("%s.%s" % (c.name, name), stub, o.obj)
                hit = self.own_member(c, name)
                if hit is not _MISSING:
                    return self.bind_member(hit, o.obj)
            return Unknown("super().%s" % name)
        if isinstance(o, ModuleRef):
            return self.module_attr(o.module, name)
        if isinstance(o, ExtRef):
            if o.opaque:
                return ExtRef(o.name + "." + name, opaque=True)
            return ExtRef(o.name + "." + name)
        if isinstance(o, BridgeStub):
            if name == "to_megatron_provider":
                return Stub("to_megatron_provider", self.st_to_provider, o)
            return Unknown("AutoBridge.%s" % name)
        if isinstance(o, ParserStub):
            if name in ("parse_known_args",):
                return Stub(name, lambda a, k: (o.args, []))
            if name == "parse_args":
                return Stub(name, lambda a, k: o.args)
            return Unknown("parser.%s" % name)
        if isinstance(o, (str, dict, list, tuple)):
            return BoundBuiltin(o, name)
        if isinstance(o, FuncRef):
            if name == "__name__":
                return o.name
        return Unknown("attribute %s of %s" % (name, type(o).__name__))

    def bind_member(self, hit, obj):
        kind, v = hit
        if kind == "fn":
            if v.kind == "staticmethod":
                return v
            if v.kind == "classmethod":
                return v.bind(obj.cls if isinstance(obj, Obj) else obj)
            if self.is_property(v.node):
                return self.invoke(v.bind(obj), [], {})
            return v.bind(obj)
        return v

    @staticmethod
    def is_property(node):
        return any(dotted(d) in ("property", "cached_property", "functools.cached_property")
                   for d in node.decorator_list)

    def mro(self, cls):
        out = []

        def walk(c):
            if c in out:
                return
            out.append(c)
            if isinstance(c, ClassRef):
                for b in self.bases(c):
                    walk(b)
        walk(cls)
        return out

    def bases(self, c):
        res = []
        for b in c.node.bases:
            if isinstance(b, ast.Subscript):
                b = b.value
            v = self.in_module(c.module, lambda b=b: self.safe_eval(b))
            if isinstance(v, (ClassRef, ExtRef)):
                res.append(v)
            else:
                res.append(ExtRef(dotted(b) or "?"))
        return res

    def has_external_base(self, c):
        plain = ("object", "Generic", "typing.Generic", "ABC", "abc.ABC")
        return any(isinstance(x, ExtRef) and x.name not in plain for x in self.mro(c))

    def in_module(self, module, fn):
        self.frames.append(Frame(module, "<module>", module.globals))
        saved = self.loc
        try:
            return fn()
        finally:
            self.frames.pop()
            self.loc = saved

    def own_member(self, c, name):
        """A member defined in class c's body: ('fn', FuncRef) or ('val', v)."""
        if c._attrs is None:
            c._attrs = {}
            for st in c.node.body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    kind = "function"
                    for d in st.decorator_list:
                        n = dotted(d.func if isinstance(d, ast.Call) else d)
                        if n.endswith("staticmethod"):
                            kind = "staticmethod"
                        elif n.endswith("classmethod"):
                            kind = "classmethod"
                    c._attrs[st.name] = ("fn", FuncRef(c.module, st, owner=c, kind=kind))
                elif isinstance(st, ast.Assign):
                    for t in st.targets:
                        if isinstance(t, ast.Name):
                            c._attrs[t.id] = ("expr", st.value)
                elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) \
                        and st.value is not None:
                    c._attrs[st.target.id] = ("expr", st.value)
        if name not in c._attrs:
            return _MISSING
        kind, v = c._attrs[name]
        if kind == "expr":
            self.note_file(c.module.path)
            val = self.in_module(c.module, lambda: self.safe_eval(v))
            if isinstance(val, tuple) and len(val) == 0:
                pass
            c._attrs[name] = ("val", val)
            return ("val", val)
        return c._attrs[name]

    def class_lookup(self, cls, name):
        for c in self.mro(cls):
            if isinstance(c, ClassRef):
                hit = self.own_member(c, name)
                if hit is not _MISSING:
                    return hit
        return _MISSING

    # ---- calls
    def eval_call(self, n):
        if isinstance(n.func, ast.Attribute):
            base = self.eval(n.func.value)
            fn = self.getattr_(base, n.func.attr)
            if unk(fn) and isinstance(base, Obj) and base.config:
                # A method the repository does not define (Megatron-Core's):
                # it could change the config behind the walk's back.
                self.ext_methods.append("%s.%s() at %s" % (base.label, n.func.attr, self.where()))
        else:
            fn = self.eval(n.func)
        args = []
        for a in n.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value)
                seq = iter_values(v)
                if seq is None:
                    raise Unsupported("*args of unknown length at %s" % self.where())
                args.extend(seq)
            else:
                args.append(self.eval(a))
        kwargs = {}
        for k in n.keywords:
            v = self.eval(k.value)
            if k.arg is None:
                if isinstance(v, Obj) and v is self.launcher_args:
                    v = dict(v.attrs)
                if not isinstance(v, dict):
                    raise Unsupported("**kwargs of unknown keys at %s" % self.where())
                kwargs.update(v)
            else:
                kwargs[k.arg] = v
        return self.call(fn, args, kwargs, n)

    def touches_config(self, args, kwargs, extra=None):
        vals = list(args) + list(kwargs.values()) + ([extra] if extra is not None else [])
        return any(isinstance(v, Obj) and v.config for v in vals)

    def call(self, fn, args, kwargs, node=None):
        if isinstance(fn, FuncRef):
            return self.invoke(fn, args, kwargs)
        if isinstance(fn, ClassRef):
            return self.instantiate(fn, args, kwargs)
        if isinstance(fn, Stub):
            if fn.self_obj is not None:
                return fn.fn(fn.self_obj, args, kwargs)
            return fn.fn(args, kwargs)
        if isinstance(fn, LambdaRef):
            fr = Frame(fn.module, "<lambda>", {}, closure=fn.closure)
            for p, v in zip(fn.node.args.args, args):
                fr.locals[p.arg] = v
            self.frames.append(fr)
            try:
                return self.eval(fn.node.body)
            finally:
                self.frames.pop()
        if isinstance(fn, BoundBuiltin):
            return self.builtin(fn, args, kwargs)
        if isinstance(fn, SuperRef):
            return Unknown("super call")
        if isinstance(fn, ExtRef):
            stub = self.stubs_ext.get(fn.name)
            if stub:
                return stub(args, kwargs)
            if self.touches_config(args, kwargs) and not harmless_ext(fn.name):
                raise Fatal("%s (outside the repository) is handed the config at %s; "
                            "the walk cannot see what it changes" % (fn.name, self.where()))
            return ExtRef(fn.name + "()", opaque=True)
        if unk(fn):
            if self.touches_config(args, kwargs):
                what = ast.unparse(node.func) if node is not None else "?"
                raise Fatal("unresolved call %s is handed the config at %s (%s)" % (
                    what, self.where(), fn.why))
            return Unknown("result of unresolved call (%s)" % fn.why)
        return Unknown("call of %s" % type(fn).__name__)

    def invoke(self, fn, args, kwargs):
        qual = "%s.%s" % (fn.module.dotted, fn.name)
        if qual in self.stubs_fn and fn.owner is None:
            return self.stubs_fn[qual](args, kwargs)
        if fn.owner is not None:
            stub = self.stubs_method.get((fn.owner.name, fn.name))
            if stub:
                return stub(fn.self_obj, args, kwargs)
        node = fn.node
        fr = Frame(fn.module, fn.name, {}, owner=fn.owner, self_obj=fn.self_obj,
                   closure=fn.closure)
        allargs = list(args)
        if fn.self_obj is not None and fn.kind != "staticmethod":
            allargs = [fn.self_obj] + allargs
        self.bind_params(fn, fr, allargs, dict(kwargs))
        self.note_file(fn.module.path)
        mark = len(self.undo)
        saved = self.loc
        self.frames.append(fr)
        try:
            sig = self.exec_block(node.body, top=True)
        except Unsupported as e:
            if self.touches_config(args, kwargs, fn.self_obj) or self.config_written(mark):
                raise Fatal("cannot follow %s (%s:%d), which changes the config: %s" % (
                    fn.name, fn.module.path, node.lineno, e))
            self.notes.append("%s: %s" % (fn.name, e))
            return Unknown("result of %s (%s)" % (fn.name, e))
        finally:
            self.frames.pop()
            self.loc = saved
        if sig and sig[0] == "ret":
            return sig[1]
        return None

    def config_written(self, mark):
        for e in self.undo[mark:]:
            if e[0] == "h" and e[1].config:
                return True
        return False

    def bind_params(self, fn, fr, args, kwargs):
        a = fn.node.args
        pos = list(getattr(a, "posonlyargs", [])) + list(a.args)
        defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
        for i, p in enumerate(pos):
            if i < len(args):
                fr.locals[p.arg] = args[i]
            elif p.arg in kwargs:
                fr.locals[p.arg] = kwargs.pop(p.arg)
            elif defaults[i] is not None:
                fr.locals[p.arg] = self.in_module(
                    fn.module, lambda d=defaults[i]: self.safe_eval(d))
            else:
                fr.locals[p.arg] = Unknown("missing argument %s of %s" % (p.arg, fn.name))
        if a.vararg:
            fr.locals[a.vararg.arg] = tuple(args[len(pos):])
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if p.arg in kwargs:
                fr.locals[p.arg] = kwargs.pop(p.arg)
            elif d is not None:
                fr.locals[p.arg] = self.in_module(fn.module, lambda d=d: self.safe_eval(d))
            else:
                fr.locals[p.arg] = Unknown("missing argument %s" % p.arg)
        if a.kwarg:
            fr.locals[a.kwarg.arg] = dict(kwargs)
        elif kwargs:
            raise Unsupported("%s got unexpected keyword(s) %s" % (fn.name, ", ".join(kwargs)))

    # ---- classes
    def dataclass_fields(self, cls):
        """[(name, default_node or None, kw_only, module, lineno)], bases first."""
        out = {}
        for c in reversed(self.mro(cls)):
            if not isinstance(c, ClassRef):
                continue
            kw_only = False
            for d in c.node.decorator_list:
                if isinstance(d, ast.Call) and dotted(d.func).endswith("dataclass"):
                    for k in d.keywords:
                        if k.arg == "kw_only" and isinstance(k.value, ast.Constant):
                            kw_only = bool(k.value.value)
            for st in c.node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    ann = ast.unparse(st.annotation)
                    if "ClassVar" in ann or "InitVar" in ann:
                        continue
                    out[st.target.id] = (st.value, kw_only, c.module, st.lineno)
        return [(k,) + v for k, v in out.items()]

    def instantiate(self, cls, args, kwargs):
        obj = Obj(cls.name, cls, config=True)
        self.note_file(cls.module.path)
        init = None
        for c in self.mro(cls):
            if isinstance(c, ClassRef):
                hit = self.own_member(c, "__init__")
                if hit is not _MISSING:
                    init = hit[1]
                    break
        fields = self.dataclass_fields(cls)
        if init is not None and not any(f[0] in kwargs for f in fields):
            self.invoke(init.bind(obj), args, kwargs)
            return obj
        positional = [f for f in fields if not f[2]]
        given = {}
        for f, v in zip(positional, args):
            given[f[0]] = v
        given.update(kwargs)
        names = {f[0] for f in fields}
        extra = [k for k in given if k not in names]
        if extra and not self.has_external_base(cls):
            raise Unsupported("%s() has no field(s) %s" % (cls.name, ", ".join(extra)))
        for name, dnode, _kw, module, lineno in fields:
            if name in given:
                continue
            if dnode is None:
                continue
            v = self.in_module(module, lambda d=dnode: self.field_default(d))
            self.set_attr(obj, name, v, loc=(module.path, lineno))
        for k, v in given.items():
            self.set_attr(obj, k, v)
        post = self.class_lookup(cls, "__post_init__")
        if post is not _MISSING and post[0] == "fn":
            mark = len(self.undo)
            try:
                self.invoke(post[1].bind(obj), [], {})
            except Fatal:
                raise
            except (Unsupported, Raised) as e:
                if any(e2[0] == "h" and e2[1].config and
                       any(h[0] in TRACKED for h in e2[1].hist[e2[2]:])
                       for e2 in self.undo[mark:]):
                    raise Fatal("cannot follow %s.__post_init__: %s" % (cls.name, e))
                self.notes.append("%s.__post_init__: %s" % (cls.name, e))
        return obj

    def field_default(self, d):
        if isinstance(d, ast.Call) and dotted(d.func) in ("field", "dataclasses.field"):
            for k in d.keywords:
                if k.arg == "default":
                    return self.safe_eval(k.value)
                if k.arg == "default_factory":
                    f = self.safe_eval(k.value)
                    if isinstance(f, BoundBuiltin) and f.target is None and \
                            f.name in ("list", "dict"):
                        return [] if f.name == "list" else {}
                    try:
                        return self.call(f, [], {})
                    except Unsupported as e:
                        return Unknown(str(e))
            return Unknown("field() without default")
        return self.safe_eval(d)

    # ---- builtins
    def builtin(self, b, args, kwargs):
        if b.target is not None:
            return self.method_builtin(b.target, b.name, args, kwargs)
        name = b.name
        a = args
        if name == "getattr":
            if len(a) < 2 or unk(a[1]):
                return Unknown("getattr")
            if isinstance(a[0], ModuleRef) and not self.module_has(a[0].module, a[1]):
                if len(a) > 2:
                    return a[2]
                raise Raised("AttributeError: %s has no %s" % (a[0].module.path, a[1]))
            v = self.getattr_(a[0], a[1])
            if unk(v) and len(a) > 2 and isinstance(a[0], Obj) and a[0].cls is None \
                    and a[0] is not self.launcher_args:
                return a[2]
            if unk(v) and len(a) > 2 and a[0] is self.launcher_args:
                return a[2]
            return v
        if name == "hasattr":
            if isinstance(a[0], Obj):
                if a[0] is self.launcher_args:
                    return a[1] in a[0].attrs
                if a[1] in a[0].attrs:
                    return True
                if a[0].cls is not None and self.class_lookup(a[0].cls, a[1]) is not _MISSING:
                    return True
                if a[0].cls is not None and not self.has_external_base(a[0].cls):
                    return False
                return Unknown("hasattr(%s, %r)" % (a[0].label, a[1]))
            if isinstance(a[0], (dict, list, str)):
                return hasattr(a[0], a[1])
            if isinstance(a[0], ModuleRef) and not unk(a[1]):
                return self.module_has(a[0].module, a[1])
            return Unknown("hasattr")
        if name == "setattr":
            if unk(a[1]):
                if isinstance(a[0], Obj) and a[0].config:
                    raise Unsupported("setattr with an unknown name at %s" % self.where())
                return None
            self.set_on(a[0], a[1], a[2])
            return None
        if name == "isinstance":
            return self.isinstance_(a[0], a[1])
        if name == "vars":
            if isinstance(a[0], Obj):
                return dict(a[0].attrs)
            return Unknown("vars")
        if name == "super":
            fr = self.frames[-1]
            if fr.owner is None or fr.self_obj is None:
                return Unknown("super()")
            return SuperRef(fr.owner, fr.self_obj)
        if name == "print":
            return None
        if any(unk(x) for x in a) or any(isinstance(x, (Obj, ExtRef)) for x in a):
            if name == "bool" and a and isinstance(a[0], Obj):
                return True
            return Unknown("%s(...)" % name)
        py = {"bool": bool, "int": int, "float": float, "str": str, "len": len,
              "list": list, "tuple": tuple, "dict": dict, "set": list,
              "min": min, "max": max, "any": any, "all": all, "sorted": sorted,
              "range": range, "abs": abs, "round": round, "sum": sum,
              "repr": repr, "enumerate": lambda x: list(enumerate(x)),
              "zip": lambda *x: list(zip(*x)), "callable": callable}.get(name)
        if py is None:
            return Unknown("builtin %s" % name)
        try:
            r = py(*a, **kwargs)
        except Exception as e:  # noqa: BLE001 - the real call would raise too
            raise Raised("%s(...) raises %s" % (name, e))
        if isinstance(r, range):
            r = list(r)
        return r

    def isinstance_(self, v, t):
        if isinstance(t, tuple):
            rs = [self.isinstance_(v, x) for x in t]
            if any(r is True for r in rs):
                return True
            if all(r is False for r in rs):
                return False
            return Unknown("isinstance")
        if isinstance(t, BoundBuiltin) and t.target is None:
            pytype = {"dict": dict, "list": list, "str": str, "int": int,
                      "float": float, "bool": bool, "tuple": tuple}.get(t.name)
            if pytype is None or unk(v) or isinstance(v, ExtRef):
                return Unknown("isinstance")
            if isinstance(v, Obj):
                return False
            return isinstance(v, pytype)
        if isinstance(t, ClassRef):
            if isinstance(v, Obj):
                if v.cls is None:
                    return False
                names = [c.name for c in self.mro(v.cls) if isinstance(c, ClassRef)]
                return t.name in names
            if isinstance(v, (str, int, float, list, dict, tuple, type(None))):
                return False
        return Unknown("isinstance")

    def method_builtin(self, o, name, args, kwargs):
        if any(unk(x) for x in args):
            return Unknown("%s.%s(unknown)" % (type(o).__name__, name))
        if isinstance(o, str):
            if name in ("upper", "lower", "strip", "lstrip", "rstrip", "startswith",
                        "endswith", "replace", "split", "join", "partition",
                        "rpartition", "count", "find", "format", "title"):
                try:
                    return getattr(o, name)(*args, **kwargs)
                except Exception as e:  # noqa: BLE001
                    raise Raised("str.%s raises %s" % (name, e))
            return Unknown("str.%s" % name)
        if isinstance(o, dict):
            if name == "get":
                k = args[0]
                return o.get(k, args[1] if len(args) > 1 else kwargs.get("default"))
            if name in ("items", "keys", "values"):
                return list(getattr(o, name)())
            if name == "copy":
                return type(o)(o.path, o) if isinstance(o, YDict) else dict(o)
            if name == "pop":
                k = args[0]
                v = o.get(k, args[1] if len(args) > 1 else None)
                if k in o:
                    self.undo.append(("d", o, k, o[k]))
                    del o[k]
                return v
            if name == "setdefault":
                if args[0] not in o:
                    self.setitem(o, args[0], args[1] if len(args) > 1 else None)
                return o[args[0]]
            if name == "update":
                src = args[0] if args else {}
                if isinstance(src, dict):
                    for k, v in list(src.items()) + list(kwargs.items()):
                        self.setitem(o, k, v)
                    return None
            return Unknown("dict.%s" % name)
        if isinstance(o, list):
            if name in ("append", "extend", "insert", "remove", "pop", "sort", "clear"):
                self.list_mut(o)
                try:
                    return getattr(o, name)(*args)
                except Exception as e:  # noqa: BLE001
                    raise Raised("list.%s raises %s" % (name, e))
            if name in ("count", "index", "copy"):
                try:
                    return getattr(o, name)(*args)
                except Exception as e:  # noqa: BLE001
                    raise Raised("list.%s raises %s" % (name, e))
        if isinstance(o, tuple) and name in ("count", "index"):
            return getattr(o, name)(*args)
        return Unknown("%s.%s" % (type(o).__name__, name))

    # ---- stubs
    def st_pretrain(self, args, kwargs):
        cfg = kwargs.get("config", args[0] if args else None)
        raise StopRun(cfg)

    def st_parse_cli_args(self, args, kwargs):
        return ParserStub(self.launcher_args)

    def st_device(self, args, kwargs):
        o = Obj("device_properties")
        o.attrs.update(self.device)
        return o

    def st_exists(self, args, kwargs):
        p = args[0] if args else None
        if isinstance(p, str):
            return self.repo.exists(p.lstrip("/"))
        return Unknown("os.path.exists")

    def st_import_module(self, args, kwargs):
        name = args[0] if args else None
        if not isinstance(name, str):
            return Unknown("import_module(unknown)")
        mod = self.load(name)
        if mod is None:
            raise Raised("ModuleNotFoundError: %s" % name)
        self.note_file(mod.path)
        return ModuleRef(mod)

    def st_replace(self, args, kwargs):
        src = args[0]
        if not isinstance(src, Obj):
            return Unknown("replace(unknown)")
        new = Obj(src.label, src.cls, src.config)
        new.attrs = dict(src.attrs)
        new.hist = list(src.hist)
        for k, v in kwargs.items():
            self.set_attr(new, k, v)
        return new

    def st_yaml_load(self, args, kwargs):
        p = args[0] if args else None
        if not isinstance(p, str):
            raise Fatal("OmegaConf.load of an unknown path at %s" % self.where())
        p = p.lstrip("/")
        self.note_file(p)
        return parse_yaml(self.repo.show(p), p)

    def st_yaml_merge(self, args, kwargs):
        base = args[0]
        rest = args[1:]
        if isinstance(base, ConfView):
            ov = base.overrides
            for r in rest:
                ov = ymerge(ov, r)
            return ConfView(base.recipe, ov)
        out = base if isinstance(base, dict) else YDict("?")
        for r in rest:
            out = ymerge(out, r if isinstance(r, dict) else None)
        return out

    def st_create_conf(self, args, kwargs):
        return (ConfView(args[0], YDict("?")), Unknown("excluded fields"))

    def st_parse_hydra(self, args, kwargs):
        if args[1]:
            raise Fatal("Hydra-style overrides on the command line are not modelled")
        return args[0]

    def st_apply_overrides(self, args, kwargs):
        target, d = args[0], args[1]
        if isinstance(d, ConfView):
            d = d.overrides
        if not isinstance(d, dict):
            raise Fatal("apply_overrides with unknown overrides at %s" % self.where())
        self.apply_tree(target, d)
        return None

    def apply_tree(self, target, d):
        if not isinstance(target, Obj):
            raise Fatal("YAML overrides applied to %s" % show(target))
        for k, v in d.items():
            if k == "_target_":
                continue
            loc = yloc(d, k)
            cur = target.attrs.get(k)
            if isinstance(v, dict):
                if not isinstance(cur, Obj):
                    cur = Obj(str(v.get("_target_", k)).rpartition(".")[2], config=True)
                    self.set_attr(target, k, cur, loc=loc)
                self.apply_tree(cur, v)
            else:
                self.set_attr(target, k, v, loc=loc)

    def st_from_hf_pretrained(self, self_obj, args, kwargs):
        path = args[0] if args else kwargs.get("pretrained_model_name_or_path")
        if not isinstance(path, str):
            raise Fatal("AutoBridge.from_hf_pretrained(unknown) at %s" % self.where())
        return BridgeStub(path)

    def hf_config_obj(self, path):
        if path not in HF_CONFIGS:
            raise Fatal("no Hugging Face config for %s in HF_CONFIGS" % path)
        o = Obj("hf_config")
        o.attrs.update(HF_CONFIGS[path])
        return o

    def st_to_provider(self, bridge, args, kwargs):
        """AutoBridge.to_megatron_provider(): the provider_bridge() of the
        class registered for the checkpoint's architecture."""
        cfg = HF_CONFIGS.get(bridge.hf_path)
        if cfg is None:
            raise Fatal("no Hugging Face config for %s in HF_CONFIGS" % bridge.hf_path)
        arch = cfg["architectures"][0]
        cls = None
        for path in self.repo.grep("source=" + arch, "src/megatron/bridge/models"):
            mod = self.module_by_path(path)
            for st in mod.tree.body:
                if not isinstance(st, ast.ClassDef):
                    continue
                for d in st.decorator_list:
                    if isinstance(d, ast.Call) and dotted(d.func).endswith("register_bridge"):
                        src = [k.value for k in d.keywords if k.arg == "source"]
                        if src and (dotted(src[0]).endswith(arch) or
                                    (isinstance(src[0], ast.Constant) and src[0].value == arch)):
                            cls = self.module_attr(mod, st.name)
                            cls_dec = d
        if not isinstance(cls, ClassRef):
            raise Fatal("no bridge registered for %s under src/megatron/bridge/models" % arch)
        self.note_file(cls.module.path)
        bself = Obj(cls.name, cls, config=False)
        prov = [k.value for k in cls_dec.keywords if k.arg == "provider"]
        if prov:
            bself.attrs["PROVIDER_CLASS"] = self.in_module(
                cls.module, lambda: self.safe_eval(prov[0]))
        hf = Obj("hf_pretrained")
        hf.attrs["config"] = self.hf_config_obj(bridge.hf_path)
        hf.attrs["generation_config"] = Unknown("generation_config")
        fn = self.class_lookup(cls, "provider_bridge")
        if fn is _MISSING:
            raise Fatal("%s has no provider_bridge" % cls.name)
        stub = None
        for c in self.mro(cls):
            if isinstance(c, ClassRef) and self.own_member(c, "provider_bridge") is not _MISSING:
                stub = self.stubs_method.get((c.name, "provider_bridge"))
                break
        if stub:
            return stub(bself, [hf], {})
        return self.invoke(fn[1].bind(bself), [hf], {})

    def st_generic_provider(self, bself, args, kwargs):
        """MegatronModelBridge.provider_bridge(): PROVIDER_CLASS (default
        GPTModelProvider) built from the Hugging Face config through
        CONFIG_MAPPING (its rope/dtype/activation extras are left Unknown)."""
        hf = args[0] if args else kwargs.get("hf_pretrained")
        hf_cfg = hf.attrs["config"] if isinstance(hf, Obj) else None
        pc = self.getattr_(bself, "PROVIDER_CLASS")
        if pc is None or unk(pc):
            mod = self.load("megatron.bridge.models.gpt_provider")
            if mod is None:
                raise Fatal("src/megatron/bridge/models/gpt_provider.py is missing")
            pc = self.module_attr(mod, "GPTModelProvider")
        if not isinstance(pc, ClassRef):
            raise Fatal("provider class of %s is %s" % (bself.label, show(pc)))
        mapping = self.getattr_(bself, "CONFIG_MAPPING")
        if not isinstance(mapping, list):
            raise Fatal("%s.CONFIG_MAPPING is not a literal list" % bself.label)
        provider = self.instantiate(pc, [], {})
        done = set()
        for pair in mapping:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                continue
            hf_name, mg_name = pair
            if mg_name in TRACKED:
                raise Fatal("CONFIG_MAPPING maps %s from the HF config" % mg_name)
            if isinstance(hf_cfg, Obj) and hf_name in hf_cfg.attrs and mg_name not in done:
                done.add(mg_name)
                self.set_attr(provider, mg_name, hf_cfg.attrs[hf_name])
        for k in ("make_vocab_size_divisible_by", "fp16", "bf16", "params_dtype",
                  "activation_func", "position_embedding_type"):
            self.set_attr(provider, k, Unknown("derived from the HF config by %s" % bself.label))
        return provider


# -------------------------------------------------------------- helpers
BUILTINS = {"getattr", "hasattr", "setattr", "isinstance", "issubclass", "bool",
            "int", "float", "str", "len", "list", "tuple", "dict", "set", "min",
            "max", "any", "all", "sorted", "range", "enumerate", "zip", "print",
            "vars", "super", "type", "abs", "round", "sum", "repr", "callable",
            "iter", "next", "open", "id", "hash", "object", "frozenset"}


def harmless_ext(name):
    head = name.split(".")[0]
    return head in ("logging", "logger", "warnings", "print", "os", "json",
                    "yaml") or ".info" in name or ".warning" in name or \
        ".debug" in name or ".error" in name


def bound_names(st):
    out = []
    if isinstance(st, ast.Assign):
        for t in st.targets:
            out += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
    elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
        out += [n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)]
    elif isinstance(st, (ast.FunctionDef, ast.ClassDef)):
        out.append(st.name)
    elif isinstance(st, (ast.Import, ast.ImportFrom)):
        out += [(a.asname or a.name).split(".")[0] for a in st.names if a.name != "*"]
    return out


def iter_values(v):
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, dict):
        return list(v.keys())
    if isinstance(v, str):
        return list(v)
    return None


def same(a, b):
    if a is b:
        return True
    if unk(a) or unk(b):
        return False
    if isinstance(a, Obj) or isinstance(b, Obj):
        return False
    if isinstance(a, ExtRef) and isinstance(b, ExtRef):
        return a.name == b.name and not a.opaque
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, SCALARS) and isinstance(b, SCALARS):
        return type(a) is type(b) and a == b
    return False


def compare(op, a, b):
    if isinstance(op, (ast.Is, ast.IsNot)):
        if unk(a) or unk(b):
            return Unknown("is")
        if isinstance(a, ExtRef) or isinstance(b, ExtRef):
            if b is None or a is None:
                return Unknown("is None of external") if isinstance(a, ExtRef) and a.opaque else \
                    (isinstance(op, ast.IsNot))
        r = (a is b) if (a is None or b is None or isinstance(a, bool)) else same(a, b)
        return r if isinstance(op, ast.Is) else not r
    if isinstance(op, (ast.In, ast.NotIn)):
        if unk(a):
            return Unknown("in")
        if isinstance(b, ConfView):
            return Unknown("in")
        seq = iter_values(b) if not isinstance(b, str) else None
        if isinstance(b, str) and isinstance(a, str):
            r = a in b
        elif seq is None:
            return Unknown("in")
        elif any(same(a, x) for x in seq):
            r = True
        elif any(unk(x) or isinstance(x, (Obj, ExtRef)) for x in seq):
            return Unknown("in")
        else:
            r = False
        return r if isinstance(op, ast.In) else not r
    if unk(a) or unk(b):
        return Unknown("compare")
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if isinstance(a, (ExtRef, Obj)) or isinstance(b, (ExtRef, Obj)):
            if isinstance(a, ExtRef) and isinstance(b, ExtRef) and not a.opaque and not b.opaque:
                r = a.name == b.name
            elif isinstance(a, Obj) and isinstance(b, Obj):
                r = a is b
            elif (isinstance(a, Obj) and isinstance(b, (str, int, float, type(None)))) or \
                    (isinstance(b, Obj) and isinstance(a, (str, int, float, type(None)))):
                r = False
            else:
                return Unknown("compare external")
        else:
            both_num = isinstance(a, (int, float)) and isinstance(b, (int, float))
            r = (a == b) if both_num else same(a, b)
        return r if isinstance(op, ast.Eq) else not r
    if not (isinstance(a, (int, float, str)) and isinstance(b, type(a))) and not (
            isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return Unknown("order compare")
    return {ast.Lt: lambda: a < b, ast.LtE: lambda: a <= b, ast.Gt: lambda: a > b,
            ast.GtE: lambda: a >= b}[type(op)]()


def binop(op, a, b):
    if unk(a) or unk(b):
        return Unknown("binop")
    ok = (int, float, str, list, tuple, bool)
    if not isinstance(a, ok) or not isinstance(b, ok):
        return Unknown("binop on %s" % type(a).__name__)
    try:
        return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                ast.Div: lambda: a / b, ast.FloorDiv: lambda: a // b,
                ast.Mod: lambda: a % b if not isinstance(a, str) else Unknown("%-format"),
                ast.Pow: lambda: a ** b}[type(op)]()
    except KeyError:
        return Unknown("binop")
    except Exception as e:  # noqa: BLE001 - e.g. ZeroDivisionError
        raise Raised("binop raises %s" % e)


def subscript(c, k):
    if unk(c) or unk(k):
        return Unknown("subscript")
    if isinstance(c, dict):
        if k in c:
            return c[k]
        raise Raised("KeyError %r" % (k,))
    if isinstance(c, (list, tuple, str)) and isinstance(k, (int, slice)):
        try:
            return c[k]
        except IndexError:
            raise Raised("IndexError")
    return Unknown("subscript of %s" % type(c).__name__)


def show(v):
    if v is _MISSING:
        return "unset"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, Unknown):
        return "unknown"
    if isinstance(v, Obj):
        return v.label
    if isinstance(v, ExtRef):
        return v.name
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return repr(v)


# ------------------------------------------------- launcher command line
def argparse_defaults(repo, path):
    """dest -> (default, choices) of every add_argument call in PATH."""
    tree = ast.parse(repo.show(path), filename=path)
    out = {}
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == "add_argument"):
            continue
        names = [a.value for a in n.args
                 if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names:
            continue
        kw = {k.arg: k.value for k in n.keywords if k.arg}
        if "dest" in kw and isinstance(kw["dest"], ast.Constant):
            dest = kw["dest"].value
        else:
            longs = [x for x in names if x.startswith("--")]
            dest = (longs[0] if longs else names[0]).lstrip("-").replace("-", "_")
        action = kw.get("action")
        action = action.value if isinstance(action, ast.Constant) else None
        if "default" in kw:
            try:
                default = ast.literal_eval(kw["default"])
            except ValueError:
                default = Unknown("default of --%s: %s" % (dest, ast.unparse(kw["default"])))
            t = kw.get("type")
            if isinstance(default, str) and isinstance(t, ast.Name) and t.id in ("int", "float"):
                default = int(default) if t.id == "int" else float(default)
        elif action == "store_true":
            default = False
        elif action == "store_false":
            default = True
        else:
            default = None
        choices = None
        if "choices" in kw:
            try:
                choices = ast.literal_eval(kw["choices"])
            except ValueError:
                choices = None
        out[dest] = (default, choices)
    return out


def launcher_argv(repo, case, fp8):
    """The run_script.py arguments of the row, spelled the way the launcher
    at this tag names them."""
    parser = PERF + "/argument_parser.py"
    if not repo.exists(parser):
        raise Fatal("%s is missing" % parser)
    defs = argparse_defaults(repo, parser)
    m = MODELS[case["model"]]
    argv = {"gpu": case["gpu"], "num_gpus": case["gpus"]}
    if "model_family_name" in defs:
        argv.update(model_family_name=m["family"], model_recipe_name=m["recipe"],
                    compute_dtype="fp8_" + fp8)
    elif "model_name" in defs and "fp8_recipe" in defs:
        argv.update(model_name=m["name"], model_size=m["size"], compute_dtype="fp8",
                    fp8_recipe=fp8)
        # setup_experiment.py hands run_script.py --config_file
        # configs/<model_name>/<model_name>_<model_size>_<domain>_<task>.yaml
        domain = defs.get("domain", ("llm", None))[0]
        task = defs.get("task", ("pretrain", None))[0]
        argv["config_file"] = "%s/configs/%s/%s_%s_%s_%s.yaml" % (
            PERF, m["name"], m["name"], m["size"], domain, task)
        if not repo.exists(argv["config_file"]):
            raise Fatal("%s is missing" % argv["config_file"])
    elif "model_name" in defs:
        argv.update(model_name=m["name"], model_size=m["size"], compute_dtype="fp8_" + fp8)
    else:
        raise Fatal("%s defines neither --model_family_name nor --model_name" % parser)
    for k, v in argv.items():
        if k not in defs and k != "config_file":
            raise Fatal("%s has no --%s" % (parser, k))
        ch = defs.get(k, (None, None))[1]
        if isinstance(ch, (list, tuple)) and v not in ch:
            raise Fatal("%s: --%s %s is not among %s" % (parser, k, v, list(ch)))
    args = Obj("args")
    for k, (d, _c) in defs.items():
        args.attrs[k] = d
    args.attrs.update(argv)
    return args, argv


# ------------------------------------------------------------- one case
def replay(repo, case, fp8):
    args, argv = launcher_argv(repo, case, fp8)
    interp = Interp(repo, DEVICES[case["gpu"]], args)
    interp.note_file(PERF + "/argument_parser.py")
    main_path = PERF + "/run_script.py"
    mod = interp.module_by_path(main_path)
    main = mod.globals.get("main")
    if not isinstance(main, FuncRef):
        raise Fatal("%s has no main()" % main_path)
    interp.frames.append(Frame(mod, "<run>", {}))
    try:
        interp.invoke(main, [], {})
    except StopRun as s:
        recipe = s.recipe
    except Raised as e:
        raise Fatal("the replayed launch raises: %s" % e)
    else:
        raise Fatal("%s main() never reaches pretrain()" % main_path)
    if not isinstance(recipe, Obj):
        raise Fatal("pretrain() is handed %s" % show(recipe))
    return interp, recipe, argv


def last_write(obj, name):
    for h in reversed(obj.hist):
        if h[0] == name:
            return h
    return None


def fmt_loc(h):
    loc = h[2]
    s = "%s:%d" % loc if loc else "?"
    if h[3]:
        s += " via " + h[3]
    return s


def bridge_overlap_default(repo):
    """The line of comm_overlap.py that sets the EP-overlap default to False
    when the user leaves it None."""
    path = "src/megatron/bridge/training/comm_overlap.py"
    tree = ast.parse(repo.show(path), filename=path)
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and n.name == "_get_model_comm_overlap_cfgs":
            for st in ast.walk(n):
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                        isinstance(st.targets[0], ast.Attribute) and \
                        st.targets[0].attr == "overlap_moe_expert_parallel_comm" and \
                        isinstance(st.value, ast.Constant):
                    return st.value.value, "%s:%d" % (path, st.lineno)
    raise Fatal("%s: _get_model_comm_overlap_cfgs sets no "
                "overlap_moe_expert_parallel_comm default" % path)


def resolve(repo, interp, recipe):
    model = recipe.attrs.get("model")
    if not isinstance(model, Obj):
        raise Fatal("the recipe handed to pretrain() has no model config")
    co = recipe.attrs.get("comm_overlap")
    out = {}
    parts = []
    # dispatcher
    d = model.attrs.get("moe_token_dispatcher_type", _MISSING)
    if d is _MISSING:
        d, src = MCORE_DEFAULTS["moe_token_dispatcher_type"]
        parts.append("moe_token_dispatcher_type unset (%r, %s)" % (d, src))
    else:
        if unk(d):
            raise Fatal("moe_token_dispatcher_type is undecided: %s" % d.why)
        h = last_write(model, "moe_token_dispatcher_type")
        parts.append("moe_token_dispatcher_type=%r (%s)" % (d, fmt_loc(h)))
    if d not in ("alltoall", "allgather", "flex"):
        raise Fatal("moe_token_dispatcher_type is %r" % (d,))
    out["moe_dispatcher"] = d
    for name in ("moe_flex_dispatcher_backend", "moe_enable_deepep",
                 "moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity"):
        if name in model.attrs:
            v = model.attrs[name]
            if unk(v):
                if d == "flex":
                    raise Fatal("%s is undecided: %s" % (name, v.why))
                continue
            if v is None and name != "moe_enable_deepep":
                continue
            if name == "moe_pad_expert_input_to_capacity" and v is False:
                continue
            h = last_write(model, name)
            parts.append("%s=%r (%s)" % (name, v, fmt_loc(h)))
    # EP communication overlap
    key = "overlap_moe_expert_parallel_comm"
    if isinstance(co, Obj):
        v = co.attrs.get(key)
        if unk(v):
            raise Fatal("comm_overlap.%s is undecided: %s" % (key, v.why))
        if v is None:
            dv, where = bridge_overlap_default(repo)
            interp.note_file(where.rsplit(":", 1)[0])
            parts.append("%s unset (None -> Bridge default %r, %s)" % (key, dv, where))
            v = dv
        else:
            parts.append("comm_overlap.%s=%r (%s)" % (key, v, fmt_loc(last_write(co, key))))
    elif co is None or co is _MISSING:
        v = model.attrs.get(key, _MISSING)
        if v is _MISSING or v is None:
            v, src = MCORE_DEFAULTS[key]
            parts.append("%s unset, no comm_overlap config (%r, %s)" % (key, v, src))
        elif unk(v):
            raise Fatal("model.%s is undecided: %s" % (key, v.why))
        else:
            parts.append("model.%s=%r (%s)" % (key, v, fmt_loc(last_write(model, key))))
    else:
        raise Fatal("comm_overlap is %s" % show(co))
    if not isinstance(v, bool):
        raise Fatal("%s is %r" % (key, v))
    out["moe_overlap_ep_comm"] = v
    flags = sorted(k for k in interp.flag_reads
                   if any(s in k for s in ("moe", "dispatcher", "tokendrop", "a2a", "deepep")))
    if flags:
        parts.append("launcher flags at their defaults: " + ", ".join(
            "--%s=%s" % (k, show(interp.flag_reads[k])) for k in flags))
    return out, "; ".join(parts)


def details(recipe):
    lines = []
    for section, names in DETAILS.items():
        o = recipe.attrs.get(section)
        if not isinstance(o, Obj):
            lines.append("  %s: %s" % (section, show(o)))
            continue
        for n in names:
            if n in o.attrs:
                h = last_write(o, n)
                lines.append("  %s.%s = %s  [%s]" % (
                    section, n, show(o.attrs[n]), fmt_loc(h) if h else "?"))
            else:
                lines.append("  %s.%s unset" % (section, n))
    return lines


# ------------------------------------------------------------- releases
def release_tags(repo, docs_rev, releases):
    """release -> (tag, evidence), read from docs at DOCS_REV:
    docs/releases/software-versions.md ('## NeMo Framework R' then
    '| Megatron-Bridge | V |') first, docs/versions1.json ('V · R') for the
    patch releases the table leaves out."""
    if repo.at(docs_rev) is None:
        raise Fatal("%s is not in the mirror" % docs_rev)
    found = {}
    sv = "docs/releases/software-versions.md"
    if repo.exists(sv):
        cur = None
        for ln, line in enumerate(repo.show(sv).splitlines(), 1):
            m = re.match(r"##\s+NeMo Framework\s+(\S+)", line)
            if m:
                cur = m.group(1)
                continue
            m = re.match(r"\|\s*Megatron-Bridge\s*\|\s*([^|\s]+)\s*\|", line)
            if m and cur and cur not in found:
                found[cur] = (m.group(1), "%s@%s:%d" % (sv, docs_rev, ln))
    vj = "docs/versions1.json"
    if repo.exists(vj):
        try:
            entries = json.loads(repo.show(vj))
        except ValueError as e:
            raise Fatal("%s: %s" % (vj, e))
        for e in entries:
            m = re.match(r"\s*([0-9][^\s·]*)\s*(?:\([^)]*\))?\s*·\s*(\S+)",
                         str(e.get("name", "")))
            if m and m.group(2) not in found:
                found[m.group(2)] = (m.group(1), "%s@%s (%s)" % (vj, docs_rev, e["name"]))
    out = {}
    for r in releases:
        if r not in found:
            raise Fatal("release %s: no Megatron-Bridge version in %s or %s at %s" % (
                r, sv, vj, docs_rev))
        ver, ev = found[r]
        tag = "v" + ver
        r2 = subprocess.run(["git", "-C", repo.gitdir, "rev-parse", "-q", "--verify",
                             "refs/tags/" + tag], capture_output=True, text=True)
        if r2.returncode != 0:
            raise Fatal("release %s: Megatron-Bridge %s (%s) has no tag %s in the mirror" % (
                r, ver, ev, tag))
        out[r] = (tag, ev)
    return out


def known_issues(repo, docs_rev):
    """release -> [(line, text)] of docs/releases/known-issues.md at DOCS_REV."""
    path = "docs/releases/known-issues.md"
    if repo.at(docs_rev) is None or not repo.exists(path):
        return {}
    out, cur = {}, None
    for ln, line in enumerate(repo.show(path).splitlines(), 1):
        m = re.match(r"##\s+(\S+)\s*$", line)
        if m:
            cur = m.group(1)
            continue
        if cur and line.strip():
            out.setdefault(cur, []).append((ln, line.strip().lstrip("-* ")))
    return out


def issue_notes(issues, release, model, docs_rev):
    """Known-issue lines of the release that name the flex backend it ran."""
    words = []
    if model.attrs.get("moe_token_dispatcher_type") == "flex":
        b = model.attrs.get("moe_flex_dispatcher_backend")
        if model.attrs.get("moe_enable_deepep") is True or b == "deepep":
            words.append("deepep")
        if b == "hybridep":
            words.append("hybridep")
    out = []
    for ln, text in issues.get(release, []):
        low = text.lower()
        if any(w in low for w in words) and re.search(
                r"not (supported|available|installed|included)|unavailable|missing", low):
            short = text if len(text) <= 160 else text[:157] + "..."
            out.append("docs/releases/known-issues.md@%s:%d says: %s" % (docs_rev, ln, short))
    return out


# ----------------------------------------------------------------- main
def run(gitdir, outpath, generated_by, spec, show_details, compare_path):
    r = subprocess.run(["git", "-C", gitdir, "rev-parse", "--git-dir"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        die("%s is not a git directory: %s" % (gitdir, r.stderr.strip()))
    repo = Repo(gitdir)
    releases = sorted({c["release"] for c in spec["cases"]})
    try:
        tags = release_tags(repo, spec["docs_rev"], releases)
    except Fatal as e:
        die(str(e))
    issues = known_issues(repo, spec["docs_rev"])
    rows = {}
    if compare_path:
        with open(compare_path, encoding="utf-8") as f:
            rows = {r["id"]: r for r in json.load(f)}
    cases = {}
    for case in spec["cases"]:
        tag, ev = tags[case["release"]]
        commit = repo.at(tag)
        try:
            interp, recipe, argv = replay(repo, case, case.get("fp8", "cs"))
            vals, read = resolve(repo, interp, recipe)
            for alt in case.get("alt_fp8", []):
                i2, r2, _ = replay(repo, case, alt)
                v2, _ = resolve(repo, i2, r2)
                if v2 != vals:
                    raise Fatal("FP8 recipe %s gives %s, %s gives %s" % (
                        case.get("fp8", "cs"), vals, alt, v2))
                read += "; same with fp8 recipe %s" % alt
            for note in issue_notes(issues, case["release"], recipe.attrs["model"],
                                    spec["docs_rev"]):
                read += "; " + note
        except Fatal as e:
            die("%s (%s at %s): %s" % (case["id"], case["release"], tag, e))
        files = list(interp.files)
        cases[case["id"]] = {
            "moe_dispatcher": vals["moe_dispatcher"],
            "moe_overlap_ep_comm": vals["moe_overlap_ep_comm"],
            "release": case["release"],
            "source": {"tag": tag, "commit": commit, "files": files, "read": read},
        }
        print("%-44s %-9s %s %-8s overlap=%s" % (
            case["id"], tag, commit[:12], vals["moe_dispatcher"], vals["moe_overlap_ep_comm"]))
        if show_details:
            print("  release %s -> %s (%s)" % (case["release"], tag, ev))
            print("  run_script.py args: " + " ".join("--%s %s" % kv for kv in argv.items()))
            print("  read: " + read)
            for ln in details(recipe):
                print(ln)
            row = rows.get(case["id"])
            if row:
                model, train = recipe.attrs.get("model"), recipe.attrs.get("train")
                pairs = [("tp", model, "tensor_model_parallel_size"),
                         ("pp", model, "pipeline_model_parallel_size"),
                         ("vpp", model, "virtual_pipeline_model_parallel_size"),
                         ("ep", model, "expert_model_parallel_size"),
                         ("etp", model, "expert_tensor_parallel_size"),
                         ("cp", model, "context_parallel_size"),
                         ("micro_batch", train, "micro_batch_size"),
                         ("global_batch", train, "global_batch_size")]
                diffs = []
                for key, o, attr in pairs:
                    got = o.attrs.get(attr) if isinstance(o, Obj) else None
                    want = row.get(key)
                    if key == "vpp" and got is None:
                        got = 1
                    if not same(got, want):
                        diffs.append("%s row %s script %s" % (key, show(want), show(got)))
                print("  vs row: " + ("; ".join(diffs) if diffs
                                      else "parallelism and batch match"))
            for n in interp.notes:
                print("  note: " + n)
            for n in interp.ext_methods:
                print("  unresolved method: " + n)
    doc = {"generated_by": generated_by, "repo": "NVIDIA-NeMo/Megatron-Bridge", "cases": cases}
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    d = os.path.dirname(os.path.abspath(outpath))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".mbridge-moe-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, outpath)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    print("%d cases -> %s" % (len(cases), outpath))


# ------------------------------------------------------------ self-test
class FakeRepo(Repo):
    """In-memory sources for the snippet checks (no git)."""

    def __init__(self, files):
        self.gitdir = "<snippets>"
        self.commit = "0" * 40
        self.files = set(files)
        self.texts = dict(files)

    def grep(self, pattern, under):
        return [p for p, t in self.texts.items() if p.startswith(under) and pattern in t]


def fixture():
    """The snippet sources: a launcher, a preset table, a recipe, a flex
    helper, and the docs that map releases to tags."""
    files = {
        PERF + "/argument_parser.py": (
            "def parse_cli_args():\n"
            "    p = argparse.ArgumentParser()\n"
            "    p.add_argument('--model_family_name')\n"
            "    p.add_argument('--model_recipe_name')\n"
            "    p.add_argument('--gpu')\n"
            "    p.add_argument('-c', '--compute_dtype', choices=['bf16', 'fp8_cs'])\n"
            "    p.add_argument('-ng', '--num_gpus', type=int)\n"
            "    p.add_argument('--moe_flex_dispatcher_backend',\n"
            "                   type=lambda x: None if x == 'None' else x, default=-1)\n"
            "    p.add_argument('--moe_a2a_overlap', type=bool)\n"
            "    p.add_argument('--dryrun', action='store_true')\n"
            "    return p\n"),
        "src/megatron/bridge/training/pretrain.py":
            "def pretrain(config, forward_step_func):\n    pass\n",
        "src/megatron/bridge/training/comm_overlap.py": (
            "from dataclasses import dataclass\n"
            "@dataclass(kw_only=True)\n"
            "class CommOverlapConfig:\n"
            "    tp_comm_overlap: bool\n"
            "    overlap_moe_expert_parallel_comm: Optional[bool] = None\n"
            "    delay_wgrad_compute: Optional[bool] = None\n"
            "    def _get_model_comm_overlap_cfgs(self, model_cfg, ddp_config):\n"
            "        comm_overlap_cfg = _CommOverlapConfig()\n"
            "        comm_overlap_cfg.overlap_moe_expert_parallel_comm = False\n"),
        "src/megatron/bridge/models/provider.py": (
            "from dataclasses import dataclass, field\n"
            "from megatron.core.transformer import TransformerConfig\n"
            "@dataclass\n"
            "class Provider(TransformerConfig):\n"
            "    num_moe_experts: int = 128\n"
            "    recompute_modules: list = field(default_factory=list)\n"
            "@dataclass\n"
            "class Container:\n"
            "    model: Provider = None\n"
            "    comm_overlap: object = None\n"),
        "src/megatron/bridge/training/flex.py": (
            "import torch\n"
            "def apply_flex(model_config, backend=None):\n"
            "    if getattr(model_config, 'num_moe_experts', None) in (None, 0):\n"
            "        return\n"
            "    props = torch.cuda.get_device_properties(0)\n"
            "    if backend == 'deepep':\n"
            "        if not props.major in [8, 9]:\n"
            "            return\n"
            "    elif backend == 'hybridep':\n"
            "        if not props.major in [8, 9, 10]:\n"
            "            return\n"
            "    else:\n"
            "        return\n"
            "    model_config.moe_token_dispatcher_type = 'flex'\n"
            "    model_config.moe_flex_dispatcher_backend = backend\n"),
        PERF + "/configs/qwen/__init__.py": "from .pretrain import *\n",
        PERF + "/configs/qwen/pretrain.py": (
            "from dataclasses import dataclass, replace\n"
            "from megatron.bridge.models.provider import Provider, Container\n"
            "from megatron.bridge.training.comm_overlap import CommOverlapConfig\n"
            "from megatron.bridge.training.flex import apply_flex\n"
            "@dataclass\n"
            "class W:\n"
            "    ep: int = 1\n"
            "    backend: Optional[str] = None\n"
            "    a2a: bool = False\n"
            "    @property\n"
            "    def big(self):\n"
            "        return self.ep > 8\n"
            "BASE = W(ep=8)\n"
            "H100_FP8_CS = replace(BASE, ep=16, backend='hybridep')\n"
            "def qwen3_30b_a3b_pretrain_config_h100(precision='bf16'):\n"
            "    base = globals_get(precision)\n"
            "    cfg = Container(model=Provider())\n"
            "    cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=True)\n"
            "    cfg.model.moe_token_dispatcher_type = 'alltoall'\n"
            "    cfg.model.expert_model_parallel_size = base.ep if base.big else 1\n"
            "    if base.backend is not None:\n"
            "        apply_flex(cfg.model, base.backend)\n"
            "    if base.a2a:\n"
            "        cfg.comm_overlap.overlap_moe_expert_parallel_comm = True\n"
            "    if cfg.model.some_mcore_field:\n"
            "        cfg.model.unrelated = 1\n"
            "    return cfg\n"
            "def globals_get(precision):\n"
            "    return H100_FP8_CS if precision == 'fp8_cs' else BASE\n"),
        PERF + "/run_script.py": (
            "from argument_parser import parse_cli_args\n"
            "import importlib\n"
            "from megatron.bridge.training.pretrain import pretrain\n"
            "from megatron.bridge.training.flex import apply_flex\n"
            "def main():\n"
            "    parser = parse_cli_args()\n"
            "    args, extra = parser.parse_known_args()\n"
            "    module = importlib.import_module(f'configs.{args.model_family_name}')\n"
            "    name = f'{args.model_recipe_name}_pretrain_config_{args.gpu}'\n"
            "    recipe = getattr(module, name)(precision=args.compute_dtype)\n"
            "    if args.moe_flex_dispatcher_backend is not None:\n"
            "        apply_flex(recipe.model, args.moe_flex_dispatcher_backend)\n"
            "    else:\n"
            "        recipe.model.moe_token_dispatcher_type = 'alltoall'\n"
            "    pretrain(config=recipe, forward_step_func=None)\n"),
    }
    files["docs/releases/software-versions.md"] = (
        "# Software Component Versions\n\n## NeMo Framework 99.01\n\n"
        "| Software Component | Version |\n|---|---|\n| Megatron-Bridge | 9.9.9 |\n")
    files["docs/versions1.json"] = json.dumps([
        {"name": "9.9.9 · 99.01", "version": "9.9.9"},
        {"name": "9.9.10 (latest) · 99.01.01", "version": "9.9.10"}])
    files["docs/releases/known-issues.md"] = (
        "# Known Issues\n\n## 99.01.01\n\n"
        "- HybridEP is not supported in the 99.01.01 container.\n")
    return files


FIXTURE_SPEC = {"docs_rev": "v9.9.10", "cases": [
    {"id": "case_a", "release": "99.01", "model": "qwen3_30b_a3b", "gpu": "h100",
     "gpus": 16, "fp8": "cs"},
    {"id": "case_b", "release": "99.01.01", "model": "qwen3_30b_a3b", "gpu": "h100",
     "gpus": 16, "fp8": "cs"}]}


def write_fixture(d):
    """The snippet repository's files and spec.json under D (for the
    wrapper's end-to-end self-test on a real git repository)."""
    for path, text in fixture().items():
        full = os.path.join(d, "tree", path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(d, "spec.json"), "w", encoding="utf-8") as f:
        json.dump(FIXTURE_SPEC, f)
    return 0


def self_test():
    fails = []

    def check(name, cond):
        if not cond:
            fails.append(name)

    base = fixture()
    case = {"id": "t", "release": "x", "model": "qwen3_30b_a3b", "gpu": "h100", "gpus": 16}
    repo = FakeRepo(base)
    try:
        interp, recipe, _ = replay(repo, case, "cs")
        vals, read = resolve(repo, interp, recipe)
        check("flex from the preset",
              vals == {"moe_dispatcher": "flex", "moe_overlap_ep_comm": False})
        check("read names the write", "flex.py:14" in read and "hybridep" in read)
        check("read names the -1 default", "--moe_flex_dispatcher_backend=-1" in read)
        check("overlap default cited", "comm_overlap.py:9" in read)
        check("property and replace",
              recipe.attrs["model"].attrs.get("expert_model_parallel_size") == 16)
        check("files listed", PERF + "/configs/qwen/pretrain.py" in interp.files)
    except Fatal as e:
        fails.append("replay: %s" % e)
    # An undecidable branch that would change the dispatcher is an error.
    amb = dict(base)
    amb[PERF + "/configs/qwen/pretrain.py"] = base[PERF + "/configs/qwen/pretrain.py"].replace(
        "    if base.a2a:\n",
        "    if cfg.model.some_mcore_field:\n"
        "        cfg.model.moe_token_dispatcher_type = 'allgather'\n    if base.a2a:\n")
    try:
        replay(FakeRepo(amb), case, "cs")
        fails.append("ambiguity not reported")
    except Fatal as e:
        check("ambiguity message", "some_mcore_field" in str(e))
    # A branch that raises is the path not taken.
    rs = dict(base)
    rs[PERF + "/configs/qwen/pretrain.py"] = base[PERF + "/configs/qwen/pretrain.py"].replace(
        "    if base.a2a:\n",
        "    if cfg.model.some_mcore_field:\n        raise ValueError('no')\n"
        "    else:\n        cfg.comm_overlap.overlap_moe_expert_parallel_comm = True\n"
        "    if base.a2a:\n")
    try:
        i3, r3, _ = replay(FakeRepo(rs), case, "cs")
        v3, _ = resolve(FakeRepo(rs), i3, r3)
        check("raise prunes", v3["moe_overlap_ep_comm"] is True)
    except Fatal as e:
        fails.append("raise pruning: %s" % e)
    # No dispatcher assignment at all: the Megatron-Core default.
    nd = dict(base)
    nd[PERF + "/configs/qwen/pretrain.py"] = base[PERF + "/configs/qwen/pretrain.py"].replace(
        "    cfg.model.moe_token_dispatcher_type = 'alltoall'\n", "").replace(
        "H100_FP8_CS = replace(BASE, ep=16, backend='hybridep')",
        "H100_FP8_CS = replace(BASE, ep=16)")
    nd[PERF + "/run_script.py"] = base[PERF + "/run_script.py"].replace(
        "    else:\n        recipe.model.moe_token_dispatcher_type = 'alltoall'\n", "")
    try:
        i4, r4, _ = replay(FakeRepo(nd), case, "cs")
        v4, rd4 = resolve(FakeRepo(nd), i4, r4)
        check("MCore default",
              v4["moe_dispatcher"] == "allgather" and "Megatron-Core default" in rd4)
    except Fatal as e:
        fails.append("default: %s" % e)
    # YAML subset.
    y = parse_yaml("a:\n  b: 1  # c\n  c:\n  d: [x, 'y']\n  e: \"Et|(tt|)*30mL\"\n"
                   "f: null\n", "t.yaml")
    check("yaml", y == {"a": {"b": 1, "c": None, "d": ["x", "y"], "e": "Et|(tt|)*30mL"}, "f": None}
          and y["a"].lines["d"] == 4)
    m = ymerge(parse_yaml("a:\n  b: 1\n  c: 2\n", "1.yaml"), parse_yaml("a:\n  c: 3\n", "2.yaml"))
    check("yaml merge", m == {"a": {"b": 1, "c": 3}} and yloc(m["a"], "c") == ("2.yaml", 2))
    if fails:
        for f in fails:
            print("self-test: FAIL " + f)
        print("distill_moe_as_ran self-test: 0 passed, 1 failed")
        return 1
    print("distill_moe_as_ran self-test: snippets ok")
    return 0


def main(argv):
    if argv and argv[0] == "--self-test":
        return self_test()
    if len(argv) == 2 and argv[0] == "--write-fixture":
        return write_fixture(argv[1])
    out = None
    generated_by = None
    spec = DEFAULT_SPEC
    show_details = False
    compare = None
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--out":
            out = argv[i + 1]
            i += 2
        elif a == "--generated-by":
            generated_by = argv[i + 1]
            i += 2
        elif a == "--spec":
            with open(argv[i + 1], encoding="utf-8") as f:
                spec = json.load(f)
            i += 2
        elif a == "--details":
            show_details = True
            i += 1
        elif a == "--compare":
            compare = argv[i + 1]
            i += 2
        else:
            pos.append(a)
            i += 1
    if len(pos) != 1 or not out:
        die("usage: distill_moe_as_ran.py --out FILE [--generated-by TEXT] [--spec JSON] "
            "[--details] [--compare CASES.json] BRIDGE_GIT | --self-test")
    sys.setrecursionlimit(20000)
    run(pos[0], out, generated_by or "scripts/distill-moe-as-ran.sh BRIDGE_GIT", spec,
        show_details, compare)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
