//===- RuntimeKernelsTest.cpp - Runtime kernels, init and I/O (1 rank) ----===//
//
// Finite-difference checks of every backward kernel, the sharding
// independence of initParam, Adam against a hand computation, and the dump
// reader. Runs single-process (MPI singleton) against TridentRuntimeCpu.
//
//===----------------------------------------------------------------------===//

#include "trident/Runtime/ParamCompare.h"
#include "trident/Runtime/Runtime.h"

// Header-only host helper of the CUDA embedding backward.
#include "../../../lib/Runtime/Common/AttentionGemms.h"
#include "../../../lib/Runtime/Common/TokenGroups.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>

using namespace trident::rt;

namespace {
void ensureInit() {
  static bool done = false;
  if (!done) {
    init(nullptr, nullptr);
    std::atexit([] { finalize(); });
    done = true;
  }
}

Tensor randomTensor(std::vector<int64_t> shape, const std::string &name,
                    float scale = 1.0f) {
  Tensor t(shape);
  initParam(t, name, shape, std::vector<int64_t>(shape.size(), 0), shape, 7,
            scale);
  return t;
}

/// sum(y * r) in double.
double dotLoss(const Tensor &y, const Tensor &r) {
  auto a = y.toHost(), b = r.toHost();
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += double(a[i]) * b[i];
  return s;
}

/// Central finite differences of `loss` w.r.t. every element of `x`,
/// compared with `analytic` by the relative error of the whole vector.
double fdError(const std::function<double()> &loss, Tensor &x,
               const std::vector<float> &analytic, float h = 1e-2f) {
  std::vector<float> v = x.toHost();
  double num = 0, den = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    float keep = v[i];
    v[i] = keep + h;
    x.fromHost(v);
    double lp = loss();
    v[i] = keep - h;
    x.fromHost(v);
    double lm = loss();
    v[i] = keep;
    x.fromHost(v);
    double fd = (lp - lm) / (2.0 * h);
    num += (fd - analytic[i]) * (fd - analytic[i]);
    den += fd * fd;
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

constexpr double kTol = 2e-3; // fp32 central differences with h = 1e-2

/// A mixture of experts' x, router, w_in and w_out gradients against
/// finite differences of `loss`, with small steps (a larger one could
/// change which experts a token picks).
void checkMoEGradients(const std::function<double()> &loss, Tensor &x,
                       const Tensor &dx, Tensor &r, const Tensor &dr,
                       Tensor &wi, const Tensor &dwi, Tensor &wo,
                       const Tensor &dwo) {
  CHECK(fdError(loss, x, dx.toHost(), 1e-3f) < 5e-3);
  CHECK(fdError(loss, r, dr.toHost(), 1e-3f) < 5e-3);
  CHECK(fdError(loss, wi, dwi.toHost(), 1e-3f) < 5e-3);
  CHECK(fdError(loss, wo, dwo.toHost(), 1e-3f) < 5e-3);
}
} // namespace

TEST_CASE("initParam shards equal the slice of the full parameter",
          "[runtime]") {
  ensureInit();
  std::vector<int64_t> g = {6, 10};
  Tensor full(g);
  initParam(full, "layers.0.w", g, {0, 0}, g, 42, 0.5f);
  Tensor shard({3, 4});
  initParam(shard, "layers.0.w", g, {2, 3}, {3, 4}, 42, 0.5f);
  auto f = full.toHost(), s = shard.toHost();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      REQUIRE(s[i * 4 + j] == f[(2 + i) * 10 + 3 + j]);
  REQUIRE(f[13] == initParamValue("layers.0.w", 13, 42, 0.5f));
  // Values lie in [-scale, scale) and differ between names and seeds.
  for (float v : f)
    REQUIRE((v >= -0.5f && v < 0.5f));
  Tensor other(g);
  initParam(other, "layers.1.w", g, {0, 0}, g, 42, 0.5f);
  REQUIRE(other.toHost() != f);
  REQUIRE(initParamValue("layers.0.w", 13, 43, 0.5f) != f[13]);
  REQUIRE_THROWS_WITH(initParam(shard, "w", g, {4, 0}, {3, 4}, 1, 1.0f),
                      Catch::Contains("exceeds [6, 10]"));
}

TEST_CASE("initParam and ParamDump: a blocked dimension holds a piece of "
          "each block",
          "[runtime]") {
  ensureInit();
  namespace fs = std::filesystem;
  // [2, 8]: dimension 1 is two blocks of 4 columns (gate, up); tp 2 gives
  // rank r columns 2r..2r+1 of each block.
  std::vector<int64_t> g = {2, 8};
  Tensor full(g);
  initParam(full, "w_in", g, {0, 0}, g, 9, 1.0f);
  auto f = full.toHost();
  fs::path dir = fs::temp_directory_path() / "trident-rt-blocks-test";
  fs::remove_all(dir);
  for (int r = 0; r < 2; ++r) {
    Tensor shard({2, 4});
    initParam(shard, "w_in", g, {0, 2 * r}, {2, 4}, 9, 1.0f, {1, 2});
    auto s = shard.toHost();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j) {
        int col = (j / 2) * 4 + 2 * r + j % 2;
        REQUIRE(s[i * 4 + j] == f[i * 8 + col]);
      }
    ParamDump d;
    d.add("w_in", g, {0, 2 * r}, shard, {1, 2});
    d.write(dir.string());
    fs::rename(dir / "rank0.params",
               dir / ("rank" + std::to_string(r + 1) + ".params"));
  }
  // The two ranks' four pieces assemble the whole parameter.
  std::map<std::string, AssembledParam> a;
  std::string err;
  REQUIRE(readParamDump(dir.string(), a, err));
  REQUIRE(a.at("w_in").values == f);
  fs::remove_all(dir);
  Tensor odd({2, 3});
  REQUIRE_THROWS_WITH(
      initParam(odd, "w_in", g, {0, 0}, {2, 3}, 9, 1.0f, {1, 2}),
      Catch::Contains("dimension 1 cannot hold 2 blocks"));
  Tensor shard({2, 4});
  REQUIRE_THROWS_WITH(
      initParam(shard, "w_in", g, {0, 3}, {2, 4}, 9, 1.0f, {1, 2}),
      Catch::Contains("exceeds [2, 8]"));
  ParamDump d;
  REQUIRE_THROWS_WITH(d.add("w_in", g, {0, 3}, shard, {1, 2}),
                      Catch::Contains("exceeds [2, 8]"));
}

TEST_CASE("synthetic data: targets are the next tokens", "[runtime]") {
  ensureInit();
  Tensor tok({2 * 8}, DType::I32), tgt({2 * 8}, DType::I32);
  syntheticBatch(tok, tgt, 1, 3, 10, 2, 0, 8, 50);
  auto t = tok.toHostI32(), y = tgt.toHostI32();
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p + 1 < 8; ++p)
      REQUIRE(y[s * 8 + p] == t[s * 8 + p + 1]);
  for (int v : t)
    REQUIRE((v >= 0 && v < 50));
  // A later sequence chunk continues the same sequence.
  Tensor tok2({4}, DType::I32), tgt2({4}, DType::I32);
  syntheticBatch(tok2, tgt2, 1, 3, 11, 1, 4, 4, 50);
  auto t2 = tok2.toHostI32();
  for (int p = 0; p < 4; ++p)
    REQUIRE(t2[p] == t[8 + 4 + p]);
  REQUIRE((syntheticToken(1, 4, 10, 0, 50) != syntheticToken(1, 3, 10, 0, 50) ||
          syntheticToken(1, 4, 10, 1, 50) != syntheticToken(1, 3, 10, 1, 50)));
}

TEST_CASE("synthetic ids: range, chunks, per-sample and own stream",
          "[runtime]") {
  ensureInit();
  // 2 samples x 6 positions of token types in [0, 2).
  Tensor all({12}, DType::I32);
  syntheticIds(all, 5, "token_types", 3, 4, 2, 0, 6, 2);
  auto a = all.toHostI32();
  int ones = 0;
  for (int32_t v : a) {
    REQUIRE((v == 0 || v == 1));
    ones += v;
  }
  CHECK(ones > 0);
  CHECK(ones < 12);
  // A chunk of positions 3..5 is those ids of the whole.
  Tensor part({6}, DType::I32);
  syntheticIds(part, 5, "token_types", 3, 4, 2, 3, 3, 2);
  auto pv = part.toHostI32();
  for (int64_t smp = 0; smp < 2; ++smp)
    for (int64_t p = 0; p < 3; ++p)
      REQUIRE(pv[size_t(smp * 3 + p)] == a[size_t(smp * 6 + 3 + p)]);
  // One id per sample; sample 5 alone is the second of samples 4..5.
  Tensor perSample({2}, DType::I32), one({1}, DType::I32);
  syntheticIds(perSample, 5, "nsp_labels", 3, 4, 2, 0, 0, 2);
  syntheticIds(one, 5, "nsp_labels", 3, 5, 1, 0, 0, 2);
  REQUIRE(one.toHostI32()[0] == perSample.toHostI32()[1]);
  // Another name is another stream: over 64 ids in a range of 1000 the
  // streams cannot agree by chance.
  Tensor x({64}, DType::I32), y({64}, DType::I32);
  syntheticIds(x, 5, "a", 1, 0, 1, 0, 64, 1000);
  syntheticIds(y, 5, "b", 1, 0, 1, 0, 64, 1000);
  CHECK(x.toHostI32() != y.toHostI32());
  CHECK_THROWS_WITH(syntheticIds(x, 5, "a", 1, 0, 1, 0, 64, 0),
                    Catch::Contains("range must be positive"));
}

TEST_CASE("Adam and SGD match a hand computation", "[runtime]") {
  ensureInit();
  Tensor p({2}), g({2}), m({2}), v({2});
  p.fromHost({0.5f, -1.0f});
  g.fromHost({0.2f, -0.05f});
  AdamConfig cfg;
  cfg.lr = 0.1f;
  adamUpdate(p, g, m, v, cfg, 1);
  // Step 1: mhat = g and vhat = g^2, so the update is lr * g / (|g| + eps).
  auto p1 = p.toHost();
  REQUIRE(p1[0] == Approx(0.5 - 0.1 * 0.2 / (0.2 + 1e-8)).epsilon(1e-6));
  REQUIRE(p1[1] == Approx(-1.0 + 0.1 * 0.05 / (0.05 + 1e-8)).epsilon(1e-6));
  REQUIRE(m.toHost()[0] == Approx(0.1 * 0.2).epsilon(1e-6));
  // 1 - 0.999f is 0.00099998713 in float: compare to 1e-4.
  REQUIRE(v.toHost()[0] == Approx(0.001 * 0.04).epsilon(1e-4));
  // Step 2 with a new gradient, against the formulas in double.
  g.fromHost({-0.1f, 0.3f});
  adamUpdate(p, g, m, v, cfg, 2);
  double g1[2] = {0.2, -0.05}, g2[2] = {-0.1, 0.3}, p0[2] = {0.5, -1.0};
  auto p2 = p.toHost();
  for (int i = 0; i < 2; ++i) {
    double m1 = 0.1 * g1[i], v1 = 0.001 * g1[i] * g1[i];
    double q = p0[i] - 0.1 * (m1 / 0.1) / (std::sqrt(v1 / 0.001) + 1e-8);
    double m2 = 0.9 * m1 + 0.1 * g2[i], v2 = 0.999 * v1 + 0.001 * g2[i] * g2[i];
    double bc1 = 1 - 0.81, bc2 = 1 - 0.999 * 0.999;
    q -= 0.1 * (m2 / bc1) / (std::sqrt(v2 / bc2) + 1e-8);
    REQUIRE(p2[i] == Approx(q).epsilon(1e-5));
  }
  sgdUpdate(p, g, 0.5f);
  REQUIRE(p.toHost()[0] == Approx(p2[0] + 0.05).epsilon(1e-6));
  Tensor bad({3});
  REQUIRE_THROWS_WITH(adamUpdate(p, bad, m, v, cfg, 3),
                      Catch::Contains("adamUpdate: sizes differ"));
}

TEST_CASE("linear backward matches finite differences", "[runtime]") {
  ensureInit();
  int64_t n = 5, in = 4, out = 3;
  Tensor x = randomTensor({n, in}, "x"), w = randomTensor({out, in}, "w"),
         b = randomTensor({out}, "b"), r = randomTensor({n, out}, "r");
  Tensor y({n, out});
  auto loss = [&] {
    linearForward(y, x, w, b);
    return dotLoss(y, r);
  };
  Tensor dx({n, in}), dw({out, in}), db({out});
  linearBackward(dx, dw, db, r, x, w);
  CHECK(fdError(loss, x, dx.toHost()) < kTol);
  CHECK(fdError(loss, w, dw.toHost()) < kTol);
  CHECK(fdError(loss, b, db.toHost()) < kTol);
  // dW and db accumulate.
  auto dw1 = dw.toHost();
  linearBackward(dx, dw, db, r, x, w);
  REQUIRE(dw.toHost()[5] == Approx(2 * dw1[5]));
  // In two calls, dx alone then dW and db alone (the emitted programs'
  // order when dx's tensor-parallel sum runs beside the weight GEMM): the
  // same values as one call.
  Tensor dx2({n, in}), dw2({out, in}), db2({out}), none;
  linearBackward(dx2, none, none, r, x, w);
  REQUIRE(dw2.toHost() == std::vector<float>(size_t(out * in), 0.0f));
  linearBackward(none, dw2, db2, r, x, w);
  Tensor dwOnce({out, in}), dbOnce({out});
  linearBackward(dx, dwOnce, dbOnce, r, x, w);
  REQUIRE(dx2.toHost() == dx.toHost());
  REQUIRE(dw2.toHost() == dwOnce.toHost());
  REQUIRE(db2.toHost() == dbOnce.toHost());
  Tensor wrong({n, out + 1});
  REQUIRE_THROWS_WITH(linearForward(wrong, x, w, b),
                      Catch::Contains("linearForward: y [5, 4] must be [5, 3]"));
}

