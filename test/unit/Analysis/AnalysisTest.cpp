//===- AnalysisTest.cpp - tgraph costs against published formulas ---------===//

#include "Context.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Cost/Evaluate.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Frontend/ModelSource.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

using namespace trident;
using namespace trident::analysis;

namespace {

using test::context;
using test::load;

const LayerGroup &blockGroup(const LayerProfile &p) {
  for (const LayerGroup &g : p.groups)
    if (g.cost.kind == LayerKind::Block)
      return g;
  FAIL("no block group");
  return p.groups.front();
}

std::string dataDir() {
  return std::string(TRIDENT_SOURCE_DIR) + "/test/data/models/";
}

} // namespace

TEST_CASE("GPT-3 175B train FLOPs match Megatron's formula",
          "[analysis][paper]") {
  auto m = load("gpt3-175b", 2048);
  ModelSummary s = summarizeModel(m.model());
  // Narayanan et al. 2021 / Korthikanti et al. 2022 model FLOPs per
  // iteration: 72 B s L h^2 (1 + s/(6h) + V/(12hL)); per sequence B = 1.
  const double L = 96, h = 12288, sq = 2048, V = 51200;
  double megatron =
      72.0 * sq * L * h * h * (1 + sq / (6 * h) + V / (12 * h * L));
  double ours = s.fwdFlopsPerSequence + s.bwdFlopsPerSequence;
  CHECK(ours == Approx(megatron).epsilon(0.005));
  CHECK(s.trainFlopsPerToken * sq == Approx(ours));
  CHECK(s.trainFlopsPerToken == Approx(3 * s.fwdFlopsPerToken));
  CHECK(s.layers == 96);
}

TEST_CASE("GPT-3 175B activation bytes match Korthikanti et al. 2022",
          "[analysis][paper]") {
  auto m = load("gpt3-175b", 2048);
  ModelSummary s = summarizeModel(m.model());
  const double sq = 2048, b = 1, h = 12288, a = 96;
  // Sec. 4.1: s b h (34 + 5 a s / h) bytes per layer without recompute,
  // 34 s b h with selective recompute (16-bit activations).
  double none = sq * b * h * (34 + 5 * a * sq / h);
  double selective = 34 * sq * b * h;
  const LayerSummary *layer = nullptr;
  for (const LayerSummary &r : s.rows)
    if (r.kind == LayerKind::Block)
      layer = &r;
  REQUIRE(layer);
  CHECK(layer->savedBytes[0] == Approx(none).epsilon(0.01));
  CHECK(layer->savedBytes[1] == Approx(selective).epsilon(0.01));
  // Full recompute keeps the layer input only: 2 s b h.
  CHECK(layer->savedBytes[2] == Approx(2 * sq * b * h).epsilon(0.01));

  // The tensor-parallel split of Sec. 4.2: 10 sbh outside the TP region,
  // 24 sbh + 5 a s^2 b inside it.
  LayerProfile p = buildLayerProfile(m.model());
  const LayerCost &c = blockGroup(p).cost;
  CHECK(c.actReplicated == Approx(10 * sq * b * h).epsilon(0.01));
  CHECK(c.actTpSharded == Approx(24 * sq * b * h).epsilon(0.01));
  CHECK(c.actAttnCore == Approx(5 * a * sq * sq * b).epsilon(0.01));
  CHECK(c.actLayerInput == Approx(2 * sq * b * h));
  // Of those, the weight GEMMs' inputs (what FP8 training keeps in one
  // byte): the two norm outputs (QKV, FC1) outside the TP region, the
  // attention output (2 sbh) and the GeLU output (8 sbh) inside it.
  CHECK(c.actGemmInReplicated == Approx(4 * sq * b * h).epsilon(0.01));
  CHECK(c.actGemmInTpSharded == Approx(10 * sq * b * h).epsilon(0.01));
  for (const LayerGroup &g : p.groups)
    if (g.cost.kind == LayerKind::Head) // the LM head stays in 16 bits
      CHECK(g.cost.actGemmInTpSharded + g.cost.actGemmInReplicated == 0);
  // What the bf16 programs of `trident emit` keep in bf16 tensors: each
  // of those is read by linear layers alone (the norm outputs by QKV and
  // FC1, attention's output by the projection, GeLU's by FC2), and GeLU's
  // input (8 sbh) by GeLU alone.
  CHECK(c.actBf16TensorReplicated == c.actGemmInReplicated);
  CHECK(c.actBf16TensorTpSharded ==
        Approx(c.actGemmInTpSharded + 8 * sq * b * h).epsilon(0.01));
  CHECK(blockGroup(p).count == 96);
  CHECK(c.tpCollectivesFwd == 2);
  CHECK(c.tpCollectiveBytes == Approx(2 * sq * h));
}

