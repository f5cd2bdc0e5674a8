//===- Passes.td - Trident passes ---------------------------*- tablegen -*-===//

#ifndef TRIDENT_TRANSFORMS_PASSES_TD
#define TRIDENT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AnnotateCostsPass : Pass<"trident-annotate-costs",
                             "::mlir::trident::graph::ModelOp"> {
  let summary = "Attach each op's cost (CostOpInterface) as attributes";
  let description = [{
    Evaluates every op's cost at the given micro-batch and sequence length
    and attaches it as a `tgraph.cost` dictionary: `fwd_flops`, `bwd_flops`,
    `bytes_read`, `bytes_written`, `params`, and the activation bytes kept
    under each recompute policy (`saved_none`, `saved_selective`,
    `saved_full`). A `tgraph.repeat` carries the cost of all its iterations;
    the model carries the total. Also writes the model totals per token
    (`tgraph.flops_per_token`).
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"1",
           "micro-batch size bound to dynamic dimension 0">,
    Option<"seqLen", "seq-len", "int64_t", /*default=*/"0",
           "sequence length bound to dynamic dimension 1 (0: the model's)">
  ];
  let dependentDialects = ["::mlir::trident::graph::TGraphDialect"];
}

def PlanPass : Pass<"trident-plan", "::mlir::trident::graph::ModelOp"> {
  let summary = "Search the plan space and attach the best plan";
  let description = [{
    Analyses the model into a LayerProfile, runs the planner (the search of
    `trident plan`) on the given cluster and attaches the best plan:
    `tgraph.plan` on the model (parallel sizes, micro-batching, recompute,
    ZeRO stage, schedule, layers per pipeline chunk and the predicted step
    time, throughput, MFU and peak memory), and `tgraph.stage` on every
    `tgraph.repeat`: the pipeline stage of each of its iterations. Options
    mirror `trident plan`. When nothing fits, the pass fails with the
    planner's message.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"",
           "PRESET:NODES (e.g. dgx-h100:4) or a cluster.json path">,
    Option<"globalBatch", "global-batch", "int64_t", /*default=*/"0",
           "sequences per optimizer step">,
    Option<"seqLen", "seq-len", "int64_t", /*default=*/"0",
           "sequence length (0: the model's)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "bf16, fp16, fp8 or fp32">,
    Option<"fix", "fix", "std::string", /*default=*/"",
           "pinned axes, e.g. tp=8,pp=4">,
    Option<"maxMemoryFraction", "max-memory-fraction", "double",
           /*default=*/"1.0", "fraction of each GPU's memory a plan may use">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "search threads (the result does not depend on it)">
  ];
  let dependentDialects = ["::mlir::trident::graph::TGraphDialect"];
}

def ApplyPlanPass : Pass<"trident-apply-plan",
                         "::mlir::trident::graph::ModelOp"> {
  let summary = "Read a trident.plan/v1 JSON onto the model";
  let description = [{
    The reverse of `trident-plan`: reads a plan written by `trident plan -o`
    and attaches the same `tgraph.plan` and `tgraph.stage` attributes. The
    plan is held to the model first (`plan::verify`): a plan made for
    another model (name, layer count, recorded shape) or another sequence
    length is refused, naming both sides; with `cluster`, so is a plan for
    another number of GPUs.
  }];
  let options = [
    Option<"planFile", "plan", "std::string", /*default=*/"",
           "plan JSON file">,
    Option<"cluster", "cluster", "std::string", /*default=*/"",
           "PRESET:NODES or a cluster.json the plan must fit (optional)">
  ];
  let dependentDialects = ["::mlir::trident::graph::TGraphDialect"];
}

#endif // TRIDENT_TRANSFORMS_PASSES_TD