TEST_CASE("norm backwards match finite differences", "[runtime]") {
  ensureInit();
  int64_t n = 3, h = 8;
  Tensor x = randomTensor({n, h}, "x", 2.0f), g = randomTensor({h}, "g"),
         b = randomTensor({h}, "b"), r = randomTensor({n, h}, "r");
  Tensor y({n, h}), mean({n}), rstd({n});
  auto ln = [&] {
    layerNormForward(y, mean, rstd, x, g, b, 1e-5f);
    return dotLoss(y, r);
  };
  ln();
  Tensor dx({n, h}), dg({h}), db({h});
  layerNormBackward(dx, dg, db, r, x, g, mean, rstd);
  CHECK(fdError(ln, x, dx.toHost()) < kTol);
  CHECK(fdError(ln, g, dg.toHost()) < kTol);
  CHECK(fdError(ln, b, db.toHost()) < kTol);
  // Normalised rows: mean 0, variance 1 when gamma = 1, beta = 0.
  Tensor ones({h}), none;
  fillConstant(ones, 1.0f);
  layerNormForward(y, mean, rstd, x, ones, none, 1e-5f);
  auto yv = y.toHost();
  double s = 0, s2 = 0;
  for (int j = 0; j < h; ++j)
    s += yv[j], s2 += double(yv[j]) * yv[j];
  REQUIRE(std::fabs(s / h) < 1e-5);
  REQUIRE(s2 / h == Approx(1.0).epsilon(1e-3));

  // Zero-centred LayerNorm1p: gamma shifted by 1 equals gamma + 1 unshifted
  // (forward and every gradient), and its gradients match finite
  // differences.
  auto ln1p = [&] {
    layerNormForward(y, mean, rstd, x, g, b, 1e-5f, 1.0f);
    return dotLoss(y, r);
  };
  ln1p();
  Tensor dx1({n, h}), dg1({h}), db1({h});
  layerNormBackward(dx1, dg1, db1, r, x, g, mean, rstd, 1.0f);
  Tensor g1 = g.clone(), y1({n, h}), dx2({n, h}), dg2({h}), db2({h});
  std::vector<float> gv = g1.toHost();
  for (float &e : gv)
    e += 1.0f;
  g1.fromHost(gv);
  layerNormForward(y1, mean, rstd, x, g1, b, 1e-5f);
  layerNormBackward(dx2, dg2, db2, r, x, g1, mean, rstd);
  ln1p();
  auto close = [](const std::vector<float> &a, const std::vector<float> &c) {
    for (size_t i = 0; i < a.size(); ++i)
      REQUIRE(a[i] == Approx(c[i]).margin(1e-6));
  };
  close(y.toHost(), y1.toHost());
  close(dx1.toHost(), dx2.toHost());
  close(dg1.toHost(), dg2.toHost());
  CHECK(fdError(ln1p, x, dx1.toHost()) < kTol);
  CHECK(fdError(ln1p, g, dg1.toHost()) < kTol);

  // RMSNorm, whole rows and per head (gamma of 4 on rows of 8).
  for (int64_t gh : {h, h / 2}) {
    Tensor gg = randomTensor({gh}, "gg");
    int64_t groups = n * h / gh;
    Tensor rr({groups});
    auto rms = [&] {
      rmsNormForward(y, rr, x, gg, 1e-5f);
      return dotLoss(y, r);
    };
    rms();
    Tensor dgg({gh});
    rmsNormBackward(dx, dgg, r, x, gg, rr);
    CHECK(fdError(rms, x, dx.toHost()) < kTol);
    CHECK(fdError(rms, gg, dgg.toHost()) < kTol);
  }
}

TEST_CASE("activation backwards match finite differences", "[runtime]") {
  ensureInit();
  Tensor x = randomTensor({4, 6}, "x", 3.0f), r = randomTensor({4, 6}, "r");
  Tensor y({4, 6}), dx({4, 6});
  using Fwd = void (*)(Tensor &, const Tensor &);
  using Bwd = void (*)(Tensor &, const Tensor &, const Tensor &);
  std::vector<std::pair<Fwd, Bwd>> fns = {
      {[](Tensor &o, const Tensor &i) { geluForward(o, i); },
       [](Tensor &d, const Tensor &g, const Tensor &i) { geluBackward(d, g, i); }},
      {siluForward, siluBackward},
      {reluForward, reluBackward},
      {squaredReluForward, squaredReluBackward},
      {tanhForward, tanhBackward}};
  for (auto [f, bwd] : fns) {
    auto loss = [&] {
      f(y, x);
      return dotLoss(y, r);
    };
    bwd(dx, r, x);
    CHECK(fdError(loss, x, dx.toHost(), 1e-3f) < kTol);
  }
  // GELU (tanh form) at 1: 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)).
  Tensor one({1}), o({1});
  fillConstant(one, 1.0f);
  geluForward(o, one);
  REQUIRE(o.toHost()[0] == Approx(0.8411920).epsilon(1e-6));
  // Squared ReLU: 3 -> 9, -2 -> 0.
  Tensor pair({2}), sq({2});
  pair.fromHost({3.0f, -2.0f});
  squaredReluForward(sq, pair);
  REQUIRE(sq.toHost() == std::vector<float>{9.0f, 0.0f});
  // tanh(1) = 0.7615942.
  tanhForward(o, one);
  REQUIRE(o.toHost()[0] == Approx(0.7615942).epsilon(1e-6));
  // Exact GELU at 1: Phi(1) = 0.8413447 (standard normal CDF).
  geluForward(o, one, /*approximate=*/false);
  REQUIRE(o.toHost()[0] == Approx(0.8413447).epsilon(1e-6));
  auto erfLoss = [&] {
    geluForward(y, x, false);
    return dotLoss(y, r);
  };
  geluBackward(dx, r, x, false);
  CHECK(fdError(erfLoss, x, dx.toHost(), 1e-3f) < kTol);

  Tensor up = randomTensor({4, 6}, "up", 2.0f);
  auto sw = [&] {
    swigluForward(y, x, up);
    return dotLoss(y, r);
  };
  Tensor dgate({4, 6}), dup({4, 6});
  swigluBackward(dgate, dup, r, x, up);
  CHECK(fdError(sw, x, dgate.toHost(), 1e-3f) < kTol);
  CHECK(fdError(sw, up, dup.toHost(), 1e-3f) < kTol);
}

TEST_CASE("embedding forward and backward", "[runtime]") {
  ensureInit();
  int64_t V = 10, h = 3, s = 4;
  Tensor wte = randomTensor({V, h}, "wte"), wpe = randomTensor({8, h}, "wpe");
  Tensor tok({2 * s}, DType::I32);
  tok.fromHostI32({1, 9, 3, 3, 0, 5, 7, 2});
  Tensor out({2 * s, h}), r = randomTensor({2 * s, h}, "r");
  auto loss = [&] {
    embeddingForward(out, tok, wte, wpe, s, 2, 0);
    return dotLoss(out, r);
  };
  loss();
  auto o = out.toHost(), e = wte.toHost(), p = wpe.toHost();
  REQUIRE(o[1 * h + 2] == e[9 * h + 2] + p[(2 + 1) * h + 2]);
  Tensor dwte({V, h}), dwpe({8, h});
  embeddingBackward(dwte, dwpe, r, tok, s, 2, 0);
  CHECK(fdError(loss, wte, dwte.toHost()) < kTol);
  CHECK(fdError(loss, wpe, dwpe.toHost()) < kTol);
  // Vocab shard [5, 10): rows outside the shard give zeros.
  Tensor shard = wte.view(5 * h, {5, h}), none;
  embeddingForward(out, tok, shard, none, s, 0, 5);
  auto os = out.toHost();
  REQUIRE(os[0] == 0.0f);               // token 1 not in the shard
  REQUIRE(os[1 * h] == e[9 * h]);       // token 9 is
}

TEST_CASE("token positions grouped by table row (CUDA embedding backward)",
          "[runtime]") {
  // Shard rows [2, 10): ids 5 -> row 3, 2 -> row 0, 9 -> row 7; 12 and 1
  // belong to other shards.
  auto g = detail::groupTokensByRow({5, 2, 5, 9, 2, 5, 12, 1}, 2, 8);
  CHECK(g.rows == std::vector<int32_t>{0, 3, 7});
  CHECK(g.start == std::vector<int32_t>{0, 2, 5, 6});
  // Each row's positions ascending (the CPU's summation order).
  CHECK(g.order == std::vector<int32_t>{1, 4, 0, 2, 5, 3});
  auto none = detail::groupTokensByRow({0, 1, 12}, 2, 8);
  CHECK(none.rows.empty());
  CHECK(none.start == std::vector<int32_t>{0});
  CHECK(none.order.empty());
}

TEST_CASE("causal attention backward matches finite differences",
          "[runtime]") {
  ensureInit();
  AttentionDims d;
  d.batch = 2, d.seq = 4, d.heads = 4, d.kvHeads = 2, d.headDim = 3;
  int64_t n = d.batch * d.seq;
  Tensor q = randomTensor({n, 12}, "q", 1.5f), k = randomTensor({n, 6}, "k", 1.5f),
         v = randomTensor({n, 6}, "v"), r = randomTensor({n, 12}, "r");
  Tensor out({n, 12}), probs({2, 4, 4, 4});
  auto loss = [&] {
    attentionForward(out, probs, q, k, v, d);
    return dotLoss(out, r);
  };
  loss();
  // Causality: the first query of each sequence sees only its own key, so
  // its output is v of that position (head 0 -> kv head 0).
  auto o = out.toHost(), vv = v.toHost(), P = probs.toHost();
  REQUIRE(o[0] == Approx(vv[0]));
  REQUIRE(o[4 * 12 + 3 * 3 + 1] == Approx(vv[4 * 6 + 3 + 1])); // b1, head 3
  REQUIRE(P[1] == 0.0f);
  Tensor dq({n, 12}), dk({n, 6}), dv({n, 6});
  attentionBackward(dq, dk, dv, r, q, k, v, probs, d);
  CHECK(fdError(loss, q, dq.toHost()) < kTol);
  CHECK(fdError(loss, k, dk.toHost()) < kTol);
  CHECK(fdError(loss, v, dv.toHost()) < kTol);
}

TEST_CASE("bidirectional attention backward matches finite differences",
          "[runtime]") {
  ensureInit();
  AttentionDims d;
  d.batch = 2, d.seq = 4, d.heads = 4, d.kvHeads = 2, d.headDim = 3;
  d.causal = false;
  int64_t n = d.batch * d.seq;
  Tensor q = randomTensor({n, 12}, "q", 1.5f), k = randomTensor({n, 6}, "k", 1.5f),
         v = randomTensor({n, 6}, "v"), r = randomTensor({n, 12}, "r");
  Tensor out({n, 12}), probs({2, 4, 4, 4});
  auto loss = [&] {
    attentionForward(out, probs, q, k, v, d);
    return dotLoss(out, r);
  };
  loss();
  // The first query sees every key: no probability is zero and each row
  // sums to 1.
  auto P = probs.toHost();
  for (int64_t row = 0; row < 2 * 4 * 4; ++row) {
    double z = 0;
    for (int64_t j = 0; j < 4; ++j) {
      REQUIRE(P[size_t(row * 4 + j)] > 0.0f);
      z += P[size_t(row * 4 + j)];
    }
    REQUIRE(z == Approx(1.0).epsilon(1e-6));
  }
  Tensor dq({n, 12}), dk({n, 6}), dv({n, 6});
  attentionBackward(dq, dk, dv, r, q, k, v, probs, d);
  CHECK(fdError(loss, q, dq.toHost()) < kTol);
  CHECK(fdError(loss, k, dk.toHost()) < kTol);
  CHECK(fdError(loss, v, dv.toHost()) < kTol);
  // A sliding window is for causal attention only.
  d.window = 2;
  CHECK_THROWS_WITH(attentionForward(out, probs, q, k, v, d),
                    Catch::Contains("sliding window needs causal"));
}

TEST_CASE("ViT patch embedding, class token and positions against finite "
          "differences",
          "[runtime]") {
  ensureInit();
  // 2 images of 2 channels, 4x4 pixels, 2x2 patches: 4 tokens of 8 values.
  const int64_t b = 2, C = 2, side = 4, p = 2, T = 4, h = 3;
  Tensor img = randomTensor({b, C, side, side}, "img");
  Tensor w = randomTensor({C * p * p, h}, "w"), bias = randomTensor({h}, "b");
  Tensor out({b * T, h}), r = randomTensor({b * T, h}, "r");
  auto loss = [&] {
    patchEmbedForward(out, img, w, bias, C, side, p);
    return dotLoss(out, r);
  };
  loss();
  // Token 2 of image 1 is patch (py 1, px 0); its feature (c 1, i 0, j 1)
  // is pixel (1, 2, 1), at row (1 * 2 + 0) * 2 + 1 = 5 of w.
  {
    auto iv = img.toHost(), wv = w.toHost(), bv = bias.toHost();
    double want = bv[0];
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < p; ++j)
          want += double(iv[size_t(((1 * C + c) * side + 2 + i) * side + j)]) *
                  wv[size_t(((c * p + i) * p + j) * h + 0)];
    REQUIRE(out.toHost()[size_t((1 * T + 2) * h)] == Approx(want).margin(1e-6));
  }
  Tensor dw({C * p * p, h}), db({h});
  patchEmbedBackward(dw, db, r, img, C, side, p);
  CHECK(fdError(loss, w, dw.toHost()) < kTol);
  CHECK(fdError(loss, bias, db.toHost()) < kTol);
  CHECK_THROWS_WITH(patchEmbedForward(out, img, w, bias, C, side, 3),
                    Catch::Contains("patch must divide side"));

  // The class token before each image's tokens.
  Tensor tok = randomTensor({1, h}, "cls");
  Tensor x = randomTensor({b * T, h}, "x");
  Tensor withTok({b * (T + 1), h}), r2 = randomTensor({b * (T + 1), h}, "r2");
  auto loss2 = [&] {
    prependTokenForward(withTok, x, tok, T);
    return dotLoss(withTok, r2);
  };
  loss2();
  auto wt = withTok.toHost(), xv = x.toHost(), tv = tok.toHost();
  REQUIRE(wt[size_t((T + 1) * h)] == tv[0]);          // sample 1, row 0
  REQUIRE(wt[size_t((T + 1 + 1) * h)] == xv[size_t(T * h)]); // its first patch
  Tensor dx({b * T, h}), dtok({1, h});
  prependTokenBackward(dx, dtok, r2, T);
  CHECK(fdError(loss2, x, dx.toHost()) < kTol);
  CHECK(fdError(loss2, tok, dtok.toHost()) < kTol);

  // Learned positions: a chunk at an offset adds those rows of the table.
  Tensor wpe = randomTensor({T + 1, h}, "wpe");
  Tensor y({b * (T + 1), h});
  auto loss3 = [&] {
    positionAddForward(y, withTok, wpe, T + 1, 0);
    return dotLoss(y, r2);
  };
  loss3();
  Tensor dwpe({T + 1, h});
  positionAddBackward(dwpe, r2, T + 1, 0);
  CHECK(fdError(loss3, wpe, dwpe.toHost()) < kTol);
  Tensor part = randomTensor({b * 2, h}, "part"), yp({b * 2, h});
  positionAddForward(yp, part, wpe, 2, 3);
  auto pv = part.toHost(), ypv = yp.toHost(), wv2 = wpe.toHost();
  REQUIRE(ypv[size_t(1 * h + 2)] == pv[size_t(1 * h + 2)] + wv2[size_t(4 * h + 2)]);
  CHECK_THROWS_WITH(positionAddForward(yp, part, wpe, 2, 4),
                    Catch::Contains("must hold positions 4..5"));

  // Sequence shards of the replicated tokens: positions 2..3 of each
  // sample's 5.
  Tensor shard({b * 2, h});
  sliceRows(shard, y, T + 1, 2, 2);
  auto sv = shard.toHost(), yv = y.toHost();
  for (int64_t n = 0; n < b; ++n)
    for (int64_t e = 0; e < 2 * h; ++e)
      REQUIRE(sv[size_t(n * 2 * h + e)] == yv[size_t((n * (T + 1) + 2) * h + e)]);
  CHECK_THROWS_WITH(sliceRows(shard, y, T + 1, 4, 2),
                    Catch::Contains("positions 4..5 must lie in [0, 5)"));
}