TEST_CASE("parameter counts read off the IR are exact", "[analysis]") {
  struct Case {
    const char *file;
    int64_t params;
  } cases[] = {
      {"gpt2.json", 124439808},          {"llama-2-7b.json", 6738415616},
      {"llama-3-8b.json", 8030261248},   {"llama-3-70b.json", 70553706496},
      {"mistral-7b.json", 7241732096},   {"mixtral-8x7b.json", 46702792704},
  };
  for (const Case &c : cases) {
    auto m = load(dataDir() + c.file);
    INFO(c.file);
    CHECK(summarizeModel(m.model()).params == c.params);
  }
}

TEST_CASE("IR-derived counts equal the config-derived counts",
          "[analysis]") {
  std::vector<std::string> specs = frontend::zooModelNames();
  for (const auto &entry : std::filesystem::directory_iterator(dataDir()))
    if (entry.path().extension() == ".json")
      specs.push_back(entry.path().string());
  std::sort(specs.begin(), specs.end());
  for (const std::string &spec : specs) {
    INFO(spec);
    auto m = load(spec);
    REQUIRE(m.config.has_value());
    frontend::ParamCounts counts = frontend::countParams(*m.config);
    ModelSummary s = summarizeModel(m.model());
    CHECK(s.params == counts.total());
    CHECK(s.activeParams == counts.active);
    LayerProfile p = buildLayerProfile(m.model());
    int64_t sum = 0;
    for (const LayerGroup &g : p.groups)
      sum += g.cost.params() * g.count;
    CHECK(sum == s.params);
  }
}

TEST_CASE("repeated layers stay compact and differing layers apart",
          "[analysis]") {
  // A 126-layer model is one repeat, not 126 copies.
  auto llama = load("llama-3.1-405b", 8192);
  int repeats = 0;
  llama.model().walk([&](mlir::trident::graph::RepeatOp r) {
    ++repeats;
    CHECK(r.getCountAttr().getInt() == 126);
  });
  CHECK(repeats == 1);
  // gpt-oss alternates sliding and full attention: one repeat of period 2.
  auto oss = load(dataDir() + "gpt-oss-20b.json");
  ModelSummary s = summarizeModel(oss.model());
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[1].layersPerIteration == 2);
  CHECK(s.rows[1].count * 2 == s.layers);
  // DeepSeek-V3: three dense layers, then MoE layers.
  auto ds = load(dataDir() + "deepseek-v3.json", 4096);
  ModelSummary d = summarizeModel(ds.model());
  REQUIRE(d.rows.size() == 4);
  CHECK(d.rows[1].count == 3);
  CHECK(d.rows[2].count == 58);
}

TEST_CASE("MoE FLOPs count the routed experts only", "[analysis]") {
  auto m = load(dataDir() + "mixtral-8x7b.json", 4096);
  ModelSummary s = summarizeModel(m.model());
  // Per token forward: 2 x (active matmul parameters) + attention
  // 4 s h per layer (QK^T and AV over s keys, Megatron convention).
  const double L = 32, h = 4096, sq = 4096, V = 32000;
  double activeMatmul = 0;
  activeMatmul += L * (h * h * 2 + 2 * h * 1024); // q, o, k, v
  activeMatmul += L * (2 * 3 * h * 14336 + h * 8); // 2 experts + router
  activeMatmul += V * h;                           // LM head
  double expect = 2 * activeMatmul + L * 4 * sq * h;
  CHECK(s.fwdFlopsPerToken == Approx(expect).epsilon(1e-9));
  CHECK(s.activeParams == 12879925248);
}

TEST_CASE("tied LM head is recorded on the head group", "[analysis]") {
  auto m = load("tiny-gpt");
  LayerProfile p = buildLayerProfile(m.model());
  REQUIRE(p.groups.size() == 3);
  CHECK(p.groups.front().cost.kind == LayerKind::Embedding);
  CHECK(p.groups.back().cost.kind == LayerKind::Head);
  CHECK(p.groups.back().cost.tiedParams == 256 * 64);
  CHECK(p.groups.front().cost.paramsVocab == 256 * 64);
  CHECK(p.vocabSize == 256);
  CHECK(p.hidden == 64);
  CHECK(p.numLayers == 4);
  CHECK(p.dtype == DType::F32);
}

