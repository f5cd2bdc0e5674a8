//===- ExecBase.td - texec dialect and base op --------------*- tablegen -*-===//
//
// The per-rank execution dialect: one SPMD program that every rank of a
// (dp, tp, pp) grid runs, with static local shapes, kernels on local shards,
// collectives over named groups, point-to-point transfers between pipeline
// stages, the pipeline schedule and the optimizer step. docs/texec.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_DIALECTS_EXEC_IR_EXECBASE_TD
#define TRIDENT_DIALECTS_EXEC_IR_EXECBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/EnumAttr.td"

def TExec_Dialect : Dialect {
  let name = "texec";
  let cppNamespace = "::mlir::trident::exec";
  let summary = "One rank's training program: kernels, collectives, schedule";
  let description = [{
    `texec` is what a plan becomes: the program a single rank runs. It is
    SPMD: every rank runs the same `texec.program`; a rank executes the
    `texec.stage` whose index is its pipeline coordinate, and reads its
    other grid coordinates (dp, tp) at run time to pick its shards.
    Conventions, checked by every op (the `ExecOpTrait`):

    * Every tensor has a fully static shape: the local shard a rank holds.
    * Float tensors are f32 (the backends run fp32), ids are i32.
  }];
}

/// Dialect-wide rules: static shapes; f32 / i32 element types.
//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

// The runtime kernels a texec.kernel op calls: the op's kind, so that the
// verifier and the C++ emitter dispatch on it (a switch the compiler holds
// to every case), not on compared strings. The arity and config keys of
// each kind are the kernel table of ExecOps.cpp, in this order.
def TExec_KernelKind : I32EnumAttr<"KernelKind", "A runtime kernel", [
  I32EnumAttrCase<"Embedding", 0, "embedding">,
  I32EnumAttrCase<"EmbeddingPos", 1, "embedding_pos">,
  I32EnumAttrCase<"EmbeddingBwd", 2, "embedding_bwd">,
  I32EnumAttrCase<"EmbeddingPosBwd", 3, "embedding_pos_bwd">,
  I32EnumAttrCase<"LayerNorm", 4, "layer_norm">,
  I32EnumAttrCase<"LayerNormBwd", 5, "layer_norm_bwd">,
  I32EnumAttrCase<"RmsNorm", 6, "rms_norm">,
  I32EnumAttrCase<"RmsNormBwd", 7, "rms_norm_bwd">,
  I32EnumAttrCase<"Linear", 8, "linear">,
  I32EnumAttrCase<"LinearBias", 9, "linear_bias">,
  I32EnumAttrCase<"LinearBwd", 10, "linear_bwd">,
  I32EnumAttrCase<"LinearBiasBwd", 11, "linear_bias_bwd">,
  I32EnumAttrCase<"Gelu", 12, "gelu">,
  I32EnumAttrCase<"GeluBwd", 13, "gelu_bwd">,
  I32EnumAttrCase<"Silu", 14, "silu">,
  I32EnumAttrCase<"SiluBwd", 15, "silu_bwd">,
  I32EnumAttrCase<"Relu", 16, "relu">,
  I32EnumAttrCase<"ReluBwd", 17, "relu_bwd">,
  I32EnumAttrCase<"SquaredRelu", 18, "squared_relu">,
  I32EnumAttrCase<"SquaredReluBwd", 19, "squared_relu_bwd">,
  I32EnumAttrCase<"Tanh", 20, "tanh">,
  I32EnumAttrCase<"TanhBwd", 21, "tanh_bwd">,
  I32EnumAttrCase<"Swiglu", 22, "swiglu">,
  I32EnumAttrCase<"SwigluBwd", 23, "swiglu_bwd">,
  I32EnumAttrCase<"Add", 24, "add">,
  I32EnumAttrCase<"Mul", 25, "mul">,
  I32EnumAttrCase<"Rope", 26, "rope">,
  I32EnumAttrCase<"RopeBwd", 27, "rope_bwd">,
  I32EnumAttrCase<"Attention", 28, "attention">,
  I32EnumAttrCase<"AttentionBwd", 29, "attention_bwd">,
  I32EnumAttrCase<"AttentionSinks", 30, "attention_sinks">,
  I32EnumAttrCase<"AttentionSinksBwd", 31, "attention_sinks_bwd">,
  I32EnumAttrCase<"LatentKey", 32, "latent_key">,
  I32EnumAttrCase<"LatentKeyBwd", 33, "latent_key_bwd">,
  I32EnumAttrCase<"Dropout", 34, "dropout">,
  I32EnumAttrCase<"DropoutBwd", 35, "dropout_bwd">,
  I32EnumAttrCase<"Moe", 36, "moe">,
  I32EnumAttrCase<"MoeBwd", 37, "moe_bwd">,
  I32EnumAttrCase<"MoeRouterBwd", 38, "moe_router_bwd">,
  I32EnumAttrCase<"MoeBiased", 39, "moe_biased">,
  I32EnumAttrCase<"MoeBiasedBwd", 40, "moe_biased_bwd">,
  I32EnumAttrCase<"MoeRouterBiasedBwd", 41, "moe_router_biased_bwd">,
  I32EnumAttrCase<"MoeSelected", 42, "moe_selected">,
  I32EnumAttrCase<"MoeSelectedBwd", 43, "moe_selected_bwd">,
  I32EnumAttrCase<"MoeRouterSelectedBwd", 44, "moe_router_selected_bwd">,
  I32EnumAttrCase<"PatchEmbed", 45, "patch_embed">,
  I32EnumAttrCase<"PatchEmbedBwd", 46, "patch_embed_bwd">,
  I32EnumAttrCase<"SeqSlice", 47, "seq_slice">,
  I32EnumAttrCase<"PrependToken", 48, "prepend_token">,
  I32EnumAttrCase<"PrependTokenBwd", 49, "prepend_token_bwd">,
  I32EnumAttrCase<"PositionAdd", 50, "position_add">,
  I32EnumAttrCase<"PositionAddBwd", 51, "position_add_bwd">,
  I32EnumAttrCase<"SelectToken", 52, "select_token">,
  I32EnumAttrCase<"SelectTokenBwd", 53, "select_token_bwd">,
  I32EnumAttrCase<"CrossEntropy", 54, "cross_entropy">,
  I32EnumAttrCase<"CrossEntropyBwd", 55, "cross_entropy_bwd">,
  I32EnumAttrCase<"BagPool", 56, "bag_pool">,
  I32EnumAttrCase<"BagPoolBwd", 57, "bag_pool_bwd">,
  I32EnumAttrCase<"DotInteraction", 58, "dot_interaction">,
  I32EnumAttrCase<"DotInteractionBwd", 59, "dot_interaction_bwd">,
  I32EnumAttrCase<"BinaryCrossEntropy", 60, "binary_cross_entropy">,
  I32EnumAttrCase<"BinaryCrossEntropyBwd", 61, "binary_cross_entropy_bwd">
]> {
  let cppNamespace = "::mlir::trident::exec";
}

def TExec_ExecOpTrait : NativeOpTrait<"ExecOpTrait"> {
  let cppNamespace = "::mlir::trident::exec";
}

class TExec_Op<string mnemonic, list<Trait> traits = []>
    : Op<TExec_Dialect, mnemonic, !listconcat(traits, [TExec_ExecOpTrait])>;

def TExec_FloatTensor : RankedTensorOf<[F32]>;
def TExec_IdTensor : RankedTensorOf<[I32]>;
def TExec_AnyTensor : RankedTensorOf<[F32, I32]>;

#endif // TRIDENT_DIALECTS_EXEC_IR_EXECBASE_TD