TEST_CASE("synthetic floats: range, samples and streams", "[runtime]") {
  ensureInit();
  Tensor all({3, 50}), one({1, 50}), other({3, 50});
  syntheticFloats(all, 9, "images", 2, 10, 3, 50);
  syntheticFloats(one, 9, "images", 2, 12, 1, 50);
  syntheticFloats(other, 9, "pixels", 2, 10, 3, 50);
  auto a = all.toHost(), o = one.toHost(), q = other.toHost();
  for (float v : a) {
    REQUIRE(v >= -1.0f);
    REQUIRE(v < 1.0f);
  }
  // Sample 12 alone is the third of samples 10..12.
  for (int64_t e = 0; e < 50; ++e)
    REQUIRE(o[size_t(e)] == a[size_t(2 * 50 + e)]);
  CHECK(a != q);
  Tensor nextStep({3, 50});
  syntheticFloats(nextStep, 9, "images", 3, 10, 3, 50);
  CHECK(nextStep.toHost() != a);
}

TEST_CASE("select token: rows, shards and backward", "[runtime]") {
  ensureInit();
  // 3 samples of 4 positions, 2 features.
  const int64_t b = 3, s = 4, h = 2;
  Tensor x = randomTensor({b * s, h}, "x");
  Tensor out({b, h});
  selectTokenForward(out, x, s, 2);
  auto xv = x.toHost(), ov = out.toHost();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t c = 0; c < h; ++c)
      REQUIRE(ov[size_t(i * h + c)] == xv[size_t((i * s + 2) * h + c)]);
  // Two sequence shards of 2 positions: the shard holding position 2
  // (local index 0 of shard 1) gives the rows, the other zeros.
  auto shard = [&](int64_t first) {
    std::vector<float> part;
    for (int64_t i = 0; i < b; ++i)
      part.insert(part.end(), xv.begin() + (i * s + first) * h,
                  xv.begin() + (i * s + first + 2) * h);
    Tensor t({b * 2, h});
    t.fromHost(part);
    return t;
  };
  Tensor o0({b, h}), o1({b, h});
  selectTokenForward(o0, shard(0), 2, 2 - 0);
  selectTokenForward(o1, shard(2), 2, 2 - 2);
  REQUIRE(o0.toHost() == std::vector<float>(size_t(b * h), 0.0f));
  REQUIRE(o1.toHost() == ov);
  // Backward: dy lands on position 2 of each sample, zeros elsewhere.
  Tensor dy = randomTensor({b, h}, "dy"), dx({b * s, h});
  selectTokenBackward(dx, dy, s, 2);
  auto dxv = dx.toHost(), dyv = dy.toHost();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t p = 0; p < s; ++p)
      for (int64_t c = 0; c < h; ++c)
        REQUIRE(dxv[size_t((i * s + p) * h + c)] ==
                (p == 2 ? dyv[size_t(i * h + c)] : 0.0f));
  Tensor dxOther({b * 2, h});
  selectTokenBackward(dxOther, dy, 2, -2);
  REQUIRE(dxOther.toHost() == std::vector<float>(size_t(b * 2 * h), 0.0f));
  Tensor wrong({b, h + 1});
  CHECK_THROWS_WITH(selectTokenForward(wrong, x, s, 0),
                    Catch::Contains("selectTokenForward"));
}

TEST_CASE("attention with a sliding window and dropout matches finite "
          "differences",
          "[runtime]") {
  ensureInit();
  AttentionDims d;
  d.batch = 2, d.seq = 6, d.heads = 2, d.kvHeads = 1, d.headDim = 3;
  d.window = 2;
  d.dropout.rate = 0.25f, d.dropout.seed = 3, d.dropout.step = 1;
  d.dropout.seqLen = 6, d.dropout.features = 2;
  const int64_t n = d.batch * d.seq;
  Tensor q = randomTensor({n, 6}, "q", 1.5f), k = randomTensor({n, 3}, "k", 1.5f),
         v = randomTensor({n, 3}, "v"), r = randomTensor({n, 6}, "r");
  Tensor out({n, 6}), probs({2, 2, 6, 6});
  auto loss = [&] {
    attentionForward(out, probs, q, k, v, d);
    return dotLoss(out, r);
  };
  loss();
  // Window 2: query 5 sees keys 4 and 5 only; the saved probabilities are
  // not dropped (each row still sums to 1).
  auto P = probs.toHost();
  for (int64_t i = 0; i < 6; ++i) {
    double row = 0;
    for (int64_t j = 0; j < 6; ++j) {
      float p = P[size_t(i * 6 + j)];
      if (j > i || j < i - 1)
        REQUIRE(p == 0.0f);
      row += p;
    }
    REQUIRE(row == Approx(1.0).margin(1e-6));
  }
  // Dropout reaches the output: with every element of head 0 of sample 0
  // kept, its outputs would be a convex combination of v rows.
  int64_t dropped = 0;
  for (int64_t i = 0; i < 2 * 2 * 6 * 6; ++i)
    dropped += dropoutKeeps(d.dropout, uint64_t(i)) ? 0 : 1;
  REQUIRE(dropped > 0);
  Tensor dq({n, 6}), dk({n, 3}), dv({n, 3});
  attentionBackward(dq, dk, dv, r, q, k, v, probs, d);
  CHECK(fdError(loss, q, dq.toHost()) < kTol);
  CHECK(fdError(loss, k, dk.toHost()) < kTol);
  CHECK(fdError(loss, v, dv.toHost()) < kTol);
  // Output element (sample 0, position 0, head 0): the only visible key is
  // 0, so it is v[0] / (1 - rate) when kept, 0 when dropped.
  auto o = out.toHost(), vv = v.toHost();
  float want = dropoutKeeps(d.dropout, 0) ? vv[0] / 0.75f : 0.0f;
  REQUIRE(o[0] == Approx(want).margin(1e-6));
}

TEST_CASE("attention with sinks: the extra logit, gradients by finite "
          "differences",
          "[runtime]") {
  ensureInit();
  AttentionDims d;
  d.batch = 2, d.seq = 5, d.heads = 2, d.kvHeads = 1, d.headDim = 3;
  d.window = 3;
  const int64_t n = d.batch * d.seq;
  Tensor q = randomTensor({n, 6}, "q", 1.5f), k = randomTensor({n, 3}, "k", 1.5f),
         v = randomTensor({n, 3}, "v"), r = randomTensor({n, 6}, "r");
  Tensor sinks({2});
  sinks.fromHost({0.7f, -0.4f});
  Tensor out({n, 6}), probs({2, 2, 5, 5});
  auto loss = [&] {
    attentionForward(out, probs, q, k, v, sinks, d);
    return dotLoss(out, r);
  };
  loss();
  // Query 0 sees key 0 and the sink: p = e^a / (e^a + e^s) with a the
  // scaled score; its output is p v[0].
  auto Q = q.toHost(), K = k.toHost(), V = v.toHost(), O = out.toHost();
  for (int64_t h = 0; h < 2; ++h) {
    double a = 0;
    for (int64_t c = 0; c < 3; ++c)
      a += double(Q[size_t(h * 3 + c)]) * K[size_t(c)];
    a /= std::sqrt(3.0);
    const double sink = h == 0 ? 0.7 : -0.4;
    const double p = std::exp(a) / (std::exp(a) + std::exp(sink));
    for (int64_t c = 0; c < 3; ++c)
      CHECK(O[size_t(h * 3 + c)] == Approx(p * V[size_t(c)]).margin(1e-6));
    CHECK(probs.toHost()[size_t(h * 25)] == Approx(p).margin(1e-6));
  }
  Tensor dq({n, 6}), dk({n, 3}), dv({n, 3}), ds({2});
  attentionBackward(dq, dk, dv, ds, r, q, k, v, probs, d);
  CHECK(fdError(loss, q, dq.toHost()) < kTol);
  CHECK(fdError(loss, k, dk.toHost()) < kTol);
  CHECK(fdError(loss, v, dv.toHost()) < kTol);
  CHECK(fdError(loss, sinks, ds.toHost()) < kTol);
  // Undefined sinks: the plain attention, whose rows sum to 1.
  Tensor plainOut({n, 6}), plainProbs({2, 2, 5, 5});
  attentionForward(plainOut, plainProbs, q, k, v, Tensor(), d);
  auto PP = plainProbs.toHost();
  double row = 0;
  for (int64_t j = 0; j < 5; ++j)
    row += PP[size_t(4 * 5 + j)];
  CHECK(row == Approx(1.0).margin(1e-6));
  Tensor bad({3});
  CHECK_THROWS_WITH(attentionForward(out, probs, q, k, v, bad, d),
                    Catch::Contains("one value per head"));
}

TEST_CASE("attention dropout of a head shard is those heads of the whole",
          "[runtime]") {
  ensureInit();
  // Tensor parallelism: rank 1 of 2 holds heads 2..3 (kv head 1).
  AttentionDims whole;
  whole.batch = 2, whole.seq = 5, whole.heads = 4, whole.kvHeads = 2,
  whole.headDim = 2;
  whole.dropout.rate = 0.4f, whole.dropout.seed = 9, whole.dropout.site = 1;
  whole.dropout.seqLen = 5, whole.dropout.features = 4;
  const int64_t n = 10;
  Tensor q = randomTensor({n, 8}, "q", 1.5f), k = randomTensor({n, 4}, "k", 1.5f),
         v = randomTensor({n, 4}, "v");
  Tensor out({n, 8}), probs({2, 4, 5, 5});
  attentionForward(out, probs, q, k, v, whole);
  auto cols = [&](const Tensor &t, int64_t width, int64_t from, int64_t w) {
    std::vector<float> all = t.toHost(), part;
    for (int64_t r = 0; r < n; ++r)
      part.insert(part.end(), all.begin() + r * width + from,
                  all.begin() + r * width + from + w);
    Tensor x({n, w});
    x.fromHost(part);
    return x;
  };
  AttentionDims d = whole;
  d.heads = 2, d.kvHeads = 1, d.dropout.firstFeature = 2;
  Tensor oh({n, 4}), ph({2, 2, 5, 5});
  attentionForward(oh, ph, cols(q, 8, 4, 4), cols(k, 4, 2, 2),
                   cols(v, 4, 2, 2), d);
  auto want = cols(out, 8, 4, 4).toHost(), got = oh.toHost();
  for (size_t i = 0; i < want.size(); ++i)
    REQUIRE(got[i] == Approx(want[i]).margin(1e-6));
  // Without the head offset the shard would draw head 0's bits.
  d.dropout.firstFeature = 0;
  attentionForward(oh, ph, cols(q, 8, 4, 4), cols(k, 4, 2, 2),
                   cols(v, 4, 2, 2), d);
  got = oh.toHost();
  bool differs = false;
  for (size_t i = 0; i < want.size(); ++i)
    differs |= std::abs(got[i] - want[i]) > 1e-4f;
  REQUIRE(differs);
}

