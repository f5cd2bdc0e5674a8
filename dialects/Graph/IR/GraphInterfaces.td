//===- GraphInterfaces.td - cost and parallelism interfaces -*- tablegen -*-===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHINTERFACES_TD
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHINTERFACES_TD

include "mlir/IR/OpBase.td"

def TGraph_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::trident::graph";
  let description = [{
    The cost of one execution of the op as a function of the micro-batch
    and sequence sizes that the symbolic dimensions take (`CostContext`):
    model FLOPs forward and backward (every matmul counted as 2*m*n*k,
    attention over the full s x s matrix, elementwise work not counted),
    bytes read and written by the forward, the parameter elements the op
    uses, and the activation bytes it keeps for its backward under each
    recompute policy (none; selective, where the attention core is
    recomputed; full, where only layer inputs are kept by the enclosing
    `tgraph.repeat`).
  }];
  let methods = [
    InterfaceMethod<"Cost of one forward/backward execution.",
      "::mlir::trident::graph::OpCost", "getCost",
      (ins "const ::mlir::trident::graph::CostContext &":$ctx)>
  ];
}

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHINTERFACES_TD