TEST_CASE("a tied head analysed from tgraph: the last stage's own copy and "
          "the gradient sum",
          "[analysis]") {
  // tiny-gpt ties its head to the 256 x 64 token embedding. On one stage
  // the matrix is held once; with two stages the last holds a copy (as
  // Megatron's output layer does) and the two stages sum its gradient.
  auto m = load("tiny-gpt");
  LayerProfile p = buildLayerProfile(m.model());
  Cluster c = *parseClusterSpec("dgx-h100:1");
  ParallelConfig one;
  one.dp = 8;
  one.microBatch = 1;
  one.globalBatch = 16;
  ParallelConfig two = one;
  two.dp = 4;
  two.pp = 2;
  Result<Evaluation> e1 = evaluate(p, c, one), e2 = evaluate(p, c, two);
  REQUIRE(e1.isOk());
  REQUIRE(e2.isOk());
  REQUIRE(e2->stages.size() == 2);
  double held = e2->stages[0].weightBytes + e2->stages[1].weightBytes -
                e1->stages[0].weightBytes;
  double perElem = e1->stages[0].weightBytes / double(p.totalParams);
  CHECK(held == Approx(256.0 * 64 * perElem).epsilon(1e-9));
  CHECK(e1->tiedEmbeddingSeconds == 0);
  CHECK(e2->tiedEmbeddingSeconds > 0);
  CHECK(e2->dpExposedSeconds >= e2->tiedEmbeddingSeconds);
}

TEST_CASE("DLRM's tables split over tp, one all-reduce per bag",
          "[analysis]") {
  // trident emit splits DLRM's tables by rows over tp and sums each
  // pooled bag over tp (docs/emit.md, "DLRM"): the profile says the same.
  auto m = load("dlrm");
  LayerProfile p = buildLayerProfile(m.model());
  REQUIRE(p.groups.size() == 1);
  const LayerCost &c = p.groups.front().cost;
  int64_t rows = 0;
  for (int64_t r : {39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63,
                    38532951, 2953546, 403346, 10, 2208, 11938, 155, 4, 976,
                    14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36})
    rows += r;
  CHECK(c.paramsVocab == rows * 128);
  CHECK(c.paramsTpSharded == 0);
  CHECK(c.paramsVocab + c.paramsReplicated == p.totalParams);
  CHECK(c.tpCollectivesFwd == 26);
  CHECK(c.tpCollectiveBytes == Approx(128 * 4)); // one [1, 128] f32 bag
}

TEST_CASE("an imported module prints, parses and prints identically",
          "[analysis]") {
  for (const char *spec : {"tiny-gpt", "mixtral-8x7b", "bert-large",
                           "vit-h-14", "dlrm"}) {
    INFO(spec);
    auto m = load(spec);
    std::string first, second;
    llvm::raw_string_ostream os1(first);
    m.module->print(os1);
    auto reparsed =
        mlir::parseSourceString<mlir::ModuleOp>(first, &context());
    REQUIRE(reparsed);
    llvm::raw_string_ostream os2(second);
    reparsed->print(os2);
    CHECK(first == second);
  }
}

TEST_CASE("bad model inputs are refused with the input named",
          "[analysis][errors]") {
  auto bad = frontend::loadModel(context(), "no-such-model");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.message().find("no-such-model") != std::string::npos);
  auto missing = frontend::loadModel(context(), "/nonexistent/config.json");
  REQUIRE_FALSE(missing.isOk());
  CHECK(missing.message().find("/nonexistent/config.json") !=
        std::string::npos);
  auto tooLong = frontend::loadModel(context(), "tiny-gpt", 64);
  REQUIRE_FALSE(tooLong.isOk());
  CHECK(tooLong.message().find("learned positions") != std::string::npos);
}

