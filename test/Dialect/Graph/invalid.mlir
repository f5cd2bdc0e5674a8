// RUN: trident-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the tgraph verifiers (generated list kept by hand).

func.func @dyn_dim(%x: tensor<?x?x?xf32>) {
  // expected-error@+1 {{operand #0 has a dynamic size in dimension 2}}
  %0 = tgraph.gelu %x : tensor<?x?x?xf32>
  return
}

// -----

func.func @input_name() {
  // expected-error@+1 {{name must not be empty}}
  %0 = tgraph.input "" : tensor<?x?xi32>
  return
}

// -----

func.func @input_batch() {
  // expected-error@+1 {{input must have a dynamic batch dimension 0}}
  %0 = tgraph.input "x" : tensor<4x?xi32>
  return
}

// -----

func.func @param_name() {
  // expected-error@+1 {{name must not be empty}}
  %0 = tgraph.param "" <mlp> : tensor<4xf32>
  return
}

// -----

func.func @param_static() {
  // expected-error@+1 {{must have a static shape}}
  %0 = tgraph.param "w" <mlp> : tensor<?x4xf32>
  return
}

// -----

func.func @param_empty() {
  // expected-error@+1 {{must have at least one element}}
  %0 = tgraph.param "w" <mlp> : tensor<0x4xf32>
  return
}

// -----

func.func @embedding_rank(%i: tensor<?x?xi32>, %t: tensor<4xf32>) {
  // expected-error@+1 {{table must have rank 2, got 1}}
  %0 = tgraph.embedding %i, %t : (tensor<?x?xi32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @embedding_result_rank(%i: tensor<?x?xi32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{result rank must be ids rank + 1}}
  %0 = tgraph.embedding %i, %t : (tensor<?x?xi32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @embedding_width(%i: tensor<?x?xi32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{result width 5 does not match table width 4}}
  %0 = tgraph.embedding %i, %t : (tensor<?x?xi32>, tensor<8x4xf32>) -> tensor<?x?x5xf32>
  return
}

// -----

func.func @embedding_elem(%i: tensor<?x?xi32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{result element type must match the table}}
  %0 = tgraph.embedding %i, %t : (tensor<?x?xi32>, tensor<8x4xf32>) -> tensor<?x?x4xbf16>
  return
}

// -----

func.func @embedding_dim(%i: tensor<?x3xi32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{result dimension 1 does not match ids}}
  %0 = tgraph.embedding %i, %t : (tensor<?x3xi32>, tensor<8x4xf32>) -> tensor<?x5x4xf32>
  return
}

// -----

