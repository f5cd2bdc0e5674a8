//===- CpuKernels.cpp - fp32 kernels on host memory (Eigen) ---------------===//
//
// Reference implementations: GEMMs through Eigen, everything else as plain
// loops with double accumulators for row reductions. The CUDA kernels
// follow the same formulas.
//
//===----------------------------------------------------------------------===//

#include "../Common/Activations.h"
#include "../Common/Bf16.h"
#include "../Common/Hash.h"
#include "../Internal.h"

#include <Eigen/Core>

#include <cmath>
#include <cstring>
#include <limits>

namespace trident::rt {

using detail::check;

namespace {
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapM = Eigen::Map<RowMat>;
using CMapM = Eigen::Map<const RowMat>;
using Strided = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;
using CStrided = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;

using detail::sameNumel;

/// A kernel's input as fp32: its elements, or a bf16 tensor's widened
/// (exactly) into scratch memory that is not tensor memory, as the CUDA
/// backend's GEMM copies are not: the result of the same values. (The
/// inputs of the kernel table's bf16Inputs: linear operands, activations'
/// inputs.)
class F32Operand {
public:
  explicit F32Operand(const Tensor &t) {
    if (t.dtype() != DType::BF16) {
      p_ = t.f32();
      return;
    }
    widened_.resize(size_t(t.numel()));
    detail::widenBf16(widened_.data(), t.bf16(), t.numel());
    p_ = widened_.data();
  }
  const float *get() const { return p_; }

private:
  std::vector<float> widened_;
  const float *p_ = nullptr;
};

/// A kernel's output as fp32: its elements, or for a bf16 tensor scratch
/// memory (not tensor memory) narrowed into it when this goes, each
/// element rounded as rt::toBf16 rounds: the same bits as toBf16 of the
/// fp32 result. (The outputs of the kernel table's bf16Outputs: the
/// activations' results.) Call done() before the kernel returns.
class F32Result {
public:
  explicit F32Result(Tensor &t) : t_(t) {
    if (t.dtype() != DType::BF16) {
      p_ = t.numel() ? t.f32() : nullptr;
      return;
    }
    scratch_.resize(size_t(t.numel()));
    p_ = scratch_.data();
  }
  float *get() const { return p_; }
  /// Narrows the scratch into a bf16 tensor.
  void done() {
    if (t_.dtype() == DType::BF16 && t_.numel())
      detail::narrowToBf16(t_.bf16(), scratch_.data(), t_.numel());
  }

private:
  Tensor &t_;
  std::vector<float> scratch_;
  float *p_ = nullptr;
};

/// Rows of `t` seen as [rows, cols].
int64_t rowsOf(const Tensor &t, int64_t cols, const char *fn,
               const char *what) {
  check(cols > 0 && t.numel() % cols == 0, fn,
        std::string(what) + " " + t.shapeString() +
            " is not a multiple of rows of " + std::to_string(cols));
  return t.numel() / cols;
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

void zero(Tensor &t) {
  if (t.numel())
    std::memset(t.f32(), 0, sizeof(float) * t.numel());
}

void copy(Tensor &dst, const Tensor &src) {
  sameNumel(dst, src, "copy");
  if (dst.numel())
    std::memmove(dst.f32(), src.f32(), sizeof(float) * dst.numel());
}

void scale(Tensor &t, float alpha) {
  float *p = t.numel() ? t.f32() : nullptr;
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] *= alpha;
}

void axpy(Tensor &y, const Tensor &x, float alpha) {
  sameNumel(y, x, "axpy");
  if (!y.numel())
    return;
  float *py = y.f32();
  const float *px = x.f32();
  for (int64_t i = 0; i < y.numel(); ++i)
    py[i] += alpha * px[i];
}

void add(Tensor &out, const Tensor &a, const Tensor &b) {
  sameNumel(out, a, "add");
  sameNumel(out, b, "add");
  if (!out.numel())
    return;
  float *o = out.f32();
  const float *pa = a.f32(), *pb = b.f32();
  for (int64_t i = 0; i < out.numel(); ++i)
    o[i] = pa[i] + pb[i];
}

void mul(Tensor &out, const Tensor &a, const Tensor &b) {
  sameNumel(out, a, "mul");
  sameNumel(out, b, "mul");
  if (!out.numel())
    return;
  float *o = out.f32();
  const float *pa = a.f32(), *pb = b.f32();
  for (int64_t i = 0; i < out.numel(); ++i)
    o[i] = pa[i] * pb[i];
}

void detail::widenBf16(float *dst, const uint16_t *src, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = detail::bf16Value(src[i]);
}

void detail::narrowToBf16(uint16_t *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = detail::bf16Bits(src[i]);
}

void roundToBf16(Tensor &t) {
  float *p = t.numel() ? t.f32() : nullptr;
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = detail::roundToBf16(p[i]);
}

double sum(const Tensor &t) {
  double s = 0;
  const float *p = t.numel() ? t.f32() : nullptr;
  for (int64_t i = 0; i < t.numel(); ++i)
    s += p[i];
  return s;
}

namespace {
/// y = f(x) elementwise for an activation whose x and y may each be fp32
/// or bf16 tensors (F32Operand, F32Result).
template <class F>
void activationForward(Tensor &y, const Tensor &x, const char *fn, F f) {
  sameNumel(y, x, fn);
  F32Result out(y);
  float *o = out.get();
  const F32Operand xin(x);
  const float *in = x.numel() ? xin.get() : nullptr;
  for (int64_t i = 0; i < y.numel(); ++i)
    o[i] = f(in[i]);
  out.done();
}
/// dx = f(dy, x) elementwise, dy fp32, x and dx as activationForward's.
template <class F>
void activationBackward(Tensor &dx, const Tensor &dy, const Tensor &x,
                        const char *fn, F f) {
  sameNumel(dx, x, fn);
  sameNumel(dy, x, fn);
  F32Result out(dx);
  float *o = out.get();
  const float *g = dy.numel() ? dy.f32() : nullptr;
  const F32Operand xin(x);
  const float *in = x.numel() ? xin.get() : nullptr;
  for (int64_t i = 0; i < x.numel(); ++i)
    o[i] = f(g[i], in[i]);
  out.done();
}
} // namespace

void geluForward(Tensor &y, const Tensor &x, bool approximate) {
  activationForward(y, x, "geluForward", [approximate](float v) {
    return approximate ? act::geluTanh(v) : act::geluErf(v);
  });
}

void geluBackward(Tensor &dx, const Tensor &dy, const Tensor &x,
                  bool approximate) {
  activationBackward(
      dx, dy, x, "geluBackward", [approximate](float g, float v) {
        return g * (approximate ? act::geluTanhGrad(v) : act::geluErfGrad(v));
      });
}

void siluForward(Tensor &y, const Tensor &x) {
  activationForward(y, x, "siluForward", [](float v) { return act::silu(v); });
}

void siluBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  activationBackward(dx, dy, x, "siluBackward",
                     [](float g, float v) { return g * act::siluGrad(v); });
}

void reluForward(Tensor &y, const Tensor &x) {
  activationForward(y, x, "reluForward", [](float v) { return act::relu(v); });
}

void reluBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  activationBackward(dx, dy, x, "reluBackward",
                     [](float g, float v) { return v > 0.0f ? g : 0.0f; });
}

void squaredReluForward(Tensor &y, const Tensor &x) {
  activationForward(y, x, "squaredReluForward",
                    [](float v) { return act::squaredRelu(v); });
}

void squaredReluBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  activationBackward(dx, dy, x, "squaredReluBackward", [](float g, float v) {
    return g * act::squaredReluGrad(v);
  });
}

void tanhForward(Tensor &y, const Tensor &x) {
  sameNumel(y, x, "tanhForward");
  float *o = y.numel() ? y.f32() : nullptr;
  const float *in = x.numel() ? x.f32() : nullptr;
  for (int64_t i = 0; i < y.numel(); ++i)
    o[i] = std::tanh(in[i]);
}

void tanhBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  sameNumel(dx, x, "tanhBackward");
  sameNumel(dy, x, "tanhBackward");
  float *o = dx.numel() ? dx.f32() : nullptr;
  const float *g = dy.numel() ? dy.f32() : nullptr;
  const float *in = x.numel() ? x.f32() : nullptr;
  for (int64_t i = 0; i < x.numel(); ++i) {
    float t = std::tanh(in[i]);
    o[i] = g[i] * (1.0f - t * t);
  }
}

namespace {
/// The [b * T, channels * patch^2] patch rows of images (patchEmbedForward's
/// order).
RowMat patchRows(const Tensor &images, int64_t b, int64_t channels,
                 int64_t side, int64_t patch) {
  const int64_t grid = side / patch, cols = channels * patch * patch;
  RowMat m(b * grid * grid, cols);
  const float *img = images.f32();
  for (int64_t n = 0; n < b; ++n)
    for (int64_t py = 0; py < grid; ++py)
      for (int64_t px = 0; px < grid; ++px) {
        float *row = m.data() + ((n * grid + py) * grid + px) * cols;
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t i = 0; i < patch; ++i)
            std::copy_n(img + ((n * channels + c) * side + py * patch + i) *
                                  side +
                            px * patch,
                        patch, row + (c * patch + i) * patch);
      }
  return m;
}
} // namespace

void patchEmbedForward(Tensor &out, const Tensor &images, const Tensor &w,
                       const Tensor &bias, int64_t channels, int64_t side,
                       int64_t patch) {
  const char *fn = "patchEmbedForward";
  const int64_t b = detail::checkPatchEmbed(out, images, w, bias, channels,
                                            side, patch, fn);
  RowMat cols = patchRows(images, b, channels, side, patch);
  const int64_t h = w.dim(1);
  MapM O(out.f32(), cols.rows(), h);
  O.noalias() = cols * CMapM(w.f32(), w.dim(0), h);
  if (bias.defined())
    O.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias.f32(), h);
}

void patchEmbedBackward(Tensor &dw, Tensor &db, const Tensor &dy,
                        const Tensor &images, int64_t channels, int64_t side,
                        int64_t patch) {
  const char *fn = "patchEmbedBackward";
  const int64_t b = detail::checkPatchEmbed(dy, images, dw, db, channels,
                                            side, patch, fn);
  RowMat cols = patchRows(images, b, channels, side, patch);
  const int64_t h = dw.dim(1);
  CMapM DY(dy.f32(), cols.rows(), h);
  MapM(dw.f32(), dw.dim(0), h).noalias() = cols.transpose() * DY;
  if (db.defined())
    Eigen::Map<Eigen::RowVectorXf>(db.f32(), h) = DY.colwise().sum();
}

void prependTokenForward(Tensor &out, const Tensor &x, const Tensor &token,
                         int64_t tokens) {
  const int64_t b = detail::checkPrependToken(out, x, token, tokens,
                                              "prependTokenForward");
  const int64_t h = token.numel();
  for (int64_t n = 0; n < b; ++n) {
    float *o = out.f32() + n * (tokens + 1) * h;
    std::copy_n(token.f32(), h, o);
    std::copy_n(x.f32() + n * tokens * h, tokens * h, o + h);
  }
}

void prependTokenBackward(Tensor &dx, Tensor &dtoken, const Tensor &dy,
                          int64_t tokens) {
  const int64_t b = detail::checkPrependToken(dy, dx, dtoken, tokens,
                                              "prependTokenBackward");
  const int64_t h = dtoken.numel();
  zero(dtoken);
  for (int64_t n = 0; n < b; ++n) {
    const float *g = dy.f32() + n * (tokens + 1) * h;
    for (int64_t j = 0; j < h; ++j)
      dtoken.f32()[j] += g[j];
    std::copy_n(g + h, tokens * h, dx.f32() + n * tokens * h);
  }
}

void positionAddForward(Tensor &y, const Tensor &x, const Tensor &wpe,
                        int64_t seq, int64_t posOffset) {
  const char *fn = "positionAddForward";
  const int64_t n = detail::checkPositionAdd(x, wpe, seq, posOffset, fn);
  sameNumel(y, x, fn);
  const int64_t h = wpe.dim(1);
  for (int64_t r = 0; r < n; ++r) {
    const float *p = wpe.f32() + (posOffset + r % seq) * h;
    for (int64_t j = 0; j < h; ++j)
      y.f32()[r * h + j] = x.f32()[r * h + j] + p[j];
  }
}

void positionAddBackward(Tensor &dwpe, const Tensor &dy, int64_t seq,
                         int64_t posOffset) {
  const int64_t n = detail::checkPositionAdd(dy, dwpe, seq, posOffset,
                                             "positionAddBackward");
  const int64_t h = dwpe.dim(1);
  zero(dwpe);
  for (int64_t r = 0; r < n; ++r) {
    float *p = dwpe.f32() + (posOffset + r % seq) * h;
    for (int64_t j = 0; j < h; ++j)
      p[j] += dy.f32()[r * h + j];
  }
}

void sliceRows(Tensor &y, const Tensor &x, int64_t seq, int64_t first,
               int64_t count) {
  const int64_t b =
      detail::checkSliceRows(y, x, seq, first, count, "sliceRows");
  const int64_t h = x.dim(-1);
  for (int64_t n = 0; n < b; ++n)
    std::copy_n(x.f32() + (n * seq + first) * h, count * h,
                y.f32() + n * count * h);
}

void selectTokenForward(Tensor &out, const Tensor &x, int64_t seq,
                        int64_t index) {
  const int64_t batch = detail::checkSelectToken(out, x, seq, "selectTokenForward");
  const int64_t h = out.dim(1);
  zero(out);
  if (index < 0 || index >= seq)
    return;
  for (int64_t b = 0; b < batch; ++b)
    std::copy_n(x.f32() + (b * seq + index) * h, h, out.f32() + b * h);
}

void selectTokenBackward(Tensor &dx, const Tensor &dy, int64_t seq,
                         int64_t index) {
  const int64_t batch =
      detail::checkSelectToken(dy, dx, seq, "selectTokenBackward");
  const int64_t h = dy.dim(1);
  zero(dx);
  if (index < 0 || index >= seq)
    return;
  for (int64_t b = 0; b < batch; ++b)
    std::copy_n(dy.f32() + b * h, h, dx.f32() + (b * seq + index) * h);
}

void swigluForward(Tensor &y, const Tensor &gate, const Tensor &up) {
  sameNumel(y, gate, "swigluForward");
  sameNumel(y, up, "swigluForward");
  F32Result out(y);
  float *o = out.get();
  const F32Operand gin(gate), uin(up);
  const float *a = gate.numel() ? gin.get() : nullptr;
  const float *b = up.numel() ? uin.get() : nullptr;
  for (int64_t i = 0; i < y.numel(); ++i)
    o[i] = act::silu(a[i]) * b[i];
  out.done();
}