TEST_CASE("attention's batched products reach every head's operands",
          "[runtime]") {
  // The descriptors the CUDA backend hands to cublasSgemmStridedBatched,
  // run here through a plain host GEMM, against each head's products
  // written out: 2 samples, 6 query heads on 1, 2, 3 and 6 kv heads
  // (multi-query attention, whose products batch over a group's query
  // heads; two grouped cases; multi-head attention), value heads narrower
  // than query heads, 5 queries at positions 2..6 of 7 keys.
  for (int64_t kvHeads : {1, 2, 3, 6}) {
    AttentionDims d;
    d.batch = 2;
    d.seq = 5;
    d.heads = 6;
    d.kvHeads = kvHeads;
    d.headDim = 3;
    d.vHeadDim = 2;
    d.kvSeq = 7;
    d.qOffset = 2;
    const int64_t B = d.batch, S = d.seq, T = d.keys(), H = d.heads;
    const int64_t hd = d.headDim, vd = d.valueDim(), group = H / kvHeads;
    const int64_t qs = H * hd, ks = kvHeads * hd, vs = kvHeads * vd,
                  os = H * vd;
    auto filledHost = [](int64_t n, uint32_t seed) {
      std::vector<float> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = float(((i * 2654435761u + seed) % 1000) / 500.0 - 1.0);
      return v;
    };
    const float nan = std::nanf("");
    std::vector<float> Q = filledHost(B * S * qs, 1),
                       K = filledHost(B * T * ks, 2),
                       V = filledHost(B * T * vs, 3),
                       DO = filledHost(B * S * os, 4);
    std::vector<float> O(size_t(B * S * os), nan), DQ(size_t(B * S * qs), nan),
        DK(size_t(B * T * ks), 0.0f), DV(size_t(B * T * vs), 0.0f);
    std::vector<std::vector<float>> Ps(static_cast<size_t>(B)),
        PVs(static_cast<size_t>(B)), DPs(static_cast<size_t>(B));
    auto run = [&](int64_t b, detail::AttnPhase phase) {
      auto buffer = [&](detail::AttnBuf which) -> std::vector<float> & {
        switch (which) {
        case detail::AttnBuf::Q: return Q;
        case detail::AttnBuf::K: return K;
        case detail::AttnBuf::V: return V;
        case detail::AttnBuf::DO: return DO;
        case detail::AttnBuf::O: return O;
        case detail::AttnBuf::DQ: return DQ;
        case detail::AttnBuf::DK: return DK;
        case detail::AttnBuf::DV: return DV;
        case detail::AttnBuf::P: return Ps[size_t(b)];
        case detail::AttnBuf::PV: return PVs[size_t(b)];
        case detail::AttnBuf::DP: return DPs[size_t(b)];
        }
        return Q;
      };
      for (const detail::AttnGemm &g : detail::attentionGemms(d, b, phase)) {
        // Over the kv heads, or (multi-query) over a group's query heads.
        REQUIRE(g.batch == (kvHeads >= group || g.beta != 0.0f ? kvHeads
                                                               : group));
        std::vector<float> &A = buffer(g.a), &Bm = buffer(g.b),
                           &C = buffer(g.c);
        for (int64_t p = 0; p < g.batch; ++p)
          for (int64_t i = 0; i < g.m; ++i)
            for (int64_t j = 0; j < g.n; ++j) {
              double acc = 0;
              for (int64_t e = 0; e < g.k; ++e) {
                int64_t ia = g.offA + p * g.strideA +
                             (g.transA ? e * g.lda + i : i * g.lda + e);
                int64_t ib = g.offB + p * g.strideB +
                             (g.transB ? j * g.ldb + e : e * g.ldb + j);
                REQUIRE(ia >= 0);
                REQUIRE(ia < int64_t(A.size()));
                REQUIRE(ib >= 0);
                REQUIRE(ib < int64_t(Bm.size()));
                acc += double(A[size_t(ia)]) * Bm[size_t(ib)];
              }
              int64_t ic = g.offC + p * g.strideC + i * g.ldc + j;
              REQUIRE(ic >= 0);
              REQUIRE(ic < int64_t(C.size()));
              float prev = g.beta == 0.0f ? 0.0f : C[size_t(ic)];
              C[size_t(ic)] = float(g.alpha * acc + g.beta * prev);
            }
      }
    };
    // M[h, i, j] = scale * (row i of head h of x) . (row j of kv head
    // h / group of y), for every head of sample b.
    auto expectScores = [&](const std::vector<float> &M,
                            const std::vector<float> &x, int64_t xs,
                            const std::vector<float> &y, int64_t ys,
                            int64_t len, double scale, int64_t b) {
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < S; ++i)
          for (int64_t j = 0; j < T; ++j) {
            double want = 0;
            for (int64_t e = 0; e < len; ++e)
              want += double(x[size_t((b * S + i) * xs + h * len + e)]) *
                      y[size_t((b * T + j) * ys + (h / group) * len + e)];
            REQUIRE(M[size_t((h * S + i) * T + j)] ==
                    Approx(scale * want).margin(1e-6));
          }
    };
    for (int64_t b = 0; b < B; ++b) {
      Ps[size_t(b)].assign(size_t(H * S * T), nan);
      DPs[size_t(b)].assign(size_t(H * S * T), nan);
      run(b, detail::AttnPhase::Scores);
      // The scores of every head: scale q_h . k_(h / group).
      expectScores(Ps[size_t(b)], Q, qs, K, ks, hd, d.softmaxScale(), b);
      // Any matrix stands in for the weighted probabilities.
      PVs[size_t(b)] = filledHost(H * S * T, uint32_t(10 + b));
      run(b, detail::AttnPhase::Output);
      run(b, detail::AttnPhase::BackwardValues);
      // dP_h = dO_h V_j^T.
      expectScores(DPs[size_t(b)], DO, os, V, vs, vd, 1.0, b);
      run(b, detail::AttnPhase::BackwardKeys);
    }
    // O, dQ (every element written), dV and dK (summed over the group).
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const std::vector<float> &PV = PVs[size_t(b)], &DP = DPs[size_t(b)];
        for (int64_t i = 0; i < S; ++i) {
          for (int64_t e = 0; e < vd; ++e) {
            double want = 0;
            for (int64_t j = 0; j < T; ++j)
              want += double(PV[size_t((h * S + i) * T + j)]) *
                      V[size_t((b * T + j) * vs + (h / group) * vd + e)];
            REQUIRE(O[size_t((b * S + i) * os + h * vd + e)] ==
                    Approx(want).margin(1e-6));
          }
          for (int64_t e = 0; e < hd; ++e) {
            double want = 0;
            for (int64_t j = 0; j < T; ++j)
              want += double(DP[size_t((h * S + i) * T + j)]) *
                      K[size_t((b * T + j) * ks + (h / group) * hd + e)];
            REQUIRE(DQ[size_t((b * S + i) * qs + h * hd + e)] ==
                    Approx(want).margin(1e-5));
          }
        }
      }
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < T; ++j)
        for (int64_t g = 0; g < kvHeads; ++g) {
          for (int64_t e = 0; e < vd; ++e) {
            double want = 0;
            for (int64_t h = g * group; h < (g + 1) * group; ++h)
              for (int64_t i = 0; i < S; ++i)
                want += double(PVs[size_t(b)][size_t((h * S + i) * T + j)]) *
                        DO[size_t((b * S + i) * os + h * vd + e)];
            REQUIRE(DV[size_t((b * T + j) * vs + g * vd + e)] ==
                    Approx(want).margin(1e-5));
          }
          for (int64_t e = 0; e < hd; ++e) {
            double want = 0;
            for (int64_t h = g * group; h < (g + 1) * group; ++h)
              for (int64_t i = 0; i < S; ++i)
                want += double(DPs[size_t(b)][size_t((h * S + i) * T + j)]) *
                        Q[size_t((b * S + i) * qs + h * hd + e)];
            REQUIRE(DK[size_t((b * T + j) * ks + g * hd + e)] ==
                    Approx(want).margin(1e-5));
          }
        }
  }
}

TEST_CASE("live and peak tensor bytes count storage once", "[runtime]") {
  ensureInit();
  const int64_t base = liveTensorBytes();
  resetPeakTensorBytes();
  REQUIRE(peakTensorBytes() == base);
  {
    Tensor a({100}); // 400 bytes
    REQUIRE(liveTensorBytes() == base + 400);
    Tensor view = a.view(10, {20}), shared = a;
    REQUIRE(liveTensorBytes() == base + 400); // views share the storage
    a = Tensor();
    REQUIRE(liveTensorBytes() == base + 400); // still referenced
    Tensor b({50});
    REQUIRE(liveTensorBytes() == base + 600);
  }
  REQUIRE(liveTensorBytes() == base);
  REQUIRE(peakTensorBytes() == base + 600);
  resetPeakTensorBytes();
  REQUIRE(peakTensorBytes() == base);
}

TEST_CASE("dropout: rate, scaling, shards, steps and sites", "[runtime]") {
  ensureInit();
  DropoutSite site;
  site.rate = 0.25f, site.seed = 42, site.step = 3, site.site = 7;
  site.seqLen = 32, site.features = 64;
  const int64_t b = 4, s = 32, f = 64, n = b * s * f;
  Tensor x = randomTensor({b * s, f}, "x"), y({b * s, f});
  dropoutApply(y, x, b, s, site);
  auto xv = x.toHost(), yv = y.toHost();
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool keep = dropoutKeeps(site, uint64_t(i));
    REQUIRE(yv[size_t(i)] == (keep ? xv[size_t(i)] * (1.0f / 0.75f) : 0.0f));
    zeros += keep ? 0 : 1;
  }
  // 8192 draws at p = 0.25: the standard deviation of the fraction is 0.005.
  CHECK(double(zeros) / double(n) == Approx(0.25).margin(0.025));

  // A shard (samples 2..3, positions 8..23, features 16..47) draws the bits
  // of those elements of the whole.
  DropoutSite part = site;
  part.firstSample = 2, part.firstPos = 8, part.firstFeature = 16;
  std::vector<float> xs;
  for (int64_t i = 2; i < 4; ++i)
    for (int64_t p = 8; p < 24; ++p)
      for (int64_t c = 16; c < 48; ++c)
        xs.push_back(xv[size_t((i * s + p) * f + c)]);
  Tensor xp({2 * 16, 32}), yp({2 * 16, 32});
  xp.fromHost(xs);
  dropoutApply(yp, xp, 2, 16, part);
  auto ypv = yp.toHost();
  size_t e = 0;
  for (int64_t i = 2; i < 4; ++i)
    for (int64_t p = 8; p < 24; ++p)
      for (int64_t c = 16; c < 48; ++c)
        REQUIRE(ypv[e++] == yv[size_t((i * s + p) * f + c)]);

  // Another step or another site draws another mask; rate 0 is a copy.
  int64_t sameStep = 0, sameSite = 0;
  DropoutSite next = site, other = site;
  next.step = 4, other.site = 8;
  for (int64_t i = 0; i < n; ++i) {
    sameStep += dropoutKeeps(next, uint64_t(i)) == dropoutKeeps(site, uint64_t(i));
    sameSite += dropoutKeeps(other, uint64_t(i)) == dropoutKeeps(site, uint64_t(i));
  }
  CHECK(sameStep < n * 7 / 10); // independent masks agree on ~62.5%
  CHECK(sameSite < n * 7 / 10);
  DropoutSite none = site;
  none.rate = 0.0f;
  dropoutApply(y, x, b, s, none);
  REQUIRE(y.toHost() == xv);

  // In place, and bad sites.
  Tensor z = randomTensor({b * s, f}, "x");
  dropoutApply(z, z, b, s, site);
  REQUIRE(z.toHost() == yv);
  DropoutSite bad = site;
  bad.rate = 1.0f;
  CHECK_THROWS_WITH(dropoutApply(y, x, b, s, bad),
                    Catch::Contains("dropoutApply") &&
                        Catch::Contains("must be in [0, 1)"));
  bad = site;
  bad.firstPos = 8;
  CHECK_THROWS_WITH(dropoutApply(y, x, b, s, bad),
                    Catch::Contains("does not fit"));
}

TEST_CASE("attention of a context-parallel chunk is those rows of the "
          "whole sequence's",
          "[runtime]") {
  ensureInit();
  // The whole sequences: 2 of 8 positions, GQA (2 query heads, 1 kv head).
  AttentionDims whole;
  whole.batch = 2, whole.seq = 8, whole.heads = 2, whole.kvHeads = 1,
  whole.headDim = 4;
  // Plain, with a sliding window, with attention dropout, and both: the
  // chunks must see the same window and draw the same dropout bits.
  // Bidirectional (encoder) attention: every chunk's queries see all keys.
  struct Variant {
    int64_t window;
    float rate;
    bool causal = true;
  };
  const Variant variant =
      GENERATE(Variant{0, 0.0f}, Variant{3, 0.0f}, Variant{0, 0.3f},
               Variant{3, 0.3f}, Variant{0, 0.0f, false},
               Variant{0, 0.3f, false});
  whole.window = variant.window;
  whole.causal = variant.causal;
  whole.dropout.rate = variant.rate;
  whole.dropout.seed = 11, whole.dropout.step = 2, whole.dropout.site = 5;
  whole.dropout.seqLen = 8, whole.dropout.features = 2;
  const int64_t n = 16, qw = 8, kw = 4, cp = 2, s = 4;
  Tensor q = randomTensor({n, qw}, "q", 1.5f), k = randomTensor({n, kw}, "k", 1.5f),
         v = randomTensor({n, kw}, "v"), r = randomTensor({n, qw}, "r");
  Tensor out({n, qw}), probs({2, 2, 8, 8});
  attentionForward(out, probs, q, k, v, whole);
  Tensor dq({n, qw}), dk({n, kw}), dv({n, kw});
  attentionBackward(dq, dk, dv, r, q, k, v, probs, whole);
  // Rows of positions [c*s, c*s + s) of both sequences.
  auto rows = [&](const Tensor &t, int64_t width, int64_t c) {
    std::vector<float> all = t.toHost(), part;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t p = c * s; p < c * s + s; ++p)
        part.insert(part.end(), all.begin() + (b * 8 + p) * width,
                    all.begin() + (b * 8 + p + 1) * width);
    Tensor x({2 * s, width});
    x.fromHost(part);
    return x;
  };
  std::vector<float> dkSum(size_t(n * kw), 0.0f), dvSum(size_t(n * kw), 0.0f);
  for (int64_t c = 0; c < cp; ++c) {
    AttentionDims d = whole;
    d.seq = s, d.kvSeq = 8, d.qOffset = c * s;
    d.dropout.firstPos = c * s;
    Tensor qc = rows(q, qw, c), rc = rows(r, qw, c);
    Tensor oc({2 * s, qw}), pc({2, 2, s, 8});
    attentionForward(oc, pc, qc, k, v, d);
    auto want = rows(out, qw, c).toHost(), got = oc.toHost();
    for (size_t i = 0; i < want.size(); ++i)
      REQUIRE(got[i] == Approx(want[i]).margin(1e-6));
    Tensor dqc({2 * s, qw}), dkc({n, kw}), dvc({n, kw});
    attentionBackward(dqc, dkc, dvc, rc, qc, k, v, pc, d);
    auto wantDq = rows(dq, qw, c).toHost(), gotDq = dqc.toHost();
    for (size_t i = 0; i < wantDq.size(); ++i)
      REQUIRE(gotDq[i] == Approx(wantDq[i]).margin(1e-6));
    auto a = dkc.toHost(), b = dvc.toHost();
    for (size_t i = 0; i < a.size(); ++i)
      dkSum[i] += a[i], dvSum[i] += b[i];
    // The first chunk's queries never see the second chunk's keys.
    if (c == 0 && variant.window == 0 && variant.causal)
      for (int64_t b2 = 0; b2 < 2; ++b2)
        for (int64_t p = s; p < 8; ++p)
          for (int64_t j = 0; j < kw; ++j)
            REQUIRE(a[size_t((b2 * 8 + p) * kw + j)] == 0.0f);
  }
  // The key and value gradients of the chunks sum to the whole sequence's
  // (what the reduce-scatter over cp does).
  auto wantDk = dk.toHost(), wantDv = dv.toHost();
  for (size_t i = 0; i < wantDk.size(); ++i) {
    REQUIRE(dkSum[i] == Approx(wantDk[i]).margin(1e-6));
    REQUIRE(dvSum[i] == Approx(wantDv[i]).margin(1e-6));
  }
  // Queries beyond the keys are refused.
  AttentionDims bad = whole;
  bad.seq = s, bad.kvSeq = 8, bad.qOffset = 5;
  Tensor qb = rows(q, qw, 0), ob({2 * s, qw}), pb({2, 2, s, 8});
  CHECK_THROWS_WITH(attentionForward(ob, pb, qb, k, v, bad),
                    Catch::Contains("attentionForward") &&
                        Catch::Contains("outside the 8 keys"));
}