TEST_CASE("tensorParallelDim: where tp splits each parameter, read through "
          "the sharding rules' loops",
          "[analysis][sharding]") {
  using namespace mlir::trident::graph;
  // Each parameter's split dimension per reading op, as Megatron-LM holds
  // it (Shoeybi et al. 2019): column rows, row columns, a row bias whole,
  // the vocabulary rows of the token table and of the head, sinks by head.
  std::map<std::string, std::string> seen;
  for (const char *spec :
       {"tiny-gpt", TRIDENT_SOURCE_DIR "/test/e2e/models/tiny-gpt-oss.json"}) {
    auto m = load(spec, 32);
    m.model().walk([&](ParamOp p) {
      for (mlir::OpOperand &use : p.getResult().getUses()) {
        mlir::Operation *user = use.getOwner();
        std::optional<int64_t> dim =
            tensorParallelDim(user, use.getOperandNumber());
        std::optional<TensorParallelLoop> loop = tensorParallelLoop(user);
        std::string what = user->getName().stripDialect().str() + " " +
                           (dim ? std::to_string(*dim) : "-") +
                           (loop && loop->vocabulary ? " vocab" : "");
        seen[std::string(spec == std::string("tiny-gpt") ? "gpt " : "oss ") +
             p.getName().str() + " @ " + user->getName().stripDialect().str()] =
            what;
      }
    });
  }
  auto at = [&](const std::string &k) {
    INFO(k);
    REQUIRE(seen.count(k));
    return seen[k];
  };
  CHECK(at("gpt attn.q_proj.weight @ linear") == "linear 0");
  CHECK(at("gpt attn.q_proj.bias @ linear") == "linear 0");
  CHECK(at("gpt mlp.fc1.weight @ linear") == "linear 0");
  CHECK(at("gpt attn.o_proj.weight @ linear") == "linear 1");
  CHECK(at("gpt attn.o_proj.bias @ linear") == "linear -");
  CHECK(at("gpt mlp.fc2.bias @ linear") == "linear -");
  CHECK(at("gpt embed_tokens.weight @ embedding") == "embedding 0 vocab");
  CHECK(at("gpt embed_tokens.weight @ linear") == "linear 0 vocab");
  CHECK(at("gpt embed_positions.weight @ position_embedding") ==
        "position_embedding -");
  CHECK(at("gpt norm.weight @ layer_norm") == "layer_norm -");
  CHECK(at("oss sub0.attn.sinks @ attention") == "attention 0");
  CHECK(at("oss sub0.moe.experts.w_in @ moe") == "moe -");
  CHECK(at("oss sub0.attn.q_proj.weight @ linear") == "linear 0");
  CHECK(at("oss sub0.attn.o_proj.weight @ linear") == "linear 1");
}

TEST_CASE("FP8 leaves the LM head and the MoE router in 16 bits",
          "[analysis][fp8]") {
  // Megatron-LM's output layer is not a Transformer Engine module, and its
  // router runs in the input's dtype (GemmCost::sixteenBit).
  for (const char *spec :
       {"tiny-gpt", TRIDENT_SOURCE_DIR "/test/e2e/models/tiny-mixtral.json"}) {
    INFO(spec);
    auto m = load(spec, 32);
    LayerProfile p = buildLayerProfile(m.model());
    int head = 0, router = 0, fp8 = 0;
    for (const LayerGroup &g : p.groups)
      for (const GemmCost &gemm : g.cost.gemms) {
        if (gemm.attentionCore)
          continue;
        const DType t = gemmDtype(gemm, DType::FP8);
        CHECK(gemmDtype(gemm, DType::BF16) == DType::BF16);
        if (gemm.split == TpSplit::Vocab) {
          CHECK(t == DType::BF16);
          ++head;
        } else if (g.cost.numExperts > 0 && !gemm.expert &&
                   gemm.n == g.cost.numExperts) {
          CHECK(t == DType::BF16);
          ++router;
        } else {
          CHECK(t == DType::FP8);
          ++fp8;
        }
      }
    CHECK(head == 1);
    CHECK(fp8 > 0);
    CHECK(router == (std::string(spec) == "tiny-gpt" ? 0 : 1));
  }
}