void swigluBackward(Tensor &dgate, Tensor &dup, const Tensor &dy,
                    const Tensor &gate, const Tensor &up) {
  const char *fn = "swigluBackward";
  sameNumel(dgate, gate, fn);
  sameNumel(dup, gate, fn);
  sameNumel(dy, gate, fn);
  sameNumel(up, gate, fn);
  if (!gate.numel())
    return;
  F32Result dgOut(dgate), duOut(dup);
  float *dg = dgOut.get(), *du = duOut.get();
  const F32Operand gin(gate), uin(up);
  const float *g = dy.f32(), *a = gin.get(), *b = uin.get();
  for (int64_t i = 0; i < gate.numel(); ++i) {
    du[i] = g[i] * act::silu(a[i]);
    dg[i] = g[i] * b[i] * act::siluGrad(a[i]);
  }
  dgOut.done();
  duOut.done();
}

namespace {
/// dst = src * keep / (1 - rate) over a block seen as [rows, seq, f] whose
/// element (r, j, c) has global index ((site.firstSample + r) * site.seqLen
/// + site.firstPos + j) * site.features + site.firstFeature + c (the
/// DropoutSite formula; CUDA's kDropout). dst may alias src.
void dropBlock(float *dst, const float *src, int64_t rows, int64_t seq,
               int64_t f, const DropoutSite &site) {
  const uint64_t key = hash::dropoutKey(site.seed, site.step, site.site);
  const uint32_t threshold = hash::dropoutThreshold(site.rate);
  const float keepScale = static_cast<float>(1.0 / (1.0 - double(site.rate)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < seq; ++j) {
      const int64_t row = r * seq + j;
      const uint64_t base =
          uint64_t(((site.firstSample + r) * site.seqLen + site.firstPos + j) *
                       site.features +
                   site.firstFeature);
      for (int64_t c = 0; c < f; ++c)
        dst[row * f + c] =
            hash::dropoutKeep(key, base + uint64_t(c), threshold)
                ? src[row * f + c] * keepScale
                : 0.0f;
    }
}
} // namespace

void dropoutApply(Tensor &y, const Tensor &x, int64_t batch, int64_t seq,
                  const DropoutSite &site) {
  const int64_t f =
      detail::checkDropoutApply(y, x, batch, seq, site, "dropoutApply");
  if (x.numel())
    dropBlock(y.f32(), x.f32(), batch, seq, f, site);
}

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

void ropeApply(Tensor &y, const Tensor &x, int64_t seq, int64_t heads,
               int64_t headDim, int64_t rotaryDim, double theta,
               bool inverse, int64_t posOffset, const RopeScaling &scaling,
               int64_t rotaryOffset, bool interleaved) {
  const char *fn = "ropeApply";
  detail::checkRope(y, x, seq, heads, headDim, rotaryDim, theta, posOffset,
                    rotaryOffset, fn);
  const std::vector<double> freq = ropeFrequencies(rotaryDim, theta, scaling);
  const double mag = scaling.kind == RopeScaling::Kind::Yarn
                         ? scaling.attentionFactor
                         : 1.0;
  if (!x.numel())
    return;
  const int64_t rows = x.numel() / (heads * headDim), half = rotaryDim / 2;
  const float *in = x.f32();
  float *out = y.f32();
  for (int64_t r = 0; r < rows; ++r) {
    const double pos = double(posOffset + r % seq);
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t head = (r * heads + h) * headDim,
                    base = head + rotaryOffset;
      for (int64_t i = 0; i < half; ++i) {
        double angle = pos * freq[i];
        float c = float(mag * std::cos(angle));
        float sn = float(mag * (inverse ? -std::sin(angle) : std::sin(angle)));
        // The pair's two dimensions.
        const int64_t ia = interleaved ? 2 * i : i,
                      ib = interleaved ? 2 * i + 1 : i + half;
        float a = in[base + ia], b = in[base + ib];
        out[base + ia] = a * c - b * sn;
        out[base + ib] = b * c + a * sn;
      }
      if (out != in)
        for (int64_t i = 0; i < headDim; ++i)
          if (i < rotaryOffset || i >= rotaryOffset + rotaryDim)
            out[head + i] = in[head + i];
    }
  }
}

void latentKeyForward(Tensor &k, const Tensor &kNope, const Tensor &kRope,
                      int64_t heads, int64_t nopeDim, int64_t ropeDim) {
  detail::checkLatentKey(k, kNope, kRope, heads, nopeDim, ropeDim,
                         "latentKeyForward");
  const int64_t n = kRope.numel() / ropeDim, hd = nopeDim + ropeDim;
  const float *a = kNope.f32(), *r = kRope.f32();
  float *out = k.f32();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < heads; ++h) {
      float *dst = out + (i * heads + h) * hd;
      std::copy_n(a + (i * heads + h) * nopeDim, nopeDim, dst);
      std::copy_n(r + i * ropeDim, ropeDim, dst + nopeDim);
    }
}

void latentKeyBackward(Tensor &dkNope, Tensor &dkRope, const Tensor &dk,
                       int64_t heads, int64_t nopeDim, int64_t ropeDim) {
  detail::checkLatentKey(dk, dkNope, dkRope, heads, nopeDim, ropeDim,
                         "latentKeyBackward");
  const int64_t n = dkRope.numel() / ropeDim, hd = nopeDim + ropeDim;
  const float *g = dk.f32();
  float *a = dkNope.f32(), *r = dkRope.f32();
  for (int64_t i = 0; i < n; ++i) {
    float *ri = r + i * ropeDim;
    std::fill_n(ri, ropeDim, 0.0f);
    for (int64_t h = 0; h < heads; ++h) {
      const float *src = g + (i * heads + h) * hd;
      std::copy_n(src, nopeDim, a + (i * heads + h) * nopeDim);
      for (int64_t c = 0; c < ropeDim; ++c)
        ri[c] += src[nopeDim + c];
    }
  }
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

namespace {
void checkEmbedding(const Tensor &out, const Tensor &tokens, const Tensor &wte,
                    const Tensor &wpe, int64_t seqLen, int64_t posOffset,
                    const char *fn, int64_t &n, int64_t &h) {
  check(wte.rank() == 2, fn, "wte must be [vocab_shard, hidden], got " +
                                 wte.shapeString());
  h = wte.dim(1);
  n = tokens.numel();
  check(tokens.dtype() == DType::I32, fn, "tokens must be int32");
  check(out.numel() == n * h, fn,
        "output " + out.shapeString() + " must be [" + std::to_string(n) +
            ", " + std::to_string(h) + "]");
  check(seqLen > 0 && n % seqLen == 0, fn,
        std::to_string(n) + " tokens are not whole sequences of " +
            std::to_string(seqLen));
  if (wpe.defined())
    check(wpe.rank() == 2 && wpe.dim(1) == h &&
              wpe.dim(0) >= posOffset + seqLen && posOffset >= 0,
          fn, "wpe " + wpe.shapeString() + " cannot hold positions up to " +
                  std::to_string(posOffset + seqLen));
}
} // namespace

void embeddingForward(Tensor &out, const Tensor &tokens, const Tensor &wte,
                      const Tensor &wpe, int64_t seqLen, int64_t posOffset,
                      int64_t vocabOffset, bool addPositions) {
  const char *fn = "embeddingForward";
  int64_t n, h;
  checkEmbedding(out, tokens, wte, wpe, seqLen, posOffset, fn, n, h);
  const int32_t *tok = tokens.i32();
  int64_t rows = wte.dim(0);
  float *o = out.f32();
  const float *e = wte.f32();
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = tok[i] - vocabOffset;
    if (r >= 0 && r < rows)
      std::memcpy(o + i * h, e + r * h, sizeof(float) * h);
    else
      std::memset(o + i * h, 0, sizeof(float) * h);
    if (wpe.defined() && addPositions) {
      const float *p = wpe.f32() + (posOffset + i % seqLen) * h;
      for (int64_t j = 0; j < h; ++j)
        o[i * h + j] += p[j];
    }
  }
}

