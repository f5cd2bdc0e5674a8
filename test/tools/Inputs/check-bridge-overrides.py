#!/usr/bin/env python3
"""Check a Megatron-Bridge export against the plan, the model and
Megatron-Bridge's own rules.

Usage: check-bridge-overrides.py EXPORT_FILE PLAN_JSON INSPECT_JSON

EXPORT_FILE is `trident export --to megatron-bridge` text (run_recipe.py's
arguments, one a line, `\\` continued, `#` comments) or its launch script
(the arguments after run_recipe.py); PLAN_JSON the plan it was exported
from; INSPECT_JSON `trident inspect --json` of the plan's model. The
overrides are read as Hydra reads them (quotes removed, true/false/null,
numbers, [lists]), on top of the recipe's values that matter here
(vanilla_gpt_pretrain_1gpu_h100_bf16_config at the pin: ddp and
optimizer.use_distributed_optimizer False and True, overlap_param_gather
False and False, mixed_precision bf16_mixed, optimizer.bf16 True). Checks:

  recipe        --recipe is the vanilla GPT recipe, --mode pretrain,
                --dataset megatron-indexed with dataset.data_path set
  plan          tp, pp, cp, ep, vpp (null for 1), sequence parallelism,
                micro and global batch, dataset.seq_length and
                model.seq_length equal the plan's; the distributed
                optimizer in effect (ddp OR optimizer: Bridge's
                _validate_and_sync_distributed_optimizer_settings turns
                both on when either is) iff ZeRO >= 1; Megatron-FSDP
                (use_megatron_fsdp, its sharding strategy) iff ZeRO >= 2;
                the mixed-precision recipe is the plan's precision (fp32:
                none, and optimizer.bf16 off); no
                parameter all-gather overlap (the prediction counts it)
  model         num_layers, hidden_size, num_attention_heads, the query
                groups (heads when unset), experts and top-k equal inspect's
  Bridge rules  ConfigContainer.validate and Megatron-Core's checks that
                reject a launch: world divisible by tp * pp * cp, global
                batch by micro batch * dp, sequence parallelism needs tp >
                1, seq_length divisible by 2 * cp with cp > 1,
                Megatron-FSDP needs checkpoint.ckpt_format fsdp_dtensor and
                CUDA_DEVICE_MAX_CONNECTIONS not 1, virtual stages need pp >
                1, heads and query groups divisible by tp
  launch        for a script: nodes x --nproc-per-node is the plan's world

Prints `OK: N checks` or the failed checks, exiting 1. Standard library only.
"""
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_checks import Checks, check_launch  # noqa: E402

RECIPE = "vanilla_gpt_pretrain_1gpu_h100_bf16_config"
DEFAULTS = {
    "ddp.use_distributed_optimizer": False,
    "optimizer.use_distributed_optimizer": True,
    "ddp.overlap_param_gather": False,
    "optimizer.overlap_param_gather": False,
    "ddp.use_megatron_fsdp": False,
    "mixed_precision": "bf16_mixed",
}
PRECISION = {"bf16": "bf16_mixed", "fp16": "fp16_mixed",
             "fp8": "bf16_with_fp8_delayed_scaling_mixed", "fp32": None}


