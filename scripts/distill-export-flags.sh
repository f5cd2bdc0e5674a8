#!/usr/bin/env bash
#===- scripts/distill-export-flags.sh - training frameworks' option names -===#
#
# Usage:
#   scripts/distill-export-flags.sh [--out DIR] [--megatron-rev R] [--torchtitan-rev R]
#                                   [--deepspeed-rev R] [--bridge-rev R]
#                                   MEGATRON_GIT TORCHTITAN_GIT DEEPSPEED_GIT BRIDGE_GIT
#   MEGATRON_GIT=... TORCHTITAN_GIT=... DEEPSPEED_GIT=... BRIDGE_GIT=... scripts/distill-export-flags.sh
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
#   torchtitan-models.txt
#                   the model flavours torchtitan ships: for each
#                   torchtitan/models/<m>/__init__.py with a `<m>_configs`
#                   table (flavour -> function), one line "<m> <flavour>
#                   config=<fn> layers= dim= heads= kv_heads= vocab= experts=
#                   top_k=": the sizes are the literal `n_layers = 32`
#                   statements or `dim=4096` keywords of the flavour's
#                   function (- when none), config the first function of
#                   <m>/config_registry.py that sets `model_spec =
#                   model_registry("<flavour>")` and is not a debug, sft_ or
#                   private one (- when none); debug flavours left out.
#                   lib/Plan/Export.cpp's kTorchTitanFlavours is this list.
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
#   megatron-bridge.txt
#                   what Megatron-Bridge's scripts/training/run_recipe.py
#                   accepts with the recipe Trident exports for
#                   (vanilla_gpt_pretrain_1gpu_h100_bf16_config, found where
#                   run_recipe.py looks: megatron.bridge.recipes.gpt.h100):
#                   "section.field annotation" for every field of the class
#                   each ConfigContainer(...) keyword of the recipe builds
#                   (the constructor called, else the ConfigContainer
#                   field's annotation), dataclass bases followed into
#                   Megatron-LM at the commit of Megatron-Bridge's
#                   3rdparty/Megatron-LM submodule (MEGATRON_GIT must hold
#                   it); "mixed_precision=<name>" for each factory
#                   training/mixed_precision.py registers (@register: its
#                   name and the hyphenated alias); "run_recipe.py --x" for
#                   the runner's options, "run_recipe.py --dataset <preset>"
#                   for DATASET_PRESETS (recipes/utils/dataset_utils.py) and
#                   "run_recipe.py --recipe <the recipe>".
#   megatron-bridge-map.txt
#                   scripts/translate_mlm_to_bridge.py's ARG_MAP, one
#                   "--flag path transform" a line (- for None): the
#                   Megatron-LM -> Megatron-Bridge translation
#                   lib/Plan/Export.cpp's kBridgeRows is held to.
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
# parser reads, and checks the output. It does not cover the two
# Megatron-Bridge lists, which reuse the same dataclass reader: the unit
# test ExportTest holds them to lib/Plan/Export.cpp's kBridgeRows, and
# test/tools/export-flags.test every exported override to them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# The commits docs/exporters.md says the exporters were checked against.
megatron_rev=d98e8a64ddf34856e74b24714e3bedb2f5a39553
torchtitan_rev=b5bcd76c66d0acb1a08b176d9639425bc55e0b2a
deepspeed_rev=edaa7221267243c7be7fb49c5d5f5c4fb97b4641
bridge_rev=067f987df03b8355b03192d88d70f1709fedf51a
out=${EXPORT_FLAGS_OUT:-$root/test/data/export-flags}
self_test=0
pos=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --megatron-rev) megatron_rev=$2; shift 2 ;;
    --torchtitan-rev) torchtitan_rev=$2; shift 2 ;;
    --deepspeed-rev) deepspeed_rev=$2; shift 2 ;;
    --bridge-rev) bridge_rev=$2; shift 2 ;;
    --self-test) self_test=1; shift ;;
    -h|--help) sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "distill-export-flags: unknown option $1" >&2; exit 2 ;;
    *) pos+=("$1"); shift ;;
  esac
done

# The Python part (shared code: scripts/distill_common.py).
py=$root/scripts/distill_export_flags.py
# shellcheck source=scripts/distill-common.sh
. "$root/scripts/distill-common.sh"   # mkrepo, self_test_result; removes $work

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
  training.mixed_precision_param compile.enable compile.enable_async_tensor_parallel"
sanity_deepspeed="train_batch_size train_micro_batch_size_per_gpu
  gradient_accumulation_steps gradient_clipping bf16 bf16.enabled fp16 fp16.enabled
  zero_optimization zero_optimization.stage tensor_parallel
  tensor_parallel.autotp_size expert_parallel expert_parallel.enabled
  expert_parallel.autoep_size zero_optimization.overlap_comm
  zero_optimization.reduce_bucket_size zero_optimization.stage3_prefetch_bucket_size
  zero_optimization.stage3_max_live_parameters activation_checkpointing"

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