void embeddingBackward(Tensor &dwte, Tensor &dwpe, const Tensor &dout,
                       const Tensor &tokens, int64_t seqLen, int64_t posOffset,
                       int64_t vocabOffset, bool addPositions) {
  const char *fn = "embeddingBackward";
  int64_t n, h;
  checkEmbedding(dout, tokens, dwte, dwpe, seqLen, posOffset, fn, n, h);
  const int32_t *tok = tokens.i32();
  int64_t rows = dwte.dim(0);
  const float *g = dout.f32();
  float *e = dwte.f32();
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = tok[i] - vocabOffset;
    if (r >= 0 && r < rows)
      for (int64_t j = 0; j < h; ++j)
        e[r * h + j] += g[i * h + j];
    if (dwpe.defined() && addPositions) {
      float *p = dwpe.f32() + (posOffset + i % seqLen) * h;
      for (int64_t j = 0; j < h; ++j)
        p[j] += g[i * h + j];
    }
  }
}

//===----------------------------------------------------------------------===//
// Recommendation (DLRM): bags, dot interaction, binary cross-entropy
//===----------------------------------------------------------------------===//

void bagPoolForward(Tensor &out, const Tensor &x, int64_t bag, bool mean) {
  const char *fn = "bagPoolForward";
  detail::checkBagPool(out, x, bag, fn);
  const int64_t d = out.dim(-1), n = out.numel() / d;
  const float s = mean ? 1.0f / float(bag) : 1.0f;
  const float *X = x.f32();
  float *O = out.f32();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < d; ++c) {
      float acc = 0.0f;
      for (int64_t j = 0; j < bag; ++j)
        acc += X[(i * bag + j) * d + c];
      O[i * d + c] = acc * s;
    }
}

void bagPoolBackward(Tensor &dx, const Tensor &dout, int64_t bag, bool mean) {
  const char *fn = "bagPoolBackward";
  detail::checkBagPool(dout, dx, bag, fn);
  const int64_t d = dout.dim(-1), n = dout.numel() / d;
  const float s = mean ? 1.0f / float(bag) : 1.0f;
  const float *G = dout.f32();
  float *D = dx.f32();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < bag; ++j)
      for (int64_t c = 0; c < d; ++c)
        D[(i * bag + j) * d + c] = G[i * d + c] * s;
}

void dotInteractionForward(Tensor &out, const std::vector<Tensor> &features) {
  const char *fn = "dotInteractionForward";
  int64_t n, d;
  detail::checkDotInteraction(out, features, fn, n, d);
  const int64_t F = int64_t(features.size()), w = out.dim(-1);
  float *O = out.f32();
  const float *f0 = features[0].f32();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(O + i * w, f0 + i * d, sizeof(float) * d);
    for (int64_t a = 1; a < F; ++a) {
      const float *fa = features[size_t(a)].f32() + i * d;
      for (int64_t b = 0; b < a; ++b) {
        const float *fb = features[size_t(b)].f32() + i * d;
        float dot = 0.0f;
        for (int64_t c = 0; c < d; ++c)
          dot += fa[c] * fb[c];
        O[i * w + d + a * (a - 1) / 2 + b] = dot;
      }
    }
  }
}

void dotInteractionBackward(const std::vector<Tensor> &dfeatures,
                            const Tensor &dout,
                            const std::vector<Tensor> &features) {
  const char *fn = "dotInteractionBackward";
  int64_t n, d;
  detail::checkDotInteraction(dout, features, fn, n, d);
  detail::checkDotInteractionGrads(dfeatures, features.size(), n, d, fn);
  const int64_t F = int64_t(features.size()), w = dout.dim(-1);
  const float *G = dout.f32();
  for (int64_t a = 0; a < F; ++a) {
    float *da = dfeatures[size_t(a)].f32();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < d; ++c) {
        float acc = a == 0 ? G[i * w + c] : 0.0f;
        for (int64_t b = 0; b < F; ++b) {
          if (b == a)
            continue;
          const int64_t hi = std::max(a, b), lo = std::min(a, b);
          acc += G[i * w + d + hi * (hi - 1) / 2 + lo] *
                 features[size_t(b)].f32()[i * d + c];
        }
        da[i * d + c] = acc;
      }
  }
}

void binaryCrossEntropyForward(Tensor &lossSum, const Tensor &logits,
                               const Tensor &labels) {
  const char *fn = "binaryCrossEntropyForward";
  detail::checkBce(logits, labels, fn);
  check(lossSum.numel() == 1, fn, "lossSum must have one element");
  const float *z = logits.f32();
  const int32_t *y = labels.i32();
  double total = 0.0;
  for (int64_t i = 0; i < logits.numel(); ++i) {
    check(y[i] == 0 || y[i] == 1, fn,
          "label " + std::to_string(y[i]) + " is not 0 or 1");
    total += detail::bceTerm(z[i], y[i]);
  }
  lossSum.f32()[0] += static_cast<float>(total);
}

void binaryCrossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                                const Tensor &labels, float gradScale) {
  const char *fn = "binaryCrossEntropyBackward";
  detail::checkBce(logits, labels, fn);
  sameNumel(dlogits, logits, fn);
  const float *z = logits.f32();
  const int32_t *y = labels.i32();
  float *D = dlogits.f32();
  for (int64_t i = 0; i < logits.numel(); ++i)
    D[i] = gradScale * (1.0f / (1.0f + std::exp(-z[i])) - float(y[i]));
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

void layerNormForward(Tensor &y, Tensor &mean, Tensor &rstd, const Tensor &x,
                      const Tensor &gamma, const Tensor &beta, float eps,
                      float gammaShift) {
  const char *fn = "layerNormForward";
  int64_t h = gamma.numel();
  int64_t n = rowsOf(x, h, fn, "x");
  sameNumel(y, x, fn);
  check(mean.numel() == n && rstd.numel() == n, fn,
        "mean and rstd must have " + std::to_string(n) + " elements");
  check(!beta.defined() || beta.numel() == h, fn, "beta must match gamma");
  const float *px = x.f32(), *g = gamma.f32();
  const float *b = beta.defined() ? beta.f32() : nullptr;
  float *py = y.f32(), *pm = mean.f32(), *pr = rstd.f32();
  for (int64_t i = 0; i < n; ++i) {
    const float *row = px + i * h;
    double m = 0, v = 0;
    for (int64_t j = 0; j < h; ++j)
      m += row[j];
    m /= h;
    for (int64_t j = 0; j < h; ++j)
      v += (row[j] - m) * (row[j] - m);
    v /= h;
    float r = static_cast<float>(1.0 / std::sqrt(v + eps));
    pm[i] = static_cast<float>(m);
    pr[i] = r;
    for (int64_t j = 0; j < h; ++j)
      py[i * h + j] =
          (row[j] - pm[i]) * r * (g[j] + gammaShift) + (b ? b[j] : 0.0f);
  }
}

void layerNormBackward(Tensor &dx, Tensor &dgamma, Tensor &dbeta,
                       const Tensor &dy, const Tensor &x, const Tensor &gamma,
                       const Tensor &mean, const Tensor &rstd,
                       float gammaShift) {
  const char *fn = "layerNormBackward";
  int64_t h = gamma.numel();
  int64_t n = rowsOf(x, h, fn, "x");
  sameNumel(dx, x, fn);
  sameNumel(dy, x, fn);
  sameNumel(dgamma, gamma, fn);
  check(!dbeta.defined() || dbeta.numel() == h, fn, "dbeta must match gamma");
  const float *px = x.f32(), *g = gamma.f32(), *pdy = dy.f32();
  const float *pm = mean.f32(), *pr = rstd.f32();
  float *pdx = dx.f32(), *dg = dgamma.f32();
  float *db = dbeta.defined() ? dbeta.f32() : nullptr;
  for (int64_t i = 0; i < n; ++i) {
    const float *row = px + i * h, *grow = pdy + i * h;
    double a = 0, c = 0; // mean(dy*g), mean(dy*g*xhat)
    for (int64_t j = 0; j < h; ++j) {
      float xhat = (row[j] - pm[i]) * pr[i];
      float dyg = grow[j] * (g[j] + gammaShift);
      a += dyg;
      c += dyg * xhat;
      dg[j] += grow[j] * xhat;
      if (db)
        db[j] += grow[j];
    }
    a /= h;
    c /= h;
    for (int64_t j = 0; j < h; ++j) {
      float xhat = (row[j] - pm[i]) * pr[i];
      pdx[i * h + j] = static_cast<float>(
          pr[i] * (grow[j] * (g[j] + gammaShift) - a - xhat * c));
    }
  }
}

void rmsNormForward(Tensor &y, Tensor &rstd, const Tensor &x,
                    const Tensor &gamma, float eps) {
  const char *fn = "rmsNormForward";
  int64_t h = gamma.numel();
  int64_t n = rowsOf(x, h, fn, "x");
  sameNumel(y, x, fn);
  check(rstd.numel() == n, fn,
        "rstd must have " + std::to_string(n) + " elements (one per group)");
  const float *px = x.f32(), *g = gamma.f32();
  float *py = y.f32(), *pr = rstd.f32();
  for (int64_t i = 0; i < n; ++i) {
    const float *row = px + i * h;
    double ss = 0;
    for (int64_t j = 0; j < h; ++j)
      ss += double(row[j]) * row[j];
    float r = static_cast<float>(1.0 / std::sqrt(ss / h + eps));
    pr[i] = r;
    for (int64_t j = 0; j < h; ++j)
      py[i * h + j] = row[j] * r * g[j];
  }
}

void rmsNormBackward(Tensor &dx, Tensor &dgamma, const Tensor &dy,
                     const Tensor &x, const Tensor &gamma, const Tensor &rstd) {
  const char *fn = "rmsNormBackward";
  int64_t h = gamma.numel();
  int64_t n = rowsOf(x, h, fn, "x");
  sameNumel(dx, x, fn);
  sameNumel(dy, x, fn);
  sameNumel(dgamma, gamma, fn);
  check(rstd.numel() == n, fn, "rstd size does not match x");
  const float *px = x.f32(), *g = gamma.f32(), *pdy = dy.f32(),
              *pr = rstd.f32();
  float *pdx = dx.f32(), *dg = dgamma.f32();
  for (int64_t i = 0; i < n; ++i) {
    const float *row = px + i * h, *grow = pdy + i * h;
    double c = 0; // mean(dy*g*xhat)
    for (int64_t j = 0; j < h; ++j) {
      float xhat = row[j] * pr[i];
      c += grow[j] * g[j] * xhat;
      dg[j] += grow[j] * xhat;
    }
    c /= h;
    for (int64_t j = 0; j < h; ++j)
      pdx[i * h + j] = static_cast<float>(
          pr[i] * (grow[j] * g[j] - row[j] * pr[i] * c));
  }
}

//===----------------------------------------------------------------------===//
// Linear and matmul
//===----------------------------------------------------------------------===//

void linearForward(Tensor &y, const Tensor &x, const Tensor &w,
                   const Tensor &b) {
  const char *fn = "linearForward";
  check(w.rank() == 2, fn, "W must be [out, in], got " + w.shapeString());
  int64_t out = w.dim(0), in = w.dim(1);
  int64_t n = rowsOf(x, in, fn, "x");
  check(y.numel() == n * out, fn,
        "y " + y.shapeString() + " must be [" + std::to_string(n) + ", " +
            std::to_string(out) + "]");
  check(!b.defined() || b.numel() == out, fn, "b must have out elements");
  const F32Operand xf(x), wf(w);
  MapM Y(y.f32(), n, out);
  Y.noalias() = CMapM(xf.get(), n, in) * CMapM(wf.get(), out, in).transpose();
  if (b.defined())
    Y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(b.f32(), out);
}

void linearBackward(Tensor &dx, Tensor &dw, Tensor &db, const Tensor &dy,
                    const Tensor &x, const Tensor &w) {
  const char *fn = "linearBackward";
  check(w.rank() == 2, fn, "W must be [out, in], got " + w.shapeString());
  int64_t out = w.dim(0), in = w.dim(1);
  int64_t n = rowsOf(x, in, fn, "x");
  check(dy.numel() == n * out, fn,
        "dy " + dy.shapeString() + " does not match [n, out]");
  const F32Operand dyf(dy);
  CMapM DY(dyf.get(), n, out);
  if (dx.defined()) {
    sameNumel(dx, x, fn);
    const F32Operand wf(w);
    MapM(dx.f32(), n, in).noalias() = DY * CMapM(wf.get(), out, in);
  }
  if (dw.defined()) {
    sameNumel(dw, w, fn);
    const F32Operand xf(x);
    MapM(dw.f32(), out, in).noalias() +=
        DY.transpose() * CMapM(xf.get(), n, in);
  }
  if (db.defined()) {
    check(db.numel() == out, fn, "db must have out elements");
    Eigen::Map<Eigen::RowVectorXf>(db.f32(), out) += DY.colwise().sum();
  }
}

void matmul(Tensor &c, const Tensor &a, const Tensor &b, bool transB,
            float beta) {
  const char *fn = "matmul";
  check(a.rank() == 2 && b.rank() == 2 && c.rank() == 2, fn,
        "operands must be 2-D");
  int64_t m = a.dim(0), k = a.dim(1);
  int64_t n = transB ? b.dim(0) : b.dim(1);
  check((transB ? b.dim(1) : b.dim(0)) == k && c.dim(0) == m && c.dim(1) == n,
        fn, "shapes " + a.shapeString() + " x " + b.shapeString() +
                (transB ? "^T" : "") + " -> " + c.shapeString() + " mismatch");
  MapM C(c.f32(), m, n);
  CMapM A(a.f32(), m, k), B(b.f32(), b.dim(0), b.dim(1));
  if (beta == 0.0f)
    C.setZero();
  else
    C *= beta;
  if (transB)
    C.noalias() += A * B.transpose();
  else
    C.noalias() += A * B;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//


namespace {
/// The last key query row i sees: off + i when causal, else every key.
int64_t lastKey(const AttentionDims &d, int64_t i) {
  return d.causal ? d.qOffset + i : d.keys() - 1;
}
/// Keys 0 .. last of query row i, from `first` on with a sliding window.
int64_t firstKey(const AttentionDims &d, int64_t last) {
  return d.window > 0 ? std::max<int64_t>(0, last - d.window + 1) : 0;
}

/// dst = src with the attention dropout mask of (batch b, local head h)
/// applied (dst may alias src); a copy without dropout.
void probDropout(float *dst, const float *src, int64_t b, int64_t h,
                 const AttentionDims &d) {
  // One [seq, keys] block whose "sample" is the (sample, head) row of the
  // attention formula.
  DropoutSite block = d.dropout;
  block.firstSample = (block.firstSample + b) * block.features +
                      block.firstFeature + h;
  block.features = d.keys();
  block.firstFeature = 0;
  dropBlock(dst, src, 1, d.seq, d.keys(), block);
}
} // namespace

void attentionForward(Tensor &out, Tensor &probs, const Tensor &q,
                      const Tensor &k, const Tensor &v, const Tensor &sinks,
                      const AttentionDims &d) {
  detail::checkAttention(out, probs, q, k, v, d, "attentionForward");
  detail::checkSinks(sinks, d, "attentionForward");
  const float *sink = sinks.defined() ? sinks.f32() : nullptr;
  int64_t s = d.seq, t = d.keys(), hd = d.headDim, vd = d.valueDim();
  int64_t qs = d.heads * hd, ks = d.kvHeads * hd;
  int64_t os = d.heads * vd, vs = d.kvHeads * vd; // value and output rows
  int64_t group = d.heads / d.kvHeads;
  float sc = d.softmaxScale();
  const bool drop = d.dropout.rate > 0.0f;
  RowMat dropped(drop ? s : 0, drop ? t : 0);
  // Saving the log-sum-exp: one (sample, head)'s probabilities at a time.
  const bool lse = detail::savesLogSumExp(probs, d);
  RowMat scratch(lse ? s : 0, lse ? t : 0);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h) {
      int64_t kh = h / group;
      CStrided Q(q.f32() + b * s * qs + h * hd, s, hd, Eigen::OuterStride<>(qs));
      CStrided K(k.f32() + b * t * ks + kh * hd, t, hd, Eigen::OuterStride<>(ks));
      CStrided V(v.f32() + b * t * vs + kh * vd, t, vd, Eigen::OuterStride<>(vs));
      Strided O(out.f32() + b * s * os + h * vd, s, vd, Eigen::OuterStride<>(os));
      const int64_t row0 = (b * d.heads + h) * s;
      MapM P(lse ? scratch.data() : probs.f32() + row0 * t, s, t);
      P.noalias() = (Q * K.transpose()) * sc;
      for (int64_t i = 0; i < s; ++i) {
        // Keys first..last (causal: up to the query's own position; a
        // window also drops the oldest).
        const int64_t last = lastKey(d, i), first = firstKey(d, last);
        float mx = P(i, first);
        for (int64_t j = first + 1; j <= last; ++j)
          mx = std::max(mx, P(i, j));
        if (sink)
          mx = std::max(mx, sink[h]);
        double z = 0;
        for (int64_t j = first; j <= last; ++j) {
          P(i, j) = std::exp(P(i, j) - mx);
          z += P(i, j);
        }
        if (sink)
          z += std::exp(double(sink[h]) - double(mx));
        if (lse) // rounded once
          probs.f32()[row0 + i] = float(double(mx) + std::log(z));
        float inv = static_cast<float>(1.0 / z);
        for (int64_t j = 0; j < t; ++j)
          P(i, j) = (j >= first && j <= last) ? P(i, j) * inv : 0.0f;
      }
      if (drop) {
        probDropout(dropped.data(), P.data(), b, h, d);
        O.noalias() = dropped * V;
      } else {
        O.noalias() = P * V;
      }
    }
}

void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, Tensor &dsinks,
                       const Tensor &dout, const Tensor &q, const Tensor &k,
                       const Tensor &v, const Tensor &out, const Tensor &probs,
                       const AttentionDims &d) {
  const char *fn = "attentionBackward";
  detail::checkAttentionBackward(dq, dk, dv, dsinks, dout, q, k, v, out, probs,
                                 d, fn);
  zero(dk);
  zero(dv);
  std::vector<double> dsink(dsinks.defined() ? d.heads : 0, 0.0);
  int64_t s = d.seq, t = d.keys(), hd = d.headDim, vd = d.valueDim();
  int64_t qs = d.heads * hd, ks = d.kvHeads * hd;
  int64_t os = d.heads * vd, vs = d.kvHeads * vd; // value and output rows
  int64_t group = d.heads / d.kvHeads;
  float sc = d.softmaxScale();
  const bool drop = d.dropout.rate > 0.0f;
  RowMat dP(s, t), dropped(drop ? s : 0, drop ? t : 0);
  const bool lse = detail::savesLogSumExp(probs, d);
  RowMat again(lse ? s : 0, lse ? t : 0);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h) {
      int64_t kh = h / group;
      auto qOff = b * s * qs + h * hd, kOff = b * t * ks + kh * hd;
      auto oOff = b * s * os + h * vd, vOff = b * t * vs + kh * vd;
      CStrided Q(q.f32() + qOff, s, hd, Eigen::OuterStride<>(qs));
      CStrided K(k.f32() + kOff, t, hd, Eigen::OuterStride<>(ks));
      CStrided V(v.f32() + vOff, t, vd, Eigen::OuterStride<>(vs));
      CStrided DO(dout.f32() + oOff, s, vd, Eigen::OuterStride<>(os));
      Strided DQ(dq.f32() + qOff, s, hd, Eigen::OuterStride<>(qs));
      Strided DK(dk.f32() + kOff, t, hd, Eigen::OuterStride<>(ks));
      Strided DV(dv.f32() + vOff, t, vd, Eigen::OuterStride<>(vs));
      const int64_t row0 = (b * d.heads + h) * s;
      if (lse) {
        // The probabilities again: p_ij = exp(scale q_i k_j - lse_i), the
        // difference and exponential in double, so that they carry no
        // rounding but the saved lse's.
        again.noalias() = (Q * K.transpose()) * sc;
        for (int64_t i = 0; i < s; ++i) {
          const int64_t last = lastKey(d, i), first = firstKey(d, last);
          const double l = probs.f32()[row0 + i];
          for (int64_t j = 0; j < t; ++j)
            again(i, j) = (j >= first && j <= last)
                              ? float(std::exp(double(again(i, j)) - l))
                              : 0.0f;
        }
      }
      CMapM P(lse ? again.data() : probs.f32() + row0 * t, s, t);
      dP.noalias() = DO * V.transpose();
      if (drop) {
        // out = D(P) V with D the dropout mask: dV = D(P)^T dO, and the
        // probabilities' gradient is D(dO V^T).
        probDropout(dropped.data(), P.data(), b, h, d);
        DV.noalias() += dropped.transpose() * DO;
        probDropout(dP.data(), dP.data(), b, h, d);
      } else {
        DV.noalias() += P.transpose() * DO;
      }
      // dS = P o (dP - rowsum(dP o P)); masked entries have P = 0.
      for (int64_t i = 0; i < s; ++i) {
        const int64_t last = lastKey(d, i), first = firstKey(d, last);
        double dot = 0;
        for (int64_t j = first; j <= last; ++j)
          dot += double(dP(i, j)) * P(i, j);
        if (!dsink.empty()) {
          // The sink's logit s: dL/ds = p_sink (0 - dot), its value being
          // none.
          double kept = 0;
          for (int64_t j = first; j <= last; ++j)
            kept += P(i, j);
          dsink[h] -= (1.0 - kept) * dot;
        }
        for (int64_t j = 0; j < t; ++j)
          dP(i, j) = (j >= first && j <= last)
                         ? P(i, j) * (dP(i, j) - float(dot)) * sc
                         : 0.0f;
      }
      DQ.noalias() = dP * K;
      DK.noalias() += dP.transpose() * Q;
    }
  for (size_t h = 0; h < dsink.size(); ++h)
    dsinks.f32()[h] = float(dsink[h]);
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