TEST_CASE("attention saving the log-sum-exp: the output of the "
          "probabilities form, lse = max + log(sum), the same gradients",
          "[runtime]") {
  ensureInit();
  // Every feature the saved tensor meets: GQA, a context-parallel chunk
  // (queries at 3.. of 8 keys), a window, dropout (drawn again in the
  // backward), sinks, no causal mask, value heads of their own size.
  struct Variant {
    int64_t window = 0;
    float rate = 0.0f;
    bool sinks = false, causal = true;
    int64_t vHeadDim = 0;
  };
  const Variant variant =
      GENERATE(Variant{}, Variant{3}, Variant{0, 0.3f}, Variant{2, 0.0f, true},
               Variant{0, 0.2f, true}, Variant{0, 0.0f, false, false},
               Variant{0, 0.0f, false, true, 5});
  AttentionDims d;
  d.batch = 2, d.seq = 5, d.heads = 4, d.kvHeads = 2, d.headDim = 3;
  d.kvSeq = 8, d.qOffset = 3;
  d.window = variant.window;
  d.causal = variant.causal;
  d.vHeadDim = variant.vHeadDim;
  d.dropout.rate = variant.rate;
  d.dropout.seed = 4, d.dropout.step = 1, d.dropout.site = 2;
  d.dropout.seqLen = 8, d.dropout.features = 4, d.dropout.firstPos = 3;
  const int64_t B = 2, S = 5, T = 8, H = 4, hd = 3, vd = d.valueDim();
  Tensor q = randomTensor({B * S, H * hd}, "q", 1.5f),
         k = randomTensor({B * T, 2 * hd}, "k", 1.5f),
         v = randomTensor({B * T, 2 * vd}, "v"),
         r = randomTensor({B * S, H * vd}, "r");
  Tensor sinks;
  if (variant.sinks) {
    sinks = Tensor({H});
    sinks.fromHost({0.7f, -0.4f, 0.1f, 1.2f});
  }
  Tensor outP({B * S, H * vd}), probs({B, H, S, T});
  Tensor outL({B * S, H * vd}), lse({B, H, S});
  attentionForward(outP, probs, q, k, v, sinks, d);
  attentionForward(outL, lse, q, k, v, sinks, d);
  // The same probabilities reach the output.
  REQUIRE(outL.toHost() == outP.toHost());
  // lse_i = log(sum over the visible keys of e^(score) + e^(sink)).
  auto Q = q.toHost(), K = k.toHost(), L = lse.toHost(), P = probs.toHost();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        const int64_t last = d.causal ? d.qOffset + i : T - 1;
        const int64_t first =
            d.window > 0 ? std::max<int64_t>(0, last - d.window + 1) : 0;
        double z =
            variant.sinks ? std::exp(double(sinks.toHost()[size_t(h)])) : 0.0;
        for (int64_t j = first; j <= last; ++j) {
          double a = 0;
          for (int64_t c = 0; c < hd; ++c)
            a += double(Q[size_t((b * S + i) * H * hd + h * hd + c)]) *
                 K[size_t((b * T + j) * 2 * hd + (h / 2) * hd + c)];
          z += std::exp(a / std::sqrt(3.0));
        }
        REQUIRE(L[size_t((b * H + h) * S + i)] ==
                Approx(std::log(z)).margin(1e-5));
      }
  // The backward from either saved tensor.
  // Given the forward's output too (the emitted programs' call), or not.
  auto grads = [&](const Tensor &saved, const Tensor &out = Tensor()) {
    Tensor dq({B * S, H * hd}), dk({B * T, 2 * hd}), dv({B * T, 2 * vd});
    Tensor ds = variant.sinks ? Tensor({H}) : Tensor();
    attentionBackward(dq, dk, dv, ds, r, q, k, v, out, saved, d);
    std::vector<std::vector<float>> all = {dq.toHost(), dk.toHost(),
                                           dv.toHost()};
    if (variant.sinks)
      all.push_back(ds.toHost());
    return all;
  };
  auto fromP = grads(probs), fromL = grads(lse);
  for (size_t t = 0; t < fromP.size(); ++t)
    for (size_t i = 0; i < fromP[t].size(); ++i)
      REQUIRE(fromL[t][i] == Approx(fromP[t][i]).margin(2e-6));
  // The CPU runtime has no fused backward: the output changes nothing.
  REQUIRE(grads(lse, outL) == fromL);
  // An output not shaped as dout is refused by name.
  {
    Tensor dq({B * S, H * hd}), dk({B * T, 2 * hd}), dv({B * T, 2 * vd});
    Tensor ds = variant.sinks ? Tensor({H}) : Tensor();
    Tensor bad({B * S, H * vd + 1});
    CHECK_THROWS_WITH(
        attentionBackward(dq, dk, dv, ds, r, q, k, v, bad, lse, d),
        Catch::Contains("out [") && Catch::Contains("is not shaped as dout"));
  }
  // A saved tensor of neither size is refused by name.
  Tensor wrong({B, H, S, T - 1});
  CHECK_THROWS_WITH(attentionForward(outL, wrong, q, k, v, sinks, d),
                    Catch::Contains("[b, heads, s, keys]") &&
                        Catch::Contains("log-sum-exp"));
}

TEST_CASE("RoPE at a position offset equals the later rows of a longer "
          "sequence",
          "[runtime]") {
  ensureInit();
  const int64_t heads = 2, dim = 4, width = heads * dim;
  Tensor x = randomTensor({6, width}, "x"), y({6, width});
  ropeApply(y, x, 6, heads, dim, dim, 10000.0, false);
  // Positions 4 and 5 alone, as a cp rank holding them would rotate them.
  std::vector<float> X = x.toHost();
  Tensor tail({2, width}), tailY({2, width});
  tail.fromHost(std::vector<float>(X.begin() + 4 * width, X.end()));
  ropeApply(tailY, tail, 2, heads, dim, dim, 10000.0, false, 4);
  auto want = y.toHost(), got = tailY.toHost();
  for (int64_t i = 0; i < 2 * width; ++i)
    REQUIRE(got[size_t(i)] == Approx(want[size_t(4 * width + i)]).margin(1e-6));
  CHECK_THROWS_WITH(ropeApply(tailY, tail, 2, heads, dim, dim, 10000.0, false,
                              -1),
                    Catch::Contains("posOffset"));
}

TEST_CASE("mixture of experts: routing by hand, backward against finite "
          "differences",
          "[runtime]") {
  ensureInit();
  // By hand: 2 experts of ffn 1, top-1, relu. Token 0's router logits
  // (1, 0) choose expert 0 with weight 1: y = relu(x . wIn[0]) wOut[0].
  {
    MoEDims d;
    d.experts = 2, d.topK = 1, d.act = Activation::Relu;
    Tensor x({1, 2}), r({2, 2}), wi({2, 2, 1}), wo({2, 1, 2}), y({1, 2});
    x.fromHost({1.0f, 2.0f});
    r.fromHost({1.0f, 0.0f, 0.0f, 0.0f}); // logits (1, 0)
    wi.fromHost({0.5f, 0.25f, -1.0f, -1.0f});
    wo.fromHost({3.0f, -2.0f, 7.0f, 7.0f});
    moeForward(y, x, r, wi, wo, d);
    auto Y = y.toHost(); // relu(0.5 + 0.5) = 1
    CHECK(Y[0] == Approx(3.0f));
    CHECK(Y[1] == Approx(-2.0f));
  }
  // A non-finite router logit names its token.
  {
    MoEDims d;
    d.experts = 2, d.topK = 2;
    Tensor r({1, 2}), wi({2, 1, 1}), wo({2, 1, 1});
    Tensor x3({3, 1}), y3({3, 1});
    x3.fromHost({1.0f, INFINITY, 2.0f});
    REQUIRE_THROWS_WITH(moeForward(y3, x3, r, wi, wo, d),
                        Catch::Contains("router logit of token 1 is not "
                                        "finite"));
  }
  // Without renormalisation (Qwen-MoE's norm_topk_prob false) a top-1
  // token's weight is its softmax probability: logits (1, 0) give
  // e / (e + 1) = 0.7310586.
  {
    MoEDims d;
    d.experts = 2, d.topK = 1, d.act = Activation::Relu;
    d.renormalize = false;
    Tensor x({1, 2}), r({2, 2}), wi({2, 2, 1}), wo({2, 1, 2}), y({1, 2});
    x.fromHost({1.0f, 2.0f});
    r.fromHost({1.0f, 0.0f, 0.0f, 0.0f});
    wi.fromHost({0.5f, 0.25f, -1.0f, -1.0f});
    wo.fromHost({3.0f, -2.0f, 7.0f, 7.0f});
    moeForward(y, x, r, wi, wo, d);
    auto Y = y.toHost();
    CHECK(Y[0] == Approx(3.0f * 0.7310586f));
    CHECK(Y[1] == Approx(-2.0f * 0.7310586f));
  }
  // 6 tokens, hidden 4, 4 experts of ffn 3, top 2, gated SiLU (Mixtral's
  // shape) and a plain GELU expert MLP; renormalised and not.
  for (int variant = 0; variant < 3; ++variant) {
    const bool gated = variant != 1;
    MoEDims d;
    d.experts = 4, d.topK = 2, d.gated = gated;
    d.renormalize = variant != 2;
    d.act = gated ? Activation::Silu : Activation::Gelu;
    const int64_t n = 6, h = 4, f = 3, fin = gated ? 2 * f : f;
    Tensor x = randomTensor({n, h}, "x", 2.0f),
           r = randomTensor({h, 4}, "router", 2.0f),
           wi = randomTensor({4, h, fin}, "wi", 1.5f),
           wo = randomTensor({4, f, h}, "wo", 1.5f),
           g = randomTensor({n, h}, "g"), y({n, h});
    auto loss = [&] {
      moeForward(y, x, r, wi, wo, d);
      return dotLoss(y, g);
    };
    loss();
    Tensor dxe({n, h}), dxr({n, h}), dx({n, h}), dr({h, 4}),
        dwi({4, h, fin}), dwo({4, f, h}), dgate({n, 2});
    moeBackward(dxe, dwi, dwo, dgate, g, x, r, wi, wo, d);
    moeRouterBackward(dxr, dr, dgate, x, r, d);
    add(dx, dxe, dxr);
    checkMoEGradients(loss, x, dx, r, dr, wi, dwi, wo, dwo);
    // The expert gradients accumulate (a second micro-batch adds its
    // own: here the same one again); dx and dgate are overwritten.
    const std::vector<float> DWi = dwi.toHost(), DWo = dwo.toHost(),
                             DXe = dxe.toHost(), DG = dgate.toHost();
    moeBackward(dxe, dwi, dwo, dgate, g, x, r, wi, wo, d);
    const std::vector<float> DWi2 = dwi.toHost(), DWo2 = dwo.toHost();
    for (size_t i = 0; i < DWi.size(); ++i)
      CHECK(DWi2[i] == Approx(2 * DWi[i]).margin(1e-6));
    for (size_t i = 0; i < DWo.size(); ++i)
      CHECK(DWo2[i] == Approx(2 * DWo[i]).margin(1e-6));
    CHECK(dxe.toHost() == DXe);
    CHECK(dgate.toHost() == DG);
  }
  // gpt-oss: router and expert biases, the clamped SwiGLU. A limit of 1.5
  // with inputs of scale 3 clamps many gates and ups, so the gradient's
  // clamp masks are exercised too.
  {
    MoEDims d;
    d.experts = 4, d.topK = 2, d.gated = true, d.swigluLimit = 1.5f;
    const int64_t n = 6, h = 4, f = 3;
    Tensor x = randomTensor({n, h}, "x", 2.0f),
           r = randomTensor({h, 4}, "router", 2.0f),
           wi = randomTensor({4, h, 2 * f}, "wi", 1.5f),
           wo = randomTensor({4, f, h}, "wo", 1.5f),
           g = randomTensor({n, h}, "g"), y({n, h});
    MoEBiases b{randomTensor({4}, "br", 1.0f), randomTensor({4, 2 * f}, "bi"),
                randomTensor({4, h}, "bo")};
    auto loss = [&] {
      moeForward(y, x, r, wi, wo, d, b);
      return dotLoss(y, g);
    };
    loss();
    Tensor dxe({n, h}), dxr({n, h}), dx({n, h}), dr({h, 4}), dbr({4}),
        dwi({4, h, 2 * f}), dwo({4, f, h}), dgate({n, 2});
    MoEBiases db{Tensor(), Tensor({4, 2 * f}), Tensor({4, h})};
    moeBackward(dxe, dwi, dwo, dgate, g, x, r, wi, wo, d, b, db);
    moeRouterBackward(dxr, dr, dbr, dgate, x, r, b.router, d);
    add(dx, dxe, dxr);
    checkMoEGradients(loss, x, dx, r, dr, wi, dwi, wo, dwo);
    CHECK(fdError(loss, b.router, dbr.toHost(), 1e-3f) < 5e-3);
    CHECK(fdError(loss, b.in, db.in.toHost(), 1e-3f) < 5e-3);
    CHECK(fdError(loss, b.out, db.out.toHost(), 1e-3f) < 5e-3);
    // The expert bias gradients accumulate like the weights'.
    const std::vector<float> DBi = db.in.toHost(), DBo = db.out.toHost();
    moeBackward(dxe, dwi, dwo, dgate, g, x, r, wi, wo, d, b, db);
    const std::vector<float> DBi2 = db.in.toHost(), DBo2 = db.out.toHost();
    for (size_t i = 0; i < DBi.size(); ++i)
      CHECK(DBi2[i] == Approx(2 * DBi[i]).margin(1e-6));
    for (size_t i = 0; i < DBo.size(); ++i)
      CHECK(DBo2[i] == Approx(2 * DBo[i]).margin(1e-6));
    // One token, one expert, by hand: gate 2 clamps to 1.5, up -0.5 stays;
    // hidden = (-0.5 + 1) * 1.5 * sigmoid(1.702 * 1.5).
    MoEDims one;
    one.experts = 1, one.topK = 1, one.gated = true, one.swigluLimit = 1.5f;
    Tensor x1({1, 1}), r1({1, 1}), wi1({1, 1, 2}), wo1({1, 1, 1}), y1({1, 1});
    x1.fromHost({1.0f});
    wi1.fromHost({2.0f, -0.5f});
    wo1.fromHost({1.0f});
    MoEBiases b1{Tensor({1}), Tensor({1, 2}), Tensor({1, 1})};
    b1.out.fromHost({0.25f});
    moeForward(y1, x1, r1, wi1, wo1, one, b1);
    const double want = 0.5 * 1.5 / (1.0 + std::exp(-1.702 * 1.5)) + 0.25;
    CHECK(y1.toHost()[0] == Approx(want).epsilon(1e-6));
    // Left to another rank, the output bias is not added.
    one.outBiasHere = false;
    moeForward(y1, x1, r1, wi1, wo1, one, b1);
    CHECK(y1.toHost()[0] == Approx(want - 0.25).epsilon(1e-6));
    // A limit without gating is refused.
    MoEDims bad = d;
    bad.gated = false;
    CHECK_THROWS_WITH(moeForward(y, x, r, wi, wo, bad, b),
                      Catch::Contains("swigluLimit"));
  }
  // Expert parallelism: two ranks holding experts 0-1 and 2-3 give outputs,
  // expert gradients and gate gradients that add up to one rank's; the
  // router backward of each half of the rows gives those rows.
  {
    MoEDims d;
    d.experts = 4, d.topK = 2, d.gated = true;
    const int64_t n = 6, h = 4, f = 3;
    Tensor x = randomTensor({n, h}, "x", 2.0f),
           r = randomTensor({h, 4}, "router", 2.0f),
           wi = randomTensor({4, h, 2 * f}, "wi", 1.5f),
           wo = randomTensor({4, f, h}, "wo", 1.5f),
           g = randomTensor({n, h}, "g"), y({n, h});
    moeForward(y, x, r, wi, wo, d);
    Tensor dx({n, h}), dwi({4, h, 2 * f}), dwo({4, f, h}), dgate({n, 2});
    moeBackward(dx, dwi, dwo, dgate, g, x, r, wi, wo, d);
    std::vector<float> ySum(size_t(n * h), 0.0f), dxSum(ySum), gSum(size_t(n * 2), 0.0f);
    auto Wi = wi.toHost(), Wo = wo.toHost();
    for (int64_t half = 0; half < 2; ++half) {
      MoEDims dh = d;
      dh.expertOffset = 2 * half;
      Tensor wih({2, h, 2 * f}), woh({2, f, h});
      wih.fromHost(std::vector<float>(Wi.begin() + half * 2 * h * 2 * f,
                                      Wi.begin() + (half + 1) * 2 * h * 2 * f));
      woh.fromHost(std::vector<float>(Wo.begin() + half * 2 * f * h,
                                      Wo.begin() + (half + 1) * 2 * f * h));
      Tensor yh({n, h}), dxh({n, h}), dwih({2, h, 2 * f}), dwoh({2, f, h}),
          gh({n, 2});
      moeForward(yh, x, r, wih, woh, dh);
      moeBackward(dxh, dwih, dwoh, gh, g, x, r, wih, woh, dh);
      auto a = yh.toHost(), b = dxh.toHost(), c = gh.toHost();
      for (size_t i = 0; i < a.size(); ++i)
        ySum[i] += a[i], dxSum[i] += b[i];
      for (size_t i = 0; i < c.size(); ++i)
        gSum[i] += c[i];
      auto full = dwi.toHost(), part = dwih.toHost();
      for (size_t i = 0; i < part.size(); ++i)
        REQUIRE(part[i] == full[size_t(half * 2 * h * 2 * f) + i]);
    }
    auto Y = y.toHost(), DX = dx.toHost(), G = dgate.toHost();
    for (size_t i = 0; i < Y.size(); ++i) {
      REQUIRE(ySum[i] == Approx(Y[i]).margin(1e-6));
      REQUIRE(dxSum[i] == Approx(DX[i]).margin(1e-6));
    }
    for (size_t i = 0; i < G.size(); ++i)
      REQUIRE(gSum[i] == Approx(G[i]).margin(1e-6));
    Tensor dxr({n, h}), dr({h, 4}), dxr2({n / 2, h}), dr2({h, 4});
    moeRouterBackward(dxr, dr, dgate, x, r, d);
    moeRouterBackward(dxr2, dr2, dgate, x, r, d, n / 2);
    auto all = dxr.toHost(), tail = dxr2.toHost();
    for (size_t i = 0; i < tail.size(); ++i)
      REQUIRE(tail[i] == all[size_t(n / 2 * h) + i]);
  }
  Tensor x({2, 4}), r({4, 3}), wi({3, 4, 2}), wo({3, 2, 4}), y({2, 4});
  MoEDims bad;
  bad.experts = 3, bad.topK = 4;
  CHECK_THROWS_WITH(moeForward(y, x, r, wi, wo, bad),
                    Catch::Contains("moeForward") && Catch::Contains("topK"));
  bad.topK = 2, bad.experts = 2;
  CHECK_THROWS_WITH(moeForward(y, x, r, wi, wo, bad),
                    Catch::Contains("router"));
}

