//===- Passes.td - Trident's lowerings ----------------------*- tablegen -*-===//
//
// The lowerings of a planned tgraph model: to the per-rank execution
// dialect (texec) and to upstream `shard` + `linalg` IR. Both read the
// plan the model carries (`#tgraph.plan`, attached by trident-plan or
// trident-apply-plan) through one converter (Conversion/PlanAttr).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CONVERSION_PASSES_TD
#define TRIDENT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToTexecPass : Pass<"trident-lower-to-texec", "::mlir::ModuleOp"> {
  let summary = "Lower a planned tgraph model to a texec program";
  let description = [{
    Replaces the module's `tgraph.model` that carries a plan (`tgraph.plan`)
    with the `texec.program` of one training step under that plan: the
    forward, the loss, the backward (autodiff), the gradient collectives and
    the optimizer, for every rank of dp x cp x tp x pp (docs/texec.md). The
    plan is held to the model first (`plan::verify`). `trident emit` runs
    `tgraph.model(trident-apply-plan{plan=P}),trident-lower-to-texec` and
    translates the result to C++.

    Example: `trident-opt m.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=plan.json}),trident-lower-to-texec{optimizer=sgd lr=0.1})'`.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "adam or sgd">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "learning rate">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "fp32 or bf16 (empty: the plan's precision)">,
    Option<"trainInF32", "train-in-f32", "bool", /*default=*/"false",
           "the same as precision=fp32">,
    Option<"moeBiasRate", "moe-bias-rate", "double", /*default=*/"1e-3",
           "step of DeepSeek-V3's auxiliary-loss-free load balancing">
  ];
  let dependentDialects = ["::mlir::trident::exec::TExecDialect"];
}

def ExportShardPass : Pass<"trident-export-shard", "::mlir::ModuleOp"> {
  let summary = "Materialise a plan as upstream shard/linalg IR";
  let description = [{
    Replaces every `tgraph.model` that carries a plan (`tgraph.plan`, from
    `trident-plan` or `trident-apply-plan`) with upstream-only IR: a
    `shard.grid @grid` built from the plan's dp, cp and tp sizes, and one
    `func.func` per pipeline chunk whose body is the model's forward pass in
    `linalg`, `tensor`, `arith` and `math`, with `tgraph.repeat` layers
    expanded. Parameters and activations carry `shard.shard` annotations
    that follow Megatron-LM's rules (column-parallel QKV and MLP-up,
    row-parallel attention-out and MLP-down, vocabulary-parallel embedding
    and head, batch over dp, sequence over cp and, with sequence
    parallelism, over tp). The output parses in upstream `mlir-opt` and
    partitions with `sharding-propagation` and `shard-partition`. See
    docs/shard-export.md.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "batch bound to dimension 0 (0: dp x the plan's micro-batch size)">,
    Option<"seqLen", "seq-len", "int64_t", /*default=*/"0",
           "sequence length bound to dimension 1 (0: the model's)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect"
  ];
}

def ShardTGraphPass : Pass<"trident-shard-tgraph", "::mlir::ModuleOp"> {
  let summary = "Outline a planned tgraph model for upstream partitioning";
  let description = [{
    Replaces the module's planned `tgraph.model` with a `shard.grid @grid`
    (the plan's dp and tp sizes) and one `func.func` of tgraph ops: the
    `tgraph.repeat` layers unrolled, the inputs and every layer's
    parameters as arguments (named by a `tgraph.name` argument
    attribute), sizes bound to dp x the plan's micro-batch and the
    sequence length. Only the plan's own decisions are annotated: the
    inputs split over dp on dimension 0, and each tensor-parallel linear's
    weight (and a column linear's bias) split over tp by its `tp` role
    (column and vocab: rows of the weight; row: its columns). Upstream
    `sharding-propagation` then carries the shardings through every op by
    the ops' ShardingInterface rules (dialects/Graph/IR/
    ShardingInterfaceImpl.cpp) and `shard-partition` rewrites the function
    into the per-device program. Refused: pipeline stages (pp > 1),
    context and sequence parallelism, expert parallelism, and experts
    split over tp (etp > 1). See docs/shard-export.md.

    Example: `trident-opt m.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=plan.json}),trident-shard-tgraph,func.func(sharding-propagation,shard-partition,canonicalize))'`.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // TRIDENT_CONVERSION_PASSES_TD
