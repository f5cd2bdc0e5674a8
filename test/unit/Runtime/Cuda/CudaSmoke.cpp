//===- CudaSmoke.cpp - Link check and GPU smoke test of the CUDA runtime --===//
//
// `--link-only`: prints the linked backend without touching a GPU (ctest
// on machines without one). Without arguments (scripts/gpu-check.sh, on a
// GPU): runs a few kernels and compares them with host formulas.
//
//===----------------------------------------------------------------------===//

#include "trident/Runtime/Runtime.h"

#include <cmath>
#include <cstdio>
#include <string>

using namespace trident::rt;

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--link-only") {
    std::printf("linked backend %s\n", backendName());
    return 0;
  }
  int bad = 0;
  try {
    init(&argc, &argv);
    Grid grid({});
    // linear: y = x W^T + b against a host loop.
    int64_t n = 3, in = 5, out = 4;
    Tensor x({n, in}), w({out, in}), b({out}), y({n, out});
    initParam(x, "x", {n, in}, {0, 0}, {n, in}, 1, 1.0f);
    initParam(w, "w", {out, in}, {0, 0}, {out, in}, 1, 1.0f);
    initParam(b, "b", {out}, {0}, {out}, 1, 1.0f);
    linearForward(y, x, w, b);
    auto X = x.toHost(), W = w.toHost(), B = b.toHost(), Y = y.toHost();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t o = 0; o < out; ++o) {
        double s = B[o];
        for (int64_t k = 0; k < in; ++k)
          s += double(X[i * in + k]) * W[o * in + k];
        if (std::fabs(s - Y[i * out + o]) > 1e-5 * (1 + std::fabs(s)))
          ++bad;
      }
    // cross-entropy of zero logits is log V per row.
    Tensor logits({2, 8}), lse({2}), loss({1});
    Tensor tgt({2}, DType::I32);
    tgt.fromHostI32({1, 7});
    crossEntropyForward(loss, lse, logits, tgt);
    if (std::fabs(loss.toHost()[0] - 2 * std::log(8.0)) > 1e-5)
      ++bad;
    Tensor t({4});
    fillConstant(t, 2.0f);
    allReduceSum(t, grid.group(Axis::World));
    if (t.toHost()[0] != 2.0f)
      ++bad;
    std::printf("cuda smoke: %s (%d mismatches)\n", bad ? "FAILED" : "PASSED",
                bad);
    finalize();
  } catch (const std::exception &e) {
    reportFatal(e);
  }
  return bad ? 1 : 0;
}