def hydra_value(v):
    """A value as Hydra's override parser gives it (the cases used here)."""
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1].replace("\\'", "'")
    if v in ("true", "false"):
        return v == "true"
    if v == "null":
        return None
    if v.startswith("[") and v.endswith("]"):
        return [hydra_value(x.strip()) for x in v[1:-1].split(",") if x.strip()]
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def parse(text):
    """(options, overrides, comment text, launch lines or None)."""
    script = text.startswith("#!")
    notes, launch, body, in_args = [], "", "", not script
    for raw in text.splitlines():
        if raw.startswith("#"):
            notes.append(raw)
            continue
        if not in_args:
            launch += raw + "\n"
            in_args = raw.rstrip().rstrip("\\").strip().endswith(
                '/scripts/training/run_recipe.py"')
            continue
        body += raw.rstrip().rstrip("\\") + " "
    if script and not in_args:
        sys.exit("check-bridge-overrides: the script never runs run_recipe.py")
    opts, over = {}, {}
    toks = shlex.split(body)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.startswith("--"):
            opts[t] = toks[i + 1] if i + 1 < len(toks) else ""
            i += 2
            continue
        if "=" not in t:
            sys.exit("check-bridge-overrides: stray token %r" % t)
        k, v = t.split("=", 1)
        if k in over:
            sys.exit("check-bridge-overrides: %s set twice" % k)
        over[k] = hydra_value(v)
        i += 1
    return opts, over, "\n".join(notes), (launch if script else None)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    opts, over, notes, launch = parse(open(sys.argv[1]).read())
    plan = json.load(open(sys.argv[2]))
    info = json.load(open(sys.argv[3]))
    par = plan["parallel"]
    shape = info["shape"]
    check = Checks("check-bridge-overrides")

    def get(k, default=None):
        return over.get(k, DEFAULTS.get(k, default))

    # The recipe and data.
    check(opts.get("--recipe") == RECIPE, "--recipe " + RECIPE)
    check(opts.get("--mode") == "pretrain", "--mode pretrain")
    check(opts.get("--dataset") == "megatron-indexed", "--dataset megatron-indexed")
    check(bool(over.get("dataset.data_path")), "dataset.data_path set")
    # The plan.
    tp, pp, ep = (get("model.%s_model_parallel_size" % a, 1)
                  for a in ("tensor", "pipeline", "expert"))
    cp = get("model.context_parallel_size", 1)
    for name, got in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep)):
        check(got == par[name], "%s %s vs the plan's %s" % (name, got, par[name]))
    vpp = get("model.virtual_pipeline_model_parallel_size")
    layout = get("model.pipeline_model_parallel_layout")
    check(vpp == (par["vpp"] if par["vpp"] > 1 else None),
          "virtual stages %s vs the plan's vpp %d" % (vpp, par["vpp"]))
    if layout is not None:
        # Megatron-Core: a layout has pp * vpp chunks and excludes the
        # first/last stage sizes
        check(layout.count("|") + 1 == par["pp"] * par["vpp"],
              "the layout's chunks are pp * vpp")
        check(get("model.num_layers_in_first_pipeline_stage") is None and
              get("model.num_layers_in_last_pipeline_stage") is None,
              "a layout excludes the first/last stage sizes")
    check(bool(get("model.sequence_parallel", False)) == par["sequence_parallel"],
          "sequence parallelism as the plan")
    mbs, gbs = get("train.micro_batch_size"), get("train.global_batch_size")
    check(mbs == plan["micro_batch_size"], "micro batch %s" % mbs)
    check(gbs == plan["global_batch"], "global batch %s" % gbs)
    check(get("dataset.seq_length") == plan["seq_len"], "dataset.seq_length")
    check(get("model.seq_length") == get("dataset.seq_length"),
          "model.seq_length equals dataset.seq_length")
    zero = plan["zero_stage"]
    dist_opt = bool(get("ddp.use_distributed_optimizer")) or \
        bool(get("optimizer.use_distributed_optimizer"))
    fsdp = bool(get("ddp.use_megatron_fsdp"))
    check(fsdp == (zero >= 2), "Megatron-FSDP iff ZeRO >= 2 (ZeRO %d)" % zero)
    check(dist_opt or fsdp if zero >= 1 else not dist_opt,
          "distributed optimizer in effect iff ZeRO >= 1 (ZeRO %d)" % zero)
    if fsdp:
        want = "optim_grads" if zero == 2 else "optim_grads_params"
        check(get("ddp.data_parallel_sharding_strategy") == want,
              "sharding strategy %s for ZeRO %d" % (want, zero))
    check(get("mixed_precision") == PRECISION[plan["precision"]],
          "mixed_precision for %s" % plan["precision"])
    if plan["precision"] == "fp32":
        # the recipe's optimizer is built for bf16; no recipe resets it
        check(get("optimizer.bf16", True) is False, "optimizer.bf16 off for fp32")
    check(not get("ddp.overlap_param_gather") and
          not get("optimizer.overlap_param_gather"),
          "no parameter all-gather overlap")
    # The model.
    heads = get("model.num_attention_heads")
    groups = get("model.num_query_groups") or heads
    check(get("model.num_layers") == info["layers"], "num_layers vs %d" % info["layers"])
    check(get("model.hidden_size") == shape["hidden"], "hidden_size")
    check(heads == shape["heads"], "num_attention_heads")
    check(groups == shape["kv_heads"], "query groups %s vs kv_heads %d" % (groups, shape["kv_heads"]))
    check((get("model.num_moe_experts") or 0) == shape["experts"], "experts")
    if shape["experts"]:
        check(get("model.moe_router_topk") == shape["top_k"], "top-k")
    # Megatron-Bridge's and Megatron-Core's rules.
    world = par["dp"] * par["tp"] * par["pp"] * par["cp"]
    check(world % (tp * pp * cp) == 0, "world %d divisible by tp*pp*cp" % world)
    dp = world // (tp * pp * cp)
    check(gbs % (mbs * dp) == 0, "global batch divisible by micro batch * dp")
    if get("model.sequence_parallel", False):
        check(tp > 1, "sequence parallelism needs tp > 1")
    if cp > 1:
        check(get("model.seq_length") % (2 * cp) == 0, "seq_length divisible by 2 * cp")
    if vpp is not None:
        check(pp > 1, "virtual stages need pp > 1")
    check(heads % tp == 0 and groups % tp == 0, "heads and groups divisible by tp")
    text = launch if launch is not None else notes
    if fsdp:
        check(get("checkpoint.ckpt_format") == "fsdp_dtensor",
              "Megatron-FSDP needs checkpoint.ckpt_format fsdp_dtensor")
        check("CUDA_DEVICE_MAX_CONNECTIONS=1" not in text,
              "Megatron-FSDP: CUDA_DEVICE_MAX_CONNECTIONS not 1")
    if launch is not None:
        check_launch(check, launch, notes, world)
    check.report()


if __name__ == "__main__":
    main()
