//===- GraphBase.td - tgraph dialect, base op, enums -------*- tablegen -*-===//
//
// The training-graph dialect: a model as a graph of coarse ops (linear,
// attention, norms, MoE, ...) whose activations carry a symbolic batch (dim
// 0) and sequence (dim 1) size, with parameters as explicit values.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHBASE_TD
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/CommonAttrConstraints.td"

def TGraph_Dialect : Dialect {
  let name = "tgraph";
  let cppNamespace = "::mlir::trident::graph";
  let summary = "Training model graphs whose ops know their costs";
  let description = [{
    `tgraph` holds a model to be trained as a graph of coarse operations.
    Conventions, checked by every op's verifier (the `GraphOpTrait`):

    * Activations are ranked tensors. A dynamic size may appear only in
      dimension 0 (the micro-batch) and dimension 1 (the sequence); every
      other dimension is static, so costs are exact functions of the
      micro-batch and sequence sizes.
    * Floating-point tensors use bf16, f16, f32 or f8E4M3FN (fp8).
    * Parameters are `tgraph.param` values with fully static shapes.
    * A stack of identical layers is one `tgraph.repeat` whose body is one
      layer, executed `count` times.
  }];
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def TGraph_ParamKind : I32EnumAttr<"ParamKind",
    "What a parameter belongs to (for reports and memory placement)", [
  I32EnumAttrCase<"Embedding", 0, "embedding">,
  I32EnumAttrCase<"Attention", 1, "attention">,
  I32EnumAttrCase<"Mlp", 2, "mlp">,
  I32EnumAttrCase<"Expert", 3, "expert">,
  I32EnumAttrCase<"Router", 4, "router">,
  I32EnumAttrCase<"Norm", 5, "norm">,
  I32EnumAttrCase<"Head", 6, "head">,
  I32EnumAttrCase<"Other", 7, "other">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::trident::graph";
}
def TGraph_ParamKindAttr
    : EnumAttr<TGraph_Dialect, TGraph_ParamKind, "param_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

def TGraph_TpRole : I32EnumAttr<"TpRole",
    "How a linear layer splits under Megatron tensor parallelism", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"Column", 1, "column">,
  I32EnumAttrCase<"Row", 2, "row">,
  I32EnumAttrCase<"Vocab", 3, "vocab">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::trident::graph";
}
def TGraph_TpRoleAttr : EnumAttr<TGraph_Dialect, TGraph_TpRole, "tp"> {
  let assemblyFormat = "`<` $value `>`";
}

def TGraph_ActKind : I32EnumAttr<"ActKind", "Pointwise activation", [
  I32EnumAttrCase<"Gelu", 0, "gelu">,
  I32EnumAttrCase<"GeluTanh", 1, "gelu_tanh">,
  I32EnumAttrCase<"Silu", 2, "silu">,
  I32EnumAttrCase<"Relu", 3, "relu">,
  I32EnumAttrCase<"Relu2", 4, "relu2">,
  I32EnumAttrCase<"Tanh", 5, "tanh">,
  I32EnumAttrCase<"Sigmoid", 6, "sigmoid">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::trident::graph";
}
def TGraph_ActKindAttr : EnumAttr<TGraph_Dialect, TGraph_ActKind, "act"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Base op
//===----------------------------------------------------------------------===//

/// Dialect-wide rules (dynamic dims only at 0 and 1, allowed element
/// types), verified once for every op.
def TGraph_GraphOpTrait : NativeOpTrait<"GraphOpTrait"> {
  let cppNamespace = "::mlir::trident::graph";
}

class TGraph_Op<string mnemonic, list<Trait> traits = []>
    : Op<TGraph_Dialect, mnemonic, !listconcat(traits, [TGraph_GraphOpTrait])>;

def TGraph_FloatTensor : RankedTensorOf<[BF16, F16, F32, F8E4M3FN]>;
def TGraph_IndexTensor : RankedTensorOf<[I32, I64]>;
def TGraph_AnyTensor : RankedTensorOf<[BF16, F16, F32, F8E4M3FN, I32, I64]>;

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHBASE_TD