func.func @pos_rank(%x: tensor<?x4xf32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{x must have rank 3, got 2}}
  %0 = tgraph.position_embedding %x, %t : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @pos_width(%x: tensor<?x?x4xf32>, %t: tensor<8x5xf32>) {
  // expected-error@+1 {{table width 5 does not match hidden size 4}}
  %0 = tgraph.position_embedding %x, %t : (tensor<?x?x4xf32>, tensor<8x5xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @pos_long(%x: tensor<?x9x4xf32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{sequence 9 is longer than the table's 8 positions}}
  %0 = tgraph.position_embedding %x, %t : (tensor<?x9x4xf32>, tensor<8x4xf32>) -> tensor<?x9x4xf32>
  return
}

// -----

func.func @pos_result(%x: tensor<?x?x4xf32>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{result type must equal x's type}}
  %0 = tgraph.position_embedding %x, %t : (tensor<?x?x4xf32>, tensor<8x4xf32>) -> tensor<?x8x4xf32>
  return
}

// -----

func.func @bag_rank(%i: tensor<?xi64>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{ids must have rank 2, got 1}}
  %0 = tgraph.embedding_bag %i, %t : (tensor<?xi64>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @bag_width(%i: tensor<?x2xi64>, %t: tensor<8x4xf32>) {
  // expected-error@+1 {{result width must equal the table width}}
  %0 = tgraph.embedding_bag %i, %t : (tensor<?x2xi64>, tensor<8x4xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @patch_rank(%i: tensor<?x8x8xf32>, %w: tensor<48x16xf32>) {
  // expected-error@+1 {{image must have rank 4, got 3}}
  %0 = tgraph.patch_embed %i, %w {patch = 4 : i64} : (tensor<?x8x8xf32>, tensor<48x16xf32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @patch_zero(%i: tensor<?x3x8x8xf32>, %w: tensor<48x16xf32>) {
  // expected-error@+1 {{patch must be positive, got 0}}
  %0 = tgraph.patch_embed %i, %w {patch = 0 : i64} : (tensor<?x3x8x8xf32>, tensor<48x16xf32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @patch_multiple(%i: tensor<?x3x9x8xf32>, %w: tensor<48x16xf32>) {
  // expected-error@+1 {{image 9x8 is not a multiple of the patch 4}}
  %0 = tgraph.patch_embed %i, %w {patch = 4 : i64} : (tensor<?x3x9x8xf32>, tensor<48x16xf32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @patch_rows(%i: tensor<?x3x8x8xf32>, %w: tensor<40x16xf32>) {
  // expected-error@+1 {{weight rows must be channels*patch*patch = 48, got 40}}
  %0 = tgraph.patch_embed %i, %w {patch = 4 : i64} : (tensor<?x3x8x8xf32>, tensor<40x16xf32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @patch_result(%i: tensor<?x3x8x8xf32>, %w: tensor<48x16xf32>) {
  // expected-error@+1 {{result must be batch x 4 x 16}}
  %0 = tgraph.patch_embed %i, %w {patch = 4 : i64} : (tensor<?x3x8x8xf32>, tensor<48x16xf32>) -> tensor<?x5x16xf32>
  return
}

// -----

func.func @conv_rank(%i: tensor<?x3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{input must have rank 4, got 3}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : (tensor<?x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  return
}

// -----

func.func @conv_count(%i: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{strides and padding need two values each}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 1>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  return
}

// -----

func.func @conv_stride(%i: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{strides must be positive}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 0, 1>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  return
}

// -----

func.func @conv_pad(%i: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{padding must not be negative}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 1, 1>, padding = array<i64: -1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  return
}

// -----

func.func @conv_channels(%i: tensor<?x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{weight input channels 2 do not match input channels 3}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x8x8xf32>
  return
}

// -----

func.func @conv_spatial(%i: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{result spatial dimension 0 must be 8, got 7}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x7x8xf32>
  return
}

// -----

func.func @conv_out(%i: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{result channels must equal weight outputs}}
  %0 = tgraph.conv2d %i, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x5x8x8xf32>
  return
}

// -----

func.func @prepend_rank(%x: tensor<?x4xf32>, %t: tensor<1x4xf32>) {
  // expected-error@+1 {{x must have rank 3, got 2}}
  %0 = tgraph.prepend_token %x, %t : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @prepend_width(%x: tensor<?x3x4xf32>, %t: tensor<1x5xf32>) {
  // expected-error@+1 {{token width must equal the hidden size}}
  %0 = tgraph.prepend_token %x, %t : (tensor<?x3x4xf32>, tensor<1x5xf32>) -> tensor<?x4x4xf32>
  return
}

// -----

func.func @prepend_seq(%x: tensor<?x3x4xf32>, %t: tensor<1x4xf32>) {
  // expected-error@+1 {{result sequence must be x's plus 1}}
  %0 = tgraph.prepend_token %x, %t : (tensor<?x3x4xf32>, tensor<1x4xf32>) -> tensor<?x3x4xf32>
  return
}

// -----

func.func @select_rank(%x: tensor<?x4xf32>) {
  // expected-error@+1 {{x must have rank 3}}
  %0 = tgraph.select_token %x {index = 0 : i64} : tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @select_index(%x: tensor<?x3x4xf32>) {
  // expected-error@+1 {{index 3 is out of range}}
  %0 = tgraph.select_token %x {index = 3 : i64} : tensor<?x3x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @select_result(%x: tensor<?x3x4xf32>) {
  // expected-error@+1 {{result must be batch x hidden}}
  %0 = tgraph.select_token %x {index = 0 : i64} : tensor<?x3x4xf32> -> tensor<?x5xf32>
  return
}

// -----

func.func @linear_rank(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error@+1 {{weight must have rank 2, got 1}}
  %0 = tgraph.linear %x, %w : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<?x?x64xf32>, %w: tensor<32x16xf32>) {
  // expected-error@+1 {{input features 64 do not match weight columns 16}}
  %0 = tgraph.linear %x, %w : (tensor<?x?x64xf32>, tensor<32x16xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<?x?x64xf32>, %w: tensor<32x64xf32>) {
  // expected-error@+1 {{result must be (..., 32)}}
  %0 = tgraph.linear %x, %w : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @linear_dim(%x: tensor<?x3x64xf32>, %w: tensor<32x64xf32>) {
  // expected-error@+1 {{result dimension 1 does not match x}}
  %0 = tgraph.linear %x, %w : (tensor<?x3x64xf32>, tensor<32x64xf32>) -> tensor<?x4x32xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x?x64xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) {
  // expected-error@+1 {{bias must have 32 elements}}
  %0 = tgraph.linear %x, %w, %b : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<64xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @linear_elem(%x: tensor<?x?x64xf32>, %w: tensor<32x64xbf16>) {
  // expected-error@+1 {{weight element type 'bf16' does not match 'f32'}}
  %0 = tgraph.linear %x, %w : (tensor<?x?x64xf32>, tensor<32x64xbf16>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<?x4xf32>, %b: tensor<?x4x4xf32>) {
  // expected-error@+1 {{operands and result must have equal rank >= 2}}
  %0 = tgraph.matmul %a, %b : (tensor<?x4xf32>, tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<?x3x4xf32>, %b: tensor<?x5x2xf32>) {
  // expected-error@+1 {{contraction sizes 4 and 5 differ}}
  %0 = tgraph.matmul %a, %b : (tensor<?x3x4xf32>, tensor<?x5x2xf32>) -> tensor<?x3x2xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<?x3x4xf32>, %b: tensor<?x4x2xf32>) {
  // expected-error@+1 {{result must be (..., m, n)}}
  %0 = tgraph.matmul %a, %b : (tensor<?x3x4xf32>, tensor<?x4x2xf32>) -> tensor<?x3x3xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>) {
  // expected-error@+1 {{batch dimension 0 differs}}
  %0 = tgraph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x2xf32>) -> tensor<2x3x2xf32>
  return
}

// -----

func.func @attn_positive(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{num_heads, num_kv_heads, head_dim and v_head_dim must be positive}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 0 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_multiple(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{num_heads 4 must be a multiple of num_kv_heads 3}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_window(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{window must not be negative}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, window = -1 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_rotary(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rotary_dim must be within [0, head_dim]}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 17 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_dropout(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{dropout must be in [0, 1)}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, dropout = 1.0 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_rank(%q: tensor<?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{q, k, v and the result must be batch x seq x features}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64} : (tensor<?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_q(%q: tensor<?x?x32xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{q width must be num_heads*head_dim = 64}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64} : (tensor<?x?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_rope(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>, %r: tensor<?x?x16xf32>) {
  // expected-error@+1 {{rope_key must be batch x seq x r with 0 < r < head_dim}}
  %0 = tgraph.attention %q, %k, %v rope_key %r {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x16xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_k(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{k width must be num_kv_heads*(head_dim - rope_key width) = 32}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_v(%q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{v width must be num_kv_heads*v_head_dim = 32}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attn_result(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{result width must be num_heads*v_head_dim = 64}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @attn_sinks(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>, %s: tensor<3xf32>) {
  // expected-error@+1 {{sinks must hold one logit per head (4)}}
  %0 = tgraph.attention %q, %k, %v sinks %s {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<3xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @norm_eps(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>) {
  // expected-error@+1 {{eps must be positive}}
  %0 = tgraph.layer_norm %x, %g {eps = 0.0 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rms_eps(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>) {
  // expected-error@+1 {{eps must be positive}}
  %0 = tgraph.rms_norm %x, %g {eps = -1.0 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @norm_gamma(%x: tensor<?x?x64xf32>, %g: tensor<8x8xf32>) {
  // expected-error@+1 {{gamma must be a vector}}
  %0 = tgraph.layer_norm %x, %g : (tensor<?x?x64xf32>, tensor<8x8xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @norm_width(%x: tensor<?x?x64xf32>, %g: tensor<48xf32>) {
  // expected-error@+1 {{last dimension 64 must be a multiple of the gamma size 48}}
  %0 = tgraph.rms_norm %x, %g : (tensor<?x?x64xf32>, tensor<48xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @norm_beta(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>, %b: tensor<32xf32>) {
  // expected-error@+1 {{beta must have gamma's type}}
  %0 = tgraph.layer_norm %x, %g, %b : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @norm_result(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>) {
  // expected-error@+1 {{result type must equal x's type}}
  %0 = tgraph.layer_norm %x, %g : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x4x64xf32>
  return
}

// -----

func.func @dropout_rate(%x: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rate must be in [0, 1), got 1.5}}
  %0 = tgraph.dropout %x {rate = 1.5 : f64} : tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_topk(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{need 0 < top_k <= num_experts, got top_k 9 and 8 experts}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 9 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_x(%x: tensor<?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{x must be batch x seq x hidden}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x64xf32>, tensor<64x8xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_router(%x: tensor<?x?x64xf32>, %r: tensor<64x4xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{router must be 64x8}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x4xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_experts(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<4x64x256xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{expert weights must be experts x in x out}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<4x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_win(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x128xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{w_in must be 8x64x256}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_wout(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x32xf32>) {
  // expected-error@+1 {{w_out must be 8x128x64}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x256xf32>, tensor<8x128x32xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_rbias(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>, %rb: tensor<4xf32>) {
  // expected-error@+1 {{router bias must have 8 elements}}
  %0 = tgraph.moe %x router %r bias %rb experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<4xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_result(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{result type must equal x's type}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @ce_rank(%l: tensor<?x?x8xf32>, %y: tensor<?xi32>) {
  // expected-error@+1 {{labels must have the logits' rank minus one}}
  %0 = tgraph.cross_entropy %l, %y : (tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @ce_dim(%l: tensor<?x4x8xf32>, %y: tensor<?x5xi32>) {
  // expected-error@+1 {{labels dimension 1 does not match the logits}}
  %0 = tgraph.cross_entropy %l, %y : (tensor<?x4x8xf32>, tensor<?x5xi32>) -> tensor<f32>
  return
}

// -----

func.func @bce_type(%l: tensor<?x1xf32>, %y: tensor<?x2xf32>) {
  // expected-error@+1 {{labels must have the logits' type}}
  %0 = tgraph.binary_cross_entropy %l, %y : (tensor<?x1xf32>, tensor<?x2xf32>) -> tensor<f32>
  return
}

// -----

func.func @dot_two(%a: tensor<?x4xf32>) {
  // expected-error@+1 {{needs at least two features}}
  %0 = tgraph.dot_interaction %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @dot_rank(%a: tensor<?x4x4xf32>, %b: tensor<?x4x4xf32>) {
  // expected-error@+1 {{features must be batch x dim}}
  %0 = tgraph.dot_interaction %a, %b : (tensor<?x4x4xf32>, tensor<?x4x4xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @dot_type(%a: tensor<?x4xf32>, %b: tensor<?x5xf32>) {
  // expected-error@+1 {{all features must have one type}}
  %0 = tgraph.dot_interaction %a, %b : (tensor<?x4xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @dot_result(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) {
  // expected-error@+1 {{result must be batch x 5}}
  %0 = tgraph.dot_interaction %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
  return
}

// -----

// expected-error@+1 {{seq_len must be positive, got 0}}
tgraph.model @seq attributes {seq_len = 0 : i64} {
  %l = tgraph.input "x" : tensor<?xf32>
  %s = tgraph.param "s" <other> : tensor<f32>
  tgraph.output %s : tensor<f32>
}

// -----

func.func @repeat_count(%x: tensor<?x?x4xf32>) {
  // expected-error@+1 {{count must be positive, got 0}}
  %0 = tgraph.repeat "l" x 0 (%x) : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    tgraph.yield %a : tensor<?x?x4xf32>
  }
  return
}

// -----

func.func @repeat_empty() {
  // expected-error@+1 {{needs at least one carried value}}
  tgraph.repeat "l" x 2 () : () -> () {
  ^bb0:
    tgraph.yield
  }
  return
}

// -----

func.func @repeat_results(%x: tensor<?x?x4xf32>) {
  // expected-error@+1 {{result types must equal the carried operand types}}
  %0 = tgraph.repeat "l" x 2 (%x) : (tensor<?x?x4xf32>) -> tensor<?x?x8xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    tgraph.yield %a : tensor<?x?x4xf32>
  }
  return
}

// -----

func.func @repeat_args(%x: tensor<?x?x4xf32>) {
  // expected-error@+1 {{body arguments must have the carried operand types}}
  %0 = tgraph.repeat "l" x 2 (%x) : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x8xf32>):
    tgraph.yield %x : tensor<?x?x4xf32>
  }
  return
}

// -----

func.func @repeat_yield(%x: tensor<?x?x4xf32>, %y: tensor<?x?x8xf32>) {
  // expected-error@+1 {{yielded types must equal the carried types}}
  %0 = tgraph.repeat "l" x 2 (%x) : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    tgraph.yield %y : tensor<?x?x8xf32>
  }
  return
}

// -----

// expected-error@+1 {{body must end with tgraph.output}}
tgraph.model @no_output attributes {seq_len = 1 : i64} {
  %l = tgraph.input "x" : tensor<?xf32>
}

// -----

func.func @moe_bias_pairs(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>, %bi: tensor<8x256xf32>) {
  // expected-error@+1 {{expert biases come in pairs}}
  %0 = "tgraph.moe"(%x, %r, %wi, %wo, %bi) <{activation = #tgraph.act<silu>, gated, num_experts = 8 : i64, top_k = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 1, 1, 1, 0>}> : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>, tensor<8x256xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @repeat_count_limit(%x: tensor<?x?x4xf32>) {
  // expected-error@+1 {{count 4294967296 is above the supported limit 2147483647}}
  %0 = tgraph.repeat "l" x 4294967296 (%x) : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  ^bb0(%a: tensor<?x?x4xf32>):
    tgraph.yield %a : tensor<?x?x4xf32>
  }
  return
}

// -----

func.func @rope_scaling_no_rotary(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_scaling needs rotary_dim > 0}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rope_scaling = {type = "linear", factor = 2.0 : f64}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_scaling_type(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_scaling type 'longrope' is not one of linear, llama3, yarn}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, rope_scaling = {type = "longrope", factor = 2.0 : f64}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_scaling_missing(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_scaling type 'llama3' needs 'high_freq_factor'}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, rope_scaling = {type = "llama3", factor = 8.0 : f64, low_freq_factor = 1.0 : f64, original_max_positions = 8192 : i64}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_scaling_foreign_key(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_scaling key 'beta_fast' does not belong to type 'linear'}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, rope_scaling = {type = "linear", factor = 2.0 : f64, beta_fast = 32.0 : f64}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_scaling_factor(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_scaling 'factor' must be at least 1, got 0.5}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, rope_scaling = {type = "linear", factor = 0.5 : f64}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_scaling_yarn_truncate(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_scaling 'truncate' must be true or false}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64, rope_scaling = {type = "yarn", factor = 4.0 : f64, original_max_positions = 8 : i64, beta_fast = 32.0 : f64, beta_slow = 1.0 : f64, truncate = 1 : i64, attention_factor = 1.0 : f64}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_swiglu_limit_ungated(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x128xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{swiglu_limit must be a positive number on gated silu experts}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, swiglu_limit = 7.0 : f64} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_selection_bias_alone(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x256xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{selection_bias needs a router bias}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated, selection_bias} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_key_rotary_dim(%q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x64xf32>, %r: tensor<?x?x8xf32>) {
  // expected-error@+1 {{rope_key needs rotary_dim equal to its width 8 (the rotated part of a head)}}
  %0 = tgraph.attention %q, %k, %v rope_key %r {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rotary_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x8xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @softmax_scale(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{softmax_scale must be a positive number}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, softmax_scale = 0.0 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_interleaved_no_rotary(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>) {
  // expected-error@+1 {{rope_interleaved needs rotary_dim > 0}}
  %0 = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, rope_interleaved} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @moe_groups(%x: tensor<?x?x64xf32>, %r: tensor<64x8xf32>, %wi: tensor<8x64x128xf32>, %wo: tensor<8x128x64xf32>) {
  // expected-error@+1 {{num_groups / topk_groups: groups 3 must divide the 8 experts}}
  %0 = tgraph.moe %x router %r experts(%wi, %wo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, num_groups = 3 : i64} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: seq_len, global_batch and num_micro_batches must be positive and gpus non-negative}}
tgraph.model @plan0 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 0, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: precision and runtime must be named}}
tgraph.model @plan1 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, precision = "", global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: axis 'tp' must be an integer, a boolean or a name}}
tgraph.model @plan2 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {tp = 1.5 : f64}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: layers_per_chunk must not be empty}}
tgraph.model @plan3 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = []>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: layers_per_chunk entries must not be negative}}
tgraph.model @plan4 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [-1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: stage_recompute entries must be "none", "selective" or "full"}}
tgraph.model @plan5 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1], stage_recompute = ["some"]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: model_shape holds layers, hidden, vocab and params (4 entries), got 3}}
tgraph.model @plan6 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1], model_shape = [1, 2, 3]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: model_shape entries must not be negative}}
tgraph.model @plan7 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1], model_shape = [1, 2, 3, -4]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// #tgraph.plan's structure (the values are the converter's: plan::verify).
// expected-error@+1 {{tgraph.plan: predicted 'mfu' must be a float}}
tgraph.model @plan8 attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1], predicted = {mfu = 1 : i64}>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}
