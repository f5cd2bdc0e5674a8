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
//===----------------------------------------------------------------------===//
// The plan a model carries
//===----------------------------------------------------------------------===//

class TGraph_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TGraph_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def TGraph_PlanAttr : TGraph_Attr<"Plan", "plan"> {
  let summary = "A parallel plan attached to a model";
  let description = [{
    What `trident-plan` and `trident-apply-plan` attach to a `tgraph.model`
    (as its `tgraph.plan` attribute) and what `trident-lower-to-texec` and
    `trident-export-shard` read: the plan record of
    `include/trident/Plan/Plan.h` in IR form. One converter goes both ways
    (`include/trident/Conversion/PlanAttr/PlanAttr.h`); it holds the plan
    to the model with `plan::verify` before a pass uses it.

    `axes` holds the parallel axes under the JSON keys of the axis table
    (`kAxes`, `include/trident/Plan/Parallel.h`), so that the axes are
    named in one place, not again here; an axis left out has its default.
    `stage_recompute` is each pipeline stage's recomputation (absent: the
    plan's `recompute` for every stage), `model_shape` the model's layers,
    hidden size, vocabulary and parameters as the plan recorded them
    (absent: unknown), `predicted` the cost model's step time, throughput,
    MFU and peak memory (absent: none). `gpus` 0 means unknown.

    Example:

    ```mlir
    #tgraph.plan<model = "tiny_gpt", seq_len = 32, gpus = 8,
      precision = "bf16", runtime = "megatron-core", global_batch = 16,
      num_micro_batches = 1,
      axes = {cp = 1 : i64, dp = 2 : i64, ep = 1 : i64, etp = 2 : i64,
              micro_batch_size = 8 : i64, pp = 2 : i64, recompute = "none",
              schedule = "1f1b", sequence_parallel = false, tp = 2 : i64,
              vpp = 1 : i64, zero_stage = 3 : i64},
      layers_per_chunk = array<i64: 2, 2>, stage_recompute = ["none", "none"],
      model_shape = array<i64: 4, 64, 256, 218496>,
      predicted = {iteration_time_s = 8.1e-04 : f64, mfu = 8.6e-05 : f64,
                   peak_memory_bytes = 1.0e+09 : f64,
                   tokens_per_s = 6.3e+05 : f64}>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the model the plan was made for">:$model,
    "int64_t":$seq_len,
    DefaultValuedParameter<"int64_t", "0",
                           "GPUs the plan uses (0: unknown)">:$gpus,
    StringRefParameter<"bf16, fp16, fp8 or fp32", "\"bf16\"">:$precision,
    StringRefParameter<"the training software of the prediction",
                       "\"megatron-core\"">:$runtime,
    "int64_t":$global_batch,
    "int64_t":$num_micro_batches,
    "::mlir::DictionaryAttr":$axes,
    "::mlir::DenseI64ArrayAttr":$layers_per_chunk,
    OptionalParameter<"::mlir::ArrayAttr">:$stage_recompute,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$model_shape,
    OptionalParameter<"::mlir::DictionaryAttr">:$predicted
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TGraph_GraphOpTrait : NativeOpTrait<"GraphOpTrait"> {
  let cppNamespace = "::mlir::trident::graph";
}

class TGraph_Op<string mnemonic, list<Trait> traits = []>
    : Op<TGraph_Dialect, mnemonic, !listconcat(traits, [TGraph_GraphOpTrait])>;

def TGraph_FloatTensor : RankedTensorOf<[BF16, F16, F32, F8E4M3FN]>;
def TGraph_IndexTensor : RankedTensorOf<[I32, I64]>;
def TGraph_AnyTensor : RankedTensorOf<[BF16, F16, F32, F8E4M3FN, I32, I64]>;

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHBASE_TD
