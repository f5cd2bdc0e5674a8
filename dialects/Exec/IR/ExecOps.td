//===- ExecOps.td - texec operations ------------------------*- tablegen -*-===//

#ifndef TRIDENT_DIALECTS_EXEC_IR_EXECOPS_TD
#define TRIDENT_DIALECTS_EXEC_IR_EXECOPS_TD

include "dialects/Exec/IR/ExecBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def TExec_ProgramOp : TExec_Op<"program", [
    IsolatedFromAbove, Symbol, SingleBlock, NoTerminator, NoRegionArguments]> {
  let summary = "The SPMD training program every rank runs";
  let description = [{
    Holds the grid (`dp`, `cp`, `tp`, `pp`; `tp` varies fastest in the
    rank numbering, then `cp`, then `dp`, then `pp`), the micro-batching
    (`micro_batches` of `micro_batch_size` sequences of `seq_len` tokens
    per data-parallel rank and step), the named process groups, and one
    `texec.stage` per pipeline stage. `vocab` bounds the synthetic token
    ids. With context parallelism (`cp` > 1, default 1) each cp rank holds
    the contiguous `seq_len / cp` positions starting at its cp coordinate
    times that length, so activations and inputs are `seq_len / cp` long.
    Expert parallelism (`ep` > 1, default 1) is carved out of `dp`: the
    `ep` consecutive dp ranks of an `ep` group hold different experts, and
    axis `edp` (dp / ep ranks) joins the ranks holding the same ones.
    `precision` (default "f32") is "bf16" for bf16 mixed precision: every
    float value a kernel, a reduction or a parameter read produces is
    bf16 (the kernel table's fp32 results and parameter gradients
    excepted), computed in fp32; master weights, gradient accumulation
    and the optimizer's state stay fp32.

    Example:
    ```mlir
    texec.program @tiny attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64,
        vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
        seq_len = 8 : i64, vocab = 16 : i64, zero_stage = 0 : i64,
        schedule = "1f1b"} {
      texec.group "tp" axes ["tp"]
      texec.stage 0 { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$dp, I64Attr:$tp,
                       I64Attr:$pp, I64Attr:$vpp, I64Attr:$micro_batches,
                       I64Attr:$micro_batch_size, I64Attr:$seq_len,
                       I64Attr:$vocab, I64Attr:$zero_stage,
                       StrAttr:$schedule, UnitAttr:$sequence_parallel,
                       DefaultValuedAttr<I64Attr, "1">:$cp,
                       DefaultValuedAttr<I64Attr, "1">:$ep,
                       DefaultValuedAttr<StrAttr, "\"f32\"">:$precision);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Size of grid axis `axis` ("dp", "cp", "tp", "pp", "ep", "edp"); 0 for
    /// an unknown name.
    int64_t getAxisSize(llvm::StringRef axis);
    /// The group declaration named `name`, or null.
    GroupOp lookupGroup(llvm::StringRef name);
    /// Ranks in the grid.
    int64_t getNumRanks() { return getDp() * getCp() * getTp() * getPp(); }
    /// Positions each cp rank holds: seq_len / cp.
    int64_t getLocalSeqLen() { return getSeqLen() / getCp(); }
  }];
}

def TExec_GroupOp : TExec_Op<"group", [HasParent<"ProgramOp">]> {
  let summary = "A named process group: ranks that differ only along axes";
  let description = [{
    The ranks that share every grid coordinate except those in `axes` form
    one group (each rank belongs to exactly one group of each name). With
    `members`, only the listed positions along the single axis belong
    (e.g. the first and last pipeline stage, which share the tied
    embedding); ranks at other positions are not in the group.

    Example: `texec.group "embed" axes ["pp"] members [0, 3]`
  }];
  let arguments = (ins StrAttr:$sym, StrArrayAttr:$axes,
                       OptionalAttr<DenseI64ArrayAttr>:$members);
  let assemblyFormat = "$sym `axes` $axes (`members` $members^)? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Ranks in one group of this name.
    int64_t getGroupSize();
  }];
}

def TExec_StageOp : TExec_Op<"stage", [
    HasParent<"ProgramOp">, SingleBlock, NoTerminator, NoRegionArguments]> {
  let summary = "What the ranks of one pipeline stage run";
  let description = [{
    Declares the stage's parameters (`texec.param`), its model chunks
    (`texec.chunk`), then runs, in order: the schedule (`texec.schedule`),
    the gradient synchronisation (`texec.grad_all_reduce`) and the
    optimizer step (`texec.optimizer`).

    Example: `texec.stage 0 { ... }`
  }];
  let arguments = (ins I64Attr:$index);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$index attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def TExec_ParamOp : TExec_Op<"param", [HasParent<"StageOp">]> {
  let summary = "Declares a parameter shard held by the stage's ranks";
  let description = [{
    `global_shape` is the whole parameter; the rank holds `type`, its shard:
    with `split D over "AXIS"` dimension D is cut into equal blocks, the
    rank keeping block number (its coordinate on AXIS). `init` is `uniform`
    (uniform in [-0.02, 0.02)), `ones` or `zeros`; initial values depend only on the
    name and the global position, so every sharding starts from the same
    model. Each parameter has a gradient buffer of the same type.
    `padded` (only with `split 0`): dimension 0 is rounded up to a multiple
    of the axis size, as Megatron-LM pads a vocabulary that tp does not
    divide; the rows past `global_shape` are zero, get zero gradients and
    are left out of parameter dumps.
    A second `split D2 over "AXIS2"` cuts another dimension over another
    axis (expert weights: experts over "ep", their feature dimension over
    "tp" under expert tensor parallelism). `blocks B` says the last split
    dimension is made of B equal blocks (a gated expert's gate and up
    columns) and the rank keeps its piece of each block, in block order.
    `data "GROUP"` names the group of ranks that hold the same shard and
    see different data (default: the group of the stage's
    `texec.optimizer`): its ZeRO slices and gradient sums go over that
    group, e.g. the expert data-parallel group `edp` of expert weights.
    `load_balance = RATE` (a positive f64; a rank-1, unsplit parameter):
    the parameter is a mixture of experts' selection bias, updated after
    each step by DeepSeek-V3's auxiliary-loss-free balancing instead of by
    the optimizer. Its gradient buffer accumulates the expert load (tokens
    per expert, `moe_router_selected_bwd`'s third result) and is summed
    like a gradient; the step then adds RATE * sign(mean - load) to each
    expert's bias (rt::loadBalanceUpdate).

    Example:
    `texec.param "layers.0.mlp.fc1.weight" global [256, 64] split 0 over "tp" init "uniform" : tensor<128x64xf32>`
    `texec.param "layers.0.moe.w_in" global [4, 64, 512] split 0 over "ep" split 2 over "tp" blocks 2 init "uniform" data "edp" : tensor<2x64x256xf32>`
  }];
  let arguments = (ins StrAttr:$sym, DenseI64ArrayAttr:$global_shape,
                       OptionalAttr<I64Attr>:$split_dim,
                       OptionalAttr<StrAttr>:$split_axis, StrAttr:$init,
                       TypeAttrOf<TExec_FloatTensor>:$type,
                       OptionalAttr<StrAttr>:$data_group,
                       UnitAttr:$padded,
                       OptionalAttr<I64Attr>:$split2_dim,
                       OptionalAttr<StrAttr>:$split2_axis,
                       OptionalAttr<I64Attr>:$blocks,
                       OptionalAttr<F64Attr>:$load_balance);
  let assemblyFormat = [{
    $sym `global` $global_shape (`split` $split_dim^ `over` $split_axis)?
    (`split` $split2_dim^ `over` $split2_axis)? (`blocks` $blocks^)?
    (`padded` $padded^)? `init` $init (`data` $data_group^)? attr-dict `:`
    $type
  }];
  let hasVerifier = 1;
}

def TExec_ChunkOp : TExec_Op<"chunk", [HasParent<"StageOp">]> {
  let summary = "One model chunk: its forward and its backward";
  let description = [{
    Local chunk `index` of its stage (model chunk `index * pp + stage`).
    The `forward` region runs for one micro-batch and ends with
    `texec.save`, whose operands are what the backward needs; the
    `backward` region receives them as block arguments (one set per
    micro-batch in flight) and ends with `texec.end`.

    Example:
    ```mlir
    texec.chunk 0 forward {
      ...
      texec.save %x, %h : tensor<2x8x16xf32>, tensor<2x8x64xf32>
    } backward {
    ^bb0(%x: tensor<2x8x16xf32>, %h: tensor<2x8x64xf32>):
      ...
      texec.end
    }
    ```

    With `recompute` (full activation recomputation, Chen et al. 2016,
    "Training Deep Nets with Sublinear Memory Cost"; Megatron-LM's
    `--recompute-granularity full`) a backend keeps only what the forward
    received (`texec.recv` results; the data inputs are re-read) between
    the forward and the backward, and re-runs the forward region right
    before the backward region, without its sends, receives and loss
    accumulation, to rebuild the `texec.save` operands. The region
    semantics are unchanged: the forward must be deterministic (the
    lowering refuses dropout).
  }];
  let arguments = (ins I64Attr:$index, UnitAttr:$recompute);
  let regions = (region SizedRegion<1>:$forward, SizedRegion<1>:$backward);
  let assemblyFormat = [{
    $index (`recompute` $recompute^)? attr-dict-with-keyword `forward`
    $forward `backward` $backward
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Model chunk number (index * pp + stage).
    int64_t getGlobalIndex();
  }];
}

def TExec_SaveOp : TExec_Op<"save", [Terminator, HasParent<"ChunkOp">]> {
  let summary = "Ends a chunk's forward; keeps values for its backward";
  let description = [{
    Example: `texec.save %x, %h : tensor<2x8x16xf32>, tensor<2x8x64xf32>`
  }];
  let arguments = (ins Variadic<TExec_AnyTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def TExec_EndOp : TExec_Op<"end", [Terminator, HasParent<"ChunkOp">]> {
  let summary = "Ends a chunk's backward";
  let description = [{ Example: `texec.end` }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Data, parameters, gradients
//===----------------------------------------------------------------------===//

def TExec_InputOp : TExec_Op<"input"> {
  let summary = "The current micro-batch's token ids, labels or other ids";
  let description = [{
    `tokens` or `labels` (the next-token targets) of the micro-batch the
    enclosing chunk is running, for this rank's data-parallel share:
    `micro_batch_size x seq_len` ids from the deterministic synthetic
    corpus (the same sequences whatever the plan). Any other name (BERT's
    `token_types`, `nsp_labels`) is an independent synthetic stream of ids
    in [0, `range`): `micro_batch_size x seq_len / cp` of them, or one per
    sample (`micro_batch_size`). A float input (ViT's `images`) takes no
    range: `micro_batch_size x ...` values uniform in [-1, 1). With `bag
    K`, ids come K per sample (`micro_batch_size x K`, DLRM's embedding
    bags), the same whatever the cp coordinate.

    Example: `%ids = texec.input "tokens" : tensor<2x8xi32>`,
    `%t = texec.input "token_types" range 2 : tensor<2x8xi32>`,
    `%img = texec.input "images" : tensor<2x3x8x8xf32>`,
    `%s = texec.input "sparse.0" range 50 bag 3 : tensor<2x3xi32>`
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<I64Attr>:$range,
                       OptionalAttr<I64Attr>:$bag);
  let results = (outs TExec_AnyTensor:$result);
  let assemblyFormat =
      "$name (`range` $range^)? (`bag` $bag^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TExec_ParamRefOp : TExec_Op<"param_ref"> {
  let summary = "Reads the current value of a parameter shard";
  let description = [{
    Names a `texec.param` of the enclosing stage; the type must match.

    Example: `%w = texec.param_ref "wte" : tensor<16x8xf32>`
  }];
  let arguments = (ins StrAttr:$sym);
  let results = (outs TExec_FloatTensor:$result);
  let assemblyFormat = "$sym attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TExec_ParamGatherOp : TExec_Op<"param_gather"> {
  let summary = "Gathers a ZeRO-3 parameter from its data-parallel slices";
  let description = [{
    Under ZeRO-3 (program `zero_stage` 3) a rank stores only its slice of
    each parameter shard; this all-gathers the slices over `group` into
    the whole shard, for one forward or backward (Rajbhandari et al. 2020,
    Sec. 5). The gathered copy lives only as long as its value.

    Example: `%w = texec.param_gather "wte" group "dp" : tensor<16x8xf32>`
  }];
  let arguments = (ins StrAttr:$sym, StrAttr:$group);
  let results = (outs TExec_FloatTensor:$result);
  let assemblyFormat = "$sym `group` $group attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TExec_AccumulateGradOp : TExec_Op<"accumulate_grad"> {
  let summary = "Adds a gradient contribution into a parameter's gradient";
  let description = [{
    Example: `texec.accumulate_grad "wte", %dw : tensor<16x8xf32>`
  }];
  let arguments = (ins StrAttr:$sym, TExec_FloatTensor:$grad);
  let assemblyFormat = "$sym `,` $grad attr-dict `:` type($grad)";
  let hasVerifier = 1;
}

def TExec_LossOp : TExec_Op<"loss"> {
  let summary = "Records the micro-batch loss for the step's report";
  let description = [{
    `loss` (a one-element tensor) is the sum of the token losses of the
    micro-batch; the reported step loss is the sum over micro-batches and
    data-parallel ranks divided by the tokens of the global batch. A loss
    with another normaliser is added times `scale` (a per-sample loss,
    BERT's next-sentence loss, has scale seq_len: its sum over samples,
    times seq_len, divided by the tokens is its mean over samples).

    Example: `texec.loss %l : tensor<1xf32>`,
    `texec.loss %nsp scale 8.0 : tensor<1xf32>`
  }];
  let arguments = (ins TExec_FloatTensor:$loss, OptionalAttr<F64Attr>:$scale);
  let assemblyFormat = "$loss (`scale` $scale^)? attr-dict `:` type($loss)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def TExec_KernelOp : TExec_Op<"kernel", [Pure]> {
  let summary = "A runtime kernel on local shards";
  let description = [{
    Calls the runtime kernel of kind `kind` (a `KernelKind`, printed as its
    quoted name). The verifier checks the number of inputs and results and
    the `config` keys against the kernel table (ExecOps.cpp, listed in
    docs/texec.md), then the kind's own rules; the C++ emitter dispatches
    on the kind.
    `shard_axis` in a config names the grid axis whose coordinate selects
    the shard (vocabulary rows of an embedding or a vocabulary-parallel
    loss, sequence positions of a sequence-parallel position embedding).

    Example:
    `%y = texec.kernel "gelu"(%x) : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>`
  }];
  let arguments = (ins TExec_KernelKind:$kind,
                       Variadic<TExec_AnyTensor>:$inputs,
                       OptionalAttr<DictionaryAttr>:$config);
  let results = (outs Variadic<TExec_AnyTensor>:$results);
  let assemblyFormat = [{
    custom<KernelKind>($kind) `(` $inputs `)` (`config` $config^)? attr-dict
    `:` functional-type($inputs, $results)
  }];
  let extraClassDeclaration = [{
    /// The kernel's name, as printed ("gelu").
    ::llvm::StringRef getName() { return stringifyKernelKind(getKind()); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

def TExec_AllReduceOp : TExec_Op<"all_reduce", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Sum over a named group";
  let description = [{
    Example: `%s = texec.all_reduce %p group "tp" : tensor<2x8x64xf32>`
  }];
  let arguments = (ins TExec_AnyTensor:$input, StrAttr:$group);
  let results = (outs TExec_AnyTensor:$result);
  let assemblyFormat = "$input `group` $group attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TExec_AllGatherOp : TExec_Op<"all_gather"> {
  let summary = "Concatenates the group's shards along `dim`, in group order";
  let description = [{
    Example:
    `%f = texec.all_gather %s group "tp" dim 1 : tensor<2x4x64xf32> -> tensor<2x8x64xf32>`
  }];
  let arguments = (ins TExec_AnyTensor:$input, StrAttr:$group, I64Attr:$dim);
  let results = (outs TExec_AnyTensor:$result);
  let assemblyFormat = [{
    $input `group` $group `dim` $dim attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def TExec_ReduceScatterOp : TExec_Op<"reduce_scatter"> {
  let summary = "Sums over the group and keeps this rank's block of `dim`";
  let description = [{
    Example:
    `%s = texec.reduce_scatter %p group "tp" dim 1 : tensor<2x8x64xf32> -> tensor<2x4x64xf32>`
  }];
  let arguments = (ins TExec_AnyTensor:$input, StrAttr:$group, I64Attr:$dim);
  let results = (outs TExec_AnyTensor:$result);
  let assemblyFormat = [{
    $input `group` $group `dim` $dim attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def TExec_AllToAllOp : TExec_Op<"all_to_all", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Exchanges equal blocks of `dim` among the group";
  let description = [{
    Block j of `dim` goes to the j-th rank of the group; the result holds,
    in block i, what rank i sent. Shapes are unchanged.

    Example: `%y = texec.all_to_all %x group "dp" dim 0 : tensor<4x8xf32>`
  }];
  let arguments = (ins TExec_AnyTensor:$input, StrAttr:$group, I64Attr:$dim);
  let results = (outs TExec_AnyTensor:$result);
  let assemblyFormat = [{
    $input `group` $group `dim` $dim attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def TExec_SendOp : TExec_Op<"send"> {
  let summary = "Sends an activation or gradient to another model chunk";
  let description = [{
    Sends to the rank that holds model chunk `peer` (the adjacent chunk:
    the next one in a forward, the previous one in a backward), with the
    same dp and tp coordinates. Non-blocking: the schedule's order cannot
    deadlock (Schedule's validateSchedule) because only receives wait.

    Example: `texec.send %y to 1 : tensor<2x8x64xf32>`
  }];
  let arguments = (ins TExec_FloatTensor:$value, I64Attr:$peer);
  let assemblyFormat = "$value `to` $peer attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def TExec_RecvOp : TExec_Op<"recv"> {
  let summary = "Receives an activation or gradient from another model chunk";
  let description = [{
    Example: `%x = texec.recv from 0 : tensor<2x8x64xf32>`
  }];
  let arguments = (ins I64Attr:$peer);
  let results = (outs TExec_FloatTensor:$result);
  let assemblyFormat = "`from` $peer attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Step structure
//===----------------------------------------------------------------------===//

def TExec_ScheduleOp : TExec_Op<"schedule", [HasParent<"StageOp">]> {
  let summary = "The stage's ordered (forward/backward, micro-batch, chunk) list";
  let description = [{
    `actions` holds triples (kind, micro-batch, local chunk), kind 0 for a
    forward and 1 for a backward, in execution order: the list the
    Schedule library builds for this stage (`kind` names it), the same
    list the cost model simulates.

    `steps`, where present, groups the actions into communication steps
    (action counts, in order): after a step the stage sends what the
    step's actions produced together with the receives of the next step's
    actions, one group (Schedule library, `transferSteps`). Absent: one
    action per step. The interleaved schedule pairs each steady-state
    forward with its backward (Megatron-LM's
    send_forward_backward_recv_forward_backward).

    Example: `texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]`
  }];
  let arguments = (ins StrAttr:$kind, DenseI64ArrayAttr:$actions,
                       OptionalAttr<DenseI64ArrayAttr>:$steps);
  let assemblyFormat = "$kind $actions attr-dict";
  let hasVerifier = 1;
}

def TExec_GradAllReduceOp : TExec_Op<"grad_all_reduce", [HasParent<"StageOp">]> {
  let summary = "Sums parameter gradients over a named group";
  let description = [{
    After the schedule: sums the gradients of `params` (every parameter of
    the stage when `params` is absent) over `group`: data-parallel
    replicas, tensor-parallel ranks holding replicated parameters whose
    inputs were sequence shards, the two stages sharing a tied embedding.

    Example: `texec.grad_all_reduce group "dp"`
  }];
  let arguments = (ins StrAttr:$group, OptionalAttr<StrArrayAttr>:$params);
  let assemblyFormat = "`group` $group (`params` $params^)? attr-dict";
  let hasVerifier = 1;
}

def TExec_OptimizerOp : TExec_Op<"optimizer", [HasParent<"StageOp">]> {
  let summary = "Updates every parameter of the stage from its gradient";
  let description = [{
    `sgd` or `adam` (Kingma and Ba 2015, with bias correction). With
    `zero_stage` 1 the optimizer state is sharded over `group` (ZeRO-1,
    Rajbhandari et al. 2020): gradients are reduce-scattered, each rank
    updates its block, parameters are all-gathered. With 3 the parameters
    themselves are held sharded and gathered when used. 0: each rank
    updates the whole parameter (gradients already summed).

    Example:
    `texec.optimizer "adam" group "dp" zero 1 {lr = 1.0e-02 : f64, beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, eps = 1.0e-08 : f64}`
  }];
  let arguments = (ins StrAttr:$kind, StrAttr:$group, I64Attr:$zero_stage,
                       F64Attr:$lr, DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1.0e-8">:$eps);
  let assemblyFormat = "$kind `group` $group `zero` $zero_stage attr-dict";
  let hasVerifier = 1;
}

#endif // TRIDENT_DIALECTS_EXEC_IR_EXECOPS_TD