TEST_CASE("RoPE: rotation by hand, pass-through, inverse and backward",
          "[runtime]") {
  ensureInit();
  // 2 sequences of 3 positions, 2 heads of 6 dims, 4 of them rotated.
  const int64_t seq = 3, heads = 2, dim = 6, rot = 4;
  const double theta = 100.0;
  const int64_t n = 2 * seq;
  Tensor x = randomTensor({n, heads * dim}, "x");
  Tensor y({n, heads * dim});
  ropeApply(y, x, seq, heads, dim, rot, theta, false);
  auto X = x.toHost(), Y = y.toHost();
  // Row 4 is position 1 of the second sequence; head 1, pair i = 1 turns
  // by 1 * 100^(-2/4) = 0.1 rad: dims 1 and 3 of the head.
  const int64_t b = (4 * heads + 1) * dim;
  double c = std::cos(0.1), sn = std::sin(0.1);
  CHECK(Y[b + 1] == Approx(X[b + 1] * c - X[b + 3] * sn).epsilon(1e-5));
  CHECK(Y[b + 3] == Approx(X[b + 3] * c + X[b + 1] * sn).epsilon(1e-5));
  // Dimensions from rot on pass through; position 0 does not turn.
  CHECK(Y[b + 4] == X[b + 4]);
  CHECK(Y[b + 5] == X[b + 5]);
  for (int64_t i = 0; i < heads * dim; ++i)
    CHECK(Y[3 * heads * dim + i] == Approx(X[3 * heads * dim + i]));
  // The inverse undoes it, in place too.
  ropeApply(y, y, seq, heads, dim, rot, theta, true);
  auto back = y.toHost();
  for (size_t i = 0; i < X.size(); ++i)
    REQUIRE(back[i] == Approx(X[i]).margin(1e-6));
  // The backward (inverse rotation of dy) against finite differences.
  Tensor r = randomTensor({n, heads * dim}, "r"), out({n, heads * dim});
  auto loss = [&] {
    ropeApply(out, x, seq, heads, dim, rot, theta, false);
    return dotLoss(out, r);
  };
  Tensor dx({n, heads * dim});
  ropeApply(dx, r, seq, heads, dim, rot, theta, true);
  CHECK(fdError(loss, x, dx.toHost()) < kTol);
  // Bad arguments are refused with the kernel named.
  CHECK_THROWS_WITH(ropeApply(y, x, seq, heads, dim, 3, theta, false),
                    Catch::Contains("ropeApply") && Catch::Contains("even"));
  CHECK_THROWS_WITH(ropeApply(y, x, 4, heads, dim, rot, theta, false),
                    Catch::Contains("whole sequences"));
}

TEST_CASE("DeepSeek-V3 routing: sigmoid scores, a selection bias, groups "
          "and a scale; by hand and against finite differences",
          "[runtime]") {
  ensureInit();
  // By hand: 4 experts in 2 groups ({0, 1}, {2, 3}), the best group kept,
  // top 2, relu experts of ffn 1 whose output is wOut[e] times relu(x .
  // wIn[e]) = 1 for every expert. Logits (2, 0, 1, -1) score sigmoid
  // (0.8808, 0.5, 0.7311, 0.2689); the selection bias (0, 0, 0.5, 0.5)
  // makes the selection scores (0.8808, 0.5, 1.2311, 0.7689): group 1
  // (1.2311 + 0.7689 = 2.0) beats group 0 (1.3808), so the experts are 2
  // and 3, weighted by their unbiased scores, renormalised and scaled:
  // 2.5 * 0.7311 / (0.7311 + 0.2689) and 2.5 * 0.2689 / 1.0.
  {
    MoEDims d;
    d.experts = 4, d.topK = 2, d.act = Activation::Relu;
    d.sigmoidScores = true, d.groups = 2, d.topkGroups = 1;
    d.routedScale = 2.5f;
    Tensor x({1, 1}), r({1, 4}), wi({4, 1, 1}), wo({4, 1, 1}), y({1, 1}),
        sel({4});
    x.fromHost({1.0f});
    r.fromHost({2.0f, 0.0f, 1.0f, -1.0f});
    wi.fromHost({1.0f, 1.0f, 1.0f, 1.0f});
    wo.fromHost({1.0f, 10.0f, 100.0f, 1000.0f});
    sel.fromHost({0.0f, 0.0f, 0.5f, 0.5f});
    MoEBiases b;
    b.select = sel;
    moeForward(y, x, r, wi, wo, d, b);
    const double s2 = 1.0 / (1.0 + std::exp(-1.0)),
                 s3 = 1.0 / (1.0 + std::exp(1.0));
    CHECK(y.toHost()[0] ==
          Approx(2.5 * (100.0 * s2 + 1000.0 * s3) / (s2 + s3)).epsilon(1e-6));
    // Without the bias group 0 (0.8808 + 0.5) beats group 1 (0.7311 +
    // 0.2689), so the experts are 0 and 1, although expert 2 scores above
    // expert 1.
    moeForward(y, x, r, wi, wo, d);
    const double s0 = 1.0 / (1.0 + std::exp(-2.0)), s1 = 0.5;
    CHECK(y.toHost()[0] ==
          Approx(2.5 * (1.0 * s0 + 10.0 * s1) / (s0 + s1)).epsilon(1e-6));
    // Unnormalised: the scores themselves, scaled.
    d.renormalize = false;
    moeForward(y, x, r, wi, wo, d, b);
    CHECK(y.toHost()[0] ==
          Approx(2.5 * (100.0 * s2 + 1000.0 * s3)).epsilon(1e-6));
  }
  // The backward against finite differences: 6 tokens, hidden 4, 8
  // experts in 4 groups of which 2 are kept, top 3, gated SiLU, a
  // selection bias, renormalised and not.
  for (int variant = 0; variant < 2; ++variant) {
    MoEDims d;
    d.experts = 8, d.topK = 3, d.gated = true;
    d.sigmoidScores = true, d.groups = 4, d.topkGroups = 2;
    d.routedScale = 2.5f;
    d.renormalize = variant == 0;
    const int64_t n = 6, h = 4, f = 3;
    Tensor x = randomTensor({n, h}, "x", 2.0f),
           r = randomTensor({h, 8}, "router", 2.0f),
           wi = randomTensor({8, h, 2 * f}, "wi", 1.5f),
           wo = randomTensor({8, f, h}, "wo", 1.5f),
           g = randomTensor({n, h}, "g"), y({n, h});
    MoEBiases b;
    b.select = randomTensor({8}, "sel", 0.3f);
    auto loss = [&] {
      moeForward(y, x, r, wi, wo, d, b);
      return dotLoss(y, g);
    };
    loss();
    Tensor dxe({n, h}), dxr({n, h}), dx({n, h}), dr({h, 8}),
        dwi({8, h, 2 * f}), dwo({8, f, h}), dgate({n, 3}), noBias;
    MoEBiases db;
    moeBackward(dxe, dwi, dwo, dgate, g, x, r, wi, wo, d, b, db);
    moeRouterBackward(dxr, dr, noBias, dgate, x, r, b, d);
    add(dx, dxe, dxr);
    checkMoEGradients(loss, x, dx, r, dr, wi, dwi, wo, dwo);
  }
  // Groups that do not divide the experts, or hold fewer than top_k.
  MoEDims bad;
  bad.experts = 8, bad.topK = 3, bad.groups = 3;
  Tensor x({1, 4}), r({4, 8}), wi({8, 4, 2}), wo({8, 2, 4}), y({1, 4});
  CHECK_THROWS_WITH(moeForward(y, x, r, wi, wo, bad),
                    Catch::Contains("must divide"));
  bad.groups = 4, bad.topkGroups = 1;
  CHECK_THROWS_WITH(moeForward(y, x, r, wi, wo, bad),
                    Catch::Contains("topK within those groups"));
}

TEST_CASE("DeepSeek-V3 load balancing: expert loads and the bias update",
          "[runtime]") {
  ensureInit();
  // 3 tokens, 4 experts, top 2, sigmoid scores. Router logits per token
  // are x_t times (4, 3, 2, 1) with x = (1, -1, 0.5): token 0 picks
  // experts 0 and 1, token 1 (reversed order) 3 and 2, token 2 0 and 1.
  MoEDims d;
  d.experts = 4, d.topK = 2, d.act = Activation::Relu;
  d.sigmoidScores = true;
  Tensor x({3, 1}), r({1, 4}), dgate({3, 2}), dx({3, 1}), dr({1, 4}),
      noBias, load({4});
  x.fromHost({1.0f, -1.0f, 0.5f});
  r.fromHost({4.0f, 3.0f, 2.0f, 1.0f});
  MoEBiases b;
  b.select = Tensor({4});
  moeRouterBackward(dx, dr, noBias, dgate, x, r, b, d, 0, &load);
  CHECK(load.toHost() == std::vector<float>{2.0f, 2.0f, 1.0f, 1.0f});
  // Rows 1..2 only (this rank's own rows of a gathered x): added.
  Tensor dx2({2, 1});
  moeRouterBackward(dx2, dr, noBias, dgate, x, r, b, d, 1, &load);
  CHECK(load.toHost() == std::vector<float>{3.0f, 3.0f, 2.0f, 2.0f});
  // The update: mean 2.5, so the busy experts 0 and 1 move down, the idle
  // ones up; an expert exactly at the mean keeps its bias.
  Tensor bias({4});
  bias.fromHost({0.5f, 0.0f, 0.0f, -0.5f});
  loadBalanceUpdate(bias, load, 0.25f);
  CHECK(bias.toHost() == std::vector<float>{0.25f, -0.25f, 0.25f, -0.25f});
  Tensor even({4});
  even.fromHost({2.0f, 3.0f, 2.5f, 2.5f});
  loadBalanceUpdate(bias, even, 0.25f);
  CHECK(bias.toHost() == std::vector<float>{0.5f, -0.5f, 0.25f, -0.25f});
  // A ZeRO-3 slice: elements 2..4 of the bias, the last one padding.
  Tensor slice({3});
  slice.fromHost({1.0f, 1.0f, 7.0f});
  loadBalanceUpdate(slice, load, 0.5f, 2);
  CHECK(slice.toHost() == std::vector<float>{1.5f, 1.5f, 7.0f});
  // The routing moves: with a bias of +1 on expert 2, token 0 picks 0 and
  // 2.
  b.select.fromHost({0.0f, 0.0f, 1.0f, 0.0f});
  zero(load);
  Tensor dx1({1, 1});
  moeRouterBackward(dx1, dr, noBias, dgate, x, r, b, d, 0, &load);
  CHECK(load.toHost() == std::vector<float>{1.0f, 0.0f, 1.0f, 0.0f});
  Tensor wrong({3});
  CHECK_THROWS_WITH(moeRouterBackward(dx1, dr, noBias, dgate, x, r, b, d, 0,
                                      &wrong),
                    Catch::Contains("one value per expert"));
  Tensor negative({4});
  negative.fromHost({1.0f, -1.0f, 0.0f, 0.0f});
  CHECK_THROWS_WITH(loadBalanceUpdate(bias, negative, 0.1f),
                    Catch::Contains("expert load"));
}