TEST_CASE("the bf16 programs' GEMM operands: which the cost model reads as "
          "bf16 tensors",
          "[analysis][bf16]") {
  // GemmCost::xBf16, wBf16 and dyBf16 of the linear layers (the GEMMs
  // with a bf16 weight), summed over each end-to-end model, against what
  // its emitted bf16 program does: the counts scripts/count-bf16-operands.awk
  // prints for the program of the model's single-rank plan
  // (test/Target/emit-bf16-operands.test checks them there). A post-LN
  // block's (BERT's) norm outputs are the residual stream, which adds
  // read; the MoE layers' inputs are read by the experts' kernels; an
  // output gradient is in bf16 where the output's readers write it afresh
  // (activations, attention, norms, dropout, a binary cross-entropy), not
  // where an add reads it.
  struct Case {
    const char *spec;
    int linears, x, dy;
    int64_t seq = 32; // the plans' (tiny-vit's: its 3 x 3 patches and CLS)
  } cases[] = {
      {"tiny-gpt", 25, 25, 16},
      {"tiny-bert.json", 28, 11, 18},
      {"tiny-deepseek.json", 41, 41, 32},
      {"tiny-deepseek-moe.json", 41, 35, 32},
      {"tiny-dlrm.mlir", 4, 4, 4},
      {"tiny-gpt-oss.json", 17, 17, 12},
      {"tiny-gpt2-dropout.json", 25, 25, 24},
      {"tiny-gptj.json", 25, 25, 16},
      {"tiny-llama.json", 29, 29, 20},
      {"tiny-llama4.json", 29, 25, 20},
      {"tiny-mistral.json", 29, 29, 20},
      {"tiny-mixtral.json", 17, 17, 12},
      {"tiny-nemotron.json", 25, 25, 16},
      {"tiny-qwen3-moe.json", 17, 17, 12},
      {"tiny-vit.json", 25, 25, 16, 10},
  };
  for (const Case &c : cases) {
    std::string spec = c.spec;
    if (spec.find('.') != std::string::npos)
      spec = TRIDENT_SOURCE_DIR "/test/e2e/models/" + spec;
    INFO(spec);
    auto m = load(spec, c.seq);
    LayerProfile p = buildLayerProfile(m.model());
    // Every linear layer's weight is its own bf16 copy (the program's W
    // count equals its linear count), and no other GEMM's is.
    int linears = 0, x = 0, dy = 0;
    for (const LayerGroup &g : p.groups)
      for (const GemmCost &gemm : g.cost.gemms) {
        if (!gemm.wBf16)
          continue;
        const int n = int(g.count);
        linears += n;
        x += gemm.xBf16 ? n : 0;
        dy += gemm.dyBf16 ? n : 0;
      }
    CHECK(linears == c.linears);
    CHECK(x == c.x);
    CHECK(dy == c.dy);
  }
}

TEST_CASE("what only bf16 readers read: a pre-LN block's norm output, not a "
          "post-LN block's, nor the experts' inputs",
          "[analysis][bf16]") {
  // OpCost::savedBf16TensorBytes: what the bf16 programs keep in bf16
  // tensors. A pre-LN block's norm output is read by linear layers alone;
  // a post-LN block's (BERT) is the residual stream too, which an add
  // reads; a mixture of experts reads its input in its own kernels.
  mlir::trident::graph::CostContext ctx{1, 32};
  for (auto [spec, postLn] :
       {std::pair{"tiny-gpt", false},
        std::pair{TRIDENT_SOURCE_DIR "/test/e2e/models/tiny-bert.json", true},
        std::pair{TRIDENT_SOURCE_DIR "/test/e2e/models/tiny-llama.json",
                  false}}) {
    INFO(spec);
    auto m = load(spec, 32);
    int normInputs = 0;
    m.model().walk([&](mlir::trident::graph::LinearOp op) {
      mlir::Operation *def = op.getX().getDefiningOp();
      if (!def || !mlir::isa<mlir::trident::graph::LayerNormOp,
                             mlir::trident::graph::RMSNormOp>(def))
        return;
      auto cost = op.getCost(ctx);
      if (cost.savedGemmInputBytes == 0)
        return; // a later reader of the same norm output, or not repeated
      ++normInputs;
      CHECK(cost.savedBf16TensorBytes ==
            (postLn ? 0.0 : cost.savedGemmInputBytes));
    });
    CHECK(normInputs > 0);
  }
  auto mixtral =
      load(TRIDENT_SOURCE_DIR "/test/e2e/models/tiny-mixtral.json", 32);
  int experts = 0;
  mixtral.model().walk([&](mlir::trident::graph::MoEOp op) {
    auto cost = op.getCost(ctx);
    CHECK(cost.savedGemmInputBytes > 0);
    CHECK(cost.savedBf16TensorBytes == 0);
    ++experts;
  });
  CHECK(experts > 0);
}