run_all() {  # run_all MEGATRON TORCHTITAN DEEPSPEED OUTDIR [BRIDGE]
  mkdir -p "$4"
  PYTHONHASHSEED=0 python3 -B "$py" megatron "$1" "$megatron_rev" "$4/megatron.txt"
  PYTHONHASHSEED=0 python3 -B "$py" torchtitan "$2" "$torchtitan_rev" "$4/torchtitan.txt"
  PYTHONHASHSEED=0 python3 -B "$py" torchtitan-models "$2" "$torchtitan_rev" "$4/torchtitan-models.txt"
  PYTHONHASHSEED=0 python3 -B "$py" deepspeed "$3" "$deepspeed_rev" "$4/deepspeed.txt"
  if [ -n "${5:-}" ]; then
    PYTHONHASHSEED=0 python3 -B "$py" megatron-bridge "$5" "$bridge_rev" "$4/megatron-bridge.txt" "$1"
    PYTHONHASHSEED=0 python3 -B "$py" megatron-bridge-map "$5" "$bridge_rev" "$4/megatron-bridge-map.txt" "$1"
  fi
}

if [ $self_test = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/distill-export-flags-test.XXXXXX")
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
  # torchtitan's model registries: a flavour table, sizes as statements
  # and keywords, a baseline config, and configs that must not count
  # (debug, fine-tuning, a variant setting config.model_spec).
  mkdir -p "$t/torchtitan/models/llama3" "$t/torchtitan/models/common"
  cat >"$t/torchtitan/models/llama3/__init__.py" <<'EOF'
def _debugmodel():
    dim = 256
    return Cfg(dim=dim, n_layers=2, vocab_size=2048)
def _8b():
    dim = 4096
    n_heads = 32
    n_kv_heads = 8
    n_layers = 32
    vocab_size = 128256
    return Cfg(dim=dim)
def _moe():
    return Cfg(dim=1024, n_layers=4, vocab_size=1000, num_experts=8, top_k=2)
llama3_configs = {"debugmodel": _debugmodel, "8B": _8b, "4x1B": _moe}
EOF
  cat >"$t/torchtitan/models/llama3/config_registry.py" <<'EOF'
from . import model_registry
def llama3_debugmodel_8b():
    model_spec = model_registry("8B")
def sft_llama3_8b():
    model_spec = model_registry("8B", attn_backend="varlen")
def llama3_8b_variant():
    config = llama3_8b()
    config.model_spec = model_registry("8B")
def llama3_8b():
    model_spec = model_registry("8B")
EOF
  echo "x = 1" >"$t/torchtitan/models/common/__init__.py"
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
  expect torchtitan-models.txt \
    "llama3 8B config=llama3_8b layers=32 dim=4096 heads=32 kv_heads=8 vocab=128256 experts=- top_k=-" \
    "llama3 4x1B config=- layers=4 dim=1024 heads=- kv_heads=- vocab=1000 experts=8 top_k=2"
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
  if msg=$(python3 -B "$py" deepspeed "$d.git" 0123456789abcdef0123456789abcdef01234567 \
      "$work/out/x.txt" 2>&1); then
    echo "self-test: a missing commit was accepted"; fail=1
  elif ! grep -q 'commit 0123456789abcdef0123456789abcdef01234567 of deepspeedai/DeepSpeed is not in' <<<"$msg"; then
    echo "self-test: missing-commit message: $msg"; fail=1
  fi
  self_test_result distill-export-flags "$fail"
  exit 0
fi

megatron_git=${pos[0]:-${MEGATRON_GIT:-}}
torchtitan_git=${pos[1]:-${TORCHTITAN_GIT:-}}
deepspeed_git=${pos[2]:-${DEEPSPEED_GIT:-}}
bridge_git=${pos[3]:-${BRIDGE_GIT:-}}
if [ -z "$megatron_git" ] || [ -z "$torchtitan_git" ] || [ -z "$deepspeed_git" ] ||
   [ -z "$bridge_git" ]; then
  echo "usage: $0 [--out DIR] [--X-rev REV] MEGATRON_GIT TORCHTITAN_GIT DEEPSPEED_GIT BRIDGE_GIT" >&2
  echo "   or: MEGATRON_GIT=.. TORCHTITAN_GIT=.. DEEPSPEED_GIT=.. BRIDGE_GIT=.. $0;  $0 --self-test" >&2
  exit 2
fi
run_all "$megatron_git" "$torchtitan_git" "$deepspeed_git" "$out" "$bridge_git"
echo "entries Trident writes:"
# shellcheck disable=SC2086
check "$out/megatron.txt" $sanity_megatron
# shellcheck disable=SC2086
check "$out/torchtitan.txt" $sanity_torchtitan
# shellcheck disable=SC2086
check "$out/deepspeed.txt" $sanity_deepspeed