namespace {
} // namespace

void crossEntropyForward(Tensor &lossSum, Tensor &lse, const Tensor &logits,
                         const Tensor &targets) {
  const char *fn = "crossEntropyForward";
  int64_t n, V;
  detail::checkCrossEntropy(lossSum, lse, logits, targets, fn, n, V);
  const float *L = logits.f32();
  const int32_t *t = targets.i32();
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    check(t[i] >= 0 && t[i] < V, fn,
          "target " + std::to_string(t[i]) + " outside [0, " +
              std::to_string(V) + ")");
    const float *row = L + i * V;
    float mx = row[0];
    for (int64_t j = 1; j < V; ++j)
      mx = std::max(mx, row[j]);
    double z = 0;
    for (int64_t j = 0; j < V; ++j)
      z += std::exp(double(row[j]) - mx);
    double l = mx + std::log(z);
    lse.f32()[i] = static_cast<float>(l);
    total += l - row[t[i]];
  }
  lossSum.f32()[0] += static_cast<float>(total);
}

void vocabParallelCrossEntropyForward(Tensor &lossSum, Tensor &lse,
                                      const Tensor &logits,
                                      const Tensor &targets,
                                      int64_t vocabOffset, const Group &tp,
                                      int64_t vocab) {
  const char *fn = "vocabParallelCrossEntropyForward";
  int64_t n, V;
  detail::checkCrossEntropy(lossSum, lse, logits, targets, fn, n, V);
  const float *L = logits.f32();
  const int32_t *t = targets.i32();
  const int64_t padded = V * std::max(1, detail::groupImpl(tp, fn).size);
  const int64_t real = detail::realVocab(vocab, padded, fn);
  const int64_t valid = detail::validColumns(real, vocabOffset, V);
  // A target outside the whole vocabulary would match no shard and
  // silently lower the loss.
  for (int64_t i = 0; i < n; ++i)
    check(t[i] >= 0 && t[i] < real, fn,
          "target " + std::to_string(t[i]) + " outside [0, " +
              std::to_string(real) + ")");
  Tensor mx({n}), z({n}), tl({n});
  for (int64_t i = 0; i < n; ++i) {
    const float *row = L + i * V;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < valid; ++j)
      m = std::max(m, row[j]);
    mx.f32()[i] = m;
  }
  allReduceMax(mx, tp);
  for (int64_t i = 0; i < n; ++i) {
    const float *row = L + i * V;
    double s = 0;
    for (int64_t j = 0; j < valid; ++j)
      s += std::exp(double(row[j]) - mx.f32()[i]);
    z.f32()[i] = static_cast<float>(s);
    int64_t c = t[i] - vocabOffset;
    tl.f32()[i] = c >= 0 && c < valid ? row[c] : 0.0f;
  }
  allReduceSum(z, tp);
  allReduceSum(tl, tp);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double l = mx.f32()[i] + std::log(double(z.f32()[i]));
    lse.f32()[i] = static_cast<float>(l);
    total += l - tl.f32()[i];
  }
  lossSum.f32()[0] += static_cast<float>(total);
}

void vocabParallelCrossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                                       const Tensor &targets,
                                       const Tensor &lse, int64_t vocabOffset,
                                       float gradScale, int64_t vocab) {
  const char *fn = "crossEntropyBackward";
  int64_t n, V;
  Tensor none;
  detail::checkCrossEntropy(none, lse, logits, targets, fn, n, V);
  sameNumel(dlogits, logits, fn);
  const int64_t valid =
      vocab > 0 ? detail::validColumns(vocab, vocabOffset, V) : V;
  const float *L = logits.f32(), *pl = lse.f32();
  const int32_t *t = targets.i32();
  float *D = dlogits.f32();
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = t[i] - vocabOffset;
    for (int64_t j = 0; j < V; ++j) {
      float p = j < valid ? std::exp(L[i * V + j] - pl[i]) : 0.0f;
      D[i * V + j] = gradScale * (p - (j == c ? 1.0f : 0.0f));
    }
  }
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

void adamUpdate(Tensor &param, const Tensor &grad, Tensor &m, Tensor &v,
                const AdamConfig &cfg, int64_t step) {
  float bc1, bc2;
  if (!detail::adamStep(param, grad, m, v, cfg, step, bc1, bc2))
    return;
  float *p = param.f32(), *pm = m.f32(), *pv = v.f32();
  const float *g = grad.f32();
  for (int64_t i = 0; i < param.numel(); ++i) {
    pm[i] = cfg.beta1 * pm[i] + (1.0f - cfg.beta1) * g[i];
    pv[i] = cfg.beta2 * pv[i] + (1.0f - cfg.beta2) * g[i] * g[i];
    float mhat = pm[i] / bc1, vhat = pv[i] / bc2;
    p[i] -= cfg.lr * (mhat / (std::sqrt(vhat) + cfg.eps) +
                      cfg.weightDecay * p[i]);
  }
}

void adamUpdateMany(const std::vector<AdamTensors> &list, const AdamConfig &cfg,
                    int64_t step) {
  for (AdamTensors t : list) // views
    adamUpdate(t.param, t.grad, t.m, t.v, cfg, step);
}