TEST_CASE("RoPE with a rotary offset turns the last dimensions of a head",
          "[runtime]") {
  ensureInit();
  // Heads of 6 dims whose last 4 turn (multi-head latent attention's
  // query: 2 non-rotary dims, then the rotary part): the same as turning
  // a head holding only those 4, the first 2 passing through.
  const int64_t seq = 3, heads = 2, dim = 6, rot = 4, off = 2, n = 2 * seq;
  const double theta = 100.0;
  Tensor x = randomTensor({n, heads * dim}, "x"), y({n, heads * dim});
  ropeApply(y, x, seq, heads, dim, rot, theta, false, 0, {}, off);
  auto X = x.toHost(), Y = y.toHost();
  std::vector<float> part(size_t(n * heads * rot));
  for (int64_t r = 0; r < n * heads; ++r)
    for (int64_t i = 0; i < rot; ++i)
      part[size_t(r * rot + i)] = X[size_t(r * dim + off + i)];
  Tensor px({n, heads * rot}), py({n, heads * rot});
  px.fromHost(part);
  ropeApply(py, px, seq, heads, rot, rot, theta, false);
  auto PY = py.toHost();
  for (int64_t r = 0; r < n * heads; ++r) {
    for (int64_t i = 0; i < off; ++i)
      CHECK(Y[size_t(r * dim + i)] == X[size_t(r * dim + i)]);
    for (int64_t i = 0; i < rot; ++i)
      CHECK(Y[size_t(r * dim + off + i)] == PY[size_t(r * rot + i)]);
  }
  // In place, and the inverse undoes it.
  Tensor z = randomTensor({n, heads * dim}, "x");
  ropeApply(z, z, seq, heads, dim, rot, theta, false, 0, {}, off);
  CHECK(z.toHost() == Y);
  ropeApply(z, z, seq, heads, dim, rot, theta, true, 0, {}, off);
  auto back = z.toHost();
  for (size_t i = 0; i < X.size(); ++i)
    REQUIRE(back[i] == Approx(X[i]).margin(1e-6));
  CHECK_THROWS_WITH(ropeApply(y, x, seq, heads, dim, rot, theta, false, 0, {},
                              3),
                    Catch::Contains("fall outside headDim"));
  // Interleaved pairs (DeepSeek's rope_interleave) turn dimensions off +
  // 2i and off + 2i + 1 together: the "rotate half" turn of the input with
  // those dimensions moved to off + i and off + i + rot / 2, moved back.
  const int64_t half = rot / 2;
  auto moved = [&](int64_t d) { // interleaved position -> half position
    if (d < off || d >= off + rot)
      return d;
    const int64_t j = d - off;
    return off + (j % 2 == 0 ? j / 2 : j / 2 + half);
  };
  std::vector<float> perm(X.size());
  for (int64_t r = 0; r < n * heads; ++r)
    for (int64_t d = 0; d < dim; ++d)
      perm[size_t(r * dim + moved(d))] = X[size_t(r * dim + d)];
  Tensor xp({n, heads * dim}), yp({n, heads * dim}), yi({n, heads * dim});
  xp.fromHost(perm);
  ropeApply(yp, xp, seq, heads, dim, rot, theta, false, 0, {}, off);
  ropeApply(yi, x, seq, heads, dim, rot, theta, false, 0, {}, off, true);
  auto YP = yp.toHost(), YI = yi.toHost();
  for (int64_t r = 0; r < n * heads; ++r)
    for (int64_t d = 0; d < dim; ++d)
      CHECK(YI[size_t(r * dim + d)] == YP[size_t(r * dim + moved(d))]);
  // And it is not the plain pairing: some rotated element differs.
  bool differs = false;
  for (size_t i = 0; i < Y.size(); ++i)
    differs = differs || YI[i] != Y[i];
  CHECK(differs);
}

TEST_CASE("latent keys: heads of k_nope then the shared rotary key, and "
          "the backward", "[runtime]") {
  ensureInit();
  const int64_t n = 5, heads = 3, nope = 2, rope = 4, hd = nope + rope;
  Tensor kn = randomTensor({n, heads * nope}, "kn"),
         kr = randomTensor({n, rope}, "kr"), k({n, heads * hd});
  latentKeyForward(k, kn, kr, heads, nope, rope);
  auto K = k.toHost(), KN = kn.toHost(), KR = kr.toHost();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t c = 0; c < nope; ++c)
        CHECK(K[size_t((i * heads + h) * hd + c)] ==
              KN[size_t((i * heads + h) * nope + c)]);
      for (int64_t c = 0; c < rope; ++c)
        CHECK(K[size_t((i * heads + h) * hd + nope + c)] ==
              KR[size_t(i * rope + c)]);
    }
  Tensor r = randomTensor({n, heads * hd}, "r");
  auto loss = [&] {
    latentKeyForward(k, kn, kr, heads, nope, rope);
    return dotLoss(k, r);
  };
  Tensor dkn({n, heads * nope}), dkr({n, rope});
  latentKeyBackward(dkn, dkr, r, heads, nope, rope);
  CHECK(fdError(loss, kn, dkn.toHost()) < kTol);
  CHECK(fdError(loss, kr, dkr.toHost()) < kTol);
  Tensor bad({n, rope + 1});
  CHECK_THROWS_WITH(latentKeyForward(k, kn, bad, heads, nope, rope),
                    Catch::Contains("latentKeyForward"));
}

TEST_CASE("attention with a value head size of its own and a softmax "
          "scale matches finite differences", "[runtime]") {
  ensureInit();
  // Multi-head latent attention's shapes: q and k heads of 5, v heads of
  // 3, and a scale other than 1/sqrt(5).
  AttentionDims d;
  d.batch = 2, d.seq = 4, d.heads = 2, d.kvHeads = 2, d.headDim = 5;
  d.vHeadDim = 3;
  d.scale = 0.7;
  const int64_t n = d.batch * d.seq;
  Tensor q = randomTensor({n, 10}, "q", 1.5f), k = randomTensor({n, 10}, "k", 1.5f),
         v = randomTensor({n, 6}, "v"), r = randomTensor({n, 6}, "r");
  Tensor out({n, 6}), probs({2, 2, 4, 4});
  auto loss = [&] {
    attentionForward(out, probs, q, k, v, d);
    return dotLoss(out, r);
  };
  loss();
  // Row 1 of (batch 0, head 1): softmax of 0.7 q.k over keys 0 and 1.
  auto Q = q.toHost(), K = k.toHost(), V = v.toHost(), O = out.toHost();
  double s0 = 0, s1 = 0;
  for (int64_t c = 0; c < 5; ++c) {
    s0 += double(Q[10 + 5 + c]) * K[0 * 10 + 5 + c];
    s1 += double(Q[10 + 5 + c]) * K[1 * 10 + 5 + c];
  }
  double p1 = 1.0 / (1.0 + std::exp(0.7 * (s0 - s1)));
  for (int64_t c = 0; c < 3; ++c)
    CHECK(O[size_t(6 + 3 + c)] ==
          Approx((1 - p1) * V[size_t(3 + c)] + p1 * V[size_t(6 + 3 + c)])
              .epsilon(1e-5));
  Tensor dq({n, 10}), dk({n, 10}), dv({n, 6});
  attentionBackward(dq, dk, dv, r, q, k, v, probs, d);
  CHECK(fdError(loss, q, dq.toHost()) < kTol);
  CHECK(fdError(loss, k, dk.toHost()) < kTol);
  CHECK(fdError(loss, v, dv.toHost()) < kTol);
  // v shaped for headDim is refused.
  Tensor wrongV({n, 10});
  CHECK_THROWS_WITH(attentionForward(out, probs, q, k, wrongV, d),
                    Catch::Contains("kvHeads*valueDim"));
}

