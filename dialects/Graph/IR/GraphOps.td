//===- GraphOps.td - tgraph operations ----------------------*- tablegen -*-===//

#ifndef TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_TD
#define TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_TD

include "dialects/Graph/IR/GraphBase.td"
include "dialects/Graph/IR/GraphInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

/// Every tgraph op reports its cost. How ops split across devices is
/// upstream `shard`'s ShardingInterface, attached in
/// ShardingInterfaceImpl.cpp.
class TGraph_CostedOp<string mnemonic, list<Trait> traits = []>
    : TGraph_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<TGraph_CostOpInterface>])>;

/// A pure tensor computation.
class TGraph_ComputeOp<string mnemonic, list<Trait> traits = []>
    : TGraph_CostedOp<mnemonic, !listconcat(traits, [Pure])>;

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def TGraph_ModelOp : TGraph_CostedOp<"model", [
    IsolatedFromAbove, Symbol, SingleBlock, NoRegionArguments]> {
  let summary = "A model to be trained: the graph from inputs to the loss";
  let description = [{
    Holds one model. `seq_len` is the default sequence length (what dynamic
    dimension 1 takes unless a tool overrides it). The body computes the
    scalar training loss and ends with `tgraph.output`.

    Example:
    ```mlir
    tgraph.model @tiny attributes {seq_len = 32 : i64} {
      %ids = tgraph.input "tokens" : tensor<?x?xi32>
      ...
      tgraph.output %loss : tensor<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$seq_len);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def TGraph_OutputOp : TGraph_CostedOp<"output", [
    Terminator, HasParent<"ModelOp">, Pure]> {
  let summary = "The training loss of a model";
  let description = [{
    Ends a `tgraph.model`; its operand is the scalar loss.

    Example: `tgraph.output %loss : tensor<f32>`
  }];
  let arguments = (ins 0DTensorOf<[F32]>:$loss);
  let assemblyFormat = "$loss attr-dict `:` type($loss)";
}

def TGraph_InputOp : TGraph_ComputeOp<"input"> {
  let summary = "A named model input (token ids, labels, images, features)";
  let description = [{
    A per-sample input fed by the data loader. Its dimension 0 is the
    micro-batch.

    Example: `%ids = tgraph.input "tokens" : tensor<?x?xi32>`
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs TGraph_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TGraph_ParamOp : TGraph_ComputeOp<"param"> {
  let summary = "A trainable parameter";
  let description = [{
    A parameter tensor with a fully static shape. Inside a `tgraph.repeat`
    body it is one layer's copy: the model holds `count` of them.

    Example: `%w = tgraph.param "mlp.fc1" <mlp> : tensor<768x3072xbf16>`
  }];
  let arguments = (ins StrAttr:$name, TGraph_ParamKindAttr:$kind);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$name $kind attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TGraph_RepeatOp : TGraph_CostedOp<"repeat", [
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A stack of identical layers";
  let description = [{
    Runs its body `count` times, feeding each iteration's yielded values to
    the next. The body is one layer (or one period of a repeating pattern of
    layers); the parameters it defines are per iteration. A model whose
    layers differ (dense then MoE) uses several `tgraph.repeat` ops.

    Example:
    ```mlir
    %h = tgraph.repeat "layers" x 96 (%x) : (tensor<?x?x12288xbf16>) -> tensor<?x?x12288xbf16> {
    ^bb0(%a: tensor<?x?x12288xbf16>):
      ...
      tgraph.yield %y : tensor<?x?x12288xbf16>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$count,
                       Variadic<TGraph_AnyTensor>:$inits);
  let results = (outs Variadic<TGraph_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `x` $count `(` $inits `)` attr-dict `:`
    functional-type($inits, $results) $body
  }];
  let hasVerifier = 1;
}

def TGraph_YieldOp : TGraph_CostedOp<"yield", [
    Terminator, HasParent<"RepeatOp">, Pure, ReturnLike]> {
  let summary = "Values carried to the next iteration of a tgraph.repeat";
  let description = [{
    Example: `tgraph.yield %y : tensor<?x?x768xbf16>`
  }];
  let arguments = (ins Variadic<TGraph_AnyTensor>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def TGraph_EmbeddingOp : TGraph_ComputeOp<"embedding"> {
  let summary = "Token embedding lookup";
  let description = [{
    Gathers rows of `table` (vocab x hidden) for the ids. No FLOPs are
    counted for the lookup (Megatron convention); under tensor parallelism
    the table is split by vocabulary and the result all-reduced.

    Example:
    `%x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<256x64xf32>) -> tensor<?x?x64xf32>`
  }];
  let arguments = (ins TGraph_IndexTensor:$ids, TGraph_FloatTensor:$table);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_PositionEmbeddingOp : TGraph_ComputeOp<"position_embedding"> {
  let summary = "Adds a learned absolute position embedding";
  let description = [{
    `result[b, i, :] = x[b, i, :] + table[i, :]`; the table holds at least
    as many positions as the sequence.

    Example:
    `%y = tgraph.position_embedding %x, %wpe : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x64xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, TGraph_FloatTensor:$table);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_EmbeddingBagOp : TGraph_ComputeOp<"embedding_bag"> {
  let summary = "Pooled embedding lookup (DLRM sparse features)";
  let description = [{
    Sums (or averages, with `mean`) the rows of `table` named by each
    sample's bag of ids: `ids` is batch x bag, the result batch x dim.

    Example:
    `%e = tgraph.embedding_bag %ids, %t : (tensor<?x1xi64>, tensor<1000x128xf32>) -> tensor<?x128xf32>`
  }];
  let arguments = (ins TGraph_IndexTensor:$ids, TGraph_FloatTensor:$table,
                       UnitAttr:$mean);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_PatchEmbedOp : TGraph_ComputeOp<"patch_embed"> {
  let summary = "ViT patch embedding: non-overlapping patches to tokens";
  let description = [{
    Cuts `image` (batch x channels x height x width) into `patch` x `patch`
    squares and projects each with `weight` ((channels*patch*patch) x dim)
    and `bias`: a stride-`patch` convolution flattened to a token sequence.

    Example:
    `%t = tgraph.patch_embed %img, %w, %b {patch = 14 : i64} : (tensor<?x3x224x224xbf16>, tensor<588x1280xbf16>, tensor<1280xbf16>) -> tensor<?x256x1280xbf16>`
  }];
  let arguments = (ins TGraph_FloatTensor:$image, TGraph_FloatTensor:$weight,
                       Optional<TGraph_FloatTensor>:$bias, I64Attr:$patch);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $image `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_Conv2DOp : TGraph_ComputeOp<"conv2d"> {
  let summary = "2-D convolution (NCHW input, OIHW weight)";
  let description = [{
    Example:
    `%y = tgraph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : (tensor<?x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x32x32xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$input, TGraph_FloatTensor:$weight,
                       Optional<TGraph_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_PrependTokenOp : TGraph_ComputeOp<"prepend_token"> {
  let summary = "Prepends a learned token (ViT class token) to a sequence";
  let description = [{
    Example:
    `%y = tgraph.prepend_token %x, %cls : (tensor<?x256x1280xbf16>, tensor<1x1280xbf16>) -> tensor<?x257x1280xbf16>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, TGraph_FloatTensor:$token);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $token attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_SelectTokenOp : TGraph_ComputeOp<"select_token"> {
  let summary = "Takes one position of a sequence (class token, pooler)";
  let description = [{
    Example:
    `%c = tgraph.select_token %x {index = 0 : i64} : tensor<?x257x1280xbf16> -> tensor<?x1280xbf16>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, I64Attr:$index);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense compute
//===----------------------------------------------------------------------===//

def TGraph_LinearOp : TGraph_ComputeOp<"linear"> {
  let summary = "y = x W^T (+ b), weight stored as out_features x in_features";
  let description = [{
    `x` is (..., in), `weight` (out x in, the PyTorch `nn.Linear` layout, so
    a tied LM head uses the embedding table as is), `bias` (out). `tp` records the
    Megatron tensor-parallel role: `column` splits the output features,
    `row` the input features (then the output needs a reduction), `vocab`
    marks the LM head.

    Example:
    `%y = tgraph.linear %x, %w, %b tp <column> : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x?x256xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, TGraph_FloatTensor:$weight,
                       Optional<TGraph_FloatTensor>:$bias,
                       OptionalAttr<TGraph_TpRoleAttr>:$tp);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight (`,` $bias^)? (`tp` $tp^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    TpRole getTpRole() {
      return getTp() ? *getTp() : TpRole::None;
    }
  }];
}

def TGraph_MatmulOp : TGraph_ComputeOp<"matmul"> {
  let summary = "Batched matrix product (..., m, k) x (..., k, n)";
  let description = [{
    Leading dimensions must match.

    Example:
    `%c = tgraph.matmul %a, %b : (tensor<?x27x128xf32>, tensor<?x128x27xf32>) -> tensor<?x27x27xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$lhs, TGraph_FloatTensor:$rhs);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_AttentionOp : TGraph_ComputeOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention core (MHA, GQA, MQA)";
  let description = [{
    `softmax(Q K^T / sqrt(d)) V` over projected `q` (batch x seq x
    heads*head_dim), `k` (batch x seq x kv_heads*head_dim) and `v` (batch x
    seq x kv_heads*v_head_dim). `num_kv_heads` < `num_heads` is GQA (1 is
    MQA). `causal` masks the future, `window` > 0 limits attention to the
    last `window` positions, `rotary_dim` > 0 rotates that many dimensions
    of each q/k head (RoPE, base `rope_theta`, the "rotate half" pairing of
    GPT-NeoX and Llama; `rope_scaling`, when present, rescales its
    frequencies: `{type = "linear", factor}`, `{type = "llama3", factor,
    low_freq_factor, high_freq_factor, original_max_positions}` or
    `{type = "yarn", factor, original_max_positions, beta_fast, beta_slow,
    truncate, attention_factor}`, the formulas of rt::RopeScaling),
    `dropout` is the attention-probability dropout,
    and the optional `sinks` parameter holds one learned logit per head.
    With `rope_key` (multi-head latent attention, DeepSeek-V2/V3), `k`
    holds only the non-rotary part of each key head and `rope_key` (batch x
    seq x r) the rotary part shared by all heads: a key head is
    `head_dim - r` columns of `k` followed by `rope_key`; `rotary_dim` is
    then r and rotates the last r dimensions of every query and key head.
    `softmax_scale` replaces 1/sqrt(head_dim) (DeepSeek's YaRN checkpoints
    multiply it by mscale^2). `rope_interleaved` pairs the rotated
    dimensions 2i and 2i + 1 instead of i and i + rotary_dim / 2
    (DeepSeek's `rope_interleave`).
    FLOPs are counted over the full s x s score matrix (Megatron
    convention), whatever the mask.

    Example:
    `%o = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, causal} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$q, TGraph_FloatTensor:$k,
                       TGraph_FloatTensor:$v,
                       Optional<TGraph_FloatTensor>:$k_rope,
                       Optional<TGraph_FloatTensor>:$sinks,
                       I64Attr:$num_heads, I64Attr:$num_kv_heads,
                       I64Attr:$head_dim,
                       OptionalAttr<I64Attr>:$v_head_dim,
                       UnitAttr:$causal,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<I64Attr, "0">:$rotary_dim,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                       DefaultValuedAttr<F64Attr, "10000.0">:$rope_theta,
                       OptionalAttr<DictionaryAttr>:$rope_scaling,
                       OptionalAttr<F64Attr>:$softmax_scale,
                       UnitAttr:$rope_interleaved);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $v (`rope_key` $k_rope^)? (`sinks` $sinks^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getValueHeadDim() {
      return getVHeadDim() ? *getVHeadDim() : getHeadDim();
    }
    ::mlir::LogicalResult verifyRopeScaling(::mlir::DictionaryAttr rs);
  }];
}

def TGraph_LayerNormOp : TGraph_ComputeOp<"layer_norm"> {
  let summary = "Layer normalisation over the last dimension";
  let description = [{
    `zero_centered` stores gamma - 1 (Megatron's LayerNorm1p); `beta` is
    optional.

    Example:
    `%y = tgraph.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, TGraph_FloatTensor:$gamma,
                       Optional<TGraph_FloatTensor>:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps,
                       UnitAttr:$zero_centered);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma (`,` $beta^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_RMSNormOp : TGraph_ComputeOp<"rms_norm"> {
  let summary = "RMS normalisation over the last dimension";
  let description = [{
    Also used per head (q/k norms): then gamma has head_dim elements and
    the last dimension is a multiple of it.

    Example:
    `%y = tgraph.rms_norm %x, %g {eps = 1.0e-05 : f64} : (tensor<?x?x64xbf16>, tensor<64xbf16>) -> tensor<?x?x64xbf16>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, TGraph_FloatTensor:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$eps);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class TGraph_BinaryOp<string mnemonic, string what>
    : TGraph_ComputeOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "Elementwise " # what;
  let description = [{
    Operands and result share one type.

    Example: `%z = tgraph.}] # mnemonic # [{ %x, %y : tensor<?x?x64xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$lhs, TGraph_FloatTensor:$rhs);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def TGraph_AddOp : TGraph_BinaryOp<"add", "sum (residual connections)">;
def TGraph_MulOp : TGraph_BinaryOp<"mul", "product">;

class TGraph_UnaryOp<string mnemonic, string what, dag extraArgs = (ins)>
    : TGraph_ComputeOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = what;
  let description = [{
    Example: `%y = tgraph.}] # mnemonic # [{ %x : tensor<?x?x256xf32>`
  }];
  let arguments = !con((ins TGraph_FloatTensor:$x), extraArgs);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def TGraph_GeluOp : TGraph_UnaryOp<"gelu", "GeLU (tanh form with approximate)",
                                   (ins UnitAttr:$approximate)>;
def TGraph_SiluOp : TGraph_UnaryOp<"silu", "SiLU / swish">;
def TGraph_ReluOp : TGraph_UnaryOp<"relu", "ReLU">;
def TGraph_SquaredReluOp : TGraph_UnaryOp<"squared_relu",
                                          "Squared ReLU (Nemotron)">;
def TGraph_TanhOp : TGraph_UnaryOp<"tanh", "Hyperbolic tangent">;

class TGraph_GatedOp<string mnemonic, string what>
    : TGraph_ComputeOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = what;
  let description = [{
    `act(gate) * up`, the gated linear unit of the MLP.

    Example: `%h = tgraph.}] # mnemonic # [{ %gate, %up : tensor<?x?x256xbf16>`
  }];
  let arguments = (ins TGraph_FloatTensor:$gate, TGraph_FloatTensor:$up);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def TGraph_SwiGLUOp : TGraph_GatedOp<"swiglu", "silu(gate) * up">;
def TGraph_GeGLUOp : TGraph_GatedOp<"geglu", "gelu(gate) * up">;

def TGraph_SoftmaxOp : TGraph_ComputeOp<"softmax", [SameOperandsAndResultType]> {
  let summary = "Softmax over the last dimension";
  let description = [{
    Example: `%p = tgraph.softmax %x : tensor<?x10xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def TGraph_DropoutOp : TGraph_ComputeOp<"dropout", [SameOperandsAndResultType]> {
  let summary = "Dropout with probability `rate`";
  let description = [{
    Keeps a one-byte mask per element for the backward.

    Example: `%y = tgraph.dropout %x {rate = 1.0e-01 : f64} : tensor<?x?x64xf32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, F64Attr:$rate);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

def TGraph_MoEOp : TGraph_ComputeOp<"moe", [AttrSizedOperandSegments]> {
  let summary = "Routed mixture-of-experts MLP (router + N experts, top-k)";
  let description = [{
    A linear router (`router`: hidden x experts, optional bias) scores each
    token; the token goes to its `top_k` experts, each an MLP with input
    weights `w_in` (experts x hidden x ffn, or x 2*ffn when `gated`) and
    output weights `w_out` (experts x ffn x hidden), with optional biases.
    FLOPs count the router and the top-k experts of each token (balanced
    routing); under expert parallelism tokens are exchanged by all-to-all.
    The top-k weights are the chosen probabilities renormalised to sum to
    one (Mixtral), unless `unnormalized_topk` (Qwen-MoE's
    `norm_topk_prob: false`: the softmax probabilities themselves).
    `swiglu_limit` (gated SiLU only) is gpt-oss's clamped SwiGLU: gate
    clamped above and up clamped on both sides at the limit, then
    `(up + 1) * gate * sigmoid(1.702 * gate)`. `selection_bias` marks a
    router bias that only chooses the experts and does not weight them
    (DeepSeek-V3's `e_score_correction_bias`). DeepSeek-V3's router
    (`DeepseekV3TopkRouter`): `sigmoid_scores` scores each expert with a
    sigmoid instead of the softmax; with `num_groups` > 1 the experts form
    that many equal groups and a token's experts come from its
    `topk_groups` groups whose two best selection scores sum highest; the
    chosen weights (after any renormalisation) are multiplied by
    `routed_scale` (`routed_scaling_factor`).

    Example:
    `%y = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xbf16>, tensor<64x8xbf16>, tensor<8x64x512xbf16>, tensor<8x256x64xbf16>) -> tensor<?x?x64xbf16>`
  }];
  let arguments = (ins TGraph_FloatTensor:$x, TGraph_FloatTensor:$router,
                       Optional<TGraph_FloatTensor>:$router_bias,
                       TGraph_FloatTensor:$w_in, TGraph_FloatTensor:$w_out,
                       Optional<TGraph_FloatTensor>:$b_in,
                       Optional<TGraph_FloatTensor>:$b_out,
                       I64Attr:$num_experts, I64Attr:$top_k,
                       TGraph_ActKindAttr:$activation, UnitAttr:$gated,
                       UnitAttr:$unnormalized_topk,
                       OptionalAttr<F64Attr>:$swiglu_limit,
                       UnitAttr:$selection_bias,
                       UnitAttr:$sigmoid_scores,
                       DefaultValuedAttr<I64Attr, "1">:$num_groups,
                       DefaultValuedAttr<I64Attr, "1">:$topk_groups,
                       DefaultValuedAttr<F64Attr, "1.0">:$routed_scale);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $x `router` $router (`bias` $router_bias^)?
    `experts` `(` $w_in `,` $w_out `)`
    (`expert_bias` `(` $b_in^ `,` $b_out `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Heads and losses
//===----------------------------------------------------------------------===//

def TGraph_CrossEntropyOp : TGraph_ComputeOp<"cross_entropy"> {
  let summary = "Mean softmax cross-entropy of logits against labels";
  let description = [{
    `logits` is (..., classes), `labels` the matching integer tensor
    without the class dimension.

    Example:
    `%l = tgraph.cross_entropy %logits, %labels : (tensor<?x?x256xf32>, tensor<?x?xi32>) -> tensor<f32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$logits, TGraph_IndexTensor:$labels);
  let results = (outs 0DTensorOf<[F32]>:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_BinaryCrossEntropyOp : TGraph_ComputeOp<"binary_cross_entropy"> {
  let summary = "Mean sigmoid binary cross-entropy (click prediction)";
  let description = [{
    Example:
    `%l = tgraph.binary_cross_entropy %logit, %label : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>`
  }];
  let arguments = (ins TGraph_FloatTensor:$logits, TGraph_FloatTensor:$labels);
  let results = (outs 0DTensorOf<[F32]>:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TGraph_DotInteractionOp : TGraph_ComputeOp<"dot_interaction"> {
  let summary = "DLRM pairwise dot-product feature interaction";
  let description = [{
    Given F feature vectors (batch x dim each; the first is the dense
    feature), returns the first one concatenated with the F(F-1)/2 pairwise
    dot products (batch x (dim + F(F-1)/2)).

    Example:
    `%z = tgraph.dot_interaction %d, %e0, %e1 : (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x19xf32>`
  }];
  let arguments = (ins Variadic<TGraph_FloatTensor>:$features);
  let results = (outs TGraph_FloatTensor:$result);
  let assemblyFormat = [{
    $features attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // TRIDENT_DIALECTS_GRAPH_IR_GRAPHOPS_TD
