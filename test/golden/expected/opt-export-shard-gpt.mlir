#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map6 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map7 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map8 = affine_map<(d0, d1, d2) -> (d2)>
#map9 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#map10 = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#map11 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map12 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map13 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map14 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
#map15 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#map16 = affine_map<(d0, d1) -> (d0, d1)>
#map17 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
#map18 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
#map19 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map20 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
#map21 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map22 = affine_map<(d0, d1) -> ()>
module {
  shard.grid @grid(shape = 2x2) {trident.axes = ["dp", "tp"]}
  func.func @tiny_gpt_stage0(%arg0: tensor<16x32xi32> {trident.input = "tokens"}, %arg1: tensor<256x64xf32> {trident.param = "embed_tokens.weight"}, %arg2: tensor<32x64xf32> {trident.param = "embed_positions.weight"}, %arg3: tensor<64xf32> {trident.layer = 0 : i64, trident.param = "input_layernorm.weight"}, %arg4: tensor<64xf32> {trident.layer = 0 : i64, trident.param = "input_layernorm.bias"}, %arg5: tensor<4x16x64xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.q_proj.weight"}, %arg6: tensor<4x16xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.q_proj.bias"}, %arg7: tensor<4x16x64xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.k_proj.weight"}, %arg8: tensor<4x16xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.k_proj.bias"}, %arg9: tensor<4x16x64xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.v_proj.weight"}, %arg10: tensor<4x16xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.v_proj.bias"}, %arg11: tensor<64x4x16xf32> {trident.layer = 0 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.o_proj.weight"}, %arg12: tensor<64xf32> {trident.layer = 0 : i64, trident.param = "attn.o_proj.bias"}, %arg13: tensor<64xf32> {trident.layer = 0 : i64, trident.param = "post_attention_layernorm.weight"}, %arg14: tensor<64xf32> {trident.layer = 0 : i64, trident.param = "post_attention_layernorm.bias"}, %arg15: tensor<256x64xf32> {trident.layer = 0 : i64, trident.param = "mlp.fc1.weight"}, %arg16: tensor<256xf32> {trident.layer = 0 : i64, trident.param = "mlp.fc1.bias"}, %arg17: tensor<64x256xf32> {trident.layer = 0 : i64, trident.param = "mlp.fc2.weight"}, %arg18: tensor<64xf32> {trident.layer = 0 : i64, trident.param = "mlp.fc2.bias"}, %arg19: tensor<64xf32> {trident.layer = 1 : i64, trident.param = "input_layernorm.weight"}, %arg20: tensor<64xf32> {trident.layer = 1 : i64, trident.param = "input_layernorm.bias"}, %arg21: tensor<4x16x64xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.q_proj.weight"}, %arg22: tensor<4x16xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.q_proj.bias"}, %arg23: tensor<4x16x64xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.k_proj.weight"}, %arg24: tensor<4x16xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.k_proj.bias"}, %arg25: tensor<4x16x64xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.v_proj.weight"}, %arg26: tensor<4x16xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.v_proj.bias"}, %arg27: tensor<64x4x16xf32> {trident.layer = 1 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.o_proj.weight"}, %arg28: tensor<64xf32> {trident.layer = 1 : i64, trident.param = "attn.o_proj.bias"}, %arg29: tensor<64xf32> {trident.layer = 1 : i64, trident.param = "post_attention_layernorm.weight"}, %arg30: tensor<64xf32> {trident.layer = 1 : i64, trident.param = "post_attention_layernorm.bias"}, %arg31: tensor<256x64xf32> {trident.layer = 1 : i64, trident.param = "mlp.fc1.weight"}, %arg32: tensor<256xf32> {trident.layer = 1 : i64, trident.param = "mlp.fc1.bias"}, %arg33: tensor<64x256xf32> {trident.layer = 1 : i64, trident.param = "mlp.fc2.weight"}, %arg34: tensor<64xf32> {trident.layer = 1 : i64, trident.param = "mlp.fc2.bias"}) -> tensor<16x32x64xf32> attributes {trident.chunk = 0 : i64, trident.pipeline_stage = 0 : i64} {
    %sharding = shard.sharding @grid split_axes = [[0], []] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding annotate_for_users : tensor<16x32xi32>
    %sharding_0 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_1 = shard.shard %arg1 to %sharding_0 annotate_for_users : tensor<256x64xf32>
    %0 = tensor.empty() : tensor<256xi32>
    %1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%0 : tensor<256xi32>) {
    ^bb0(%out: i32):
      %147 = linalg.index 0 : index
      %148 = arith.index_cast %147 : index to i32
      linalg.yield %148 : i32
    } -> tensor<256xi32>
    %sharding_2 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_3 = shard.shard %1 to %sharding_2 : tensor<256xi32>
    %cst = arith.constant 0.000000e+00 : f32
    %2 = tensor.empty() : tensor<16x32x64xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %4 = linalg.generic {indexing_maps = [#map1, #map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated, %sharding_annotated_3, %sharding_annotated_1 : tensor<16x32xi32>, tensor<256xi32>, tensor<256x64xf32>) outs(%3 : tensor<16x32x64xf32>) {
    ^bb0(%in: i32, %in_192: i32, %in_193: f32, %out: f32):
      %147 = arith.cmpi eq, %in, %in_192 : i32
      %148 = arith.uitofp %147 : i1 to f32
      %149 = arith.mulf %148, %in_193 : f32
      %150 = arith.addf %out, %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x32x64xf32>
    %sharding_4 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_5 = shard.shard %4 to %sharding_4 : tensor<16x32x64xf32>
    %sharding_6 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_7 = shard.shard %sharding_annotated_5 to %sharding_6 annotate_for_users : tensor<16x32x64xf32>
    %sharding_8 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_9 = shard.shard %arg2 to %sharding_8 annotate_for_users : tensor<32x64xf32>
    %5 = tensor.empty() : tensor<16x32x64xf32>
    %6 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_7, %sharding_annotated_9 : tensor<16x32x64xf32>, tensor<32x64xf32>) outs(%5 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_10 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_11 = shard.shard %6 to %sharding_10 : tensor<16x32x64xf32>
    %sharding_12 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_13 = shard.shard %sharding_annotated_11 to %sharding_12 annotate_for_users : tensor<16x32x64xf32>
    %sharding_14 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_15 = shard.shard %arg3 to %sharding_14 annotate_for_users : tensor<64xf32>
    %sharding_16 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_17 = shard.shard %arg4 to %sharding_16 annotate_for_users : tensor<64xf32>
    %cst_18 = arith.constant 0.000000e+00 : f32
    %7 = tensor.empty() : tensor<16x32xf32>
    %8 = linalg.fill ins(%cst_18 : f32) outs(%7 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %9 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_13 : tensor<16x32x64xf32>) outs(%8 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %147 = arith.addf %out, %in : f32
      linalg.yield %147 : f32
    } -> tensor<16x32xf32>
    %cst_19 = arith.constant 0.000000e+00 : f32
    %10 = tensor.empty() : tensor<16x32xf32>
    %11 = linalg.fill ins(%cst_19 : f32) outs(%10 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %12 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_13, %9 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%11 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %cst_193 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_192, %cst_193 : f32
      %148 = arith.subf %in, %147 : f32
      %149 = arith.mulf %148, %148 : f32
      %150 = arith.addf %out, %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x32xf32>
    %13 = tensor.empty() : tensor<16x32x64xf32>
    %14 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_13, %12, %sharding_annotated_15, %9, %sharding_annotated_17 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%13 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %in_193: f32, %in_194: f32, %in_195: f32, %out: f32):
      %cst_196 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_194, %cst_196 : f32
      %148 = arith.subf %in, %147 : f32
      %cst_197 = arith.constant 1.562500e-02 : f32
      %149 = arith.mulf %in_192, %cst_197 : f32
      %cst_198 = arith.constant 9.99999974E-6 : f32
      %150 = arith.addf %149, %cst_198 : f32
      %151 = math.rsqrt %150 : f32
      %152 = arith.mulf %148, %151 : f32
      %153 = arith.mulf %152, %in_193 : f32
      %154 = arith.addf %153, %in_195 : f32
      linalg.yield %154 : f32
    } -> tensor<16x32x64xf32>
    %sharding_20 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_21 = shard.shard %14 to %sharding_20 : tensor<16x32x64xf32>
    %sharding_22 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_23 = shard.shard %sharding_annotated_21 to %sharding_22 annotate_for_users : tensor<16x32x64xf32>
    %sharding_24 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_25 = shard.shard %arg5 to %sharding_24 annotate_for_users : tensor<4x16x64xf32>
    %cst_26 = arith.constant 0.000000e+00 : f32
    %15 = tensor.empty() : tensor<16x32x4x16xf32>
    %16 = linalg.fill ins(%cst_26 : f32) outs(%15 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %17 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_23, %sharding_annotated_25 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%16 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_27 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_28 = shard.shard %arg6 to %sharding_27 annotate_for_users : tensor<4x16xf32>
    %18 = tensor.empty() : tensor<16x32x4x16xf32>
    %19 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %sharding_annotated_28 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%18 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_29 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_30 = shard.shard %19 to %sharding_29 : tensor<16x32x4x16xf32>
    %sharding_31 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_32 = shard.shard %sharding_annotated_21 to %sharding_31 annotate_for_users : tensor<16x32x64xf32>
    %sharding_33 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_34 = shard.shard %arg7 to %sharding_33 annotate_for_users : tensor<4x16x64xf32>
    %cst_35 = arith.constant 0.000000e+00 : f32
    %20 = tensor.empty() : tensor<16x32x4x16xf32>
    %21 = linalg.fill ins(%cst_35 : f32) outs(%20 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %22 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_32, %sharding_annotated_34 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%21 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_36 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_37 = shard.shard %arg8 to %sharding_36 annotate_for_users : tensor<4x16xf32>
    %23 = tensor.empty() : tensor<16x32x4x16xf32>
    %24 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%22, %sharding_annotated_37 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%23 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_38 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_39 = shard.shard %24 to %sharding_38 : tensor<16x32x4x16xf32>
    %sharding_40 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_41 = shard.shard %sharding_annotated_21 to %sharding_40 annotate_for_users : tensor<16x32x64xf32>
    %sharding_42 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_43 = shard.shard %arg9 to %sharding_42 annotate_for_users : tensor<4x16x64xf32>
    %cst_44 = arith.constant 0.000000e+00 : f32
    %25 = tensor.empty() : tensor<16x32x4x16xf32>
    %26 = linalg.fill ins(%cst_44 : f32) outs(%25 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %27 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_41, %sharding_annotated_43 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%26 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_45 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_46 = shard.shard %arg10 to %sharding_45 annotate_for_users : tensor<4x16xf32>
    %28 = tensor.empty() : tensor<16x32x4x16xf32>
    %29 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %sharding_annotated_46 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%28 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_47 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_48 = shard.shard %29 to %sharding_47 : tensor<16x32x4x16xf32>
    %sharding_49 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_50 = shard.shard %sharding_annotated_30 to %sharding_49 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_51 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_52 = shard.shard %sharding_annotated_39 to %sharding_51 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_53 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_54 = shard.shard %sharding_annotated_48 to %sharding_53 annotate_for_users : tensor<16x32x4x16xf32>
    %cst_55 = arith.constant 0.000000e+00 : f32
    %30 = tensor.empty() : tensor<16x4x32x32xf32>
    %31 = linalg.fill ins(%cst_55 : f32) outs(%30 : tensor<16x4x32x32xf32>) -> tensor<16x4x32x32xf32>
    %32 = linalg.generic {indexing_maps = [#map14, #map15, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_50, %sharding_annotated_52 : tensor<16x32x4x16xf32>, tensor<16x32x4x16xf32>) outs(%31 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x4x32x32xf32>
    %33 = tensor.empty() : tensor<32x32xf32>
    %34 = linalg.generic {indexing_maps = [#map16], iterator_types = ["parallel", "parallel"]} outs(%33 : tensor<32x32xf32>) {
    ^bb0(%out: f32):
      %147 = linalg.index 0 : index
      %148 = linalg.index 1 : index
      %149 = arith.cmpi ult, %147, %148 : index
      %cst_192 = arith.constant 0.000000e+00 : f32
      %cst_193 = arith.constant 0xFF800000 : f32
      %150 = arith.select %149, %cst_193, %cst_192 : f32
      linalg.yield %150 : f32
    } -> tensor<32x32xf32>
    %sharding_56 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_57 = shard.shard %34 to %sharding_56 : tensor<32x32xf32>
    %cst_58 = arith.constant 0xFF800000 : f32
    %35 = tensor.empty() : tensor<16x4x32xf32>
    %36 = linalg.fill ins(%cst_58 : f32) outs(%35 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %37 = linalg.generic {indexing_maps = [#map12, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%32, %sharding_annotated_57 : tensor<16x4x32x32xf32>, tensor<32x32xf32>) outs(%36 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %cst_193 = arith.constant 2.500000e-01 : f32
      %147 = arith.mulf %in, %cst_193 : f32
      %148 = arith.addf %147, %in_192 : f32
      %149 = arith.maximumf %out, %148 : f32
      linalg.yield %149 : f32
    } -> tensor<16x4x32xf32>
    %38 = tensor.empty() : tensor<16x4x32x32xf32>
    %39 = linalg.generic {indexing_maps = [#map12, #map13, #map4, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%32, %sharding_annotated_57, %37 : tensor<16x4x32x32xf32>, tensor<32x32xf32>, tensor<16x4x32xf32>) outs(%38 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %in_193: f32, %out: f32):
      %cst_194 = arith.constant 2.500000e-01 : f32
      %147 = arith.mulf %in, %cst_194 : f32
      %148 = arith.addf %147, %in_192 : f32
      %149 = arith.subf %148, %in_193 : f32
      %150 = math.exp %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x4x32x32xf32>
    %cst_59 = arith.constant 0.000000e+00 : f32
    %40 = tensor.empty() : tensor<16x4x32xf32>
    %41 = linalg.fill ins(%cst_59 : f32) outs(%40 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %42 = linalg.generic {indexing_maps = [#map12, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%39 : tensor<16x4x32x32xf32>) outs(%41 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %147 = arith.addf %out, %in : f32
      linalg.yield %147 : f32
    } -> tensor<16x4x32xf32>
    %cst_60 = arith.constant 0.000000e+00 : f32
    %43 = tensor.empty() : tensor<16x32x4x16xf32>
    %44 = linalg.fill ins(%cst_60 : f32) outs(%43 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %45 = linalg.generic {indexing_maps = [#map14, #map17, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%39, %sharding_annotated_54 : tensor<16x4x32x32xf32>, tensor<16x32x4x16xf32>) outs(%44 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %46 = tensor.empty() : tensor<16x32x4x16xf32>
    %47 = linalg.generic {indexing_maps = [#map12, #map18, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%45, %42 : tensor<16x32x4x16xf32>, tensor<16x4x32xf32>) outs(%46 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.divf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_61 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_62 = shard.shard %47 to %sharding_61 : tensor<16x32x4x16xf32>
    %sharding_63 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_64 = shard.shard %sharding_annotated_62 to %sharding_63 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_65 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_66 = shard.shard %arg11 to %sharding_65 annotate_for_users : tensor<64x4x16xf32>
    %cst_67 = arith.constant 0.000000e+00 : f32
    %48 = tensor.empty() : tensor<16x32x64xf32>
    %49 = linalg.fill ins(%cst_67 : f32) outs(%48 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %50 = linalg.generic {indexing_maps = [#map19, #map10, #map20], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%sharding_annotated_64, %sharding_annotated_66 : tensor<16x32x4x16xf32>, tensor<64x4x16xf32>) outs(%49 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x64xf32>
    %sharding_68 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_69 = shard.shard %arg12 to %sharding_68 annotate_for_users : tensor<64xf32>
    %51 = tensor.empty() : tensor<16x32x64xf32>
    %52 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%50, %sharding_annotated_69 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%51 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_70 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_71 = shard.shard %52 to %sharding_70 : tensor<16x32x64xf32>
    %53 = tensor.empty() : tensor<16x32x64xf32>
    %54 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_11, %sharding_annotated_71 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%53 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_72 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_73 = shard.shard %54 to %sharding_72 annotate_for_users : tensor<16x32x64xf32>
    %sharding_74 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_75 = shard.shard %arg13 to %sharding_74 annotate_for_users : tensor<64xf32>
    %sharding_76 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_77 = shard.shard %arg14 to %sharding_76 annotate_for_users : tensor<64xf32>
    %cst_78 = arith.constant 0.000000e+00 : f32
    %55 = tensor.empty() : tensor<16x32xf32>
    %56 = linalg.fill ins(%cst_78 : f32) outs(%55 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %57 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_73 : tensor<16x32x64xf32>) outs(%56 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %147 = arith.addf %out, %in : f32
      linalg.yield %147 : f32
    } -> tensor<16x32xf32>
    %cst_79 = arith.constant 0.000000e+00 : f32
    %58 = tensor.empty() : tensor<16x32xf32>
    %59 = linalg.fill ins(%cst_79 : f32) outs(%58 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %60 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_73, %57 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%59 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %cst_193 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_192, %cst_193 : f32
      %148 = arith.subf %in, %147 : f32
      %149 = arith.mulf %148, %148 : f32
      %150 = arith.addf %out, %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x32xf32>
    %61 = tensor.empty() : tensor<16x32x64xf32>
    %62 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_73, %60, %sharding_annotated_75, %57, %sharding_annotated_77 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%61 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %in_193: f32, %in_194: f32, %in_195: f32, %out: f32):
      %cst_196 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_194, %cst_196 : f32
      %148 = arith.subf %in, %147 : f32
      %cst_197 = arith.constant 1.562500e-02 : f32
      %149 = arith.mulf %in_192, %cst_197 : f32
      %cst_198 = arith.constant 9.99999974E-6 : f32
      %150 = arith.addf %149, %cst_198 : f32
      %151 = math.rsqrt %150 : f32
      %152 = arith.mulf %148, %151 : f32
      %153 = arith.mulf %152, %in_193 : f32
      %154 = arith.addf %153, %in_195 : f32
      linalg.yield %154 : f32
    } -> tensor<16x32x64xf32>
    %sharding_80 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_81 = shard.shard %62 to %sharding_80 : tensor<16x32x64xf32>
    %sharding_82 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_83 = shard.shard %sharding_annotated_81 to %sharding_82 annotate_for_users : tensor<16x32x64xf32>
    %sharding_84 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_85 = shard.shard %arg15 to %sharding_84 annotate_for_users : tensor<256x64xf32>
    %cst_86 = arith.constant 0.000000e+00 : f32
    %63 = tensor.empty() : tensor<16x32x256xf32>
    %64 = linalg.fill ins(%cst_86 : f32) outs(%63 : tensor<16x32x256xf32>) -> tensor<16x32x256xf32>
    %65 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_83, %sharding_annotated_85 : tensor<16x32x64xf32>, tensor<256x64xf32>) outs(%64 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x256xf32>
    %sharding_87 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_88 = shard.shard %arg16 to %sharding_87 annotate_for_users : tensor<256xf32>
    %66 = tensor.empty() : tensor<16x32x256xf32>
    %67 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65, %sharding_annotated_88 : tensor<16x32x256xf32>, tensor<256xf32>) outs(%66 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x256xf32>
    %sharding_89 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_90 = shard.shard %67 to %sharding_89 : tensor<16x32x256xf32>
    %68 = tensor.empty() : tensor<16x32x256xf32>
    %69 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_90 : tensor<16x32x256xf32>) outs(%68 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_192 = arith.constant 5.000000e-01 : f32
      %cst_193 = arith.constant 1.000000e+00 : f32
      %cst_194 = arith.constant 0.707106769 : f32
      %147 = arith.mulf %in, %cst_194 : f32
      %148 = math.erf %147 : f32
      %149 = arith.addf %cst_193, %148 : f32
      %150 = arith.mulf %cst_192, %in : f32
      %151 = arith.mulf %150, %149 : f32
      linalg.yield %151 : f32
    } -> tensor<16x32x256xf32>
    %sharding_91 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_92 = shard.shard %69 to %sharding_91 annotate_for_users : tensor<16x32x256xf32>
    %sharding_93 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_94 = shard.shard %arg17 to %sharding_93 annotate_for_users : tensor<64x256xf32>
    %cst_95 = arith.constant 0.000000e+00 : f32
    %70 = tensor.empty() : tensor<16x32x64xf32>
    %71 = linalg.fill ins(%cst_95 : f32) outs(%70 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %72 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_92, %sharding_annotated_94 : tensor<16x32x256xf32>, tensor<64x256xf32>) outs(%71 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x64xf32>
    %sharding_96 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_97 = shard.shard %arg18 to %sharding_96 annotate_for_users : tensor<64xf32>
    %73 = tensor.empty() : tensor<16x32x64xf32>
    %74 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%72, %sharding_annotated_97 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%73 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_98 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_99 = shard.shard %74 to %sharding_98 : tensor<16x32x64xf32>
    %75 = tensor.empty() : tensor<16x32x64xf32>
    %76 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%54, %sharding_annotated_99 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%75 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_100 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_101 = shard.shard %76 to %sharding_100 : tensor<16x32x64xf32>
    %sharding_102 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_103 = shard.shard %sharding_annotated_101 to %sharding_102 annotate_for_users : tensor<16x32x64xf32>
    %sharding_104 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_105 = shard.shard %arg19 to %sharding_104 annotate_for_users : tensor<64xf32>
    %sharding_106 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_107 = shard.shard %arg20 to %sharding_106 annotate_for_users : tensor<64xf32>
    %cst_108 = arith.constant 0.000000e+00 : f32
    %77 = tensor.empty() : tensor<16x32xf32>
    %78 = linalg.fill ins(%cst_108 : f32) outs(%77 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %79 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_103 : tensor<16x32x64xf32>) outs(%78 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %147 = arith.addf %out, %in : f32
      linalg.yield %147 : f32
    } -> tensor<16x32xf32>
    %cst_109 = arith.constant 0.000000e+00 : f32
    %80 = tensor.empty() : tensor<16x32xf32>
    %81 = linalg.fill ins(%cst_109 : f32) outs(%80 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %82 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_103, %79 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%81 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %cst_193 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_192, %cst_193 : f32
      %148 = arith.subf %in, %147 : f32
      %149 = arith.mulf %148, %148 : f32
      %150 = arith.addf %out, %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x32xf32>
    %83 = tensor.empty() : tensor<16x32x64xf32>
    %84 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_103, %82, %sharding_annotated_105, %79, %sharding_annotated_107 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%83 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %in_193: f32, %in_194: f32, %in_195: f32, %out: f32):
      %cst_196 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_194, %cst_196 : f32
      %148 = arith.subf %in, %147 : f32
      %cst_197 = arith.constant 1.562500e-02 : f32
      %149 = arith.mulf %in_192, %cst_197 : f32
      %cst_198 = arith.constant 9.99999974E-6 : f32
      %150 = arith.addf %149, %cst_198 : f32
      %151 = math.rsqrt %150 : f32
      %152 = arith.mulf %148, %151 : f32
      %153 = arith.mulf %152, %in_193 : f32
      %154 = arith.addf %153, %in_195 : f32
      linalg.yield %154 : f32
    } -> tensor<16x32x64xf32>
    %sharding_110 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_111 = shard.shard %84 to %sharding_110 : tensor<16x32x64xf32>
    %sharding_112 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_113 = shard.shard %sharding_annotated_111 to %sharding_112 annotate_for_users : tensor<16x32x64xf32>
    %sharding_114 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_115 = shard.shard %arg21 to %sharding_114 annotate_for_users : tensor<4x16x64xf32>
    %cst_116 = arith.constant 0.000000e+00 : f32
    %85 = tensor.empty() : tensor<16x32x4x16xf32>
    %86 = linalg.fill ins(%cst_116 : f32) outs(%85 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %87 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_113, %sharding_annotated_115 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%86 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_117 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_118 = shard.shard %arg22 to %sharding_117 annotate_for_users : tensor<4x16xf32>
    %88 = tensor.empty() : tensor<16x32x4x16xf32>
    %89 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%87, %sharding_annotated_118 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%88 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_119 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_120 = shard.shard %89 to %sharding_119 : tensor<16x32x4x16xf32>
    %sharding_121 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_122 = shard.shard %sharding_annotated_111 to %sharding_121 annotate_for_users : tensor<16x32x64xf32>
    %sharding_123 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_124 = shard.shard %arg23 to %sharding_123 annotate_for_users : tensor<4x16x64xf32>
    %cst_125 = arith.constant 0.000000e+00 : f32
    %90 = tensor.empty() : tensor<16x32x4x16xf32>
    %91 = linalg.fill ins(%cst_125 : f32) outs(%90 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %92 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_122, %sharding_annotated_124 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%91 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_126 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_127 = shard.shard %arg24 to %sharding_126 annotate_for_users : tensor<4x16xf32>
    %93 = tensor.empty() : tensor<16x32x4x16xf32>
    %94 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%92, %sharding_annotated_127 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%93 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_128 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_129 = shard.shard %94 to %sharding_128 : tensor<16x32x4x16xf32>
    %sharding_130 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_131 = shard.shard %sharding_annotated_111 to %sharding_130 annotate_for_users : tensor<16x32x64xf32>
    %sharding_132 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_133 = shard.shard %arg25 to %sharding_132 annotate_for_users : tensor<4x16x64xf32>
    %cst_134 = arith.constant 0.000000e+00 : f32
    %95 = tensor.empty() : tensor<16x32x4x16xf32>
    %96 = linalg.fill ins(%cst_134 : f32) outs(%95 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %97 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_131, %sharding_annotated_133 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%96 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_135 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_136 = shard.shard %arg26 to %sharding_135 annotate_for_users : tensor<4x16xf32>
    %98 = tensor.empty() : tensor<16x32x4x16xf32>
    %99 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%97, %sharding_annotated_136 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%98 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_137 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_138 = shard.shard %99 to %sharding_137 : tensor<16x32x4x16xf32>
    %sharding_139 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_140 = shard.shard %sharding_annotated_120 to %sharding_139 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_141 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_142 = shard.shard %sharding_annotated_129 to %sharding_141 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_143 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_144 = shard.shard %sharding_annotated_138 to %sharding_143 annotate_for_users : tensor<16x32x4x16xf32>
    %cst_145 = arith.constant 0.000000e+00 : f32
    %100 = tensor.empty() : tensor<16x4x32x32xf32>
    %101 = linalg.fill ins(%cst_145 : f32) outs(%100 : tensor<16x4x32x32xf32>) -> tensor<16x4x32x32xf32>
    %102 = linalg.generic {indexing_maps = [#map14, #map15, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_140, %sharding_annotated_142 : tensor<16x32x4x16xf32>, tensor<16x32x4x16xf32>) outs(%101 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x4x32x32xf32>
    %103 = tensor.empty() : tensor<32x32xf32>
    %104 = linalg.generic {indexing_maps = [#map16], iterator_types = ["parallel", "parallel"]} outs(%103 : tensor<32x32xf32>) {
    ^bb0(%out: f32):
      %147 = linalg.index 0 : index
      %148 = linalg.index 1 : index
      %149 = arith.cmpi ult, %147, %148 : index
      %cst_192 = arith.constant 0.000000e+00 : f32
      %cst_193 = arith.constant 0xFF800000 : f32
      %150 = arith.select %149, %cst_193, %cst_192 : f32
      linalg.yield %150 : f32
    } -> tensor<32x32xf32>
    %sharding_146 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_147 = shard.shard %104 to %sharding_146 : tensor<32x32xf32>
    %cst_148 = arith.constant 0xFF800000 : f32
    %105 = tensor.empty() : tensor<16x4x32xf32>
    %106 = linalg.fill ins(%cst_148 : f32) outs(%105 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %107 = linalg.generic {indexing_maps = [#map12, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%102, %sharding_annotated_147 : tensor<16x4x32x32xf32>, tensor<32x32xf32>) outs(%106 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %cst_193 = arith.constant 2.500000e-01 : f32
      %147 = arith.mulf %in, %cst_193 : f32
      %148 = arith.addf %147, %in_192 : f32
      %149 = arith.maximumf %out, %148 : f32
      linalg.yield %149 : f32
    } -> tensor<16x4x32xf32>
    %108 = tensor.empty() : tensor<16x4x32x32xf32>
    %109 = linalg.generic {indexing_maps = [#map12, #map13, #map4, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%102, %sharding_annotated_147, %107 : tensor<16x4x32x32xf32>, tensor<32x32xf32>, tensor<16x4x32xf32>) outs(%108 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %in_193: f32, %out: f32):
      %cst_194 = arith.constant 2.500000e-01 : f32
      %147 = arith.mulf %in, %cst_194 : f32
      %148 = arith.addf %147, %in_192 : f32
      %149 = arith.subf %148, %in_193 : f32
      %150 = math.exp %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x4x32x32xf32>
    %cst_149 = arith.constant 0.000000e+00 : f32
    %110 = tensor.empty() : tensor<16x4x32xf32>
    %111 = linalg.fill ins(%cst_149 : f32) outs(%110 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %112 = linalg.generic {indexing_maps = [#map12, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%109 : tensor<16x4x32x32xf32>) outs(%111 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %147 = arith.addf %out, %in : f32
      linalg.yield %147 : f32
    } -> tensor<16x4x32xf32>
    %cst_150 = arith.constant 0.000000e+00 : f32
    %113 = tensor.empty() : tensor<16x32x4x16xf32>
    %114 = linalg.fill ins(%cst_150 : f32) outs(%113 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %115 = linalg.generic {indexing_maps = [#map14, #map17, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%109, %sharding_annotated_144 : tensor<16x4x32x32xf32>, tensor<16x32x4x16xf32>) outs(%114 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x4x16xf32>
    %116 = tensor.empty() : tensor<16x32x4x16xf32>
    %117 = linalg.generic {indexing_maps = [#map12, #map18, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%115, %112 : tensor<16x32x4x16xf32>, tensor<16x4x32xf32>) outs(%116 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.divf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_151 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_152 = shard.shard %117 to %sharding_151 : tensor<16x32x4x16xf32>
    %sharding_153 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_154 = shard.shard %sharding_annotated_152 to %sharding_153 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_155 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_156 = shard.shard %arg27 to %sharding_155 annotate_for_users : tensor<64x4x16xf32>
    %cst_157 = arith.constant 0.000000e+00 : f32
    %118 = tensor.empty() : tensor<16x32x64xf32>
    %119 = linalg.fill ins(%cst_157 : f32) outs(%118 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %120 = linalg.generic {indexing_maps = [#map19, #map10, #map20], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%sharding_annotated_154, %sharding_annotated_156 : tensor<16x32x4x16xf32>, tensor<64x4x16xf32>) outs(%119 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x64xf32>
    %sharding_158 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_159 = shard.shard %arg28 to %sharding_158 annotate_for_users : tensor<64xf32>
    %121 = tensor.empty() : tensor<16x32x64xf32>
    %122 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%120, %sharding_annotated_159 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%121 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_160 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_161 = shard.shard %122 to %sharding_160 : tensor<16x32x64xf32>
    %123 = tensor.empty() : tensor<16x32x64xf32>
    %124 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_101, %sharding_annotated_161 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%123 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_162 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_163 = shard.shard %124 to %sharding_162 annotate_for_users : tensor<16x32x64xf32>
    %sharding_164 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_165 = shard.shard %arg29 to %sharding_164 annotate_for_users : tensor<64xf32>
    %sharding_166 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_167 = shard.shard %arg30 to %sharding_166 annotate_for_users : tensor<64xf32>
    %cst_168 = arith.constant 0.000000e+00 : f32
    %125 = tensor.empty() : tensor<16x32xf32>
    %126 = linalg.fill ins(%cst_168 : f32) outs(%125 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %127 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_163 : tensor<16x32x64xf32>) outs(%126 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %147 = arith.addf %out, %in : f32
      linalg.yield %147 : f32
    } -> tensor<16x32xf32>
    %cst_169 = arith.constant 0.000000e+00 : f32
    %128 = tensor.empty() : tensor<16x32xf32>
    %129 = linalg.fill ins(%cst_169 : f32) outs(%128 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %130 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_163, %127 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%129 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %cst_193 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_192, %cst_193 : f32
      %148 = arith.subf %in, %147 : f32
      %149 = arith.mulf %148, %148 : f32
      %150 = arith.addf %out, %149 : f32
      linalg.yield %150 : f32
    } -> tensor<16x32xf32>
    %131 = tensor.empty() : tensor<16x32x64xf32>
    %132 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_163, %130, %sharding_annotated_165, %127, %sharding_annotated_167 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%131 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %in_193: f32, %in_194: f32, %in_195: f32, %out: f32):
      %cst_196 = arith.constant 1.562500e-02 : f32
      %147 = arith.mulf %in_194, %cst_196 : f32
      %148 = arith.subf %in, %147 : f32
      %cst_197 = arith.constant 1.562500e-02 : f32
      %149 = arith.mulf %in_192, %cst_197 : f32
      %cst_198 = arith.constant 9.99999974E-6 : f32
      %150 = arith.addf %149, %cst_198 : f32
      %151 = math.rsqrt %150 : f32
      %152 = arith.mulf %148, %151 : f32
      %153 = arith.mulf %152, %in_193 : f32
      %154 = arith.addf %153, %in_195 : f32
      linalg.yield %154 : f32
    } -> tensor<16x32x64xf32>
    %sharding_170 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_171 = shard.shard %132 to %sharding_170 : tensor<16x32x64xf32>
    %sharding_172 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_173 = shard.shard %sharding_annotated_171 to %sharding_172 annotate_for_users : tensor<16x32x64xf32>
    %sharding_174 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_175 = shard.shard %arg31 to %sharding_174 annotate_for_users : tensor<256x64xf32>
    %cst_176 = arith.constant 0.000000e+00 : f32
    %133 = tensor.empty() : tensor<16x32x256xf32>
    %134 = linalg.fill ins(%cst_176 : f32) outs(%133 : tensor<16x32x256xf32>) -> tensor<16x32x256xf32>
    %135 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_173, %sharding_annotated_175 : tensor<16x32x64xf32>, tensor<256x64xf32>) outs(%134 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x256xf32>
    %sharding_177 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_178 = shard.shard %arg32 to %sharding_177 annotate_for_users : tensor<256xf32>
    %136 = tensor.empty() : tensor<16x32x256xf32>
    %137 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%135, %sharding_annotated_178 : tensor<16x32x256xf32>, tensor<256xf32>) outs(%136 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x256xf32>
    %sharding_179 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_180 = shard.shard %137 to %sharding_179 : tensor<16x32x256xf32>
    %138 = tensor.empty() : tensor<16x32x256xf32>
    %139 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_180 : tensor<16x32x256xf32>) outs(%138 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_192 = arith.constant 5.000000e-01 : f32
      %cst_193 = arith.constant 1.000000e+00 : f32
      %cst_194 = arith.constant 0.707106769 : f32
      %147 = arith.mulf %in, %cst_194 : f32
      %148 = math.erf %147 : f32
      %149 = arith.addf %cst_193, %148 : f32
      %150 = arith.mulf %cst_192, %in : f32
      %151 = arith.mulf %150, %149 : f32
      linalg.yield %151 : f32
    } -> tensor<16x32x256xf32>
    %sharding_181 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_182 = shard.shard %139 to %sharding_181 annotate_for_users : tensor<16x32x256xf32>
    %sharding_183 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_184 = shard.shard %arg33 to %sharding_183 annotate_for_users : tensor<64x256xf32>
    %cst_185 = arith.constant 0.000000e+00 : f32
    %140 = tensor.empty() : tensor<16x32x64xf32>
    %141 = linalg.fill ins(%cst_185 : f32) outs(%140 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %142 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_182, %sharding_annotated_184 : tensor<16x32x256xf32>, tensor<64x256xf32>) outs(%141 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.mulf %in, %in_192 : f32
      %148 = arith.addf %out, %147 : f32
      linalg.yield %148 : f32
    } -> tensor<16x32x64xf32>
    %sharding_186 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_187 = shard.shard %arg34 to %sharding_186 annotate_for_users : tensor<64xf32>
    %143 = tensor.empty() : tensor<16x32x64xf32>
    %144 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%142, %sharding_annotated_187 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%143 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_188 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_189 = shard.shard %144 to %sharding_188 : tensor<16x32x64xf32>
    %145 = tensor.empty() : tensor<16x32x64xf32>
    %146 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%124, %sharding_annotated_189 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%145 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_192: f32, %out: f32):
      %147 = arith.addf %in, %in_192 : f32
      linalg.yield %147 : f32
    } -> tensor<16x32x64xf32>
    %sharding_190 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_191 = shard.shard %146 to %sharding_190 : tensor<16x32x64xf32>
    return %sharding_annotated_191 : tensor<16x32x64xf32>
  }
  func.func @tiny_gpt_stage1(%arg0: tensor<16x32x64xf32> {trident.from_chunk = 0 : i64}, %arg1: tensor<64xf32> {trident.layer = 2 : i64, trident.param = "input_layernorm.weight"}, %arg2: tensor<64xf32> {trident.layer = 2 : i64, trident.param = "input_layernorm.bias"}, %arg3: tensor<4x16x64xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.q_proj.weight"}, %arg4: tensor<4x16xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.q_proj.bias"}, %arg5: tensor<4x16x64xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.k_proj.weight"}, %arg6: tensor<4x16xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.k_proj.bias"}, %arg7: tensor<4x16x64xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.v_proj.weight"}, %arg8: tensor<4x16xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.v_proj.bias"}, %arg9: tensor<64x4x16xf32> {trident.layer = 2 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.o_proj.weight"}, %arg10: tensor<64xf32> {trident.layer = 2 : i64, trident.param = "attn.o_proj.bias"}, %arg11: tensor<64xf32> {trident.layer = 2 : i64, trident.param = "post_attention_layernorm.weight"}, %arg12: tensor<64xf32> {trident.layer = 2 : i64, trident.param = "post_attention_layernorm.bias"}, %arg13: tensor<256x64xf32> {trident.layer = 2 : i64, trident.param = "mlp.fc1.weight"}, %arg14: tensor<256xf32> {trident.layer = 2 : i64, trident.param = "mlp.fc1.bias"}, %arg15: tensor<64x256xf32> {trident.layer = 2 : i64, trident.param = "mlp.fc2.weight"}, %arg16: tensor<64xf32> {trident.layer = 2 : i64, trident.param = "mlp.fc2.bias"}, %arg17: tensor<64xf32> {trident.layer = 3 : i64, trident.param = "input_layernorm.weight"}, %arg18: tensor<64xf32> {trident.layer = 3 : i64, trident.param = "input_layernorm.bias"}, %arg19: tensor<4x16x64xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.q_proj.weight"}, %arg20: tensor<4x16xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.q_proj.bias"}, %arg21: tensor<4x16x64xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.k_proj.weight"}, %arg22: tensor<4x16xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.k_proj.bias"}, %arg23: tensor<4x16x64xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.v_proj.weight"}, %arg24: tensor<4x16xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64xf32>, trident.param = "attn.v_proj.bias"}, %arg25: tensor<64x4x16xf32> {trident.layer = 3 : i64, trident.model_type = tensor<64x64xf32>, trident.param = "attn.o_proj.weight"}, %arg26: tensor<64xf32> {trident.layer = 3 : i64, trident.param = "attn.o_proj.bias"}, %arg27: tensor<64xf32> {trident.layer = 3 : i64, trident.param = "post_attention_layernorm.weight"}, %arg28: tensor<64xf32> {trident.layer = 3 : i64, trident.param = "post_attention_layernorm.bias"}, %arg29: tensor<256x64xf32> {trident.layer = 3 : i64, trident.param = "mlp.fc1.weight"}, %arg30: tensor<256xf32> {trident.layer = 3 : i64, trident.param = "mlp.fc1.bias"}, %arg31: tensor<64x256xf32> {trident.layer = 3 : i64, trident.param = "mlp.fc2.weight"}, %arg32: tensor<64xf32> {trident.layer = 3 : i64, trident.param = "mlp.fc2.bias"}, %arg33: tensor<64xf32> {trident.param = "norm.weight"}, %arg34: tensor<64xf32> {trident.param = "norm.bias"}, %arg35: tensor<256x64xf32> {trident.param = "embed_tokens.weight"}, %arg36: tensor<16x32xi32> {trident.input = "labels"}) -> tensor<f32> attributes {trident.chunk = 1 : i64, trident.pipeline_stage = 1 : i64} {
    %sharding = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding annotate_for_users : tensor<16x32x64xf32>
    %sharding_0 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_1 = shard.shard %arg1 to %sharding_0 annotate_for_users : tensor<64xf32>
    %sharding_2 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_3 = shard.shard %arg2 to %sharding_2 annotate_for_users : tensor<64xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<16x32xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %2 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated : tensor<16x32x64xf32>) outs(%1 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x32xf32>
    %cst_4 = arith.constant 0.000000e+00 : f32
    %3 = tensor.empty() : tensor<16x32xf32>
    %4 = linalg.fill ins(%cst_4 : f32) outs(%3 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %5 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated, %2 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%4 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_212, %cst_213 : f32
      %166 = arith.subf %in, %165 : f32
      %167 = arith.mulf %166, %166 : f32
      %168 = arith.addf %out, %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x32xf32>
    %6 = tensor.empty() : tensor<16x32x64xf32>
    %7 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated, %5, %sharding_annotated_1, %2, %sharding_annotated_3 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%6 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %in_214: f32, %in_215: f32, %out: f32):
      %cst_216 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_214, %cst_216 : f32
      %166 = arith.subf %in, %165 : f32
      %cst_217 = arith.constant 1.562500e-02 : f32
      %167 = arith.mulf %in_212, %cst_217 : f32
      %cst_218 = arith.constant 9.99999974E-6 : f32
      %168 = arith.addf %167, %cst_218 : f32
      %169 = math.rsqrt %168 : f32
      %170 = arith.mulf %166, %169 : f32
      %171 = arith.mulf %170, %in_213 : f32
      %172 = arith.addf %171, %in_215 : f32
      linalg.yield %172 : f32
    } -> tensor<16x32x64xf32>
    %sharding_5 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_6 = shard.shard %7 to %sharding_5 : tensor<16x32x64xf32>
    %sharding_7 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_8 = shard.shard %sharding_annotated_6 to %sharding_7 annotate_for_users : tensor<16x32x64xf32>
    %sharding_9 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_10 = shard.shard %arg3 to %sharding_9 annotate_for_users : tensor<4x16x64xf32>
    %cst_11 = arith.constant 0.000000e+00 : f32
    %8 = tensor.empty() : tensor<16x32x4x16xf32>
    %9 = linalg.fill ins(%cst_11 : f32) outs(%8 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %10 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_8, %sharding_annotated_10 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%9 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_12 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_13 = shard.shard %arg4 to %sharding_12 annotate_for_users : tensor<4x16xf32>
    %11 = tensor.empty() : tensor<16x32x4x16xf32>
    %12 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%10, %sharding_annotated_13 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%11 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_14 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_15 = shard.shard %12 to %sharding_14 : tensor<16x32x4x16xf32>
    %sharding_16 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_17 = shard.shard %sharding_annotated_6 to %sharding_16 annotate_for_users : tensor<16x32x64xf32>
    %sharding_18 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_19 = shard.shard %arg5 to %sharding_18 annotate_for_users : tensor<4x16x64xf32>
    %cst_20 = arith.constant 0.000000e+00 : f32
    %13 = tensor.empty() : tensor<16x32x4x16xf32>
    %14 = linalg.fill ins(%cst_20 : f32) outs(%13 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %15 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_17, %sharding_annotated_19 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%14 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_21 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_22 = shard.shard %arg6 to %sharding_21 annotate_for_users : tensor<4x16xf32>
    %16 = tensor.empty() : tensor<16x32x4x16xf32>
    %17 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15, %sharding_annotated_22 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%16 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_23 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_24 = shard.shard %17 to %sharding_23 : tensor<16x32x4x16xf32>
    %sharding_25 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_26 = shard.shard %sharding_annotated_6 to %sharding_25 annotate_for_users : tensor<16x32x64xf32>
    %sharding_27 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_28 = shard.shard %arg7 to %sharding_27 annotate_for_users : tensor<4x16x64xf32>
    %cst_29 = arith.constant 0.000000e+00 : f32
    %18 = tensor.empty() : tensor<16x32x4x16xf32>
    %19 = linalg.fill ins(%cst_29 : f32) outs(%18 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %20 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_26, %sharding_annotated_28 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%19 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_30 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_31 = shard.shard %arg8 to %sharding_30 annotate_for_users : tensor<4x16xf32>
    %21 = tensor.empty() : tensor<16x32x4x16xf32>
    %22 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%20, %sharding_annotated_31 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%21 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_32 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_33 = shard.shard %22 to %sharding_32 : tensor<16x32x4x16xf32>
    %sharding_34 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_35 = shard.shard %sharding_annotated_15 to %sharding_34 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_36 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_37 = shard.shard %sharding_annotated_24 to %sharding_36 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_38 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_39 = shard.shard %sharding_annotated_33 to %sharding_38 annotate_for_users : tensor<16x32x4x16xf32>
    %cst_40 = arith.constant 0.000000e+00 : f32
    %23 = tensor.empty() : tensor<16x4x32x32xf32>
    %24 = linalg.fill ins(%cst_40 : f32) outs(%23 : tensor<16x4x32x32xf32>) -> tensor<16x4x32x32xf32>
    %25 = linalg.generic {indexing_maps = [#map14, #map15, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_35, %sharding_annotated_37 : tensor<16x32x4x16xf32>, tensor<16x32x4x16xf32>) outs(%24 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x4x32x32xf32>
    %26 = tensor.empty() : tensor<32x32xf32>
    %27 = linalg.generic {indexing_maps = [#map16], iterator_types = ["parallel", "parallel"]} outs(%26 : tensor<32x32xf32>) {
    ^bb0(%out: f32):
      %165 = linalg.index 0 : index
      %166 = linalg.index 1 : index
      %167 = arith.cmpi ult, %165, %166 : index
      %cst_212 = arith.constant 0.000000e+00 : f32
      %cst_213 = arith.constant 0xFF800000 : f32
      %168 = arith.select %167, %cst_213, %cst_212 : f32
      linalg.yield %168 : f32
    } -> tensor<32x32xf32>
    %sharding_41 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_42 = shard.shard %27 to %sharding_41 : tensor<32x32xf32>
    %cst_43 = arith.constant 0xFF800000 : f32
    %28 = tensor.empty() : tensor<16x4x32xf32>
    %29 = linalg.fill ins(%cst_43 : f32) outs(%28 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %30 = linalg.generic {indexing_maps = [#map12, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%25, %sharding_annotated_42 : tensor<16x4x32x32xf32>, tensor<32x32xf32>) outs(%29 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 2.500000e-01 : f32
      %165 = arith.mulf %in, %cst_213 : f32
      %166 = arith.addf %165, %in_212 : f32
      %167 = arith.maximumf %out, %166 : f32
      linalg.yield %167 : f32
    } -> tensor<16x4x32xf32>
    %31 = tensor.empty() : tensor<16x4x32x32xf32>
    %32 = linalg.generic {indexing_maps = [#map12, #map13, #map4, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%25, %sharding_annotated_42, %30 : tensor<16x4x32x32xf32>, tensor<32x32xf32>, tensor<16x4x32xf32>) outs(%31 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %out: f32):
      %cst_214 = arith.constant 2.500000e-01 : f32
      %165 = arith.mulf %in, %cst_214 : f32
      %166 = arith.addf %165, %in_212 : f32
      %167 = arith.subf %166, %in_213 : f32
      %168 = math.exp %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x4x32x32xf32>
    %cst_44 = arith.constant 0.000000e+00 : f32
    %33 = tensor.empty() : tensor<16x4x32xf32>
    %34 = linalg.fill ins(%cst_44 : f32) outs(%33 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %35 = linalg.generic {indexing_maps = [#map12, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%32 : tensor<16x4x32x32xf32>) outs(%34 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x4x32xf32>
    %cst_45 = arith.constant 0.000000e+00 : f32
    %36 = tensor.empty() : tensor<16x32x4x16xf32>
    %37 = linalg.fill ins(%cst_45 : f32) outs(%36 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %38 = linalg.generic {indexing_maps = [#map14, #map17, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%32, %sharding_annotated_39 : tensor<16x4x32x32xf32>, tensor<16x32x4x16xf32>) outs(%37 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %39 = tensor.empty() : tensor<16x32x4x16xf32>
    %40 = linalg.generic {indexing_maps = [#map12, #map18, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%38, %35 : tensor<16x32x4x16xf32>, tensor<16x4x32xf32>) outs(%39 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.divf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_46 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_47 = shard.shard %40 to %sharding_46 : tensor<16x32x4x16xf32>
    %sharding_48 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_49 = shard.shard %sharding_annotated_47 to %sharding_48 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_50 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_51 = shard.shard %arg9 to %sharding_50 annotate_for_users : tensor<64x4x16xf32>
    %cst_52 = arith.constant 0.000000e+00 : f32
    %41 = tensor.empty() : tensor<16x32x64xf32>
    %42 = linalg.fill ins(%cst_52 : f32) outs(%41 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %43 = linalg.generic {indexing_maps = [#map19, #map10, #map20], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%sharding_annotated_49, %sharding_annotated_51 : tensor<16x32x4x16xf32>, tensor<64x4x16xf32>) outs(%42 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x64xf32>
    %sharding_53 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_54 = shard.shard %arg10 to %sharding_53 annotate_for_users : tensor<64xf32>
    %44 = tensor.empty() : tensor<16x32x64xf32>
    %45 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%43, %sharding_annotated_54 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%44 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_55 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_56 = shard.shard %45 to %sharding_55 : tensor<16x32x64xf32>
    %46 = tensor.empty() : tensor<16x32x64xf32>
    %47 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %sharding_annotated_56 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%46 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_57 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_58 = shard.shard %47 to %sharding_57 annotate_for_users : tensor<16x32x64xf32>
    %sharding_59 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_60 = shard.shard %arg11 to %sharding_59 annotate_for_users : tensor<64xf32>
    %sharding_61 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_62 = shard.shard %arg12 to %sharding_61 annotate_for_users : tensor<64xf32>
    %cst_63 = arith.constant 0.000000e+00 : f32
    %48 = tensor.empty() : tensor<16x32xf32>
    %49 = linalg.fill ins(%cst_63 : f32) outs(%48 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %50 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_58 : tensor<16x32x64xf32>) outs(%49 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x32xf32>
    %cst_64 = arith.constant 0.000000e+00 : f32
    %51 = tensor.empty() : tensor<16x32xf32>
    %52 = linalg.fill ins(%cst_64 : f32) outs(%51 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %53 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_58, %50 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%52 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_212, %cst_213 : f32
      %166 = arith.subf %in, %165 : f32
      %167 = arith.mulf %166, %166 : f32
      %168 = arith.addf %out, %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x32xf32>
    %54 = tensor.empty() : tensor<16x32x64xf32>
    %55 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_58, %53, %sharding_annotated_60, %50, %sharding_annotated_62 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%54 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %in_214: f32, %in_215: f32, %out: f32):
      %cst_216 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_214, %cst_216 : f32
      %166 = arith.subf %in, %165 : f32
      %cst_217 = arith.constant 1.562500e-02 : f32
      %167 = arith.mulf %in_212, %cst_217 : f32
      %cst_218 = arith.constant 9.99999974E-6 : f32
      %168 = arith.addf %167, %cst_218 : f32
      %169 = math.rsqrt %168 : f32
      %170 = arith.mulf %166, %169 : f32
      %171 = arith.mulf %170, %in_213 : f32
      %172 = arith.addf %171, %in_215 : f32
      linalg.yield %172 : f32
    } -> tensor<16x32x64xf32>
    %sharding_65 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_66 = shard.shard %55 to %sharding_65 : tensor<16x32x64xf32>
    %sharding_67 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_68 = shard.shard %sharding_annotated_66 to %sharding_67 annotate_for_users : tensor<16x32x64xf32>
    %sharding_69 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_70 = shard.shard %arg13 to %sharding_69 annotate_for_users : tensor<256x64xf32>
    %cst_71 = arith.constant 0.000000e+00 : f32
    %56 = tensor.empty() : tensor<16x32x256xf32>
    %57 = linalg.fill ins(%cst_71 : f32) outs(%56 : tensor<16x32x256xf32>) -> tensor<16x32x256xf32>
    %58 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_68, %sharding_annotated_70 : tensor<16x32x64xf32>, tensor<256x64xf32>) outs(%57 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x256xf32>
    %sharding_72 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_73 = shard.shard %arg14 to %sharding_72 annotate_for_users : tensor<256xf32>
    %59 = tensor.empty() : tensor<16x32x256xf32>
    %60 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%58, %sharding_annotated_73 : tensor<16x32x256xf32>, tensor<256xf32>) outs(%59 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x256xf32>
    %sharding_74 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_75 = shard.shard %60 to %sharding_74 : tensor<16x32x256xf32>
    %61 = tensor.empty() : tensor<16x32x256xf32>
    %62 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_75 : tensor<16x32x256xf32>) outs(%61 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_212 = arith.constant 5.000000e-01 : f32
      %cst_213 = arith.constant 1.000000e+00 : f32
      %cst_214 = arith.constant 0.707106769 : f32
      %165 = arith.mulf %in, %cst_214 : f32
      %166 = math.erf %165 : f32
      %167 = arith.addf %cst_213, %166 : f32
      %168 = arith.mulf %cst_212, %in : f32
      %169 = arith.mulf %168, %167 : f32
      linalg.yield %169 : f32
    } -> tensor<16x32x256xf32>
    %sharding_76 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_77 = shard.shard %62 to %sharding_76 annotate_for_users : tensor<16x32x256xf32>
    %sharding_78 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_79 = shard.shard %arg15 to %sharding_78 annotate_for_users : tensor<64x256xf32>
    %cst_80 = arith.constant 0.000000e+00 : f32
    %63 = tensor.empty() : tensor<16x32x64xf32>
    %64 = linalg.fill ins(%cst_80 : f32) outs(%63 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %65 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_77, %sharding_annotated_79 : tensor<16x32x256xf32>, tensor<64x256xf32>) outs(%64 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x64xf32>
    %sharding_81 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_82 = shard.shard %arg16 to %sharding_81 annotate_for_users : tensor<64xf32>
    %66 = tensor.empty() : tensor<16x32x64xf32>
    %67 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%65, %sharding_annotated_82 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%66 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_83 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_84 = shard.shard %67 to %sharding_83 : tensor<16x32x64xf32>
    %68 = tensor.empty() : tensor<16x32x64xf32>
    %69 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%47, %sharding_annotated_84 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%68 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_85 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_86 = shard.shard %69 to %sharding_85 : tensor<16x32x64xf32>
    %sharding_87 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_88 = shard.shard %sharding_annotated_86 to %sharding_87 annotate_for_users : tensor<16x32x64xf32>
    %sharding_89 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_90 = shard.shard %arg17 to %sharding_89 annotate_for_users : tensor<64xf32>
    %sharding_91 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_92 = shard.shard %arg18 to %sharding_91 annotate_for_users : tensor<64xf32>
    %cst_93 = arith.constant 0.000000e+00 : f32
    %70 = tensor.empty() : tensor<16x32xf32>
    %71 = linalg.fill ins(%cst_93 : f32) outs(%70 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %72 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_88 : tensor<16x32x64xf32>) outs(%71 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x32xf32>
    %cst_94 = arith.constant 0.000000e+00 : f32
    %73 = tensor.empty() : tensor<16x32xf32>
    %74 = linalg.fill ins(%cst_94 : f32) outs(%73 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %75 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_88, %72 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%74 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_212, %cst_213 : f32
      %166 = arith.subf %in, %165 : f32
      %167 = arith.mulf %166, %166 : f32
      %168 = arith.addf %out, %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x32xf32>
    %76 = tensor.empty() : tensor<16x32x64xf32>
    %77 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_88, %75, %sharding_annotated_90, %72, %sharding_annotated_92 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%76 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %in_214: f32, %in_215: f32, %out: f32):
      %cst_216 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_214, %cst_216 : f32
      %166 = arith.subf %in, %165 : f32
      %cst_217 = arith.constant 1.562500e-02 : f32
      %167 = arith.mulf %in_212, %cst_217 : f32
      %cst_218 = arith.constant 9.99999974E-6 : f32
      %168 = arith.addf %167, %cst_218 : f32
      %169 = math.rsqrt %168 : f32
      %170 = arith.mulf %166, %169 : f32
      %171 = arith.mulf %170, %in_213 : f32
      %172 = arith.addf %171, %in_215 : f32
      linalg.yield %172 : f32
    } -> tensor<16x32x64xf32>
    %sharding_95 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_96 = shard.shard %77 to %sharding_95 : tensor<16x32x64xf32>
    %sharding_97 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_98 = shard.shard %sharding_annotated_96 to %sharding_97 annotate_for_users : tensor<16x32x64xf32>
    %sharding_99 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_100 = shard.shard %arg19 to %sharding_99 annotate_for_users : tensor<4x16x64xf32>
    %cst_101 = arith.constant 0.000000e+00 : f32
    %78 = tensor.empty() : tensor<16x32x4x16xf32>
    %79 = linalg.fill ins(%cst_101 : f32) outs(%78 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %80 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_98, %sharding_annotated_100 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%79 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_102 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_103 = shard.shard %arg20 to %sharding_102 annotate_for_users : tensor<4x16xf32>
    %81 = tensor.empty() : tensor<16x32x4x16xf32>
    %82 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%80, %sharding_annotated_103 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%81 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_104 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_105 = shard.shard %82 to %sharding_104 : tensor<16x32x4x16xf32>
    %sharding_106 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_107 = shard.shard %sharding_annotated_96 to %sharding_106 annotate_for_users : tensor<16x32x64xf32>
    %sharding_108 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_109 = shard.shard %arg21 to %sharding_108 annotate_for_users : tensor<4x16x64xf32>
    %cst_110 = arith.constant 0.000000e+00 : f32
    %83 = tensor.empty() : tensor<16x32x4x16xf32>
    %84 = linalg.fill ins(%cst_110 : f32) outs(%83 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %85 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_107, %sharding_annotated_109 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%84 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_111 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_112 = shard.shard %arg22 to %sharding_111 annotate_for_users : tensor<4x16xf32>
    %86 = tensor.empty() : tensor<16x32x4x16xf32>
    %87 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%85, %sharding_annotated_112 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%86 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_113 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_114 = shard.shard %87 to %sharding_113 : tensor<16x32x4x16xf32>
    %sharding_115 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_116 = shard.shard %sharding_annotated_96 to %sharding_115 annotate_for_users : tensor<16x32x64xf32>
    %sharding_117 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_118 = shard.shard %arg23 to %sharding_117 annotate_for_users : tensor<4x16x64xf32>
    %cst_119 = arith.constant 0.000000e+00 : f32
    %88 = tensor.empty() : tensor<16x32x4x16xf32>
    %89 = linalg.fill ins(%cst_119 : f32) outs(%88 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %90 = linalg.generic {indexing_maps = [#map9, #map10, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_116, %sharding_annotated_118 : tensor<16x32x64xf32>, tensor<4x16x64xf32>) outs(%89 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_120 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_121 = shard.shard %arg24 to %sharding_120 annotate_for_users : tensor<4x16xf32>
    %91 = tensor.empty() : tensor<16x32x4x16xf32>
    %92 = linalg.generic {indexing_maps = [#map12, #map13, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%90, %sharding_annotated_121 : tensor<16x32x4x16xf32>, tensor<4x16xf32>) outs(%91 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_122 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_123 = shard.shard %92 to %sharding_122 : tensor<16x32x4x16xf32>
    %sharding_124 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_125 = shard.shard %sharding_annotated_105 to %sharding_124 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_126 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_127 = shard.shard %sharding_annotated_114 to %sharding_126 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_128 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_129 = shard.shard %sharding_annotated_123 to %sharding_128 annotate_for_users : tensor<16x32x4x16xf32>
    %cst_130 = arith.constant 0.000000e+00 : f32
    %93 = tensor.empty() : tensor<16x4x32x32xf32>
    %94 = linalg.fill ins(%cst_130 : f32) outs(%93 : tensor<16x4x32x32xf32>) -> tensor<16x4x32x32xf32>
    %95 = linalg.generic {indexing_maps = [#map14, #map15, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_125, %sharding_annotated_127 : tensor<16x32x4x16xf32>, tensor<16x32x4x16xf32>) outs(%94 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x4x32x32xf32>
    %96 = tensor.empty() : tensor<32x32xf32>
    %97 = linalg.generic {indexing_maps = [#map16], iterator_types = ["parallel", "parallel"]} outs(%96 : tensor<32x32xf32>) {
    ^bb0(%out: f32):
      %165 = linalg.index 0 : index
      %166 = linalg.index 1 : index
      %167 = arith.cmpi ult, %165, %166 : index
      %cst_212 = arith.constant 0.000000e+00 : f32
      %cst_213 = arith.constant 0xFF800000 : f32
      %168 = arith.select %167, %cst_213, %cst_212 : f32
      linalg.yield %168 : f32
    } -> tensor<32x32xf32>
    %sharding_131 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_132 = shard.shard %97 to %sharding_131 : tensor<32x32xf32>
    %cst_133 = arith.constant 0xFF800000 : f32
    %98 = tensor.empty() : tensor<16x4x32xf32>
    %99 = linalg.fill ins(%cst_133 : f32) outs(%98 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %100 = linalg.generic {indexing_maps = [#map12, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%95, %sharding_annotated_132 : tensor<16x4x32x32xf32>, tensor<32x32xf32>) outs(%99 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 2.500000e-01 : f32
      %165 = arith.mulf %in, %cst_213 : f32
      %166 = arith.addf %165, %in_212 : f32
      %167 = arith.maximumf %out, %166 : f32
      linalg.yield %167 : f32
    } -> tensor<16x4x32xf32>
    %101 = tensor.empty() : tensor<16x4x32x32xf32>
    %102 = linalg.generic {indexing_maps = [#map12, #map13, #map4, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%95, %sharding_annotated_132, %100 : tensor<16x4x32x32xf32>, tensor<32x32xf32>, tensor<16x4x32xf32>) outs(%101 : tensor<16x4x32x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %out: f32):
      %cst_214 = arith.constant 2.500000e-01 : f32
      %165 = arith.mulf %in, %cst_214 : f32
      %166 = arith.addf %165, %in_212 : f32
      %167 = arith.subf %166, %in_213 : f32
      %168 = math.exp %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x4x32x32xf32>
    %cst_134 = arith.constant 0.000000e+00 : f32
    %103 = tensor.empty() : tensor<16x4x32xf32>
    %104 = linalg.fill ins(%cst_134 : f32) outs(%103 : tensor<16x4x32xf32>) -> tensor<16x4x32xf32>
    %105 = linalg.generic {indexing_maps = [#map12, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%102 : tensor<16x4x32x32xf32>) outs(%104 : tensor<16x4x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x4x32xf32>
    %cst_135 = arith.constant 0.000000e+00 : f32
    %106 = tensor.empty() : tensor<16x32x4x16xf32>
    %107 = linalg.fill ins(%cst_135 : f32) outs(%106 : tensor<16x32x4x16xf32>) -> tensor<16x32x4x16xf32>
    %108 = linalg.generic {indexing_maps = [#map14, #map17, #map11], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%102, %sharding_annotated_129 : tensor<16x4x32x32xf32>, tensor<16x32x4x16xf32>) outs(%107 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x4x16xf32>
    %109 = tensor.empty() : tensor<16x32x4x16xf32>
    %110 = linalg.generic {indexing_maps = [#map12, #map18, #map12], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%108, %105 : tensor<16x32x4x16xf32>, tensor<16x4x32xf32>) outs(%109 : tensor<16x32x4x16xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.divf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x4x16xf32>
    %sharding_136 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_137 = shard.shard %110 to %sharding_136 : tensor<16x32x4x16xf32>
    %sharding_138 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_139 = shard.shard %sharding_annotated_137 to %sharding_138 annotate_for_users : tensor<16x32x4x16xf32>
    %sharding_140 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_141 = shard.shard %arg25 to %sharding_140 annotate_for_users : tensor<64x4x16xf32>
    %cst_142 = arith.constant 0.000000e+00 : f32
    %111 = tensor.empty() : tensor<16x32x64xf32>
    %112 = linalg.fill ins(%cst_142 : f32) outs(%111 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %113 = linalg.generic {indexing_maps = [#map19, #map10, #map20], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%sharding_annotated_139, %sharding_annotated_141 : tensor<16x32x4x16xf32>, tensor<64x4x16xf32>) outs(%112 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x64xf32>
    %sharding_143 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_144 = shard.shard %arg26 to %sharding_143 annotate_for_users : tensor<64xf32>
    %114 = tensor.empty() : tensor<16x32x64xf32>
    %115 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%113, %sharding_annotated_144 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%114 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_145 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_146 = shard.shard %115 to %sharding_145 : tensor<16x32x64xf32>
    %116 = tensor.empty() : tensor<16x32x64xf32>
    %117 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_86, %sharding_annotated_146 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%116 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_147 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_148 = shard.shard %117 to %sharding_147 annotate_for_users : tensor<16x32x64xf32>
    %sharding_149 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_150 = shard.shard %arg27 to %sharding_149 annotate_for_users : tensor<64xf32>
    %sharding_151 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_152 = shard.shard %arg28 to %sharding_151 annotate_for_users : tensor<64xf32>
    %cst_153 = arith.constant 0.000000e+00 : f32
    %118 = tensor.empty() : tensor<16x32xf32>
    %119 = linalg.fill ins(%cst_153 : f32) outs(%118 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %120 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_148 : tensor<16x32x64xf32>) outs(%119 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x32xf32>
    %cst_154 = arith.constant 0.000000e+00 : f32
    %121 = tensor.empty() : tensor<16x32xf32>
    %122 = linalg.fill ins(%cst_154 : f32) outs(%121 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %123 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_148, %120 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%122 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_212, %cst_213 : f32
      %166 = arith.subf %in, %165 : f32
      %167 = arith.mulf %166, %166 : f32
      %168 = arith.addf %out, %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x32xf32>
    %124 = tensor.empty() : tensor<16x32x64xf32>
    %125 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_148, %123, %sharding_annotated_150, %120, %sharding_annotated_152 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%124 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %in_214: f32, %in_215: f32, %out: f32):
      %cst_216 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_214, %cst_216 : f32
      %166 = arith.subf %in, %165 : f32
      %cst_217 = arith.constant 1.562500e-02 : f32
      %167 = arith.mulf %in_212, %cst_217 : f32
      %cst_218 = arith.constant 9.99999974E-6 : f32
      %168 = arith.addf %167, %cst_218 : f32
      %169 = math.rsqrt %168 : f32
      %170 = arith.mulf %166, %169 : f32
      %171 = arith.mulf %170, %in_213 : f32
      %172 = arith.addf %171, %in_215 : f32
      linalg.yield %172 : f32
    } -> tensor<16x32x64xf32>
    %sharding_155 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_156 = shard.shard %125 to %sharding_155 : tensor<16x32x64xf32>
    %sharding_157 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_158 = shard.shard %sharding_annotated_156 to %sharding_157 annotate_for_users : tensor<16x32x64xf32>
    %sharding_159 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_160 = shard.shard %arg29 to %sharding_159 annotate_for_users : tensor<256x64xf32>
    %cst_161 = arith.constant 0.000000e+00 : f32
    %126 = tensor.empty() : tensor<16x32x256xf32>
    %127 = linalg.fill ins(%cst_161 : f32) outs(%126 : tensor<16x32x256xf32>) -> tensor<16x32x256xf32>
    %128 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_158, %sharding_annotated_160 : tensor<16x32x64xf32>, tensor<256x64xf32>) outs(%127 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x256xf32>
    %sharding_162 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_163 = shard.shard %arg30 to %sharding_162 annotate_for_users : tensor<256xf32>
    %129 = tensor.empty() : tensor<16x32x256xf32>
    %130 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%128, %sharding_annotated_163 : tensor<16x32x256xf32>, tensor<256xf32>) outs(%129 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x256xf32>
    %sharding_164 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_165 = shard.shard %130 to %sharding_164 : tensor<16x32x256xf32>
    %131 = tensor.empty() : tensor<16x32x256xf32>
    %132 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_165 : tensor<16x32x256xf32>) outs(%131 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_212 = arith.constant 5.000000e-01 : f32
      %cst_213 = arith.constant 1.000000e+00 : f32
      %cst_214 = arith.constant 0.707106769 : f32
      %165 = arith.mulf %in, %cst_214 : f32
      %166 = math.erf %165 : f32
      %167 = arith.addf %cst_213, %166 : f32
      %168 = arith.mulf %cst_212, %in : f32
      %169 = arith.mulf %168, %167 : f32
      linalg.yield %169 : f32
    } -> tensor<16x32x256xf32>
    %sharding_166 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_167 = shard.shard %132 to %sharding_166 annotate_for_users : tensor<16x32x256xf32>
    %sharding_168 = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
    %sharding_annotated_169 = shard.shard %arg31 to %sharding_168 annotate_for_users : tensor<64x256xf32>
    %cst_170 = arith.constant 0.000000e+00 : f32
    %133 = tensor.empty() : tensor<16x32x64xf32>
    %134 = linalg.fill ins(%cst_170 : f32) outs(%133 : tensor<16x32x64xf32>) -> tensor<16x32x64xf32>
    %135 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_167, %sharding_annotated_169 : tensor<16x32x256xf32>, tensor<64x256xf32>) outs(%134 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x64xf32>
    %sharding_171 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_172 = shard.shard %arg32 to %sharding_171 annotate_for_users : tensor<64xf32>
    %136 = tensor.empty() : tensor<16x32x64xf32>
    %137 = linalg.generic {indexing_maps = [#map5, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%135, %sharding_annotated_172 : tensor<16x32x64xf32>, tensor<64xf32>) outs(%136 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_173 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_174 = shard.shard %137 to %sharding_173 : tensor<16x32x64xf32>
    %138 = tensor.empty() : tensor<16x32x64xf32>
    %139 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%117, %sharding_annotated_174 : tensor<16x32x64xf32>, tensor<16x32x64xf32>) outs(%138 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.addf %in, %in_212 : f32
      linalg.yield %165 : f32
    } -> tensor<16x32x64xf32>
    %sharding_175 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_176 = shard.shard %139 to %sharding_175 : tensor<16x32x64xf32>
    %sharding_177 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_178 = shard.shard %sharding_annotated_176 to %sharding_177 annotate_for_users : tensor<16x32x64xf32>
    %sharding_179 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_180 = shard.shard %arg33 to %sharding_179 annotate_for_users : tensor<64xf32>
    %sharding_181 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_182 = shard.shard %arg34 to %sharding_181 annotate_for_users : tensor<64xf32>
    %cst_183 = arith.constant 0.000000e+00 : f32
    %140 = tensor.empty() : tensor<16x32xf32>
    %141 = linalg.fill ins(%cst_183 : f32) outs(%140 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %142 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_178 : tensor<16x32x64xf32>) outs(%141 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.addf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x32xf32>
    %cst_184 = arith.constant 0.000000e+00 : f32
    %143 = tensor.empty() : tensor<16x32xf32>
    %144 = linalg.fill ins(%cst_184 : f32) outs(%143 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %145 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_178, %142 : tensor<16x32x64xf32>, tensor<16x32xf32>) outs(%144 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %cst_213 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_212, %cst_213 : f32
      %166 = arith.subf %in, %165 : f32
      %167 = arith.mulf %166, %166 : f32
      %168 = arith.addf %out, %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x32xf32>
    %146 = tensor.empty() : tensor<16x32x64xf32>
    %147 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7, #map8, #map5], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_178, %145, %sharding_annotated_180, %142, %sharding_annotated_182 : tensor<16x32x64xf32>, tensor<16x32xf32>, tensor<64xf32>, tensor<16x32xf32>, tensor<64xf32>) outs(%146 : tensor<16x32x64xf32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %in_214: f32, %in_215: f32, %out: f32):
      %cst_216 = arith.constant 1.562500e-02 : f32
      %165 = arith.mulf %in_214, %cst_216 : f32
      %166 = arith.subf %in, %165 : f32
      %cst_217 = arith.constant 1.562500e-02 : f32
      %167 = arith.mulf %in_212, %cst_217 : f32
      %cst_218 = arith.constant 9.99999974E-6 : f32
      %168 = arith.addf %167, %cst_218 : f32
      %169 = math.rsqrt %168 : f32
      %170 = arith.mulf %166, %169 : f32
      %171 = arith.mulf %170, %in_213 : f32
      %172 = arith.addf %171, %in_215 : f32
      linalg.yield %172 : f32
    } -> tensor<16x32x64xf32>
    %sharding_185 = shard.sharding @grid split_axes = [[0], [1], []] : !shard.sharding
    %sharding_annotated_186 = shard.shard %147 to %sharding_185 : tensor<16x32x64xf32>
    %sharding_187 = shard.sharding @grid split_axes = [[0], [], []] : !shard.sharding
    %sharding_annotated_188 = shard.shard %sharding_annotated_186 to %sharding_187 annotate_for_users : tensor<16x32x64xf32>
    %sharding_189 = shard.sharding @grid split_axes = [[1]] : !shard.sharding
    %sharding_annotated_190 = shard.shard %arg35 to %sharding_189 annotate_for_users : tensor<256x64xf32>
    %cst_191 = arith.constant 0.000000e+00 : f32
    %148 = tensor.empty() : tensor<16x32x256xf32>
    %149 = linalg.fill ins(%cst_191 : f32) outs(%148 : tensor<16x32x256xf32>) -> tensor<16x32x256xf32>
    %150 = linalg.generic {indexing_maps = [#map21, #map13, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sharding_annotated_188, %sharding_annotated_190 : tensor<16x32x64xf32>, tensor<256x64xf32>) outs(%149 : tensor<16x32x256xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.mulf %in, %in_212 : f32
      %166 = arith.addf %out, %165 : f32
      linalg.yield %166 : f32
    } -> tensor<16x32x256xf32>
    %sharding_192 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_193 = shard.shard %150 to %sharding_192 : tensor<16x32x256xf32>
    %sharding_194 = shard.sharding @grid split_axes = [[0], [], [1]] : !shard.sharding
    %sharding_annotated_195 = shard.shard %sharding_annotated_193 to %sharding_194 annotate_for_users : tensor<16x32x256xf32>
    %sharding_196 = shard.sharding @grid split_axes = [[0], []] : !shard.sharding
    %sharding_annotated_197 = shard.shard %arg36 to %sharding_196 annotate_for_users : tensor<16x32xi32>
    %151 = tensor.empty() : tensor<256xi32>
    %152 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%151 : tensor<256xi32>) {
    ^bb0(%out: i32):
      %165 = linalg.index 0 : index
      %166 = arith.index_cast %165 : index to i32
      linalg.yield %166 : i32
    } -> tensor<256xi32>
    %sharding_198 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_199 = shard.shard %152 to %sharding_198 : tensor<256xi32>
    %cst_200 = arith.constant 0xFF800000 : f32
    %153 = tensor.empty() : tensor<16x32xf32>
    %154 = linalg.fill ins(%cst_200 : f32) outs(%153 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %155 = linalg.generic {indexing_maps = [#map5, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_195 : tensor<16x32x256xf32>) outs(%154 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %165 = arith.maximumf %out, %in : f32
      linalg.yield %165 : f32
    } -> tensor<16x32xf32>
    %cst_201 = arith.constant 0.000000e+00 : f32
    %156 = tensor.empty() : tensor<16x32xf32>
    %157 = linalg.fill ins(%cst_201 : f32) outs(%156 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %158 = linalg.generic {indexing_maps = [#map5, #map7, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_195, %155 : tensor<16x32x256xf32>, tensor<16x32xf32>) outs(%157 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: f32, %out: f32):
      %165 = arith.subf %in, %in_212 : f32
      %166 = math.exp %165 : f32
      %167 = arith.addf %out, %166 : f32
      linalg.yield %167 : f32
    } -> tensor<16x32xf32>
    %cst_202 = arith.constant 0.000000e+00 : f32
    %159 = tensor.empty() : tensor<16x32xf32>
    %160 = linalg.fill ins(%cst_202 : f32) outs(%159 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %161 = linalg.generic {indexing_maps = [#map5, #map7, #map8, #map7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sharding_annotated_195, %sharding_annotated_197, %sharding_annotated_199 : tensor<16x32x256xf32>, tensor<16x32xi32>, tensor<256xi32>) outs(%160 : tensor<16x32xf32>) {
    ^bb0(%in: f32, %in_212: i32, %in_213: i32, %out: f32):
      %165 = arith.cmpi eq, %in_212, %in_213 : i32
      %166 = arith.uitofp %165 : i1 to f32
      %167 = arith.mulf %166, %in : f32
      %168 = arith.addf %out, %167 : f32
      linalg.yield %168 : f32
    } -> tensor<16x32xf32>
    %sharding_203 = shard.sharding @grid split_axes = [[0], []] : !shard.sharding
    %sharding_annotated_204 = shard.shard %158 to %sharding_203 annotate_for_users : tensor<16x32xf32>
    %sharding_205 = shard.sharding @grid split_axes = [[0], []] : !shard.sharding
    %sharding_annotated_206 = shard.shard %155 to %sharding_205 annotate_for_users : tensor<16x32xf32>
    %sharding_207 = shard.sharding @grid split_axes = [[0], []] : !shard.sharding
    %sharding_annotated_208 = shard.shard %161 to %sharding_207 annotate_for_users : tensor<16x32xf32>
    %cst_209 = arith.constant 0.000000e+00 : f32
    %162 = tensor.empty() : tensor<f32>
    %163 = linalg.fill ins(%cst_209 : f32) outs(%162 : tensor<f32>) -> tensor<f32>
    %164 = linalg.generic {indexing_maps = [#map16, #map16, #map16, #map22], iterator_types = ["reduction", "reduction"]} ins(%sharding_annotated_204, %sharding_annotated_206, %sharding_annotated_208 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) outs(%163 : tensor<f32>) {
    ^bb0(%in: f32, %in_212: f32, %in_213: f32, %out: f32):
      %165 = math.log %in : f32
      %166 = arith.addf %165, %in_212 : f32
      %167 = arith.subf %166, %in_213 : f32
      %cst_214 = arith.constant 0.001953125 : f32
      %168 = arith.mulf %167, %cst_214 : f32
      %169 = arith.addf %out, %168 : f32
      linalg.yield %169 : f32
    } -> tensor<f32>
    %sharding_210 = shard.sharding @grid split_axes = [[]] : !shard.sharding
    %sharding_annotated_211 = shard.shard %164 to %sharding_210 : tensor<f32>
    return %sharding_annotated_211 : tensor<f32>
  }
}

# exit 0
