module {
  tgraph.model @tiny_llama attributes {architecture = "LlamaForCausalLM", seq_len = 32 : i64, tgraph.cost = {bwd_flops = 46137344 : i64, bytes_read = 2083584 : i64, bytes_written = 1081860 : i64, fwd_flops = 23068672 : i64, params = 180800 : i64, saved_full = 164352 : i64, saved_none = 1081856 : i64, saved_selective = 950784 : i64}, tgraph.flops_per_token = {forward = 360448 : i64, train = 1081344 : i64}} {
    %0 = tgraph.input "tokens" : tensor<?x?xi32>
    %1 = tgraph.input "labels" : tensor<?x?xi32>
    %2 = tgraph.param "embed_tokens.weight" <embedding> : tensor<256x64xf32>
    %3 = tgraph.embedding %0, %2 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 16640 : i64, bytes_written = 16384 : i64, fwd_flops = 0 : i64, params = 16384 : i64, saved_full = 256 : i64, saved_none = 256 : i64, saved_selective = 256 : i64}} : (tensor<?x?xi32>, tensor<256x64xf32>) -> tensor<?x?x64xf32>
    %4 = tgraph.repeat "layers.0-3" x 4(%3) {tgraph.cost = {bwd_flops = 41943040 : i64, bytes_read = 1902592 : i64, bytes_written = 983040 : i64, fwd_flops = 20971520 : i64, params = 147968 : i64, saved_full = 65536 : i64, saved_none = 983040 : i64, saved_selective = 851968 : i64}} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
    ^bb0(%arg0: tensor<?x?x64xf32>):
      %10 = tgraph.param "input_layernorm.weight" <norm> : tensor<64xf32>
      %11 = tgraph.rms_norm %arg0, %10 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 16640 : i64, bytes_written = 16384 : i64, fwd_flops = 0 : i64, params = 64 : i64, saved_full = 0 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %12 = tgraph.param "attn.q_proj.weight" <attention> : tensor<64x64xf32>
      %13 = tgraph.linear %11, %12 tp <column> {tgraph.cost = {bwd_flops = 1048576 : i64, bytes_read = 32768 : i64, bytes_written = 16384 : i64, fwd_flops = 524288 : i64, params = 4096 : i64, saved_full = 0 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
      %14 = tgraph.param "attn.k_proj.weight" <attention> : tensor<32x64xf32>
      %15 = tgraph.linear %11, %14 tp <column> {tgraph.cost = {bwd_flops = 524288 : i64, bytes_read = 24576 : i64, bytes_written = 8192 : i64, fwd_flops = 262144 : i64, params = 2048 : i64, saved_full = 0 : i64, saved_none = 0 : i64, saved_selective = 0 : i64}} : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
      %16 = tgraph.param "attn.v_proj.weight" <attention> : tensor<32x64xf32>
      %17 = tgraph.linear %11, %16 tp <column> {tgraph.cost = {bwd_flops = 524288 : i64, bytes_read = 24576 : i64, bytes_written = 8192 : i64, fwd_flops = 262144 : i64, params = 2048 : i64, saved_full = 0 : i64, saved_none = 0 : i64, saved_selective = 0 : i64}} : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
      %18 = tgraph.attention %13, %15, %17 {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 16 : i64, tgraph.cost = {bwd_flops = 1048576 : i64, bytes_read = 32768 : i64, bytes_written = 16384 : i64, fwd_flops = 524288 : i64, params = 0 : i64, saved_full = 0 : i64, saved_none = 65536 : i64, saved_selective = 32768 : i64}} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
      %19 = tgraph.param "attn.o_proj.weight" <attention> : tensor<64x64xf32>
      %20 = tgraph.linear %18, %19 tp <row> {tgraph.cost = {bwd_flops = 1048576 : i64, bytes_read = 32768 : i64, bytes_written = 16384 : i64, fwd_flops = 524288 : i64, params = 4096 : i64, saved_full = 0 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
      %21 = tgraph.add %arg0, %20 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 32768 : i64, bytes_written = 16384 : i64, fwd_flops = 0 : i64, params = 0 : i64, saved_full = 0 : i64, saved_none = 0 : i64, saved_selective = 0 : i64}} : tensor<?x?x64xf32>
      %22 = tgraph.param "post_attention_layernorm.weight" <norm> : tensor<64xf32>
      %23 = tgraph.rms_norm %21, %22 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 16640 : i64, bytes_written = 16384 : i64, fwd_flops = 0 : i64, params = 64 : i64, saved_full = 0 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %24 = tgraph.param "mlp.gate_proj.weight" <mlp> : tensor<128x64xf32>
      %25 = tgraph.linear %23, %24 tp <column> {tgraph.cost = {bwd_flops = 2097152 : i64, bytes_read = 49152 : i64, bytes_written = 32768 : i64, fwd_flops = 1048576 : i64, params = 8192 : i64, saved_full = 0 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
      %26 = tgraph.param "mlp.up_proj.weight" <mlp> : tensor<128x64xf32>
      %27 = tgraph.linear %23, %26 tp <column> {tgraph.cost = {bwd_flops = 2097152 : i64, bytes_read = 49152 : i64, bytes_written = 32768 : i64, fwd_flops = 1048576 : i64, params = 8192 : i64, saved_full = 0 : i64, saved_none = 0 : i64, saved_selective = 0 : i64}} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
      %28 = tgraph.swiglu %25, %27 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 65536 : i64, bytes_written = 32768 : i64, fwd_flops = 0 : i64, params = 0 : i64, saved_full = 0 : i64, saved_none = 65536 : i64, saved_selective = 65536 : i64}} : tensor<?x?x128xf32>
      %29 = tgraph.param "mlp.down_proj.weight" <mlp> : tensor<64x128xf32>
      %30 = tgraph.linear %28, %29 tp <row> {tgraph.cost = {bwd_flops = 2097152 : i64, bytes_read = 65536 : i64, bytes_written = 16384 : i64, fwd_flops = 1048576 : i64, params = 8192 : i64, saved_full = 0 : i64, saved_none = 32768 : i64, saved_selective = 32768 : i64}} : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
      %31 = tgraph.add %21, %30 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 32768 : i64, bytes_written = 16384 : i64, fwd_flops = 0 : i64, params = 0 : i64, saved_full = 0 : i64, saved_none = 0 : i64, saved_selective = 0 : i64}} : tensor<?x?x64xf32>
      tgraph.yield %31 : tensor<?x?x64xf32>
    }
    %5 = tgraph.param "norm.weight" <norm> : tensor<64xf32>
    %6 = tgraph.rms_norm %4, %5 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 16640 : i64, bytes_written = 16384 : i64, fwd_flops = 0 : i64, params = 64 : i64, saved_full = 16384 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %7 = tgraph.param "lm_head.weight" <head> : tensor<256x64xf32>
    %8 = tgraph.linear %6, %7 tp <vocab> {tgraph.cost = {bwd_flops = 4194304 : i64, bytes_read = 81920 : i64, bytes_written = 65536 : i64, fwd_flops = 2097152 : i64, params = 16384 : i64, saved_full = 16384 : i64, saved_none = 16384 : i64, saved_selective = 16384 : i64}} : (tensor<?x?x64xf32>, tensor<256x64xf32>) -> tensor<?x?x256xf32>
    %9 = tgraph.cross_entropy %8, %1 {tgraph.cost = {bwd_flops = 0 : i64, bytes_read = 65792 : i64, bytes_written = 4 : i64, fwd_flops = 0 : i64, params = 0 : i64, saved_full = 65792 : i64, saved_none = 65792 : i64, saved_selective = 65792 : i64}} : (tensor<?x?x256xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %9 : tensor<f32>
  }
}

# exit 0
