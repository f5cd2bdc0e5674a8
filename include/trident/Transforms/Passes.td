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

#endif // TRIDENT_TRANSFORMS_PASSES_TD