namespace detail {

void moeRoute(Tensor &prob, Tensor &expert, Tensor &weight, Tensor &status,
              const Tensor &x, const Tensor &router, const Tensor &routerBias,
              const Tensor &select, const moe::RouteSpec &s, int64_t begin,
              int64_t end) {
  status.i32()[0] = -1;
  const float *X = x.f32(), *R = router.f32();
  const float *bias = routerBias.defined() ? routerBias.f32() : nullptr;
  const float *sel = select.defined() ? select.f32() : nullptr;
  std::vector<double> logit(size_t(s.E)), groupScore(size_t(s.groups));
  std::vector<float> choice(size_t(s.E));
  for (int64_t t = begin; t < end; ++t) {
    const int64_t q = t - begin;
    for (int64_t e = 0; e < s.E; ++e) {
      logit[size_t(e)] = moe::routerLogit(X + t * s.h, R, bias, s.h, s.E, e);
      if (!moe::finite(logit[size_t(e)])) {
        status.i32()[0] = int32_t(q);
        return;
      }
    }
    moe::routeToken(s, logit.data(), sel, prob.f32() + q * s.E, choice.data(),
                    groupScore.data(), expert.i32() + q * s.k,
                    weight.f32() + q * s.k);
  }
}

void moeExpertLoad(Tensor &load, const Tensor &expert) {
  float *L = load.f32();
  for (int64_t e = 0; e < load.numel(); ++e)
    L[e] += float(moe::choiceCount(expert.i32(), 0, expert.numel(), e));
}

void moeRouterGrad(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                   const Tensor &dgate, const Tensor &x, const Tensor &router,
                   const Tensor &prob, const Tensor &expert,
                   const Tensor &weight, const moe::RouteSpec &s, int64_t begin,
                   int64_t end) {
  const int64_t rows = end - begin;
  std::vector<float> dlogit(size_t(rows * s.E)), dp(size_t(s.E));
  for (int64_t q = 0; q < rows; ++q)
    moe::routerGradToken(
        s, prob.f32() + q * s.E, expert.i32() + q * s.k, weight.f32() + q * s.k,
        dgate.f32() + (begin + q) * s.k, dp.data(), &dlogit[size_t(q * s.E)]);
  const float *X = x.f32() + begin * s.h, *R = router.f32();
  if (dRouterBias.defined()) {
    float *DB = dRouterBias.f32();
    for (int64_t e = 0; e < s.E; ++e)
      DB[e] = moe::routerBiasGrad(dlogit.data(), rows, s.E, e, DB[e]);
  }
  float *DR = drouter.f32();
  for (int64_t i = 0; i < s.h; ++i)
    for (int64_t e = 0; e < s.E; ++e)
      DR[i * s.E + e] = moe::routerWeightGrad(X, dlogit.data(), rows, s.h, s.E,
                                              i, e, DR[i * s.E + e]);
  float *DX = dx.f32();
  for (int64_t q = 0; q < rows; ++q)
    for (int64_t i = 0; i < s.h; ++i)
      DX[q * s.h + i] =
          moe::routerInputGrad(R, &dlogit[size_t(q * s.E)], s.E, i);
}

MoeRows moeExpertRows(const Tensor &expert, const Tensor &weight,
                      const Tensor &status, const moe::ExpertSpec &s) {
  MoeRows r;
  r.hostBegin.assign(size_t(s.local + 1), 0);
  if ((r.badRow = status.i32()[0]) >= 0)
    return r;
  for (int64_t e = 0; e < s.local; ++e)
    r.hostBegin[size_t(e + 1)] =
        r.hostBegin[size_t(e)] +
        moe::choiceCount(expert.i32(), 0, s.n * s.k, s.first + e);
  const int64_t M = r.size();
  r.token = Tensor({M}, DType::I32), r.slot = Tensor({M}, DType::I32);
  r.weight = Tensor({M}), r.rowExpert = Tensor({M}, DType::I32);
  r.begin = Tensor({s.local + 1}, DType::I32);
  r.slotRow = Tensor({s.n * s.k}, DType::I32);
  for (int64_t e = 0; e <= s.local; ++e)
    r.begin.i32()[e] = int32_t(r.hostBegin[size_t(e)]);
  for (int64_t e = 0; e < s.local; ++e)
    moe::fillExpertRows(s, expert.i32(), weight.f32(), e, 0, s.n * s.k,
                        r.hostBegin[size_t(e)], r.token.i32(), r.slot.i32(),
                        r.weight.f32(), r.rowExpert.i32(), r.slotRow.i32());
  return r;
}

void moeGather(Tensor &out, const Tensor &src, const Tensor &token,
               const Tensor &scale) {
  const int64_t M = token.numel(), cols = src.dim(-1);
  const int32_t *T = token.i32();
  const float *S = src.f32();
  const float *g = scale.defined() ? scale.f32() : nullptr;
  float *O = out.f32();
  for (int64_t q = 0; q < M; ++q)
    for (int64_t i = 0; i < cols; ++i) {
      const float v = S[int64_t(T[q]) * cols + i];
      O[q * cols + i] = g ? g[q] * v : v;
    }
}

void moeHidden(Tensor &a, Tensor &u, const Tensor &bIn, const MoeRows &rows,
               const moe::ExpertSpec &s) {
  const int64_t M = rows.size();
  float *A = a.f32(), *U = u.f32();
  const int32_t *E = rows.rowExpert.i32();
  if (bIn.defined())
    for (int64_t q = 0; q < M; ++q)
      for (int64_t c = 0; c < s.fin; ++c)
        A[q * s.fin + c] += bIn.f32()[int64_t(E[q]) * s.fin + c];
  for (int64_t q = 0; q < M; ++q)
    for (int64_t j = 0; j < s.f; ++j)
      U[q * s.f + j] = moe::hiddenValue(s, A + q * s.fin, j);
}

void moeCombine(Tensor &y, const Tensor &rowsOut, bool weighted,
                const Tensor &bias, const MoeRows &rows,
                const moe::ExpertSpec &s) {
  float *Y = y.f32();
  for (int64_t t = 0; t < s.n; ++t)
    for (int64_t i = 0; i < s.h; ++i)
      Y[t * s.h + i] = moe::combineToken(
          s, rowsOut.f32(), weighted ? rows.weight.f32() : nullptr,
          weighted && bias.defined() ? bias.f32() : nullptr,
          rows.rowExpert.i32(), rows.slotRow.i32(), t, i);
}

void moeGateGrads(Tensor &dgate, Tensor &dbOut, const Tensor &u,
                  const Tensor &back, const Tensor &dyRows, const Tensor &bOut,
                  const MoeRows &rows, const moe::ExpertSpec &s) {
  const int64_t M = rows.size();
  const int32_t *E = rows.rowExpert.i32();
  const float *DY = dyRows.f32();
  float *DG = dgate.f32();
  for (int64_t c = 0; c < s.n * s.k; ++c)
    DG[c] = 0.0f;
  for (int64_t q = 0; q < M; ++q)
    DG[rows.slot.i32()[q]] = moe::rowGateGrad(
        s, u.f32() + q * s.f, back.f32() + q * s.f,
        bOut.defined() ? bOut.f32() + int64_t(E[q]) * s.h : nullptr,
        DY + q * s.h);
  if (dbOut.defined())
    for (int64_t e = 0; e < s.local; ++e)
      for (int64_t i = 0; i < s.h; ++i)
        dbOut.f32()[e * s.h + i] = moe::expertColumnSum(
            DY, rows.weight.f32(), rows.hostBegin[size_t(e)],
            rows.hostBegin[size_t(e + 1)], s.h, i, dbOut.f32()[e * s.h + i]);
}

void moeHiddenGrads(Tensor &da, Tensor &dbIn, const Tensor &a,
                    const Tensor &back, const MoeRows &rows,
                    const moe::ExpertSpec &s) {
  const int64_t M = rows.size();
  const float *W = rows.weight.f32(), *B = back.f32(), *A = a.f32();
  float *DA = da.f32();
  for (int64_t q = 0; q < M; ++q)
    for (int64_t j = 0; j < s.f; ++j)
      moe::hiddenGrad(s, A + q * s.fin, W[q] * B[q * s.f + j], DA + q * s.fin,
                      j);
  if (dbIn.defined())
    for (int64_t e = 0; e < s.local; ++e)
      for (int64_t c = 0; c < s.fin; ++c)
        dbIn.f32()[e * s.fin + c] = moe::expertColumnSum(
            DA, nullptr, rows.hostBegin[size_t(e)],
            rows.hostBegin[size_t(e + 1)], s.fin, c, dbIn.f32()[e * s.fin + c]);
}

} // namespace detail

} // namespace trident::rt