TEST_CASE("RoPE scaling: frequencies of linear, llama3 and yarn",
          "[runtime]") {
  // Expected values: the formulas of transformers' modeling_rope_utils
  // (_compute_llama3_parameters, _compute_yarn_parameters) evaluated in
  // double precision by a separate script, for Llama 3.1's and gpt-oss's
  // released settings.
  RopeScaling none;
  auto plain = ropeFrequencies(128, 500000.0, none);
  REQUIRE(plain.size() == 64);
  CHECK(plain[0] == 1.0);
  CHECK(plain[40] == Approx(0.0002742481756762073).epsilon(1e-12));
  RopeScaling lin;
  lin.kind = RopeScaling::Kind::Linear;
  lin.factor = 4;
  auto linear = ropeFrequencies(128, 500000.0, lin);
  for (size_t i = 0; i < plain.size(); ++i)
    REQUIRE(linear[i] == Approx(plain[i] / 4).epsilon(1e-14));
  // Llama 3.1: wavelengths below 8192 / 4 kept, above 8192 / 1 divided by
  // 8, smoothed between.
  RopeScaling l3;
  l3.kind = RopeScaling::Kind::Llama3;
  l3.factor = 8, l3.lowFreqFactor = 1, l3.highFreqFactor = 4;
  l3.originalMaxPositions = 8192;
  auto llama = ropeFrequencies(128, 500000.0, l3);
  CHECK(llama[0] == 1.0);
  CHECK(llama[20] == Approx(0.016560440080994446).epsilon(1e-12));
  CHECK(llama[29] == Approx(0.002166570763503359).epsilon(1e-12));
  CHECK(llama[32] == Approx(0.0005248461609929547).epsilon(1e-12));
  CHECK(llama[34] == Approx(0.0001785078127679964).epsilon(1e-12));
  CHECK(llama[40] == Approx(3.428102195952591e-05).epsilon(1e-12));
  CHECK(llama[63] == Approx(3.068925988914511e-07).epsilon(1e-12));
  // gpt-oss: YaRN over 64 rotated dims, base 150000, factor 32 from 4096
  // positions, betas 32 and 1, no truncation (ramp from pair 8.09 to 17.4).
  RopeScaling y;
  y.kind = RopeScaling::Kind::Yarn;
  y.factor = 32, y.originalMaxPositions = 4096, y.truncate = false;
  y.attentionFactor = 1.3465735902799727;
  auto yarn = ropeFrequencies(64, 150000.0, y);
  CHECK(yarn[0] == 1.0);
  CHECK(yarn[8] == Approx(0.050813274815461475).epsilon(1e-12));
  CHECK(yarn[12] == Approx(0.006794959489732219).epsilon(1e-12));
  CHECK(yarn[20] == Approx(1.818833668168956e-05).epsilon(1e-12));
  CHECK(yarn[31] == Approx(3.0235114281192144e-07).epsilon(1e-12));
  // With truncation the ramp runs from pair 8 to 18: pair 12 is 0.4 of
  // the way to interpolation.
  y.truncate = true;
  auto yarnT = ropeFrequencies(64, 150000.0, y);
  const double f12 = std::pow(150000.0, -24.0 / 64.0);
  CHECK(yarnT[12] == Approx(f12 / 32 * 0.4 + f12 * 0.6).epsilon(1e-12));
  // Bad parameters are refused.
  RopeScaling bad = l3;
  bad.highFreqFactor = 1;
  CHECK_THROWS_WITH(ropeFrequencies(128, 500000.0, bad),
                    Catch::Contains("lowFreqFactor"));
  bad = lin;
  bad.factor = 0.5;
  CHECK_THROWS_WITH(ropeFrequencies(128, 500000.0, bad),
                    Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(ropeFrequencies(2 * kMaxRopePairs + 2, 10000.0, none),
                    Catch::Contains("at most"));
}

TEST_CASE("RoPE scaling: yarn's factor scales the rotation, backward",
          "[runtime]") {
  ensureInit();
  const int64_t seq = 4, heads = 2, dim = 8, rot = 8;
  const double theta = 10000.0;
  RopeScaling y;
  y.kind = RopeScaling::Kind::Yarn;
  y.factor = 4, y.originalMaxPositions = 2, y.attentionFactor = 1.25;
  Tensor x = randomTensor({seq, heads * dim}, "x"), out({seq, heads * dim});
  ropeApply(out, x, seq, heads, dim, rot, theta, false, 0, y);
  auto X = x.toHost(), Y = out.toHost();
  // Row 3 (position 3), head 0, pair 1: angle 3 * f_1 with yarn's f_1,
  // cos and sin times 1.25.
  const double f1 = ropeFrequencies(rot, theta, y)[1];
  const double c = 1.25 * std::cos(3 * f1), sn = 1.25 * std::sin(3 * f1);
  const int64_t b = 3 * heads * dim;
  CHECK(Y[b + 1] == Approx(X[b + 1] * c - X[b + 5] * sn).epsilon(1e-5));
  CHECK(Y[b + 5] == Approx(X[b + 5] * c + X[b + 1] * sn).epsilon(1e-5));
  // The inverse is the transpose: applied after the forward it scales by
  // 1.25^2.
  Tensor back({seq, heads * dim});
  ropeApply(back, out, seq, heads, dim, rot, theta, true, 0, y);
  auto B = back.toHost();
  for (size_t i = 0; i < X.size(); ++i)
    REQUIRE(B[i] == Approx(1.5625 * X[i]).margin(1e-5));
  // And it is the backward.
  Tensor r = randomTensor({seq, heads * dim}, "r"), dx({seq, heads * dim});
  auto loss = [&] {
    ropeApply(out, x, seq, heads, dim, rot, theta, false, 0, y);
    return dotLoss(out, r);
  };
  ropeApply(dx, r, seq, heads, dim, rot, theta, true, 0, y);
  CHECK(fdError(loss, x, dx.toHost()) < kTol);
}

TEST_CASE("cross-entropy value and gradient", "[runtime]") {
  ensureInit();
  int64_t n = 3, V = 7;
  Tensor logits({n, V}), lse({n}), lossSum({1});
  Tensor tgt({n}, DType::I32);
  tgt.fromHostI32({0, 6, 3});
  crossEntropyForward(lossSum, lse, logits, tgt);
  REQUIRE(lossSum.toHost()[0] == Approx(3 * std::log(7.0)).epsilon(1e-6));
  logits = randomTensor({n, V}, "logits", 3.0f);
  auto loss = [&] {
    zero(lossSum);
    crossEntropyForward(lossSum, lse, logits, tgt);
    return double(lossSum.toHost()[0]) / n;
  };
  loss();
  Tensor dl({n, V});
  crossEntropyBackward(dl, logits, tgt, lse, 1.0f / n);
  CHECK(fdError(loss, logits, dl.toHost(), 1e-2f) < kTol);
  // A one-rank "vocab-parallel" call equals the plain one.
  loss(); // the finite differences left lossSum at a perturbed point
  Grid grid({});
  Tensor ls2({1}), lse2({n});
  vocabParallelCrossEntropyForward(ls2, lse2, logits, tgt, 0,
                                   grid.group(Axis::TP));
  REQUIRE(ls2.toHost()[0] == Approx(lossSum.toHost()[0]).epsilon(1e-6));
  tgt.fromHostI32({0, 7, 3});
  REQUIRE_THROWS_WITH(crossEntropyForward(lossSum, lse, logits, tgt),
                      Catch::Contains("target 7 outside [0, 7)"));
  // Vocab-parallel too: the whole vocabulary is V times the group size.
  REQUIRE_THROWS_WITH(
      vocabParallelCrossEntropyForward(ls2, lse2, logits, tgt, 0,
                                       grid.group(Axis::TP)),
      Catch::Contains("vocabParallelCrossEntropyForward") &&
          Catch::Contains("target 7 outside [0, 7)"));
}

TEST_CASE("single-rank grid, collectives and step lines", "[runtime]") {
  ensureInit();
  REQUIRE(worldSize() == 1);
  REQUIRE(std::string(backendName()) == "cpu");
  Grid grid({});
  for (Axis a : {Axis::PP, Axis::DP, Axis::CP, Axis::TP, Axis::EP, Axis::DPCP,
                 Axis::EDP, Axis::EDPCP, Axis::World}) {
    REQUIRE(grid.size(a) == 1);
    REQUIRE(grid.coord(a) == 0);
    REQUIRE(grid.group(a).size() == 1);
    // Without expert parallelism the expert groups are dp's and dpcp's.
    const char *name = a == Axis::EDP     ? "dp"
                       : a == Axis::EDPCP ? "dpcp"
                                          : axisName(a);
    REQUIRE(grid.group(a).name() == name);
  }
  GridShape two;
  two.tp = 2;
  REQUIRE_THROWS_WITH(Grid(two),
                      Catch::Contains("pp*dp*cp*tp = 2 but 1 ranks"));
  Tensor t = randomTensor({2, 3}, "t"), o({2, 3});
  auto before = t.toHost();
  allReduceSum(t, grid.group(Axis::DP));
  allGather(o, t, 1, grid.group(Axis::TP));
  REQUIRE(o.toHost() == before);
  Tensor ls({1});
  fillConstant(ls, 6.0f);
  REQUIRE(globalMeanLoss(ls, 4.0, grid) == 1.5);
  int64_t step;
  double loss, sec;
  REQUIRE(parseStepLine("step 3 loss 2.5 time 0.125000", step, loss, sec));
  REQUIRE((step == 3 && loss == 2.5 && sec == 0.125));
  REQUIRE_FALSE(parseStepLine("step 3 loss 2.5", step, loss, sec));
  REQUIRE_FALSE(parseStepLine("step 3 loss 2.5 time 1 extra", step, loss, sec));
  ZeroRange zr = zeroRange(10, 4, 3);
  REQUIRE((zr.chunk == 3 && zr.begin == 9 && zr.end == 10));
}

TEST_CASE("parameter dumps round-trip and compare", "[runtime]") {
  ensureInit();
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "trident-rt-dump-test";
  fs::remove_all(dir);
  std::vector<int64_t> g = {4, 3};
  Tensor full(g);
  initParam(full, "w", g, {0, 0}, g, 5, 1.0f);
  // Two shards written as if by two ranks (rank 0 file, then renamed).
  ParamDump d0;
  d0.add("w", g, {0, 0}, full.view(0, {2, 3}));
  d0.write(dir.string());
  fs::rename(dir / "rank0.params", dir / "rank1.params");
  ParamDump d1;
  d1.add("w", g, {2, 0}, full.view(6, {2, 3}));
  d1.add("w", g, {0, 0}, full.view(0, {2, 3})); // replicated copy
  d1.write(dir.string());
  std::map<std::string, AssembledParam> a, b;
  std::string err;
  REQUIRE(readParamDump(dir.string(), a, err));
  REQUIRE(a.at("w").values == full.toHost());
  b = a;
  REQUIRE(compareParamDumps(a, b, 1e-5, 0).ok);
  b["w"].values[7] *= 1.0001f;
  CompareResult r = compareParamDumps(a, b, 1e-5, 0);
  REQUIRE_FALSE(r.ok);
  REQUIRE(r.worstName == "w");
  REQUIRE(r.worstIndex == 7);
  REQUIRE(compareParamDumps(a, b, 1e-3, 0).ok);
  // An uncovered element is an error naming the parameter.
  fs::remove(dir / "rank0.params");
  ParamDump d2;
  d2.add("w", g, {0, 0}, full.view(0, {2, 3}));
  d2.write(dir.string());
  fs::remove(dir / "rank1.params");
  REQUIRE_FALSE(readParamDump(dir.string(), a, err));
  REQUIRE_THAT(err, Catch::Contains("'w' element 6 is covered by no shard"));
  std::ofstream(dir / "rank2.params") << "trident-params 1\ntensor w global 4,3 offset 0,0\n";
  REQUIRE_FALSE(readParamDump(dir.string(), a, err));
  REQUIRE_THAT(err, Catch::Contains("rank2.params:2: expected 'tensor"));
  fs::remove_all(dir);
}

TEST_CASE("DLRM: bag pooling, dot interaction and the click loss against "
          "finite differences",
          "[runtime]") {
  ensureInit();
  // A hand case: two features [1, 2] and [3, 4] interact to [1, 2, 11];
  // a mean bag of rows [1, 2] and [3, 6] pools to [2, 4].
  Tensor a({1, 2}), b({1, 2}), ab({1, 3});
  a.fromHost({1, 2});
  b.fromHost({3, 4});
  dotInteractionForward(ab, {a, b});
  REQUIRE(ab.toHost() == std::vector<float>{1, 2, 11});
  Tensor rows({2, 2}), pooled({1, 2});
  rows.fromHost({1, 2, 3, 6});
  bagPoolForward(pooled, rows, 2, true);
  REQUIRE(pooled.toHost() == std::vector<float>{2, 4});
  // Pair order (1,0), (2,0), (2,1): the third feature's dot with the
  // second lands in the last column.
  Tensor c({1, 2}), abc({1, 5});
  c.fromHost({0, 1});
  dotInteractionForward(abc, {a, b, c});
  REQUIRE(abc.toHost() == std::vector<float>{1, 2, 11, 2, 4});

  // Gradients: loss = BCE(<interaction of 4 features, w>, y) / n, where
  // feature 2 is a pooled bag of 3 rows (sum) and feature 3 a mean bag.
  const int64_t n = 5, d = 6, F = 4, bag = 3, w = d + F * (F - 1) / 2;
  Tensor f0 = randomTensor({n, d}, "f0"), f1 = randomTensor({n, d}, "f1");
  Tensor r2 = randomTensor({n * bag, d}, "r2"),
         r3 = randomTensor({n * bag, d}, "r3");
  Tensor wv = randomTensor({w, 1}, "wv", 2.0f);
  Tensor y({n}, DType::I32);
  y.fromHostI32({1, 0, 0, 1, 1});
  Tensor f2({n, d}), f3({n, d}), z({n, w}), logit({n, 1}), lossSum({1});
  auto forward = [&] {
    bagPoolForward(f2, r2, bag, false);
    bagPoolForward(f3, r3, bag, true);
    dotInteractionForward(z, {f0, f1, f2, f3});
    matmul(logit, z, wv, false);
  };
  auto loss = [&] {
    forward();
    zero(lossSum);
    binaryCrossEntropyForward(lossSum, logit, y);
    return double(lossSum.toHost()[0]) / n;
  };
  double l0 = loss();
  // Against the loss written out in double.
  {
    auto L = logit.toHost();
    auto Y = y.toHostI32();
    double want = 0;
    for (int64_t i = 0; i < n; ++i) {
      double p = 1.0 / (1.0 + std::exp(-double(L[i])));
      want -= Y[i] ? std::log(p) : std::log(1.0 - p);
    }
    REQUIRE(l0 == Approx(want / n).epsilon(1e-6));
  }
  Tensor dlogit({n, 1}), dz({n, w});
  binaryCrossEntropyBackward(dlogit, logit, y, 1.0f / n);
  matmul(dz, dlogit, wv, true); // dz = dlogit wv^T
  std::vector<Tensor> df = {Tensor({n, d}), Tensor({n, d}), Tensor({n, d}),
                            Tensor({n, d})};
  dotInteractionBackward(df, dz, {f0, f1, f2, f3});
  Tensor dr2({n * bag, d}), dr3({n * bag, d});
  bagPoolBackward(dr2, df[2], bag, false);
  bagPoolBackward(dr3, df[3], bag, true);
  CHECK(fdError(loss, f0, df[0].toHost(), 1e-2f) < kTol);
  CHECK(fdError(loss, f1, df[1].toHost(), 1e-2f) < kTol);
  CHECK(fdError(loss, r2, dr2.toHost(), 1e-2f) < kTol);
  CHECK(fdError(loss, r3, dr3.toHost(), 1e-2f) < kTol);

  // The loss's own gradient, with the logits as the variable.
  auto bceOnly = [&] {
    zero(lossSum);
    binaryCrossEntropyForward(lossSum, logit, y);
    return double(lossSum.toHost()[0]) / n;
  };
  CHECK(fdError(bceOnly, logit, dlogit.toHost(), 1e-2f) < kTol);

  // Large logits: the loss stays finite and equals |z| for a wrong label.
  Tensor big({2}), lab({2}, DType::I32), ls({1});
  big.fromHost({100.0f, -100.0f});
  lab.fromHostI32({0, 1});
  binaryCrossEntropyForward(ls, big, lab);
  REQUIRE(ls.toHost()[0] == Approx(200.0).epsilon(1e-6));
  // Bad inputs name the function and what was expected.
  lab.fromHostI32({0, 2});
  REQUIRE_THROWS_WITH(binaryCrossEntropyForward(ls, big, lab),
                      Catch::Contains("binaryCrossEntropyForward") &&
                          Catch::Contains("label 2 is not 0 or 1"));
  REQUIRE_THROWS_WITH(dotInteractionForward(ab, {a}),
                      Catch::Contains("needs at least two features"));
  REQUIRE_THROWS_WITH(dotInteractionForward(abc, {a, b}),
                      Catch::Contains("must be [1, 3]"));
  REQUIRE_THROWS_WITH(bagPoolForward(pooled, rows, 3, false),
                      Catch::Contains("must hold 3 rows per sample"));
}

TEST_CASE("checkpoints: blocked shards and ZeRO chunks read back under "
          "another layout; corruption refused",
          "[runtime][checkpoint]") {
  ensureInit();
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("trident-ckpt-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // w [4, 6]: two blocks of 3 columns (a gated expert's gate and up), its
  // columns split over 3 ranks: rank c holds column c of each block.
  const std::vector<int64_t> global{4, 6};
  CheckpointWriter w;
  for (int64_t c = 0; c < 3; ++c) {
    Slice s;
    s.global = global;
    s.offset = {0, c};
    s.local = {4, 2};
    s.blocks = {1, 2};
    std::vector<float> v;
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t j = 0; j < 2; ++j)
        v.push_back(float(r * 6 + j * 3 + c)); // its logical index
    Tensor t({4, 2});
    t.fromHost(v);
    w.add("w", s, t);
  }
  // b [5] as two ZeRO chunks of 3 (the second ends in padding).
  for (int64_t k = 0; k < 2; ++k) {
    Slice s;
    s.global = {5};
    s.offset = {0};
    s.local = {5};
    s.flatBegin = 3 * k;
    Tensor t({3});
    t.fromHost({float(10 + 3 * k), float(11 + 3 * k), float(12 + 3 * k)});
    w.add("b", s, t);
  }
  w.write(dir.string(), 7, {{"plan", "test"}});
  REQUIRE(fs::exists(dir / "step-7" / "manifest"));
  REQUIRE_FALSE(fs::exists(dir / ".step-7.partial"));

  CheckpointReader r(dir.string());
  CHECK(r.step() == 7);
  CHECK(r.meta("plan") == "test");
  Slice whole;
  whole.global = global;
  whole.offset = {0, 0};
  whole.local = global;
  Tensor all({4, 6});
  r.read("w", whole, all);
  std::vector<float> got = all.toHost();
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == float(i));
  // Rows 2..3 as a tp-2 row shard, and its ZeRO chunk from element 5.
  Slice rows = whole;
  rows.offset = {2, 0};
  rows.local = {2, 6};
  rows.flatBegin = 5;
  Tensor part({4});
  r.read("w", rows, part);
  CHECK(part.toHost() == std::vector<float>{17, 18, 19, 20});
  Slice bs;
  bs.global = {5};
  bs.offset = {0};
  bs.local = {5};
  Tensor b({5});
  r.read("b", bs, b);
  CHECK(b.toHost() == std::vector<float>{10, 11, 12, 13, 14});
  // A vocabulary-padded shard: rows past the global shape read as zero.
  Slice padded = bs;
  padded.offset = {3};
  padded.local = {3};
  Tensor tail({3});
  r.read("b", padded, tail);
  CHECK(tail.toHost() == std::vector<float>{13, 14, 0});
  CHECK_THROWS_WITH(r.read("nope", bs, b), Catch::Contains("no tensor 'nope'"));
  Slice other = bs;
  other.global = {6};
  other.local = {6};
  Tensor six({6});
  CHECK_THROWS_WITH(r.read("b", other, six),
                    Catch::Contains("is [5] in the checkpoint, [6] in this"));

  // One flipped byte in w's values: refused with the file, line and slice.
  const fs::path file = dir / "step-7" / "rank0.ckpt";
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), {});
    size_t at = text.find('\n', text.find("tensor w ")) + 5;
    f.seekp(std::streamoff(at));
    f.put(char(text[at] ^ 0x40));
  }
  CheckpointReader bad(dir.string());
  CHECK_THROWS_WITH(bad.read("w", whole, all),
                    Catch::Contains("rank0.ckpt:2: tensor 'w' (offset [0,0] "
                                    "of shape [4,2], elements 0 to 8): "
                                    "checksum mismatch"));
  fs::remove_all(dir);
}
