#!/usr/bin/env python3
"""Check a Megatron-LM export against the model and Megatron's own rules.

Usage: check-megatron-args.py EXPORT_FILE INSPECT_JSON WORLD_SIZE

EXPORT_FILE is `trident export --to megatron` text (one flag per line,
`\\` continued, `#` comments), or the launch script of `--launcher
torchrun|slurm` (its arguments are those after pretrain_gpt.py);
INSPECT_JSON is `trident inspect --json` of the same model. Checks:

  architecture   --num-layers, --hidden-size, --num-attention-heads and the
                 query groups (--num-query-groups with
                 --group-query-attention, else as many as heads), and
                 --num-experts / --moe-router-topk equal inspect's `layers`
                 and `shape`; the vocabulary note names inspect's vocab
  validate_args  rules of megatron/training/arguments.py at the pinned
                 commit (docs/exporters.md) that reject a launch:
                 world size divisible by tp * pp * cp, global batch by
                 micro batch * dp; heads and query groups divisible by tp;
                 layers divisible by pp unless a layout or first/last stage
                 sizes are given; Megatron-FSDP needs --ckpt-format
                 fsdp_dtensor; expert parallelism needs --num-experts,
                 divisible by ep; --swiglu and --squared-relu exclude each
                 other, as latent attention excludes grouped-query;
                 CUDA_DEVICE_MAX_CONNECTIONS: asserted "1" with tp or cp
                 > 1 (before Blackwell), asserted not "1" with
                 Megatron-FSDP: the script sets (or unsets) it, the bare
                 argument list says so in a comment
  launch         for a script: `#SBATCH --nodes` (1 for torchrun) times
                 torchrun's --nproc-per-node is the world size, and
                 `--gpus-per-node` equals --nproc-per-node

Prints `OK: N checks` or the failed checks, exiting 1. Standard library only.
"""
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_checks import Checks, check_launch  # noqa: E402


def parse(text):
    args, lines, cur = {}, [], ""
    notes = []
    script = text.startswith("#!")
    launch, in_args = "", not script
    for raw in text.splitlines():
        if raw.startswith("#"):
            notes.append(raw)
            continue
        if not in_args:
            # The script's own lines, up to the pretrain_gpt.py line.
            launch += raw + "\n"
            in_args = raw.strip().startswith('"$MEGATRON_LM/pretrain_gpt.py"')
            continue
        cur += raw.rstrip().rstrip("\\") + " "
    toks = shlex.split(cur, posix=False)
    i = 0
    while i < len(toks):
        t = toks[i]
        if not t.startswith("--"):
            sys.exit("check-megatron-args: stray token %r" % t)
        if i + 1 < len(toks) and not toks[i + 1].startswith("--"):
            args[t] = toks[i + 1]
            i += 2
        else:
            args[t] = True
            i += 1
    if script and not in_args:
        sys.exit("check-megatron-args: the script never runs pretrain_gpt.py")
    return args, "\n".join(notes), (launch if script else None)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    args, notes, launch = parse(open(sys.argv[1]).read())
    info = json.load(open(sys.argv[2]))
    world = int(sys.argv[3])
    shape = info["shape"]
    check = Checks("check-megatron-args")

    def num(flag, default=None):
        v = args.get(flag, default)
        return None if v is None else int(v)

    tp = num("--tensor-model-parallel-size", 1)
    pp = num("--pipeline-model-parallel-size", 1)
    cp = num("--context-parallel-size", 1)
    ep = num("--expert-model-parallel-size", 1)
    heads = num("--num-attention-heads")
    groups = num("--num-query-groups") if "--group-query-attention" in args else heads
    # The model.
    check(num("--num-layers") == info["layers"], "--num-layers vs layers %d" % info["layers"])
    check(num("--hidden-size") == shape["hidden"], "--hidden-size vs hidden %d" % shape["hidden"])
    check(heads == shape["heads"], "--num-attention-heads vs heads %d" % shape["heads"])
    if "--multi-latent-attention" not in args:
        check(groups == shape["kv_heads"], "query groups %s vs kv_heads %d" % (groups, shape["kv_heads"]))
    check(num("--num-experts", 0) == shape["experts"], "--num-experts vs experts %d" % shape["experts"])
    if shape["experts"]:
        check(num("--moe-router-topk") == shape["top_k"], "--moe-router-topk vs top_k %d" % shape["top_k"])
    check(re.search(r"vocabulary, %d here" % shape["vocab"], notes) is not None,
          "the vocabulary note names %d" % shape["vocab"])
    # validate_args.
    check(world % (tp * pp * cp) == 0, "world %d divisible by tp*pp*cp" % world)
    dp = world // (tp * pp * cp)
    check(num("--global-batch-size") % (num("--micro-batch-size") * dp) == 0,
          "global batch divisible by micro batch * dp")
    check(heads % tp == 0, "heads divisible by tp")
    check(groups % tp == 0, "query groups divisible by tp")
    if not any(f in args for f in ("--pipeline-model-parallel-layout",
                                   "--decoder-first-pipeline-num-layers")):
        check(num("--num-layers") % pp == 0, "layers divisible by pp")
    if "--use-megatron-fsdp" in args:
        check(args.get("--ckpt-format") == "fsdp_dtensor",
              "Megatron-FSDP requires --ckpt-format fsdp_dtensor")
    if ep > 1:
        check("--num-experts" in args, "expert parallelism needs --num-experts")
        check(num("--num-experts", 0) % ep == 0, "experts divisible by ep")
    # Per-layer list expressions (--moe-layer-freq, --no-rope-freq): one
    # entry per layer (validate_args asserts the length), 0s and 1s.
    for flag in ("--moe-layer-freq", "--no-rope-freq"):
        if flag in args:
            expr = args[flag].strip('"')
            ok = re.fullmatch(r"[\[\]()0-9*+ ]+", expr) is not None
            check(ok, "%s is a list expression" % flag)
            if ok:
                layers = eval(expr, {"__builtins__": {}})
                check(len(layers) == num("--num-layers"),
                      "%s has one entry per layer" % flag)
                check(set(layers) <= {0, 1}, "%s holds 0s and 1s" % flag)
    check(not ("--swiglu" in args and "--squared-relu" in args),
          "--swiglu and --squared-relu exclude each other")
    check(not ("--multi-latent-attention" in args and "--group-query-attention" in args),
          "latent attention excludes grouped-query attention")
    # CUDA_DEVICE_MAX_CONNECTIONS (validate_args before Blackwell).
    fsdp = "--use-megatron-fsdp" in args
    wants_one = (tp > 1 or cp > 1) and not fsdp
    text = launch if launch is not None else notes
    if wants_one:
        want = ("export CUDA_DEVICE_MAX_CONNECTIONS=1" if launch is not None
                else "CUDA_DEVICE_MAX_CONNECTIONS=1")
        check(want in text, "tp or cp > 1 needs CUDA_DEVICE_MAX_CONNECTIONS=1")
    if fsdp:
        check("CUDA_DEVICE_MAX_CONNECTIONS=1" not in text,
              "Megatron-FSDP must not set CUDA_DEVICE_MAX_CONNECTIONS=1")
        if launch is not None:
            check("unset CUDA_DEVICE_MAX_CONNECTIONS" in launch,
                  "the Megatron-FSDP script unsets CUDA_DEVICE_MAX_CONNECTIONS")
    if launch is not None:
        check_launch(check, launch, notes, world)
    check.report()


if __name__ == "__main__":
    main()
