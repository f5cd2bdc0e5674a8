//===- CudaKernels.cu - fp32 kernels on the device (cuBLAS + own) ---------===//
//
// The same formulas as Cpu/CpuKernels.cpp. GEMMs go to cuBLAS (row-major
// operands passed as their column-major transposes); every reduction runs
// in a fixed order (one block per row, a fixed shared-memory tree; column
// sums in row blocks fixed by the row count, then over the blocks in
// order) so results do not depend on scheduling.
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"
#include "../Common/AttentionGemms.h"
#include "../Common/Bf16.h"
#include "../Common/Hash.h"
#include "../Common/MoEExperts.h"
#include "../Common/MoERouting.h"
#include "../Common/TokenGroups.h"

#include <cuda_bf16.h>
#include <mma.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

// A kernel launch: `kernel<<<grid, block, shmem, stream>>>` under nvcc;
// under the host emulation (Emu/include/EmuKernel.h, which defines it
// first) a call that runs the kernel's threads on the CPU.
#ifndef TRIDENT_LAUNCH
#define TRIDENT_LAUNCH(kernel, grid, block, shmem, stream)                     \
  kernel<<<grid, block, shmem, stream>>>
#endif

namespace trident::rt {

using detail::check;

namespace {
constexpr int kThreads = 256;

cudaStream_t stream() { return cuda::ready("kernel").compute; }

unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

/// Threads of a one-block-per-row kernel over rows of `cols` elements:
/// the smallest power of two (blockSum and blockMax halve blockDim.x) that
/// covers the row, at least a warp (32) and at most kThreads. A row of
/// hidden 64 then takes 64 threads, not 256 of which 192 would only add
/// zeros to the sums; and each barrier of the sums waits for 4x fewer
/// threads.
unsigned rowThreads(int64_t cols) {
  unsigned t = 32;
  while (t < unsigned(kThreads) && int64_t(t) < cols)
    t *= 2;
  return t;
}

void launched(const char *fn) { cuda::check(cudaGetLastError(), fn); }

using detail::sameNumel;

int64_t rowsOf(const Tensor &t, int64_t cols, const char *fn,
               const char *what) {
  check(cols > 0 && t.numel() % cols == 0, fn,
        std::string(what) + " " + t.shapeString() +
            " is not a multiple of rows of " + std::to_string(cols));
  return t.numel() / cols;
}

#define GRID_STRIDE(i, n)                                                      \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);    \
       i += (int64_t)blockDim.x * gridDim.x)

/// Block-wide sum in a fixed order (deterministic); every thread gets it.
template <class T> __device__ T blockSum(T v, T *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  T r = shared[0];
  __syncthreads();
  return r;
}

__device__ float blockMax(float v, float *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  float r = shared[0];
  __syncthreads();
  return r;
}

__device__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

constexpr float kGeluC = 0.7978845608028654f;      // sqrt(2/pi)
constexpr float kInvSqrt2 = 0.7071067811865476f;   // 1/sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f; // 1/sqrt(2 pi)

// --- elementwise ----------------------------------------------------------
__global__ void kScale(float *p, float a, int64_t n) { GRID_STRIDE(i, n) p[i] *= a; }
__global__ void kRoundBf16(float *p, int64_t n) {
  GRID_STRIDE(i, n) p[i] = detail::roundToBf16(p[i]);
}
__global__ void kBf16Bits(uint16_t *o, const float *x, int64_t n) {
  GRID_STRIDE(i, n) o[i] = detail::bf16Bits(x[i]);
}
__global__ void kBf16Widen(float *o, const uint16_t *x, int64_t n) {
  GRID_STRIDE(i, n) o[i] = detail::bf16Value(x[i]);
}
/// An element's fp32 value: itself, or a bf16 tensor's (its bits). The
/// kernels templated on an input's element type T (float or uint16_t)
/// read it through this: the activations' inputs, attention's output.
TRIDENT_HD inline float elementValue(float x) { return x; }
TRIDENT_HD inline float elementValue(uint16_t bits) {
  return detail::bf16Value(bits);
}
/// Writes element i of an output: into the fp32 elements `f`, or where
/// `b` is given (a bf16 tensor's bits) rounded as rt::toBf16 rounds, the
/// same bits as toBf16 of the fp32 result. The kernels whose outputs may
/// be bf16 (the kernel table's bf16Outputs: the activations) take each
/// output as such a pair, one of them null (outF32 and outBf16 give them).
TRIDENT_HD inline void store(float *f, uint16_t *b, int64_t i, float v) {
  if (b)
    b[i] = detail::bf16Bits(v);
  else
    f[i] = v;
}
__global__ void kAxpy(float *y, const float *x, float a, int64_t n) {
  GRID_STRIDE(i, n) y[i] += a * x[i];
}
__global__ void kAdd(float *o, const float *a, const float *b, int64_t n) {
  GRID_STRIDE(i, n) o[i] = a[i] + b[i];
}
__global__ void kMul(float *o, const float *a, const float *b, int64_t n) {
  GRID_STRIDE(i, n) o[i] = a[i] * b[i];
}
template <typename T>
__global__ void kGelu(float *y, uint16_t *yb, const T *x, int64_t n,
                      bool approx) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    store(y, yb, i,
          approx ? 0.5f * v * (1.0f + tanhf(kGeluC * (v + 0.044715f * v * v * v)))
                 : 0.5f * v * (1.0f + erff(v * kInvSqrt2)));
  }
}
template <typename T>
__global__ void kGeluBwd(float *dx, uint16_t *dxb, const float *dy, const T *x,
                         int64_t n, bool approx) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    if (approx) {
      float t = tanhf(kGeluC * (v + 0.044715f * v * v * v));
      float dt = (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * v * v);
      store(dx, dxb, i, dy[i] * (0.5f * (1.0f + t) + 0.5f * v * dt));
    } else {
      float cdf = 0.5f * (1.0f + erff(v * kInvSqrt2));
      store(dx, dxb, i, dy[i] * (cdf + v * kInvSqrt2Pi * expf(-0.5f * v * v)));
    }
  }
}
template <typename T>
__global__ void kSilu(float *y, uint16_t *yb, const T *x, int64_t n) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    store(y, yb, i, v * sigmoidf(v));
  }
}
template <typename T>
__global__ void kSiluBwd(float *dx, uint16_t *dxb, const float *dy, const T *x,
                         int64_t n) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    float s = sigmoidf(v);
    store(dx, dxb, i, dy[i] * s * (1.0f + v * (1.0f - s)));
  }
}
template <typename T>
__global__ void kRelu(float *y, uint16_t *yb, const T *x, int64_t n) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    store(y, yb, i, v > 0.0f ? v : 0.0f);
  }
}
template <typename T>
__global__ void kReluBwd(float *dx, uint16_t *dxb, const float *dy, const T *x,
                         int64_t n) {
  GRID_STRIDE(i, n) store(dx, dxb, i, elementValue(x[i]) > 0.0f ? dy[i] : 0.0f);
}
template <typename T>
__global__ void kSquaredRelu(float *y, uint16_t *yb, const T *x, int64_t n) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    store(y, yb, i, v > 0.0f ? v * v : 0.0f);
  }
}
template <typename T>
__global__ void kSquaredReluBwd(float *dx, uint16_t *dxb, const float *dy,
                                const T *x, int64_t n) {
  GRID_STRIDE(i, n) {
    float v = elementValue(x[i]);
    store(dx, dxb, i, v > 0.0f ? 2.0f * v * dy[i] : 0.0f);
  }
}
__global__ void kTanh(float *y, const float *x, int64_t n) {
  GRID_STRIDE(i, n) y[i] = tanhf(x[i]);
}
__global__ void kTanhBwd(float *dx, const float *dy, const float *x,
                         int64_t n) {
  GRID_STRIDE(i, n) {
    float t = tanhf(x[i]);
    dx[i] = dy[i] * (1.0f - t * t);
  }
}
/// The [b * T, C * p * p] patch rows of images [b, C, side, side]
/// (patchEmbedForward's order), one thread per element.
__global__ void kPatchRows(float *rows, const float *img, int64_t b,
                           int64_t channels, int64_t side, int64_t p) {
  const int64_t grid = side / p, cols = channels * p * p;
  GRID_STRIDE(e, b * grid * grid * cols) {
    int64_t col = e % cols, t = e / cols;
    int64_t n = t / (grid * grid), py = (t / grid) % grid, px = t % grid;
    int64_t c = col / (p * p), i = (col / p) % p, j = col % p;
    rows[e] = img[((n * channels + c) * side + py * p + i) * side + px * p + j];
  }
}
/// out [b*(T+1), h]: per sample the token row, then x's T rows.
__global__ void kPrependToken(float *out, const float *x, const float *token,
                              int64_t b, int64_t T, int64_t h) {
  GRID_STRIDE(e, b * (T + 1) * h) {
    int64_t j = e % h, r = (e / h) % (T + 1), n = e / (h * (T + 1));
    out[e] = r == 0 ? token[j] : x[(n * T + r - 1) * h + j];
  }
}
/// dx [b*T, h] = dy without the first row of each sample.
__global__ void kDropFirstRow(float *dx, const float *dy, int64_t b, int64_t T,
                              int64_t h) {
  GRID_STRIDE(e, b * T * h) {
    int64_t j = e % h, r = (e / h) % T, n = e / (h * T);
    dx[e] = dy[(n * (T + 1) + r + 1) * h + j];
  }
}
/// dtoken[j] = sum over samples, in order, of dy's first row (one thread
/// per feature: the CPU's order).
__global__ void kFirstRowSum(float *dtoken, const float *dy, int64_t b,
                             int64_t T, int64_t h) {
  GRID_STRIDE(j, h) {
    float s = 0.0f;
    for (int64_t n = 0; n < b; ++n)
      s += dy[n * (T + 1) * h + j];
    dtoken[j] = s;
  }
}
__global__ void kPositionAdd(float *y, const float *x, const float *wpe,
                             int64_t n, int64_t h, int64_t seq, int64_t off) {
  GRID_STRIDE(e, n * h) {
    y[e] = x[e] + wpe[(off + (e / h) % seq) * h + e % h];
  }
}
/// dwpe rows off .. off+seq-1: per (position, feature) the sum over samples
/// in order (one thread each).
__global__ void kPositionSum(float *dwpe, const float *dy, int64_t n,
                             int64_t h, int64_t seq, int64_t off) {
  GRID_STRIDE(e, seq * h) {
    int64_t pos = e / h, j = e % h;
    float s = 0.0f;
    for (int64_t r = pos; r < n; r += seq)
      s += dy[r * h + j];
    dwpe[(off + pos) * h + j] = s;
  }
}
/// Row `index` of each of `batch` samples of x [batch*seq, h] -> out
/// [batch, h], or back (toX: out's rows into x's).
__global__ void kSelectRows(float *x, float *out, int64_t batch, int64_t seq,
                            int64_t h, int64_t index, bool toX) {
  GRID_STRIDE(e, batch * h) {
    int64_t b = e / h, c = e % h;
    float *xe = x + (b * seq + index) * h + c;
    if (toX)
      *xe = out[e];
    else
      out[e] = *xe;
  }
}
template <typename TA, typename TB>
__global__ void kSwiglu(float *y, uint16_t *yb, const TA *a, const TB *b,
                        int64_t n) {
  GRID_STRIDE(i, n) {
    float g = elementValue(a[i]);
    store(y, yb, i, g * sigmoidf(g) * elementValue(b[i]));
  }
}
template <typename TA, typename TB>
__global__ void kSwigluBwd(float *dg, uint16_t *dgb, float *du, uint16_t *dub,
                           const float *dy, const TA *a, const TB *b,
                           int64_t n) {
  GRID_STRIDE(i, n) {
    float g = elementValue(a[i]);
    float s = sigmoidf(g);
    store(du, dub, i, dy[i] * g * s);
    store(dg, dgb, i, dy[i] * elementValue(b[i]) * s * (1.0f + g * (1.0f - s)));
  }
}
// One thread per rotated pair (row, head, i < rot/2); the pass-through
// dimensions are copied by the threads of i >= rot/2 up to headDim - rot/2.
/// RoPE's frequencies (rt::ropeFrequencies) and cos/sin factor, passed by
/// value: 2 KiB of kernel parameters.
struct RopeTable {
  double freq[kMaxRopePairs];
  double mag;
};
__global__ void kRope(float *y, const float *x, int64_t rows, int64_t seq,
                      int64_t posOffset, int64_t heads, int64_t headDim, int64_t rot,
                      int64_t rotOffset, RopeTable table, bool inverse,
                      bool interleaved) {
  const int64_t half = rot / 2, perHead = headDim - half;
  GRID_STRIDE(t, rows * heads * perHead) {
    int64_t i = t % perHead, rh = t / perHead;
    int64_t r = rh / heads;
    int64_t head = rh * headDim, base = head + rotOffset;
    if (i < half) {
      double angle = double(posOffset + r % seq) * table.freq[i];
      float c = float(table.mag * cos(angle));
      float sn = float(table.mag * (inverse ? -sin(angle) : sin(angle)));
      // The pair's two dimensions.
      const int64_t ia = interleaved ? 2 * i : i,
                    ib = interleaved ? 2 * i + 1 : i + half;
      float a = x[base + ia], b = x[base + ib];
      y[base + ia] = a * c - b * sn;
      y[base + ib] = b * c + a * sn;
    } else {
      // The headDim - rot dimensions outside rotOffset .. rotOffset + rot.
      int64_t d = i - half;
      if (d >= rotOffset)
        d += rot;
      y[head + d] = x[head + d];
    }
  }
}
/// k[r, h, c] = c < nope ? kNope[r, h, c] : kRope[r, c - nope].
__global__ void kLatentKey(float *k, const float *kNope, const float *kRope,
                           int64_t n, int64_t heads, int64_t nope,
                           int64_t rope) {
  const int64_t hd = nope + rope;
  GRID_STRIDE(e, n * heads * hd) {
    int64_t c = e % hd, rh = e / hd, r = rh / heads;
    k[e] = c < nope ? kNope[rh * nope + c] : kRope[r * rope + c - nope];
  }
}
/// dkNope[r, h, c] = dk[r, h, c] (c < nope).
__global__ void kLatentKeyNopeBwd(float *dkNope, const float *dk, int64_t n,
                                  int64_t heads, int64_t nope, int64_t rope) {
  GRID_STRIDE(e, n * heads * nope) {
    int64_t c = e % nope, rh = e / nope;
    dkNope[e] = dk[rh * (nope + rope) + c];
  }
}
/// dkRope[r, c] = sum over h in order of dk[r, h, nope + c].
__global__ void kLatentKeyRopeBwd(float *dkRope, const float *dk, int64_t n,
                                  int64_t heads, int64_t nope, int64_t rope) {
  GRID_STRIDE(e, n * rope) {
    int64_t c = e % rope, r = e / rope;
    float acc = 0.0f;
    for (int64_t h = 0; h < heads; ++h)
      acc += dk[(r * heads + h) * (nope + rope) + nope + c];
    dkRope[e] = acc;
  }
}
/// Adam's step on element i (Runtime.h, adamUpdate), for kAdam and
/// kAdamMany alike.
__device__ inline void adamElement(float *p, const float *g, float *m,
                                   float *v, int64_t i, float lr, float b1,
                                   float b2, float eps, float wd, float bc1,
                                   float bc2) {
    m[i] = b1 * m[i] + (1.0f - b1) * g[i];
    v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
    float mhat = m[i] / bc1, vhat = v[i] / bc2;
    p[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p[i]);
}
__global__ void kAdam(float *p, const float *g, float *m, float *v, int64_t n,
                      float lr, float b1, float b2, float eps, float wd,
                      float bc1, float bc2) {
  GRID_STRIDE(i, n)
    adamElement(p, g, m, v, i, lr, b1, b2, eps, wd, bc1, bc2);
}

/// Up to kAdamTensors tensors of a multi-tensor Adam launch, passed by
/// value as the kernel's argument (kernel parameters hold 4 KB; this is
/// 2,312 bytes at 48 tensors, its sizeof on x86-64), so that the launch
/// needs no table in device memory and no host copy, which would wait for
/// the device: their arrays, sizes and the first block of the grid that
/// works on each.
constexpr int kAdamTensors = 48;
constexpr int64_t kAdamChunk = 16 * 1024; // elements a block takes
struct AdamLaunch {
  float *p[kAdamTensors];
  const float *g[kAdamTensors];
  float *m[kAdamTensors], *v[kAdamTensors];
  int64_t n[kAdamTensors], firstBlock[kAdamTensors];
  int64_t count;
};
static_assert(sizeof(AdamLaunch) <= 4096, "kernel parameters hold 4 KB");
#ifdef TRIDENT_CUDA_EMULATION
// The pointers it holds, for the emulation's check of kernel arguments.
inline std::vector<const void *> emuPointers(const AdamLaunch &a) {
  std::vector<const void *> all;
  for (int64_t t = 0; t < a.count; ++t)
    all.insert(all.end(), {a.p[t], a.g[t], a.m[t], a.v[t]});
  return all;
}
#endif

/// Adam over a.count tensors in one launch: block b finds its tensor (the
/// last whose firstBlock <= b, by bisection) and updates elements
/// [(b - firstBlock) kAdamChunk, + kAdamChunk) of it with kAdam's
/// arithmetic.
__global__ void kAdamMany(AdamLaunch a, float lr, float b1, float b2, float eps,
                          float wd, float bc1, float bc2) {
  const int64_t b = blockIdx.x;
  int64_t lo = 0, hi = a.count - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (a.firstBlock[mid] <= b)
      lo = mid;
    else
      hi = mid - 1;
  }
  float *p = a.p[lo], *m = a.m[lo], *v = a.v[lo];
  const float *g = a.g[lo];
  const int64_t begin = (b - a.firstBlock[lo]) * kAdamChunk;
  const int64_t end =
      begin + kAdamChunk < a.n[lo] ? begin + kAdamChunk : a.n[lo];
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
    adamElement(p, g, m, v, i, lr, b1, b2, eps, wd, bc1, bc2);
}

// --- embedding ------------------------------------------------------------
__global__ void kEmbed(float *out, const int32_t *tok, const float *wte,
                       const float *wpe, int64_t n, int64_t h, int64_t rows,
                       int64_t seq, int64_t posOff, int64_t vocabOff) {
  GRID_STRIDE(e, n * h) {
    int64_t i = e / h, j = e % h;
    int64_t r = tok[i] - vocabOff;
    float v = (r >= 0 && r < rows) ? wte[r * h + j] : 0.0f;
    if (wpe)
      v += wpe[(posOff + i % seq) * h + j];
    out[e] = v;
  }
}
/// One thread per (table row, column): scans the tokens in order, so the
/// accumulation order is fixed (no atomics).
/// dwte[rows[k], j] += sum of dout[order[p], j] for p in
/// [start[k], start[k+1]): one thread per (distinct table row, feature),
/// adding that row's tokens in ascending position order (deterministic,
/// O(tokens x hidden) work).
__global__ void kEmbedBwd(float *dwte, const float *dout, const int32_t *rows,
                          const int32_t *start, const int32_t *order,
                          int64_t distinct, int64_t h) {
  GRID_STRIDE(e, distinct * h) {
    int64_t k = e / h, j = e % h;
    float acc = 0.0f;
    for (int32_t p = start[k]; p < start[k + 1]; ++p)
      acc += dout[int64_t(order[p]) * h + j];
    dwte[int64_t(rows[k]) * h + j] += acc;
  }
}
__global__ void kPosBwd(float *dwpe, const float *dout, int64_t n, int64_t h,
                        int64_t seq, int64_t posOff) {
  GRID_STRIDE(e, seq * h) {
    int64_t p = e / h, j = e % h;
    float acc = 0.0f;
    for (int64_t i = p; i < n; i += seq)
      acc += dout[i * h + j];
    dwpe[(posOff + p) * h + j] += acc;
  }
}

// --- norms ----------------------------------------------------------------
// The statistics in double and 1 / sqrt in double, rounded once to float,
// as the CPU twin computes them; the outputs from the float values stored.
__global__ void kLayerNorm(float *y, float *mean, float *rstd, const float *x,
                           const float *g, const float *b, int64_t h,
                           float eps, float shift) {
  __shared__ double sh[kThreads];
  const float *row = x + blockIdx.x * h;
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    s += row[j];
  double md = blockSum(s, sh) / double(h);
  double q = 0.0;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    q += (row[j] - md) * (row[j] - md);
  float r = float(1.0 / sqrt(blockSum(q, sh) / double(h) + double(eps)));
  float m = float(md);
  if (threadIdx.x == 0)
    mean[blockIdx.x] = m, rstd[blockIdx.x] = r;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    y[blockIdx.x * h + j] = (row[j] - m) * r * (g[j] + shift) + (b ? b[j] : 0.0f);
}
__global__ void kLayerNormBwdX(float *dx, const float *dy, const float *x,
                               const float *g, const float *mean,
                               const float *rstd, int64_t h, float shift) {
  __shared__ double sh[kThreads];
  int64_t i = blockIdx.x;
  const float *row = x + i * h, *grow = dy + i * h;
  double a = 0.0, c = 0.0; // mean(dy*g), mean(dy*g*xhat), in double as on the CPU
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    float xhat = (row[j] - mean[i]) * rstd[i];
    float dyg = grow[j] * (g[j] + shift);
    a += dyg;
    c += dyg * xhat;
  }
  a = blockSum(a, sh) / double(h);
  c = blockSum(c, sh) / double(h);
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    float xhat = (row[j] - mean[i]) * rstd[i];
    dx[i * h + j] =
        float(rstd[i] * (grow[j] * (g[j] + shift) - a - xhat * c));
  }
}
__global__ void kRmsNorm(float *y, float *rstd, const float *x, const float *g,
                         int64_t h, float eps) {
  __shared__ double sh[kThreads];
  const float *row = x + blockIdx.x * h;
  double q = 0.0; // in double, as on the CPU
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    q += double(row[j]) * row[j];
  float r = float(1.0 / sqrt(blockSum(q, sh) / double(h) + double(eps)));
  if (threadIdx.x == 0)
    rstd[blockIdx.x] = r;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    y[blockIdx.x * h + j] = row[j] * r * g[j];
}
__global__ void kRmsNormBwdX(float *dx, const float *dy, const float *x,
                             const float *g, const float *rstd, int64_t h) {
  __shared__ double sh[kThreads];
  int64_t i = blockIdx.x;
  const float *row = x + i * h, *grow = dy + i * h;
  double c = 0.0; // mean(dy*g*xhat), in double as on the CPU
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    float xhat = row[j] * rstd[i];
    c += grow[j] * g[j] * xhat;
  }
  c = blockSum(c, sh) / double(h);
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    dx[i * h + j] = float(rstd[i] * (grow[j] * g[j] - row[j] * rstd[i] * c));
}
// Column sums (bias and norm-weight gradients) in two passes, so that a
// [16384, 2048] gradient is read by thousands of blocks instead of by one
// thread per column walking every row. The row blocks depend only on the
// row count, and each sum runs in a fixed order: deterministic.
constexpr int kColTile = 32;  // columns per block (x)
constexpr int kColLanes = 8;  // row lanes per block (y)
constexpr int64_t kMaxColParts = 64;

/// What row i adds to column j: dy[i,j] (x null), or for a norm's weight
/// dy[i,j] * xhat[i,j] (and dy[i,j] for its bias), xhat = (x - mean) * rstd
/// (mean null: RMSNorm).
struct ColTerms {
  const float *dy = nullptr, *x = nullptr, *mean = nullptr, *rstd = nullptr;
  /// dy's elements as bf16 bits (a DType::BF16 tensor) instead of `dy`.
  const uint16_t *dyBf16 = nullptr;
};
#ifdef TRIDENT_CUDA_EMULATION
// The pointers it holds, for the emulation's check of kernel arguments.
inline std::array<const void *, 5> emuPointers(const ColTerms &t) {
  return {t.dy, t.x, t.mean, t.rstd, t.dyBf16};
}
#endif

/// Pass 1: partA[p, j] (partB[p, j]) = the sum over the rows
/// [p * chunk, (p + 1) * chunk) of column j's terms.
__global__ void kColPartial(float *partA, float *partB, ColTerms t,
                            int64_t rows, int64_t cols, int64_t chunk) {
  __shared__ float sa[kColLanes][kColTile], sb[kColLanes][kColTile];
  const int64_t j = int64_t(blockIdx.x) * kColTile + threadIdx.x;
  const int64_t begin = int64_t(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < rows ? begin + chunk : rows;
  float a = 0.0f, b = 0.0f;
  if (j < cols)
    for (int64_t i = begin + threadIdx.y; i < end; i += kColLanes) {
      float g = t.dyBf16 ? elementValue(t.dyBf16[i * cols + j])
                         : t.dy[i * cols + j];
      if (t.x) {
        float xhat = (t.x[i * cols + j] - (t.mean ? t.mean[i] : 0.0f)) *
                     t.rstd[i];
        a += g * xhat;
        b += g;
      } else {
        a += g;
      }
    }
  sa[threadIdx.y][threadIdx.x] = a;
  sb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && j < cols) {
    float ta = 0.0f, tb = 0.0f;
    for (int y = 0; y < kColLanes; ++y) {
      ta += sa[y][threadIdx.x];
      tb += sb[y][threadIdx.x];
    }
    partA[int64_t(blockIdx.y) * cols + j] = ta;
    if (partB)
      partB[int64_t(blockIdx.y) * cols + j] = tb;
  }
}
/// Pass 2: outA[j] += the sum over p of partA[p, j], in p order (outB
/// likewise when not null).
__global__ void kColFinish(float *outA, float *outB, const float *partA,
                           const float *partB, int64_t parts, int64_t cols) {
  GRID_STRIDE(j, cols) {
    float a = 0.0f, b = 0.0f;
    for (int64_t p = 0; p < parts; ++p) {
      a += partA[p * cols + j];
      if (partB)
        b += partB[p * cols + j];
    }
    outA[j] += a;
    if (outB)
      outB[j] += b;
  }
}
/// outA[j] (+ outB[j]) += the column sums of t's terms over `rows` rows
/// of `cols` columns (kColPartial, kColFinish).
void columnSums(float *outA, float *outB, const ColTerms &t, int64_t rows,
                int64_t cols, const char *fn) {
  if (rows == 0 || cols == 0)
    return;
  const int64_t parts = std::clamp<int64_t>((rows + 255) / 256, 1,
                                            kMaxColParts);
  const int64_t chunk = (rows + parts - 1) / parts;
  Tensor partA({parts * cols}), partB;
  if (outB)
    partB = Tensor({parts * cols});
  dim3 grid(unsigned((cols + kColTile - 1) / kColTile), unsigned(parts));
  dim3 block(kColTile, kColLanes);
  TRIDENT_LAUNCH(kColPartial, grid, block, 0, stream())(
      partA.f32(), outB ? partB.f32() : nullptr, t, rows, cols, chunk);
  launched(fn);
  TRIDENT_LAUNCH(kColFinish, blocksFor(cols), kThreads, 0, stream())(
      outA, outB, partA.f32(), outB ? partB.f32() : nullptr, parts, cols);
  launched(fn);
}
__global__ void kAddBias(float *y, const float *b, int64_t n, int64_t cols) {
  GRID_STRIDE(e, n * cols) y[e] += b[e % cols];
}

// --- attention ------------------------------------------------------------
/// The keys first .. last query row i (at position off + i) sees: up to
/// its own position when causal, the last `window` of them with a window,
/// every one of the t keys otherwise (the CPU twin's lastKey / firstKey).
__device__ inline void visibleKeys(int64_t i, int64_t off, int64_t window,
                                   bool causal, int64_t t, int64_t &first,
                                   int64_t &last) {
  last = causal ? off + i : t - 1;
  first = window > 0 && last - window + 1 > 0 ? last - window + 1 : 0;
}

/// Row blockIdx.x of consecutive [s, t] score matrices (the heads of one
/// sample): row i of a matrix gets the causal mask (query i sees keys
/// 0 .. off + i, the last `window` of them when window > 0; every key when
/// not causal) and the softmax, in place.
/// sinks (nullptr: none) holds each matrix's sink logit (matrix
/// blockIdx.x / s), which joins the softmax without a value. lse (nullptr:
/// not kept) gets each row's max plus the log of its denominator.
__global__ void kMaskedSoftmax(float *p, int64_t s, int64_t t, int64_t off,
                               int64_t window, bool causal, const float *sinks,
                               float *lse) {
  __shared__ float sh[kThreads];
  float *row = p + int64_t(blockIdx.x) * t;
  const float *sink = sinks ? sinks + int64_t(blockIdx.x) / s : nullptr;
  int64_t first, last;
  visibleKeys(int64_t(blockIdx.x) % s, off, window, causal, t, first, last);
  float m = -INFINITY;
  for (int64_t j = first + threadIdx.x; j <= last; j += blockDim.x)
    m = fmaxf(m, row[j]);
  m = blockMax(m, sh);
  if (sink)
    m = fmaxf(m, *sink);
  // The sum in double and one float reciprocal, as the CPU twin.
  __shared__ double shd[kThreads];
  double z = 0.0;
  for (int64_t j = first + threadIdx.x; j <= last; j += blockDim.x)
    z += expf(row[j] - m);
  z = blockSum(z, shd);
  if (sink)
    z += exp(double(*sink) - double(m));
  if (lse && threadIdx.x == 0) // rounded once, as the CPU twin
    lse[blockIdx.x] = float(double(m) + log(z));
  const float inv = float(1.0 / z);
  for (int64_t j = threadIdx.x; j < t; j += blockDim.x)
    row[j] = (j >= first && j <= last) ? expf(row[j] - m) * inv : 0.0f;
}

/// The probabilities again from the scaled scores in p and the rows'
/// log-sum-exp (kMaskedSoftmax's lse), in place: p_ij = exp(p_ij - lse_i)
/// on the keys row i sees (kMaskedSoftmax's mask), 0 elsewhere.
__global__ void kProbsFromLse(float *p, const float *lse, int64_t s, int64_t t,
                              int64_t off, int64_t window, bool causal) {
  float *row = p + int64_t(blockIdx.x) * t;
  int64_t first, last;
  visibleKeys(int64_t(blockIdx.x) % s, off, window, causal, t, first, last);
  const float l = lse[blockIdx.x];
  for (int64_t j = threadIdx.x; j < t; j += blockDim.x)
    row[j] = (j >= first && j <= last) ? expf(row[j] - l) : 0.0f;
}

// --- fused attention forward (bf16 tensor cores) --------------------------
// Flash attention's forward (Dao et al. 2022, "FlashAttention: Fast and
// Memory-Efficient Exact Attention with IO-Awareness"; Dao 2023,
// "FlashAttention-2"): a block takes kFaRows queries of one (sample,
// head), walks the keys its rows may see in tiles of kFaKeys, and keeps
// each row's running max m, sum l and output O, rescaled when m grows
// (the online softmax); the scores never leave shared memory. The two
// products run on tensor cores through the warp matrix functions (mma.h:
// 16 x 16 x 16 bf16 tiles, fp32 accumulation): S = Q K^T per warp on its
// 16 rows, then O += P V with P the tile's exp(s - m) rounded to bf16.
// q, k and v are rounded to bf16 as they are staged (the bf16 GEMM
// modes' contract, rt::setBf16Gemms). O stays in shared memory, where the
// block's threads rescale it, since a fragment's layout over the lanes is
// unspecified. Static shared memory: 48,000 bytes at head size 128.
constexpr int kFaRows = 32; // two warps of 16 rows
constexpr int kFaKeys = 32;
constexpr int kFaThreads = 64;
constexpr int kFaHalf = kFaKeys / 2; // keys a softmax thread takes
static_assert(kFaThreads == 2 * kFaRows, "two softmax threads a row");

struct FlashDims {
  int64_t s, t, heads, group; // group: query heads per kv head
  int64_t qs, ks, vs, os;     // row strides of q, k, v, out (elements)
  int64_t off, window;
  bool causal;
  float scale;
};

/// acc += A B for one warp over `steps` slices 16 deep: slice kk of A at
/// a + kk * aStep, laid out as LayoutA with leading dimension lda, and
/// slice kk of B at b + kk * bStep, laid out as LayoutB with leading
/// dimension ldb.
template <class LayoutA, class LayoutB>
__device__ void mmaTiles(
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> &acc,
    const __nv_bfloat16 *a, int lda, int aStep, const __nv_bfloat16 *b, int ldb,
    int bStep, int steps) {
  namespace wmma = nvcuda::wmma;
  for (int kk = 0; kk < steps; ++kk) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, LayoutA> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, LayoutB> fb;
    wmma::load_matrix_sync(fa, a + kk * aStep, lda);
    wmma::load_matrix_sync(fb, b + kk * bStep, ldb);
    wmma::mma_sync(acc, fa, fb, acc);
  }
}

template <int D>
__global__ void __launch_bounds__(kFaThreads)
    kFlashForward(float *out, float *lse, const float *q, const float *k,
                  const float *v, const float *sinks, FlashDims f) {
  // The warp matrix functions take 256-bit aligned tiles.
  __shared__ __align__(32) __nv_bfloat16 sq[kFaRows * D], sk[kFaKeys * D],
      sv[kFaKeys * D], sp[kFaRows * kFaKeys];
  __shared__ __align__(32) float ss[kFaRows * kFaKeys], so[kFaRows * D];
  __shared__ float sm[kFaRows], sl[kFaRows], sa[kFaRows];
  __shared__ float pmax[kFaThreads], psum[kFaThreads];
  const int tid = int(threadIdx.x), warp = tid / 32;
  const int64_t b = blockIdx.z, h = blockIdx.y;
  const int64_t i0 = int64_t(blockIdx.x) * kFaRows, g = h / f.group;
  const float *qb = q + b * f.s * f.qs + h * D;
  const float *kb = k + b * f.t * f.ks + g * D;
  const float *vb = v + b * f.t * f.vs + g * D;
  for (int e = tid; e < kFaRows * D; e += kFaThreads) {
    const int64_t r = e / D, c = e % D;
    sq[e] = __float2bfloat16_rn(i0 + r < f.s ? qb[(i0 + r) * f.qs + c] : 0.0f);
    so[e] = 0.0f;
  }
  // A sink joins every row's softmax without a value: m starts at its
  // logit with l = 1.
  if (tid < kFaRows) {
    sm[tid] = sinks ? sinks[h] : -INFINITY;
    sl[tid] = sinks ? 1.0f : 0.0f;
  }
  // The keys the block's rows see: from the first row's first (a window)
  // to the last row's last (causal), in whole tiles.
  const int64_t iEnd = i0 + kFaRows < f.s ? i0 + kFaRows : f.s;
  int64_t keyEnd = f.causal ? f.off + iEnd : f.t;
  keyEnd = keyEnd < f.t ? keyEnd : f.t;
  int64_t keyBegin = 0;
  if (f.window > 0 && f.off + i0 - f.window + 1 > 0)
    keyBegin = (f.off + i0 - f.window + 1) / kFaKeys * kFaKeys;
  for (int64_t j0 = keyBegin; j0 < keyEnd; j0 += kFaKeys) {
    __syncthreads(); // the last tile's products are done with sk, sv, sp
    for (int e = tid; e < kFaKeys * D; e += kFaThreads) {
      const int64_t r = e / D, c = e % D;
      const bool in = j0 + r < f.t;
      sk[e] = __float2bfloat16_rn(in ? kb[(j0 + r) * f.ks + c] : 0.0f);
      sv[e] = __float2bfloat16_rn(in ? vb[(j0 + r) * f.vs + c] : 0.0f);
    }
    __syncthreads();
    // S = Q K^T for the warp's 16 rows (K's rows are K^T's columns).
    for (int n = 0; n < kFaKeys / 16; ++n) {
      nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
      nvcuda::wmma::fill_fragment(acc, 0.0f);
      mmaTiles<nvcuda::wmma::row_major, nvcuda::wmma::col_major>(
          acc, sq + warp * 16 * D, D, 16, sk + n * 16 * D, D, 16, D / 16);
      nvcuda::wmma::store_matrix_sync(ss + warp * 16 * kFaKeys + n * 16, acc,
                                      kFaKeys, nvcuda::wmma::mem_row_major);
    }
    __syncthreads();
    // The online softmax, two threads a row (16 keys each): the row's new
    // max m, each half's probabilities exp(s - m) (unnormalised, rounded
    // to bf16 for the product) and partial sum, then the row's sum and
    // the rescale factor exp(m_old - m), and every thread rescales part
    // of the output.
    const int r = tid / 2, half = tid % 2;
    const int64_t i = i0 + r;
    int64_t first, last;
    visibleKeys(i, f.off, f.window, f.causal, f.t, first, last);
    float *row = ss + r * kFaKeys + half * kFaHalf;
    float mx = -INFINITY;
    for (int j = 0; j < kFaHalf; ++j) {
      const int64_t key = j0 + half * kFaHalf + j;
      const bool seen = i < f.s && key >= first && key <= last && key < f.t;
      row[j] = seen ? row[j] * f.scale : -INFINITY;
      mx = fmaxf(mx, row[j]);
    }
    pmax[tid] = mx;
    __syncthreads();
    mx = fmaxf(sm[r], fmaxf(pmax[2 * r], pmax[2 * r + 1]));
    const bool none = mx == -INFINITY; // no key seen yet
    float sum = 0.0f;
    for (int j = 0; j < kFaHalf; ++j) {
      const float p = none || row[j] == -INFINITY ? 0.0f : expf(row[j] - mx);
      sum += p;
      sp[r * kFaKeys + half * kFaHalf + j] = __float2bfloat16_rn(p);
    }
    psum[tid] = sum;
    __syncthreads();
    if (half == 0) {
      const float alpha = none ? 1.0f : expf(sm[r] - mx);
      sl[r] = sl[r] * alpha + (psum[2 * r] + psum[2 * r + 1]);
      sm[r] = mx;
      sa[r] = alpha;
    }
    __syncthreads();
    for (int e = tid; e < kFaRows * D; e += kFaThreads)
      so[e] *= sa[e / D];
    __syncthreads();
    // O += P V for the warp's 16 rows.
    for (int n = 0; n < D / 16; ++n) {
      nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
      nvcuda::wmma::load_matrix_sync(acc, so + warp * 16 * D + n * 16, D,
                                     nvcuda::wmma::mem_row_major);
      mmaTiles<nvcuda::wmma::row_major, nvcuda::wmma::row_major>(
          acc, sp + warp * 16 * kFaKeys, kFaKeys, 16, sv + n * 16, D, 16 * D,
          kFaKeys / 16);
      nvcuda::wmma::store_matrix_sync(so + warp * 16 * D + n * 16, acc, D,
                                      nvcuda::wmma::mem_row_major);
    }
  }
  __syncthreads();
  // out = O / l; lse = m + log(l) (rounded once).
  for (int e = tid; e < kFaRows * D; e += kFaThreads) {
    const int64_t r = e / D, c = e % D;
    if (i0 + r < f.s)
      out[(b * f.s + i0 + r) * f.os + h * D + c] = so[e] / sl[r];
  }
  if (tid < kFaRows && i0 + tid < f.s)
    lse[(b * f.heads + h) * f.s + i0 + tid] =
        float(double(sm[tid]) + log(double(sl[tid])));
}

// --- fused attention backward (bf16 tensor cores) ------------------------
// Flash attention's backward (Dao 2023, "FlashAttention-2", algorithm 2)
// in two passes, so that every gradient element is summed by one block in
// a fixed order (no atomic sums: the same bits on every run):
// - kFlashBwdKeys: a block takes kFbTile keys of one (sample, kv head) and
//   walks the query tiles that see them, of every query head that reads
//   the kv head, summing dV += P^T dO and dK += dS^T Q;
// - kFlashBwdQueries: a block takes kFbTile queries of one (sample, head)
//   and walks the key tiles they see, summing dQ += dS K.
// Both form P = exp(scale Q K^T - lse) again from the forward's rows'
// log-sum-exp, dP = dO V^T, and dS = P (dP - delta) with delta_i =
// dO_i . O_i (kFlashBwdRowDots), so nothing of size seq x keys is stored.
// The second pass forms S and dP again: 7 tile products a tile pair in
// all, against 5 for one pass that sums dQ atomically (the price of
// determinism). The products run on tensor cores (mma.h) with P and dS
// rounded to bf16 and fp32 sums in shared memory; one warp a block, so a
// block's static shared memory stays under 48 KB at head size 128.
constexpr int kFbTile = 16;
constexpr int kFbThreads = 32;

/// delta_r = dO_r . O_r (in double, rounded once) for the rows r of lse's
/// layout [batch, heads, s], block r taking row r: sum_j p_j dp_j, as
/// O_r = sum_j p_j v_j. O in fp32 or bf16 (T = float or uint16_t).
template <typename T>
__global__ void kFlashBwdRowDots(float *delta, const float *dout, const T *out,
                                 int64_t s, int64_t heads, int64_t D,
                                 int64_t os) {
  __shared__ double sh[kThreads];
  const int64_t r = blockIdx.x, i = r % s, h = (r / s) % heads,
                b = r / (s * heads);
  const float *dorow = dout + (b * s + i) * os + h * D;
  const T *orow = out + (b * s + i) * os + h * D;
  double dot = 0.0;
  for (int64_t c = threadIdx.x; c < D; c += blockDim.x)
    dot += double(dorow[c]) * elementValue(orow[c]);
  dot = blockSum(dot, sh);
  if (threadIdx.x == 0)
    delta[r] = float(dot);
}

/// Rows row0 .. row0 + kFbTile - 1 of x (rows ld elements apart; n rows)
/// into dst [kFbTile, D], rounded to bf16; rows past n as 0.
template <int D>
__device__ void stageRowsBf16(__nv_bfloat16 *dst, const float *x, int64_t row0,
                              int64_t n, int64_t ld) {
  for (int e = threadIdx.x; e < kFbTile * D; e += blockDim.x) {
    const int64_t r = e / D, c = e % D;
    dst[e] = __float2bfloat16_rn(row0 + r < n ? x[(row0 + r) * ld + c] : 0.0f);
  }
}

/// The tile pair's probabilities and score gradients from its scores ss
/// and dP sdp ([kFbTile, kFbTile], queries i0 .., keys j0 ..): p =
/// exp(scale s - lse) where the query sees the key, else 0, into ss (fp32)
/// and sp (bf16; nullptr: not kept), and ds = p (dp - delta) into sds
/// (bf16).
__device__ void flashBwdTile(__nv_bfloat16 *sp, __nv_bfloat16 *sds, float *ss,
                             const float *sdp, const float *slse,
                             const float *sdelta, int64_t i0, int64_t j0,
                             const FlashDims &f) {
  for (int e = threadIdx.x; e < kFbTile * kFbTile; e += blockDim.x) {
    const int r = e / kFbTile;
    const int64_t i = i0 + r, key = j0 + e % kFbTile;
    int64_t first, last;
    visibleKeys(i, f.off, f.window, f.causal, f.t, first, last);
    const bool seen = i < f.s && key < f.t && key >= first && key <= last;
    const float p = seen ? expf(ss[e] * f.scale - slse[r]) : 0.0f;
    ss[e] = p;
    if (sp)
      sp[e] = __float2bfloat16_rn(p);
    sds[e] = __float2bfloat16_rn(p * (sdp[e] - sdelta[r]));
  }
}

/// acc = A B^T for [kFbTile, D] tiles A and B (row-major, bf16): the
/// scores S = Q K^T or dP = dO V^T of a tile pair, into dst [kFbTile,
/// kFbTile].
template <int D>
__device__ void tileProductT(float *dst, const __nv_bfloat16 *a,
                             const __nv_bfloat16 *b) {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
  nvcuda::wmma::fill_fragment(acc, 0.0f);
  mmaTiles<nvcuda::wmma::row_major, nvcuda::wmma::col_major>(acc, a, D, 16, b,
                                                             D, 16, D / 16);
  nvcuda::wmma::store_matrix_sync(dst, acc, kFbTile,
                                  nvcuda::wmma::mem_row_major);
}

/// sum [kFbTile, D] (fp32, shared) += A B for A [kFbTile, kFbTile] laid out
/// as LayoutA (col_major: A is the transpose of the row-major tile) and B
/// [kFbTile, D] row-major, bf16.
template <int D, class LayoutA>
__device__ void tileAccumulate(float *sum, const __nv_bfloat16 *a,
                               const __nv_bfloat16 *b) {
  constexpr bool colA = std::is_same_v<LayoutA, nvcuda::wmma::col_major>;
  for (int n = 0; n < D / 16; ++n) {
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;
    nvcuda::wmma::load_matrix_sync(acc, sum + n * 16, D,
                                   nvcuda::wmma::mem_row_major);
    mmaTiles<LayoutA, nvcuda::wmma::row_major>(
        acc, a, kFbTile, colA ? 16 * kFbTile : 16, b + n * 16, D, 16 * D,
        kFbTile / 16);
    nvcuda::wmma::store_matrix_sync(sum + n * 16, acc, D,
                                    nvcuda::wmma::mem_row_major);
  }
}

/// The lse and delta of query rows i0 .. i0 + kFbTile - 1 of the (sample,
/// head) whose rows start at `rows` (rows past s: 0).
__device__ void stageRowStats(float *slse, float *sdelta, const float *lse,
                              const float *delta, int64_t rows, int64_t i0,
                              int64_t s) {
  const int r = int(threadIdx.x);
  if (r < kFbTile) {
    const bool in = i0 + r < s;
    slse[r] = in ? lse[rows + i0 + r] : 0.0f;
    sdelta[r] = in ? delta[rows + i0 + r] : 0.0f;
  }
}

/// A tile pair's P and dS (flashBwdTile) from its staged Q, K, dO and V
/// tiles, after S = Q K^T and dP = dO V^T on tensor cores; ends at a
/// barrier, ss holding P.
template <int D>
__device__ void flashBwdPair(__nv_bfloat16 *sp, __nv_bfloat16 *sds, float *ss,
                             float *sdp, const __nv_bfloat16 *sq,
                             const __nv_bfloat16 *sk, const __nv_bfloat16 *sdo,
                             const __nv_bfloat16 *sv, const float *slse,
                             const float *sdelta, int64_t i0, int64_t j0,
                             const FlashDims &f) {
  tileProductT<D>(ss, sq, sk);
  tileProductT<D>(sdp, sdo, sv);
  __syncthreads();
  flashBwdTile(sp, sds, ss, sdp, slse, sdelta, i0, j0, f);
  __syncthreads();
}

template <int D>
__global__ void __launch_bounds__(kFbThreads)
    kFlashBwdQueries(float *dq, float *sinkRows, const float *q, const float *k,
                     const float *v, const float *dout, const float *lse,
                     const float *delta, FlashDims f) {
  __shared__ __align__(32) __nv_bfloat16 sq[kFbTile * D], sdo[kFbTile * D],
      sk[kFbTile * D], sv[kFbTile * D], sds[kFbTile * kFbTile];
  __shared__ __align__(32) float ss[kFbTile * kFbTile], sdp[kFbTile * kFbTile],
      sdq[kFbTile * D];
  __shared__ float slse[kFbTile], sdelta[kFbTile];
  __shared__ double skept[kFbTile]; // each row's sum of probabilities
  const int tid = int(threadIdx.x);
  const int64_t b = blockIdx.z, h = blockIdx.y, g = h / f.group;
  const int64_t i0 = int64_t(blockIdx.x) * kFbTile;
  const int64_t rows = (b * f.heads + h) * f.s; // lse's and delta's
  stageRowsBf16<D>(sq, q + b * f.s * f.qs + h * D, i0, f.s, f.qs);
  stageRowsBf16<D>(sdo, dout + b * f.s * f.os + h * D, i0, f.s, f.os);
  for (int e = tid; e < kFbTile * D; e += kFbThreads)
    sdq[e] = 0.0f;
  stageRowStats(slse, sdelta, lse, delta, rows, i0, f.s);
  if (tid < kFbTile)
    skept[tid] = 0.0;
  // The keys the tile's queries see, in whole tiles (as the forward).
  const int64_t iEnd = i0 + kFbTile < f.s ? i0 + kFbTile : f.s;
  int64_t keyEnd = f.causal ? f.off + iEnd : f.t;
  keyEnd = keyEnd < f.t ? keyEnd : f.t;
  int64_t keyBegin = 0;
  if (f.window > 0 && f.off + i0 - f.window + 1 > 0)
    keyBegin = (f.off + i0 - f.window + 1) / kFbTile * kFbTile;
  const float *kb = k + b * f.t * f.ks + g * D;
  const float *vb = v + b * f.t * f.vs + g * D;
  for (int64_t j0 = keyBegin; j0 < keyEnd; j0 += kFbTile) {
    __syncthreads(); // the last tile's products are done with sk
    stageRowsBf16<D>(sk, kb, j0, f.t, f.ks);
    stageRowsBf16<D>(sv, vb, j0, f.t, f.vs);
    __syncthreads();
    flashBwdPair<D>(nullptr, sds, ss, sdp, sq, sk, sdo, sv, slse, sdelta, i0,
                    j0, f);
    if (sinkRows && tid < kFbTile)
      for (int c = 0; c < kFbTile; ++c)
        skept[tid] += ss[tid * kFbTile + c];
    tileAccumulate<D, nvcuda::wmma::row_major>(sdq, sds, sk); // dQ += dS K
  }
  __syncthreads();
  // With sinks, each row's -p_sink delta with p_sink = 1 - sum_j p_j
  // (kSoftmaxBwd's sink row).
  if (sinkRows && tid < kFbTile && i0 + tid < f.s)
    sinkRows[rows + i0 + tid] = float(-(1.0 - skept[tid]) * sdelta[tid]);
  for (int e = tid; e < kFbTile * D; e += kFbThreads) {
    const int64_t r = e / D, c = e % D;
    if (i0 + r < f.s)
      dq[(b * f.s + i0 + r) * f.qs + h * D + c] = sdq[e] * f.scale;
  }
}

template <int D>
__global__ void __launch_bounds__(kFbThreads)
    kFlashBwdKeys(float *dk, float *dv, const float *q, const float *k,
                  const float *v, const float *dout, const float *lse,
                  const float *delta, FlashDims f) {
  __shared__ __align__(32) __nv_bfloat16 sk[kFbTile * D], sv[kFbTile * D],
      sq[kFbTile * D], sdo[kFbTile * D], sp[kFbTile * kFbTile],
      sds[kFbTile * kFbTile];
  __shared__ __align__(32) float ss[kFbTile * kFbTile], sdp[kFbTile * kFbTile],
      sdk[kFbTile * D], sdv[kFbTile * D];
  __shared__ float slse[kFbTile], sdelta[kFbTile];
  const int tid = int(threadIdx.x);
  const int64_t b = blockIdx.z, g = blockIdx.y;
  const int64_t j0 = int64_t(blockIdx.x) * kFbTile;
  stageRowsBf16<D>(sk, k + b * f.t * f.ks + g * D, j0, f.t, f.ks);
  stageRowsBf16<D>(sv, v + b * f.t * f.vs + g * D, j0, f.t, f.vs);
  for (int e = tid; e < kFbTile * D; e += kFbThreads)
    sdk[e] = sdv[e] = 0.0f;
  // The queries that see a key of the tile: causal, from the first whose
  // own position off + i reaches j0; with a window, up to the last whose
  // first key off + i - window + 1 is still in the tile.
  int64_t qBegin = 0, qEnd = f.s;
  if (f.causal && j0 - f.off > 0)
    qBegin = j0 - f.off;
  if (f.causal && f.window > 0) {
    const int64_t lastKey = (j0 + kFbTile < f.t ? j0 + kFbTile : f.t) - 1;
    const int64_t end = lastKey + f.window - f.off;
    qEnd = end < qEnd ? (end > 0 ? end : 0) : qEnd;
  }
  for (int64_t hh = 0; hh < f.group; ++hh) {
    const int64_t h = g * f.group + hh, rows = (b * f.heads + h) * f.s;
    const float *qb = q + b * f.s * f.qs + h * D;
    const float *dob = dout + b * f.s * f.os + h * D;
    for (int64_t i0 = qBegin; i0 < qEnd; i0 += kFbTile) {
      __syncthreads(); // the last tile's products are done with sq, sdo
      stageRowsBf16<D>(sq, qb, i0, f.s, f.qs);
      stageRowsBf16<D>(sdo, dob, i0, f.s, f.os);
      stageRowStats(slse, sdelta, lse, delta, rows, i0, f.s);
      __syncthreads();
      flashBwdPair<D>(sp, sds, ss, sdp, sq, sk, sdo, sv, slse, sdelta, i0, j0,
                      f);
      // dV += P^T dO, dK += dS^T Q.
      tileAccumulate<D, nvcuda::wmma::col_major>(sdv, sp, sdo);
      tileAccumulate<D, nvcuda::wmma::col_major>(sdk, sds, sq);
    }
  }
  __syncthreads();
  for (int e = tid; e < kFbTile * D; e += kFbThreads) {
    const int64_t r = e / D, c = e % D;
    if (j0 + r < f.t) {
      dk[(b * f.t + j0 + r) * f.ks + g * D + c] = sdk[e] * f.scale;
      dv[(b * f.t + j0 + r) * f.vs + g * D + c] = sdv[e];
    }
  }
}

// --- dropout --------------------------------------------------------------
/// y = x * keep / (1 - rate) for x seen as [rows, seq, f]: element (r, j,
/// c) has global index ((first + r) * S + pos + j) * F + feat + c (the
/// formula of Runtime.h's DropoutSite). y may alias x.
__global__ void kDropout(float *y, const float *x, int64_t n, int64_t seq,
                         int64_t f, uint64_t key, uint32_t threshold,
                         float keepScale, int64_t first, int64_t S,
                         int64_t pos, int64_t F, int64_t feat) {
  GRID_STRIDE(e, n) {
    int64_t c = e % f, row = e / f, j = row % seq, r = row / seq;
    uint64_t index = uint64_t(((first + r) * S + pos + j) * F + feat + c);
    y[e] = hash::dropoutKeep(key, index, threshold) ? x[e] * keepScale : 0.0f;
  }
}

/// The attention dropout mask of (batch b, local head h) on an [s, t]
/// probability matrix: kDropout with the sample index replaced by the
/// (sample, head) row of DropoutSite's attention formula.
void probDropout(float *dst, const float *src, int64_t b, int64_t h,
                 const AttentionDims &d, const char *fn) {
  const DropoutSite &site = d.dropout;
  const int64_t s = d.seq, t = d.keys();
  TRIDENT_LAUNCH(kDropout, blocksFor(s * t), kThreads, 0, stream())(
      dst, src, s * t, s, t,
      hash::dropoutKey(site.seed, site.step, site.site),
      hash::dropoutThreshold(site.rate),
      float(1.0 / (1.0 - double(site.rate))),
      (site.firstSample + b) * site.features + site.firstFeature + h,
      site.seqLen, site.firstPos, t, 0);
  launched(fn);
}
/// dS = P o (dP - rowsum(dP o P)) * scale, in place in dp (rows of t).
/// sinkRow (nullptr: no sinks) gets each row's sink gradient -p_sink * dot,
/// p_sink = 1 - rowsum(P).
__global__ void kSoftmaxBwd(float *dp, const float *p, int64_t t, float sc,
                            float *sinkRow) {
  // The row sums in double, as the CPU twin (masked entries have P = 0).
  __shared__ double sh[kThreads];
  float *row = dp + int64_t(blockIdx.x) * t;
  const float *prow = p + int64_t(blockIdx.x) * t;
  double dot = 0.0;
  for (int64_t j = threadIdx.x; j < t; j += blockDim.x)
    dot += double(row[j]) * prow[j];
  dot = blockSum(dot, sh);
  if (sinkRow) {
    double kept = 0.0;
    for (int64_t j = threadIdx.x; j < t; j += blockDim.x)
      kept += prow[j];
    kept = blockSum(kept, sh);
    if (threadIdx.x == 0)
      sinkRow[blockIdx.x] = float(-(1.0 - kept) * dot);
  }
  const float d = float(dot);
  for (int64_t j = threadIdx.x; j < t; j += blockDim.x)
    row[j] = prow[j] * (row[j] - d) * sc;
}

/// acc[i] += the sum of x[i n .. (i + 1) n), block i (a fixed tree:
/// deterministic).
__global__ void kAccumulateSums(float *acc, const float *x, int64_t n) {
  __shared__ float sh[kThreads];
  const float *xi = x + int64_t(blockIdx.x) * n;
  float v = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    v += xi[j];
  v = blockSum(v, sh);
  if (threadIdx.x == 0)
    acc[blockIdx.x] += v;
}

// --- cross-entropy --------------------------------------------------------
/// Row maxima over the first `valid` of V columns (the rest: vocabulary
/// padding).
__global__ void kRowMax(float *mx, const float *L, int64_t V, int64_t valid) {
  __shared__ float sh[kThreads];
  const float *row = L + blockIdx.x * V;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < valid; j += blockDim.x)
    m = fmaxf(m, row[j]);
  m = blockMax(m, sh);
  if (threadIdx.x == 0)
    mx[blockIdx.x] = m;
}
/// z[i] = sum exp(L - mx), tl[i] = logit of the target if in this shard
/// (first `valid` columns only).
__global__ void kSumExp(float *z, float *tl, const float *L, const float *mx,
                        const int32_t *t, int64_t V, int64_t valid,
                        int64_t vocabOff) {
  __shared__ double sh[kThreads];
  int64_t i = blockIdx.x;
  const float *row = L + i * V;
  double s = 0.0; // in double, rounded once, as on the CPU
  for (int64_t j = threadIdx.x; j < valid; j += blockDim.x)
    s += exp(double(row[j]) - mx[i]);
  s = blockSum(s, sh);
  if (threadIdx.x == 0) {
    z[i] = float(s);
    int64_t c = t[i] - vocabOff;
    tl[i] = (c >= 0 && c < valid) ? row[c] : 0.0f;
  }
}
/// lse = mx + log z per row; loss += sum_i (lse - tl), in double: each
/// thread of the one block adds its rows (stride blockDim), then a fixed
/// tree adds the threads' sums (deterministic).
__global__ void kCeFinish(float *lossSum, float *lse, const float *mx,
                          const float *z, const float *tl, int64_t n) {
  // Double, as the CPU reference: the sum over rows must not depend on how
  // a plan splits them beyond rounding of the final value.
  __shared__ double sh[kThreads];
  double total = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    double l = double(mx[i]) + log(double(z[i]));
    lse[i] = float(l);
    total += l - double(tl[i]);
  }
  total = blockSum(total, sh);
  if (threadIdx.x == 0)
    lossSum[0] += float(total);
}
__global__ void kCeBwd(float *D, const float *L, const int32_t *t,
                       const float *lse, int64_t n, int64_t V, int64_t valid,
                       int64_t vocabOff, float scale) {
  GRID_STRIDE(e, n * V) {
    int64_t i = e / V, j = e % V;
    float p = j < valid ? expf(L[e] - lse[i]) : 0.0f;
    D[e] = scale * (p - (j == t[i] - vocabOff ? 1.0f : 0.0f));
  }
}

// --- recommendation (DLRM) ----------------------------------------------
/// out[i, c] = s * sum_j x[(i * bag + j) * d + c].
__global__ void kBagPool(float *out, const float *x, int64_t n, int64_t bag,
                         int64_t d, float s) {
  GRID_STRIDE(e, n * d) {
    int64_t i = e / d, c = e % d;
    float acc = 0.0f;
    for (int64_t j = 0; j < bag; ++j)
      acc += x[(i * bag + j) * d + c];
    out[e] = acc * s;
  }
}
/// dx[(i * bag + j) * d + c] = s * dout[i, c].
__global__ void kBagPoolBwd(float *dx, const float *dout, int64_t n,
                            int64_t bag, int64_t d, float s) {
  GRID_STRIDE(e, n * bag * d) {
    int64_t i = e / (bag * d), c = e % d;
    dx[e] = dout[i * d + c] * s;
  }
}
/// T [n, F, d] (the features stacked): out[i, :d] = T[i, 0], out[i, d + p]
/// = <T[i, a], T[i, b]> for pair p = a(a-1)/2 + b, a > b.
__global__ void kDotInteract(float *out, const float *T, int64_t n, int64_t F,
                             int64_t d) {
  const int64_t pairs = F * (F - 1) / 2, w = d + pairs;
  GRID_STRIDE(e, n * w) {
    int64_t i = e / w, col = e % w;
    const float *row = T + i * F * d;
    if (col < d) {
      out[e] = row[col];
      continue;
    }
    int64_t p = col - d, a = 1;
    while ((a + 1) * a / 2 <= p)
      ++a;
    int64_t b = p - a * (a - 1) / 2;
    float dot = 0.0f;
    for (int64_t c = 0; c < d; ++c)
      dot += row[a * d + c] * row[b * d + c];
    out[e] = dot;
  }
}
/// dT[i, a, c] = sum over b != a of dout[i, d + pair(a, b)] T[i, b, c]
/// (plus dout[i, c] for a = 0), b in increasing order.
__global__ void kDotInteractBwd(float *dT, const float *dout, const float *T,
                                int64_t n, int64_t F, int64_t d) {
  const int64_t w = d + F * (F - 1) / 2;
  GRID_STRIDE(e, n * F * d) {
    int64_t i = e / (F * d), a = (e / d) % F, c = e % d;
    const float *g = dout + i * w;
    float acc = a == 0 ? g[c] : 0.0f;
    for (int64_t b = 0; b < F; ++b) {
      if (b == a)
        continue;
      int64_t hi = a > b ? a : b, lo = a > b ? b : a;
      acc += g[d + hi * (hi - 1) / 2 + lo] * T[(i * F + b) * d + c];
    }
    dT[e] = acc;
  }
}
/// lossSum[0] += sum_i max(z, 0) - z y + log(1 + exp(-|z|)) in double (one
/// block, a fixed tree: deterministic).
__global__ void kBce(float *lossSum, const float *z, const int32_t *y,
                     int64_t n) {
  __shared__ double sh[kThreads];
  double total = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    double zd = z[i];
    total += fmax(zd, 0.0) - zd * double(y[i]) + log1p(exp(-fabs(zd)));
  }
  total = blockSum(total, sh);
  if (threadIdx.x == 0)
    lossSum[0] += float(total);
}
__global__ void kBceBwd(float *dz, const float *z, const int32_t *y, int64_t n,
                        float scale) {
  GRID_STRIDE(i, n) dz[i] = scale * (sigmoidf(z[i]) - float(y[i]));
}

/// The one-block-per-row kernels launch n blocks: the grid's x limit.
void rowGrid(int64_t n, const char *fn) {
  check(n < (int64_t(1) << 31), fn, "more than 2^31 - 1 rows");
}

/// A GEMM operand: fp32 elements, or the bits of a bf16 tensor's
/// (DType::BF16, rt::toBf16).
struct GemmIn {
  GemmIn(const float *p) : f32(p) {}
  explicit GemmIn(const Tensor &t)
      : f32(t.dtype() == DType::BF16 ? nullptr : t.f32()),
        bf16(t.dtype() == DType::BF16 ? t.bf16() : nullptr) {}
  const float *f32 = nullptr;
  const uint16_t *bf16 = nullptr;
};

/// A GEMM operand in the element type a product reads, from the elements
/// of `in` to the last one the product reads (`extent` of them): a bf16
/// operand as it is, or copied by a kernel into a block of the
/// stream-ordered pool (freed in stream order when this goes): an fp32
/// one rounded to bf16 (rt::setBf16Gemms), a bf16 one widened to fp32
/// (an fp32 or TF32 product).
class GemmOperand {
public:
  GemmOperand(GemmIn in, bool asBf16, int64_t extent, const char *fn) {
    if (asBf16 && in.bf16) {
      bf16_ = in.bf16;
      return;
    }
    if (!asBf16 && in.f32) {
      f32_ = in.f32;
      return;
    }
    const size_t bytes = (asBf16 ? 2 : 4) * size_t(extent);
    cuda::check(cudaMallocAsync(&owned_, bytes, stream()), fn);
    if (asBf16) {
      bf16_ = static_cast<uint16_t *>(owned_);
      TRIDENT_LAUNCH(kBf16Bits, blocksFor(extent), kThreads, 0, stream())(
          static_cast<uint16_t *>(owned_), in.f32, extent);
    } else {
      f32_ = static_cast<float *>(owned_);
      TRIDENT_LAUNCH(kBf16Widen, blocksFor(extent), kThreads, 0, stream())(
          static_cast<float *>(owned_), in.bf16, extent);
    }
    launched(fn);
  }
  GemmOperand(const GemmOperand &) = delete;
  GemmOperand &operator=(const GemmOperand &) = delete;
  ~GemmOperand() {
    if (owned_)
      cudaFreeAsync(owned_, stream());
  }
  const uint16_t *bf16() const { return bf16_; }
  const float *f32() const { return f32_; }

private:
  void *owned_ = nullptr;
  const uint16_t *bf16_ = nullptr;
  const float *f32_ = nullptr;
};

/// The elements a row-major operand of `rows` x `cols` (leading dimension
/// ld), repeated `batch` times `stride` apart, reaches from its first.
int64_t operandExtent(int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                      int64_t stride, const char *fn) {
  check(stride >= 0, fn, "a negative batch stride");
  return (batch - 1) * stride + (rows - 1) * ld + cols;
}

/// gemmRowMajorBatched's products of A and B, each as a GemmOperand: on
/// bf16 tensor cores (cublasGemmEx, its strided batched form for more
/// than one; fp32 C and accumulation) where `asBf16`, else in fp32
/// (cublasSgemm, TF32 after rt::setTf32Gemms). Sizes are checked by the
/// caller.
void gemmOperands(bool asBf16, bool transA, bool transB, int64_t m, int64_t n,
                  int64_t k, float alpha, GemmIn A, int64_t lda,
                  int64_t strideA, GemmIn B, int64_t ldb, int64_t strideB,
                  float beta, float *C, int64_t ldc, int64_t strideC,
                  int64_t batch, const char *fn) {
  GemmOperand a(
      A, asBf16,
      operandExtent(transA ? k : m, transA ? m : k, lda, batch, strideA, fn),
      fn);
  GemmOperand b(
      B, asBf16,
      operandExtent(transB ? n : k, transB ? k : n, ldb, batch, strideB, fn),
      fn);
  // C^T = op(B)^T op(A)^T in column-major terms.
  const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                          opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasHandle_t h = cuda::state().cublas;
  if (!asBf16) {
    cuda::check(
        batch == 1
            ? cublasSgemm(h, opB, opA, int(n), int(m), int(k), &alpha, b.f32(),
                          int(ldb), a.f32(), int(lda), &beta, C, int(ldc))
            : cublasSgemmStridedBatched(
                  h, opB, opA, int(n), int(m), int(k), &alpha, b.f32(),
                  int(ldb), (long long)strideB, a.f32(), int(lda),
                  (long long)strideA, &beta, C, int(ldc), (long long)strideC,
                  int(batch)),
        fn);
    return;
  }
  cuda::check(batch == 1
                  ? cublasGemmEx(h, opB, opA, int(n), int(m), int(k), &alpha,
                                 b.bf16(), CUDA_R_16BF, int(ldb), a.bf16(),
                                 CUDA_R_16BF, int(lda), &beta, C, CUDA_R_32F,
                                 int(ldc), CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT)
                  : cublasGemmStridedBatchedEx(
                        h, opB, opA, int(n), int(m), int(k), &alpha, b.bf16(),
                        CUDA_R_16BF, int(ldb), (long long)strideB, a.bf16(),
                        CUDA_R_16BF, int(lda), (long long)strideA, &beta, C,
                        CUDA_R_32F, int(ldc), (long long)strideC, int(batch),
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              fn);
}

/// Row-major C[m,n] = alpha * op(A) op(B) + beta * C through cuBLAS (which
/// sees every row-major matrix as its column-major transpose).
void gemmRowMajor(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                  float alpha, GemmIn A, int64_t lda, GemmIn B, int64_t ldb,
                  float beta, float *C, int64_t ldc, const char *fn) {
  // Empty products as the CPU backend computes them: cuBLAS refuses
  // leading dimensions of 0.
  if (m == 0 || n == 0)
    return;
  // cuBLAS takes int sizes: a larger one would wrap silently.
  constexpr int64_t kIntMax = (int64_t(1) << 31) - 1;
  check(m <= kIntMax && n <= kIntMax && k <= kIntMax && lda <= kIntMax &&
            ldb <= kIntMax && ldc <= kIntMax,
        fn, "a matrix dimension exceeds cuBLAS's 2^31 - 1");
  if (k == 0) { // C = beta C
    if (beta == 0.0f)
      cuda::check(cudaMemset2DAsync(C, sizeof(float) * size_t(ldc), 0,
                                    sizeof(float) * size_t(n), size_t(m),
                                    stream()),
                  fn);
    else if (beta != 1.0f) // row by row, as the CPU backend scales C
      for (int64_t i = 0; i < m; ++i)
        cuda::check(cublasSscal(cuda::state().cublas, int(n), &beta,
                                C + i * ldc, 1),
                    fn);
    return;
  }
  gemmOperands(cuda::bf16Gemm(m, n, k, A.bf16 != nullptr, B.bf16 != nullptr),
               transA, transB, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C,
               ldc, 0, 1, fn);
}

/// gemmRowMajor over `batch` products: product i reads A + i * strideA and
/// B + i * strideB and writes C + i * strideC (cublasSgemmStridedBatched,
/// one launch).
void gemmRowMajorBatched(bool transA, bool transB, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *A, int64_t lda,
                         int64_t strideA, const float *B, int64_t ldb,
                         int64_t strideB, float beta, float *C, int64_t ldc,
                         int64_t strideC, int64_t batch, const char *fn) {
  if (batch == 1 || m == 0 || n == 0 || k == 0) {
    for (int64_t i = 0; i < batch; ++i)
      gemmRowMajor(transA, transB, m, n, k, alpha, A + i * strideA, lda,
                   B + i * strideB, ldb, beta, C + i * strideC, ldc, fn);
    return;
  }
  check(batch < (int64_t(1) << 31), fn, "more than 2^31 batched products");
  gemmOperands(cuda::bf16Gemm(m, n, k, false, false), transA, transB, m, n, k,
               alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
               batch, fn);
}
} // namespace

//===----------------------------------------------------------------------===//
// Public kernels
//===----------------------------------------------------------------------===//

void zero(Tensor &t) {
  if (t.numel())
    cuda::check(cudaMemsetAsync(t.f32(), 0, 4 * t.numel(), stream()), "zero");
}

void copy(Tensor &dst, const Tensor &src) {
  sameNumel(dst, src, "copy");
  // Overlapping views go through a temporary there.
  detail::copyOnBackend(dst.f32(), src.f32(), 4 * size_t(dst.numel()));
}

void scale(Tensor &t, float alpha) {
  if (!t.numel())
    return;
  TRIDENT_LAUNCH(kScale, blocksFor(t.numel()), kThreads, 0, stream())(t.f32(), alpha,
                                                           t.numel());
  launched("scale");
}

void axpy(Tensor &y, const Tensor &x, float alpha) {
  sameNumel(y, x, "axpy");
  if (!y.numel())
    return;
  TRIDENT_LAUNCH(kAxpy, blocksFor(y.numel()), kThreads, 0, stream())(y.f32(), x.f32(),
                                                          alpha, y.numel());
  launched("axpy");
}

void add(Tensor &out, const Tensor &a, const Tensor &b) {
  sameNumel(out, a, "add");
  sameNumel(out, b, "add");
  if (!out.numel())
    return;
  TRIDENT_LAUNCH(kAdd, blocksFor(out.numel()), kThreads, 0, stream())(
      out.f32(), a.f32(), b.f32(), out.numel());
  launched("add");
}

void mul(Tensor &out, const Tensor &a, const Tensor &b) {
  sameNumel(out, a, "mul");
  sameNumel(out, b, "mul");
  if (!out.numel())
    return;
  TRIDENT_LAUNCH(kMul, blocksFor(out.numel()), kThreads, 0, stream())(
      out.f32(), a.f32(), b.f32(), out.numel());
  launched("mul");
}

void detail::widenBf16(float *dst, const uint16_t *src, int64_t n) {
  TRIDENT_LAUNCH(kBf16Widen, blocksFor(n), kThreads, 0, stream())(dst, src, n);
  launched("toF32");
}

void detail::narrowToBf16(uint16_t *dst, const float *src, int64_t n) {
  TRIDENT_LAUNCH(kBf16Bits, blocksFor(n), kThreads, 0, stream())(dst, src, n);
  launched("toBf16");
}

void roundToBf16(Tensor &t) {
  if (!t.numel())
    return;
  TRIDENT_LAUNCH(kRoundBf16, blocksFor(t.numel()), kThreads, 0, stream())(
      t.f32(), t.numel());
  launched("roundToBf16");
}

double sum(const Tensor &t) {
  double s = 0;
  for (float v : t.toHost())
    s += v;
  return s;
}

namespace {
/// Calls f with an input's elements: an fp32 tensor's floats or a bf16
/// tensor's bits, for a kernel templated on the element type.
template <typename F> void withInput(const Tensor &t, F f) {
  if (t.dtype() == DType::BF16)
    f(static_cast<const uint16_t *>(t.bf16()));
  else
    f(static_cast<const float *>(t.f32()));
}
template <typename P> using ElementOf = std::remove_cv_t<std::remove_pointer_t<P>>;
/// An output's pointer pair for store(): its fp32 elements, or null for a
/// bf16 tensor (outF32), and that tensor's bits, or null (outBf16).
float *outF32(Tensor &t) { return t.dtype() == DType::BF16 ? nullptr : t.f32(); }
uint16_t *outBf16(Tensor &t) {
  return t.dtype() == DType::BF16 ? t.bf16() : nullptr;
}
} // namespace

void geluForward(Tensor &y, const Tensor &x, bool approximate) {
  sameNumel(y, x, "geluForward");
  if (!x.numel())
    return;
  withInput(x, [&](auto *in) {
    TRIDENT_LAUNCH(kGelu<ElementOf<decltype(in)>>, blocksFor(x.numel()),
                   kThreads, 0, stream())(outF32(y), outBf16(y), in, x.numel(),
                                          approximate);
  });
  launched("geluForward");
}

void geluBackward(Tensor &dx, const Tensor &dy, const Tensor &x,
                  bool approximate) {
  sameNumel(dx, x, "geluBackward");
  sameNumel(dy, x, "geluBackward");
  if (!x.numel())
    return;
  withInput(x, [&](auto *in) {
    TRIDENT_LAUNCH(kGeluBwd<ElementOf<decltype(in)>>, blocksFor(x.numel()),
                   kThreads, 0, stream())(outF32(dx), outBf16(dx), dy.f32(), in,
                                          x.numel(), approximate);
  });
  launched("geluBackward");
}

void dropoutApply(Tensor &y, const Tensor &x, int64_t batch, int64_t seq,
                  const DropoutSite &site) {
  const char *fn = "dropoutApply";
  const int64_t f = detail::checkDropoutApply(y, x, batch, seq, site, fn);
  if (!x.numel())
    return;
  TRIDENT_LAUNCH(kDropout, blocksFor(x.numel()), kThreads, 0, stream())(
      y.f32(), x.f32(), x.numel(), seq, f,
      hash::dropoutKey(site.seed, site.step, site.site),
      hash::dropoutThreshold(site.rate),
      float(1.0 / (1.0 - double(site.rate))), site.firstSample, site.seqLen,
      site.firstPos, site.features, site.firstFeature);
  launched(fn);
}

namespace {
/// y = f(x) elementwise with kernel `k` (tanh), x fp32.
void launchPointwise(void (*k)(float *, const float *, int64_t), Tensor &y,
                     const Tensor &x, const char *fn) {
  sameNumel(y, x, fn);
  if (!x.numel())
    return;
  TRIDENT_LAUNCH(k, blocksFor(x.numel()), kThreads, 0, stream())(y.f32(), x.f32(),
                                                      x.numel());
  launched(fn);
}
/// dx = dy * f'(x) elementwise with kernel `k` (tanh), x fp32.
void launchPointwiseBwd(void (*k)(float *, const float *, const float *,
                                  int64_t),
                        Tensor &dx, const Tensor &dy, const Tensor &x,
                        const char *fn) {
  sameNumel(dx, x, fn);
  sameNumel(dy, x, fn);
  if (!x.numel())
    return;
  TRIDENT_LAUNCH(k, blocksFor(x.numel()), kThreads, 0, stream())(dx.f32(), dy.f32(),
                                                      x.f32(), x.numel());
  launched(fn);
}
/// out = an activation of x elementwise with kernel template K, x in fp32
/// or bf16 and out an fp32 or bf16 tensor (outF32, outBf16); `before`
/// are the kernel's arguments between out and x (a backward's dy).
template <template <typename> class K, class... Before>
void launchActivation(Tensor &out, const Tensor &x, const char *fn,
                      Before... before) {
  sameNumel(out, x, fn);
  if (!x.numel())
    return;
  withInput(x, [&](auto *in) {
    auto k = K<ElementOf<decltype(in)>>::kernel;
    TRIDENT_LAUNCH(k, blocksFor(x.numel()), kThreads, 0, stream())(
        outF32(out), outBf16(out), before..., in, x.numel());
  });
  launched(fn);
}
/// dx = dy * f'(x) elementwise with K (as launchActivation, dy fp32).
template <template <typename> class K>
void launchActivationBwd(Tensor &dx, const Tensor &dy, const Tensor &x,
                         const char *fn) {
  sameNumel(dy, x, fn);
  launchActivation<K>(dx, x, fn,
                      static_cast<const float *>(x.numel() ? dy.f32() : nullptr));
}
/// The activation kernels as class templates, for launchActivation.
template <typename T> struct Silu { static constexpr auto kernel = kSilu<T>; };
template <typename T> struct SiluBwd {
  static constexpr auto kernel = kSiluBwd<T>;
};
template <typename T> struct Relu { static constexpr auto kernel = kRelu<T>; };
template <typename T> struct ReluBwd {
  static constexpr auto kernel = kReluBwd<T>;
};
template <typename T> struct SquaredRelu {
  static constexpr auto kernel = kSquaredRelu<T>;
};
template <typename T> struct SquaredReluBwd {
  static constexpr auto kernel = kSquaredReluBwd<T>;
};
} // namespace

void siluForward(Tensor &y, const Tensor &x) {
  launchActivation<Silu>(y, x, "siluForward");
}

void siluBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  launchActivationBwd<SiluBwd>(dx, dy, x, "siluBackward");
}

void reluForward(Tensor &y, const Tensor &x) {
  launchActivation<Relu>(y, x, "reluForward");
}

void reluBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  launchActivationBwd<ReluBwd>(dx, dy, x, "reluBackward");
}

void squaredReluForward(Tensor &y, const Tensor &x) {
  launchActivation<SquaredRelu>(y, x, "squaredReluForward");
}

void squaredReluBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  launchActivationBwd<SquaredReluBwd>(dx, dy, x, "squaredReluBackward");
}

void tanhForward(Tensor &y, const Tensor &x) {
  launchPointwise(kTanh, y, x, "tanhForward");
}

void tanhBackward(Tensor &dx, const Tensor &dy, const Tensor &x) {
  launchPointwiseBwd(kTanhBwd, dx, dy, x, "tanhBackward");
}

void patchEmbedForward(Tensor &out, const Tensor &images, const Tensor &w,
                       const Tensor &bias, int64_t channels, int64_t side,
                       int64_t patch) {
  const char *fn = "patchEmbedForward";
  const int64_t b = detail::checkPatchEmbed(out, images, w, bias, channels,
                                            side, patch, fn);
  const int64_t grid = side / patch, rows = b * grid * grid;
  const int64_t cols = w.dim(0), h = w.dim(1);
  if (!rows)
    return;
  Tensor patches({rows, cols});
  TRIDENT_LAUNCH(kPatchRows, blocksFor(rows * cols), kThreads, 0, stream())(
      patches.f32(), images.f32(), b, channels, side, patch);
  launched(fn);
  gemmRowMajor(false, false, rows, h, cols, 1.0f, patches.f32(), cols,
               w.f32(), h, 0.0f, out.f32(), h, fn);
  if (bias.defined()) {
    TRIDENT_LAUNCH(kAddBias, blocksFor(rows * h), kThreads, 0, stream())(
        out.f32(), bias.f32(), rows, h);
    launched(fn);
  }
}

void patchEmbedBackward(Tensor &dw, Tensor &db, const Tensor &dy,
                        const Tensor &images, int64_t channels, int64_t side,
                        int64_t patch) {
  const char *fn = "patchEmbedBackward";
  const int64_t b = detail::checkPatchEmbed(dy, images, dw, db, channels,
                                            side, patch, fn);
  const int64_t grid = side / patch, rows = b * grid * grid;
  const int64_t cols = dw.dim(0), h = dw.dim(1);
  zero(dw);
  if (db.defined())
    zero(db);
  if (!rows)
    return;
  Tensor patches({rows, cols});
  TRIDENT_LAUNCH(kPatchRows, blocksFor(rows * cols), kThreads, 0, stream())(
      patches.f32(), images.f32(), b, channels, side, patch);
  launched(fn);
  gemmRowMajor(true, false, cols, h, rows, 1.0f, patches.f32(), cols,
               dy.f32(), h, 0.0f, dw.f32(), h, fn);
  if (db.defined()) {
    ColTerms t;
    t.dy = dy.f32();
    columnSums(db.f32(), nullptr, t, rows, h, fn);
  }
}

void prependTokenForward(Tensor &out, const Tensor &x, const Tensor &token,
                         int64_t tokens) {
  const char *fn = "prependTokenForward";
  const int64_t b = detail::checkPrependToken(out, x, token, tokens, fn);
  const int64_t h = token.numel();
  if (!b)
    return;
  TRIDENT_LAUNCH(kPrependToken, blocksFor(b * (tokens + 1) * h), kThreads, 0, stream())(
      out.f32(), x.f32(), token.f32(), b, tokens, h);
  launched(fn);
}

void prependTokenBackward(Tensor &dx, Tensor &dtoken, const Tensor &dy,
                          int64_t tokens) {
  const char *fn = "prependTokenBackward";
  const int64_t b = detail::checkPrependToken(dy, dx, dtoken, tokens, fn);
  const int64_t h = dtoken.numel();
  TRIDENT_LAUNCH(kFirstRowSum, blocksFor(h), kThreads, 0, stream())(dtoken.f32(),
                                                         dy.f32(), b, tokens,
                                                         h);
  launched(fn);
  if (!b)
    return;
  TRIDENT_LAUNCH(kDropFirstRow, blocksFor(b * tokens * h), kThreads, 0, stream())(
      dx.f32(), dy.f32(), b, tokens, h);
  launched(fn);
}

void positionAddForward(Tensor &y, const Tensor &x, const Tensor &wpe,
                        int64_t seq, int64_t posOffset) {
  const char *fn = "positionAddForward";
  const int64_t n = detail::checkPositionAdd(x, wpe, seq, posOffset, fn);
  sameNumel(y, x, fn);
  if (!n)
    return;
  const int64_t h = wpe.dim(1);
  TRIDENT_LAUNCH(kPositionAdd, blocksFor(n * h), kThreads, 0, stream())(
      y.f32(), x.f32(), wpe.f32(), n, h, seq, posOffset);
  launched(fn);
}

void positionAddBackward(Tensor &dwpe, const Tensor &dy, int64_t seq,
                         int64_t posOffset) {
  const char *fn = "positionAddBackward";
  const int64_t n = detail::checkPositionAdd(dy, dwpe, seq, posOffset, fn);
  const int64_t h = dwpe.dim(1);
  zero(dwpe);
  TRIDENT_LAUNCH(kPositionSum, blocksFor(seq * h), kThreads, 0, stream())(
      dwpe.f32(), dy.f32(), n, h, seq, posOffset);
  launched(fn);
}

void sliceRows(Tensor &y, const Tensor &x, int64_t seq, int64_t first,
               int64_t count) {
  const char *fn = "sliceRows";
  const int64_t b = detail::checkSliceRows(y, x, seq, first, count, fn);
  const int64_t h = x.dim(-1);
  if (!b)
    return;
  // One strided copy: b blocks of count*h floats, seq*h apart in x.
  cuda::copyRows(y.f32(), sizeof(float) * count * h, x.f32() + first * h,
                 sizeof(float) * seq * h, sizeof(float) * count * h, b, fn);
}

namespace {
/// selectToken{Forward,Backward}: rows [batch, h] <- row `index` of each
/// sample of x [batch*seq, h] (toX false), or back into x, zeroed first.
void selectRows(Tensor &x, Tensor &rows, int64_t seq, int64_t index,
                bool toX, const char *fn) {
  const int64_t batch = detail::checkSelectToken(rows, x, seq, fn);
  zero(toX ? x : rows);
  if (index < 0 || index >= seq || !rows.numel())
    return;
  const int64_t h = rows.dim(1);
  TRIDENT_LAUNCH(kSelectRows, blocksFor(batch * h), kThreads, 0, stream())(
      x.f32(), rows.f32(), batch, seq, h, index, toX);
  launched(fn);
}
} // namespace

void selectTokenForward(Tensor &out, const Tensor &x, int64_t seq,
                        int64_t index) {
  // x is only read (toX false); Tensor shares its storage.
  Tensor src = x;
  selectRows(src, out, seq, index, false, "selectTokenForward");
}

void selectTokenBackward(Tensor &dx, const Tensor &dy, int64_t seq,
                         int64_t index) {
  Tensor rows = dy; // only read (toX true writes dx)
  selectRows(dx, rows, seq, index, true, "selectTokenBackward");
}

void swigluForward(Tensor &y, const Tensor &gate, const Tensor &up) {
  sameNumel(y, gate, "swigluForward");
  sameNumel(y, up, "swigluForward");
  if (!y.numel())
    return;
  withInput(gate, [&](auto *a) {
    withInput(up, [&](auto *b) {
      auto k = kSwiglu<ElementOf<decltype(a)>, ElementOf<decltype(b)>>;
      TRIDENT_LAUNCH(k, blocksFor(y.numel()), kThreads, 0, stream())(
          outF32(y), outBf16(y), a, b, y.numel());
    });
  });
  launched("swigluForward");
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
  withInput(gate, [&](auto *a) {
    withInput(up, [&](auto *b) {
      auto k = kSwigluBwd<ElementOf<decltype(a)>, ElementOf<decltype(b)>>;
      TRIDENT_LAUNCH(k, blocksFor(gate.numel()), kThreads, 0, stream())(
          outF32(dgate), outBf16(dgate), outF32(dup), outBf16(dup), dy.f32(), a,
          b, gate.numel());
    });
  });
  launched(fn);
}

void ropeApply(Tensor &y, const Tensor &x, int64_t seq, int64_t heads,
               int64_t headDim, int64_t rotaryDim, double theta,
               bool inverse, int64_t posOffset, const RopeScaling &scaling,
               int64_t rotaryOffset, bool interleaved) {
  const char *fn = "ropeApply";
  detail::checkRope(y, x, seq, heads, headDim, rotaryDim, theta, posOffset,
                    rotaryOffset, fn);
  RopeTable table{};
  const std::vector<double> freq = ropeFrequencies(rotaryDim, theta, scaling);
  std::copy(freq.begin(), freq.end(), table.freq);
  table.mag = scaling.kind == RopeScaling::Kind::Yarn
                  ? scaling.attentionFactor
                  : 1.0;
  if (!x.numel())
    return;
  int64_t rows = x.numel() / (heads * headDim);
  int64_t work = rows * heads * (headDim - rotaryDim / 2);
  TRIDENT_LAUNCH(kRope, blocksFor(work), kThreads, 0, stream())(
      y.f32(), x.f32(), rows, seq, posOffset, heads, headDim, rotaryDim,
      rotaryOffset, table, inverse, interleaved);
  launched(fn);
}

void latentKeyForward(Tensor &k, const Tensor &kNope, const Tensor &kRope,
                      int64_t heads, int64_t nopeDim, int64_t ropeDim) {
  const char *fn = "latentKeyForward";
  detail::checkLatentKey(k, kNope, kRope, heads, nopeDim, ropeDim, fn);
  const int64_t n = kRope.numel() / ropeDim;
  if (!n)
    return;
  TRIDENT_LAUNCH(kLatentKey, blocksFor(k.numel()), kThreads, 0, stream())(
      k.f32(), kNope.f32(), kRope.f32(), n, heads, nopeDim, ropeDim);
  launched(fn);
}

void latentKeyBackward(Tensor &dkNope, Tensor &dkRope, const Tensor &dk,
                       int64_t heads, int64_t nopeDim, int64_t ropeDim) {
  const char *fn = "latentKeyBackward";
  detail::checkLatentKey(dk, dkNope, dkRope, heads, nopeDim, ropeDim, fn);
  const int64_t n = dkRope.numel() / ropeDim;
  if (!n)
    return;
  TRIDENT_LAUNCH(kLatentKeyNopeBwd, blocksFor(dkNope.numel()), kThreads, 0, stream())(
      dkNope.f32(), dk.f32(), n, heads, nopeDim, ropeDim);
  launched(fn);
  TRIDENT_LAUNCH(kLatentKeyRopeBwd, blocksFor(dkRope.numel()), kThreads, 0, stream())(
      dkRope.f32(), dk.f32(), n, heads, nopeDim, ropeDim);
  launched(fn);
}

void embeddingForward(Tensor &out, const Tensor &tokens, const Tensor &wte,
                      const Tensor &wpe, int64_t seqLen, int64_t posOffset,
                      int64_t vocabOffset, bool addPositions) {
  const char *fn = "embeddingForward";
  check(wte.rank() == 2, fn, "wte must be [vocab_shard, hidden]");
  int64_t h = wte.dim(1), n = tokens.numel();
  check(tokens.dtype() == DType::I32, fn, "tokens must be int32");
  check(out.numel() == n * h, fn, "output " + out.shapeString() +
                                      " does not match [n, hidden]");
  check(seqLen > 0 && n % seqLen == 0, fn, "tokens are not whole sequences");
  bool pos = wpe.defined() && addPositions;
  if (wpe.defined()) // checked whether used or not, as on the CPU
    check(wpe.rank() == 2 && wpe.dim(1) == h && posOffset >= 0 &&
              wpe.dim(0) >= posOffset + seqLen,
          fn, "wpe " + wpe.shapeString() + " cannot hold the positions");
  if (!n)
    return;
  TRIDENT_LAUNCH(kEmbed, blocksFor(n * h), kThreads, 0, stream())(
      out.f32(), tokens.i32(), wte.f32(), pos ? wpe.f32() : nullptr, n, h,
      wte.dim(0), seqLen, posOffset, vocabOffset);
  launched(fn);
}

void embeddingBackward(Tensor &dwte, Tensor &dwpe, const Tensor &dout,
                       const Tensor &tokens, int64_t seqLen, int64_t posOffset,
                       int64_t vocabOffset, bool addPositions) {
  const char *fn = "embeddingBackward";
  check(dwte.rank() == 2, fn, "dwte must be [vocab_shard, hidden]");
  int64_t h = dwte.dim(1), n = tokens.numel();
  check(tokens.dtype() == DType::I32 && dout.numel() == n * h, fn,
        "dout " + dout.shapeString() + " does not match the tokens");
  check(seqLen > 0 && n % seqLen == 0, fn, "tokens are not whole sequences");
  check(n < (int64_t(1) << 31), fn, "more than 2^31 tokens");
  if (dwpe.defined()) // checked whether used or not, as on the CPU
    check(dwpe.rank() == 2 && dwpe.dim(1) == h && posOffset >= 0 &&
              dwpe.dim(0) >= posOffset + seqLen,
          fn, "dwpe " + dwpe.shapeString() + " cannot hold the positions");
  if (!n)
    return;
  // Group the token positions by table row on the host (a stable counting
  // sort of n ids), then one thread per (row, feature) sums its tokens'
  // gradients in position order.
  const detail::TokenGroups g =
      detail::groupTokensByRow(tokens.toHostI32(), vocabOffset, dwte.dim(0));
  if (!g.rows.empty()) { // else no token falls in this shard
    // rows, start and order in one upload (one wait, not three).
    const int64_t distinct = int64_t(g.rows.size()),
                  starts = int64_t(g.start.size()),
                  orders = int64_t(g.order.size());
    std::vector<int32_t> packed;
    packed.reserve(size_t(distinct + starts + orders));
    packed.insert(packed.end(), g.rows.begin(), g.rows.end());
    packed.insert(packed.end(), g.start.begin(), g.start.end());
    packed.insert(packed.end(), g.order.begin(), g.order.end());
    Tensor all({distinct + starts + orders}, DType::I32);
    all.fromHostI32(packed);
    TRIDENT_LAUNCH(kEmbedBwd, blocksFor(distinct * h), kThreads, 0, stream())(
        dwte.f32(), dout.f32(), all.i32(), all.i32() + distinct,
        all.i32() + distinct + starts, distinct, h);
    launched(fn);
  }
  if (dwpe.defined() && addPositions) {
    TRIDENT_LAUNCH(kPosBwd, blocksFor(seqLen * h), kThreads, 0, stream())(
        dwpe.f32(), dout.f32(), n, h, seqLen, posOffset);
    launched(fn);
  }
}

void layerNormForward(Tensor &y, Tensor &mean, Tensor &rstd, const Tensor &x,
                      const Tensor &gamma, const Tensor &beta, float eps,
                      float gammaShift) {
  const char *fn = "layerNormForward";
  int64_t h = gamma.numel(), n = rowsOf(x, h, fn, "x");
  sameNumel(y, x, fn);
  check(mean.numel() == n && rstd.numel() == n, fn,
        "mean and rstd must have " + std::to_string(n) + " elements");
  check(!beta.defined() || beta.numel() == h, fn, "beta must match gamma");
  if (!n)
    return;
  rowGrid(n, fn);
  TRIDENT_LAUNCH(kLayerNorm, unsigned(n), rowThreads(h), 0, stream())(
      y.f32(), mean.f32(), rstd.f32(), x.f32(), gamma.f32(),
      beta.defined() ? beta.f32() : nullptr, h, eps, gammaShift);
  launched(fn);
}

void layerNormBackward(Tensor &dx, Tensor &dgamma, Tensor &dbeta,
                       const Tensor &dy, const Tensor &x, const Tensor &gamma,
                       const Tensor &mean, const Tensor &rstd,
                       float gammaShift) {
  const char *fn = "layerNormBackward";
  int64_t h = gamma.numel(), n = rowsOf(x, h, fn, "x");
  sameNumel(dx, x, fn);
  sameNumel(dy, x, fn);
  sameNumel(dgamma, gamma, fn);
  check(!dbeta.defined() || dbeta.numel() == h, fn, "dbeta must match gamma");
  if (!n)
    return;
  rowGrid(n, fn);
  // The weight gradients first: they read dy, which dx may alias (the CPU
  // twin reads each row of dy before writing that row of dx).
  ColTerms t;
  t.dy = dy.f32();
  t.x = x.f32();
  t.mean = mean.f32();
  t.rstd = rstd.f32();
  columnSums(dgamma.f32(), dbeta.defined() ? dbeta.f32() : nullptr, t, n, h,
             fn);
  TRIDENT_LAUNCH(kLayerNormBwdX, unsigned(n), rowThreads(h), 0, stream())(
      dx.f32(), dy.f32(), x.f32(), gamma.f32(), mean.f32(), rstd.f32(), h,
      gammaShift);
  launched(fn);
}

void rmsNormForward(Tensor &y, Tensor &rstd, const Tensor &x,
                    const Tensor &gamma, float eps) {
  const char *fn = "rmsNormForward";
  int64_t h = gamma.numel(), n = rowsOf(x, h, fn, "x");
  sameNumel(y, x, fn);
  check(rstd.numel() == n, fn, "rstd must have one element per group");
  if (!n)
    return;
  rowGrid(n, fn);
  TRIDENT_LAUNCH(kRmsNorm, unsigned(n), rowThreads(h), 0, stream())(y.f32(), rstd.f32(),
                                                    x.f32(), gamma.f32(), h, eps);
  launched(fn);
}

void rmsNormBackward(Tensor &dx, Tensor &dgamma, const Tensor &dy,
                     const Tensor &x, const Tensor &gamma, const Tensor &rstd) {
  const char *fn = "rmsNormBackward";
  int64_t h = gamma.numel(), n = rowsOf(x, h, fn, "x");
  sameNumel(dx, x, fn);
  sameNumel(dy, x, fn);
  sameNumel(dgamma, gamma, fn);
  check(rstd.numel() == n, fn, "rstd size does not match x");
  if (!n)
    return;
  rowGrid(n, fn);
  // dgamma first: dx may alias dy (see layerNormBackward).
  ColTerms t;
  t.dy = dy.f32();
  t.x = x.f32();
  t.rstd = rstd.f32();
  columnSums(dgamma.f32(), nullptr, t, n, h, fn);
  TRIDENT_LAUNCH(kRmsNormBwdX, unsigned(n), rowThreads(h), 0, stream())(
      dx.f32(), dy.f32(), x.f32(), gamma.f32(), rstd.f32(), h);
  launched(fn);
}

void linearForward(Tensor &y, const Tensor &x, const Tensor &w,
                   const Tensor &b) {
  const char *fn = "linearForward";
  check(w.rank() == 2, fn, "W must be [out, in], got " + w.shapeString());
  int64_t out = w.dim(0), in = w.dim(1), n = rowsOf(x, in, fn, "x");
  check(y.numel() == n * out, fn,
        "y " + y.shapeString() + " must be [" + std::to_string(n) + ", " +
            std::to_string(out) + "]");
  check(!b.defined() || b.numel() == out, fn, "b must have out elements");
  if (!n)
    return;
  gemmRowMajor(false, true, n, out, in, 1.0f, GemmIn(x), in, GemmIn(w), in,
               0.0f, y.f32(), out, fn);
  if (b.defined()) {
    TRIDENT_LAUNCH(kAddBias, blocksFor(n * out), kThreads, 0, stream())(y.f32(), b.f32(),
                                                             n, out);
    launched(fn);
  }
}

void linearBackward(Tensor &dx, Tensor &dw, Tensor &db, const Tensor &dy,
                    const Tensor &x, const Tensor &w) {
  const char *fn = "linearBackward";
  check(w.rank() == 2, fn, "W must be [out, in], got " + w.shapeString());
  int64_t out = w.dim(0), in = w.dim(1), n = rowsOf(x, in, fn, "x");
  check(dy.numel() == n * out, fn, "dy does not match [n, out]");
  if (dw.defined())
    sameNumel(dw, w, fn);
  if (dx.defined())
    sameNumel(dx, x, fn);
  if (!n)
    return;
  if (dx.defined())
    gemmRowMajor(false, false, n, in, out, 1.0f, GemmIn(dy), out, GemmIn(w), in,
                 0.0f, dx.f32(), in, fn);
  if (dw.defined())
    gemmRowMajor(true, false, out, in, n, 1.0f, GemmIn(dy), out, GemmIn(x), in,
                 1.0f, dw.f32(), in, fn);
  if (db.defined()) {
    check(db.numel() == out, fn, "db must have out elements");
    ColTerms t; // a bf16 dy's column sums read its bits, summed in fp32
    if (dy.dtype() == DType::BF16)
      t.dyBf16 = dy.bf16();
    else
      t.dy = dy.f32();
    columnSums(db.f32(), nullptr, t, n, out, fn);
  }
}

void matmul(Tensor &c, const Tensor &a, const Tensor &b, bool transB,
            float beta) {
  const char *fn = "matmul";
  check(a.rank() == 2 && b.rank() == 2 && c.rank() == 2, fn,
        "operands must be 2-D");
  int64_t m = a.dim(0), k = a.dim(1), n = transB ? b.dim(0) : b.dim(1);
  check((transB ? b.dim(1) : b.dim(0)) == k && c.dim(0) == m && c.dim(1) == n,
        fn, "shapes " + a.shapeString() + " x " + b.shapeString() + " -> " +
                c.shapeString() + " mismatch");
  gemmRowMajor(false, transB, m, n, k, 1.0f, a.f32(), k, b.f32(), b.dim(1),
               beta, c.f32(), n, fn);
}

namespace {
/// The buffers of one sample's attention products (AttentionGemms.h).
struct AttnBuffers {
  const float *q, *k, *v, *dout;
  float *out, *dq, *dk, *dv;
  float *p, *pv, *dp; // the sample's [heads, s, keys] matrices
  float *at(detail::AttnBuf b) const {
    using detail::AttnBuf;
    switch (b) {
    case AttnBuf::Q: return const_cast<float *>(q);
    case AttnBuf::K: return const_cast<float *>(k);
    case AttnBuf::V: return const_cast<float *>(v);
    case AttnBuf::DO: return const_cast<float *>(dout);
    case AttnBuf::O: return out;
    case AttnBuf::DQ: return dq;
    case AttnBuf::DK: return dk;
    case AttnBuf::DV: return dv;
    case AttnBuf::P: return p;
    case AttnBuf::PV: return pv;
    case AttnBuf::DP: return dp;
    }
    return nullptr;
  }
};

/// Runs the products of one phase of sample b's attention.
void attentionGemms(const AttnBuffers &buf, const AttentionDims &d,
                    int64_t b, detail::AttnPhase phase, const char *fn) {
  for (const detail::AttnGemm &g : detail::attentionGemms(d, b, phase))
    gemmRowMajorBatched(g.transA, g.transB, g.m, g.n, g.k, g.alpha,
                        buf.at(g.a) + g.offA, g.lda, g.strideA,
                        buf.at(g.b) + g.offB, g.ldb, g.strideB, g.beta,
                        buf.at(g.c) + g.offC, g.ldc, g.strideC, g.batch, fn);
}
} // namespace

namespace {
/// The fused forward (kFlashForward) where it applies (rt::setFusedAttention):
/// asked for, bf16 GEMMs on (its products round q, k, v and the
/// probabilities to bf16), no dropout, value heads as wide as query heads,
/// a head size of 16, 32, 64 or 128. Returns false, launching nothing,
/// elsewhere.
/// Whether the fused attention kernels take attention of these dims
/// (rt::setFusedAttention): switched on, bf16 products, no dropout, value
/// heads as wide as the query heads, and a head size they are built for.
bool flashApplies(const AttentionDims &d) {
  const int64_t D = d.headDim;
  return cuda::state().fusedAttention &&
         cuda::state().bf16Gemms != Bf16Gemms::Off && d.dropout.rate <= 0.0f &&
         d.valueDim() == D && (D == 16 || D == 32 || D == 64 || D == 128);
}

/// The fused kernels' view of the dims, the launch limits checked: grids
/// of ceil(rows / tile) x heads x samples.
FlashDims flashDims(const AttentionDims &d, int64_t tile, const char *fn) {
  const int64_t D = d.headDim;
  check((std::max(d.seq, d.keys()) + tile - 1) / tile < (int64_t(1) << 31) &&
            d.heads < 65536 && d.batch < 65536,
        fn, "too many queries, heads or samples for one launch");
  return FlashDims{
      d.seq,       d.keys(),      d.heads,       d.heads / d.kvHeads,
      d.heads * D, d.kvHeads * D, d.kvHeads * D, d.heads * D,
      d.qOffset,   d.window,      d.causal,      d.softmaxScale()};
}

bool flashForward(Tensor &out, Tensor &lse, const Tensor &q, const Tensor &k,
                  const Tensor &v, const Tensor &sinks, const AttentionDims &d,
                  const char *fn) {
  if (!flashApplies(d))
    return false;
  const int64_t D = d.headDim;
  const FlashDims f = flashDims(d, kFaRows, fn);
  const dim3 grid(unsigned((d.seq + kFaRows - 1) / kFaRows), unsigned(d.heads),
                  unsigned(d.batch));
  const float *sk = sinks.defined() ? sinks.f32() : nullptr;
  switch (D) {
  case 16:
    TRIDENT_LAUNCH(kFlashForward<16>, grid, kFaThreads, 0, stream())(
        out.f32(), lse.f32(), q.f32(), k.f32(), v.f32(), sk, f);
    break;
  case 32:
    TRIDENT_LAUNCH(kFlashForward<32>, grid, kFaThreads, 0, stream())(
        out.f32(), lse.f32(), q.f32(), k.f32(), v.f32(), sk, f);
    break;
  case 64:
    TRIDENT_LAUNCH(kFlashForward<64>, grid, kFaThreads, 0, stream())(
        out.f32(), lse.f32(), q.f32(), k.f32(), v.f32(), sk, f);
    break;
  default:
    TRIDENT_LAUNCH(kFlashForward<128>, grid, kFaThreads, 0, stream())(
        out.f32(), lse.f32(), q.f32(), k.f32(), v.f32(), sk, f);
    break;
  }
  launched(fn);
  return true;
}

/// The fused backward (kFlashBwdRowDots, kFlashBwdKeys, kFlashBwdQueries)
/// from the forward's output and rows' log-sum-exp, where flashApplies;
/// false (nothing done) otherwise.
bool flashBackward(Tensor &dq, Tensor &dk, Tensor &dv, Tensor &dsinks,
                   const Tensor &dout, const Tensor &q, const Tensor &k,
                   const Tensor &v, const Tensor &out, const Tensor &lse,
                   const AttentionDims &d, const char *fn) {
  if (!out.defined() || !flashApplies(d))
    return false;
  const int64_t D = d.headDim, H = d.heads, s = d.seq;
  const FlashDims f = flashDims(d, kFbTile, fn);
  check(d.batch * H * s < (int64_t(1) << 31), fn,
        "more than 2^31 query rows in a call");
  Tensor delta({d.batch, H, s});
  Tensor sinkRows = dsinks.defined() ? Tensor({d.batch, H, s}) : Tensor();
  if (out.dtype() == DType::BF16) // the output projection's bf16 input
    TRIDENT_LAUNCH(kFlashBwdRowDots<uint16_t>, unsigned(d.batch * H * s),
                   rowThreads(D), 0, stream())(delta.f32(), dout.f32(),
                                               out.bf16(), s, H, D, f.os);
  else
    TRIDENT_LAUNCH(kFlashBwdRowDots<float>, unsigned(d.batch * H * s),
                   rowThreads(D), 0, stream())(delta.f32(), dout.f32(),
                                               out.f32(), s, H, D, f.os);
  launched(fn);
  const dim3 keyGrid(unsigned((f.t + kFbTile - 1) / kFbTile),
                     unsigned(d.kvHeads), unsigned(d.batch));
  const dim3 queryGrid(unsigned((s + kFbTile - 1) / kFbTile), unsigned(H),
                       unsigned(d.batch));
  const float *qp = q.f32(), *kp = k.f32(), *vp = v.f32(), *dop = dout.f32();
  const float *lp = lse.f32(), *dp = delta.f32();
  auto run = [&](auto keys, auto queries) {
    TRIDENT_LAUNCH(keys, keyGrid, kFbThreads, 0, stream())(
        dk.f32(), dv.f32(), qp, kp, vp, dop, lp, dp, f);
    launched(fn);
    TRIDENT_LAUNCH(queries, queryGrid, kFbThreads, 0, stream())(
        dq.f32(), sinkRows.defined() ? sinkRows.f32() : nullptr, qp, kp, vp,
        dop, lp, dp, f);
    launched(fn);
  };
  switch (D) {
  case 16:
    run(kFlashBwdKeys<16>, kFlashBwdQueries<16>);
    break;
  case 32:
    run(kFlashBwdKeys<32>, kFlashBwdQueries<32>);
    break;
  case 64:
    run(kFlashBwdKeys<64>, kFlashBwdQueries<64>);
    break;
  default:
    run(kFlashBwdKeys<128>, kFlashBwdQueries<128>);
    break;
  }
  if (dsinks.defined()) {
    // Sample by sample, each head's rows in order (the unfused path's
    // order of summation).
    zero(dsinks);
    for (int64_t b = 0; b < d.batch; ++b) {
      TRIDENT_LAUNCH(kAccumulateSums, unsigned(H), rowThreads(s), 0, stream())(
          dsinks.f32(), sinkRows.f32() + b * H * s, s);
      launched(fn);
    }
  }
  return true;
}
} // namespace

void attentionForward(Tensor &out, Tensor &probs, const Tensor &q,
                      const Tensor &k, const Tensor &v, const Tensor &sinks,
                      const AttentionDims &d) {
  const char *fn = "attentionForward";
  detail::checkAttention(out, probs, q, k, v, d, fn);
  detail::checkSinks(sinks, d, fn);
  const int64_t s = d.seq, t = d.keys(), H = d.heads;
  check(H * s < (int64_t(1) << 31), fn, "more than 2^31 score rows a sample");
  const bool drop = d.dropout.rate > 0.0f;
  const bool lse = detail::savesLogSumExp(probs, d);
  if (lse && flashForward(out, probs, q, k, v, sinks, d, fn))
    return;
  Tensor dropped = drop ? Tensor({H, s, t}) : Tensor();
  // Saving the log-sum-exp: one sample's probabilities at a time.
  Tensor scratch = lse ? Tensor({H, s, t}) : Tensor();
  AttnBuffers buf{q.f32(), k.f32(), v.f32(), nullptr, out.f32(), nullptr,
                  nullptr, nullptr, nullptr, nullptr, nullptr};
  // Per sample: the scores of all heads (batched products, AttentionGemms.h),
  // one softmax launch over its heads' consecutive score matrices, the
  // output.
  for (int64_t b = 0; b < d.batch; ++b) {
    buf.p = lse ? scratch.f32() : probs.f32() + b * H * s * t;
    buf.pv = drop ? dropped.f32() : buf.p;
    attentionGemms(buf, d, b, detail::AttnPhase::Scores, fn);
    TRIDENT_LAUNCH(kMaskedSoftmax, unsigned(H * s), rowThreads(t), 0, stream())(
        buf.p, s, t, d.qOffset, d.window, d.causal,
        sinks.defined() ? sinks.f32() : nullptr,
        lse ? probs.f32() + b * H * s : nullptr);
    launched(fn);
    if (drop)
      for (int64_t h = 0; h < H; ++h)
        probDropout(buf.pv + h * s * t, buf.p + h * s * t, b, h, d, fn);
    attentionGemms(buf, d, b, detail::AttnPhase::Output, fn);
  }
}

void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, Tensor &dsinks,
                       const Tensor &dout, const Tensor &q, const Tensor &k,
                       const Tensor &v, const Tensor &out, const Tensor &probs,
                       const AttentionDims &d) {
  const char *fn = "attentionBackward";
  detail::checkAttentionBackward(dq, dk, dv, dsinks, dout, q, k, v, out, probs,
                                 d, fn);
  if (detail::savesLogSumExp(probs, d) &&
      flashBackward(dq, dk, dv, dsinks, dout, q, k, v, out, probs, d, fn))
    return;
  zero(dk);
  zero(dv);
  const bool sinks = dsinks.defined();
  if (sinks)
    zero(dsinks);
  const int64_t s = d.seq, t = d.keys(), H = d.heads;
  check(H * s < (int64_t(1) << 31), fn, "more than 2^31 score rows a sample");
  // One sample's heads at a time, as the forward: the gradient of its
  // probabilities [H, s, t] and its sinks' rows [H, s].
  Tensor sinkRows = sinks ? Tensor({H, s}) : Tensor();
  Tensor dP({H, s, t});
  const bool drop = d.dropout.rate > 0.0f;
  Tensor dropped = drop ? Tensor({H, s, t}) : Tensor();
  const bool lse = detail::savesLogSumExp(probs, d);
  Tensor again = lse ? Tensor({H, s, t}) : Tensor();
  AttnBuffers buf{q.f32(),  k.f32(),  v.f32(),  dout.f32(),
                  nullptr,  dq.f32(), dk.f32(), dv.f32(),
                  nullptr,  nullptr,  dP.f32()};
  const float sc = d.softmaxScale();
  for (int64_t b = 0; b < d.batch; ++b) {
    buf.p = lse ? again.f32() : probs.f32() + b * H * s * t;
    buf.pv = drop ? dropped.f32() : buf.p;
    if (lse) {
      // The probabilities again: the scores' products, then
      // exp(score - lse) under the forward's mask.
      attentionGemms(buf, d, b, detail::AttnPhase::Scores, fn);
      TRIDENT_LAUNCH(kProbsFromLse, unsigned(H * s), rowThreads(t), 0,
                     stream())(buf.p, probs.f32() + b * H * s, s, t,
                               d.qOffset, d.window, d.causal);
      launched(fn);
    }
    // out = D(P) V with D the dropout mask: dV = D(P)^T dO, and the
    // probabilities' gradient is D(dO V^T).
    if (drop)
      for (int64_t h = 0; h < H; ++h)
        probDropout(buf.pv + h * s * t, buf.p + h * s * t, b, h, d, fn);
    attentionGemms(buf, d, b, detail::AttnPhase::BackwardValues, fn);
    if (drop)
      for (int64_t h = 0; h < H; ++h)
        probDropout(buf.dp + h * s * t, buf.dp + h * s * t, b, h, d, fn);
    TRIDENT_LAUNCH(kSoftmaxBwd, unsigned(H * s), rowThreads(t), 0, stream())(
        buf.dp, buf.p, t, sc, sinks ? sinkRows.f32() : nullptr);
    launched(fn);
    if (sinks) {
      TRIDENT_LAUNCH(kAccumulateSums, unsigned(H), rowThreads(s), 0, stream())(
          dsinks.f32(), sinkRows.f32(), s);
      launched(fn);
    }
    attentionGemms(buf, d, b, detail::AttnPhase::BackwardKeys, fn);
  }
}

namespace {
} // namespace

void bagPoolForward(Tensor &out, const Tensor &x, int64_t bag, bool mean) {
  const char *fn = "bagPoolForward";
  detail::checkBagPool(out, x, bag, fn);
  const int64_t d = out.dim(-1), n = out.numel() / d;
  if (!n)
    return;
  TRIDENT_LAUNCH(kBagPool, blocksFor(n * d), kThreads, 0, stream())(
      out.f32(), x.f32(), n, bag, d, mean ? 1.0f / float(bag) : 1.0f);
  launched(fn);
}

void bagPoolBackward(Tensor &dx, const Tensor &dout, int64_t bag, bool mean) {
  const char *fn = "bagPoolBackward";
  detail::checkBagPool(dout, dx, bag, fn);
  const int64_t d = dout.dim(-1), n = dout.numel() / d;
  if (!n)
    return;
  TRIDENT_LAUNCH(kBagPoolBwd, blocksFor(n * bag * d), kThreads, 0, stream())(
      dx.f32(), dout.f32(), n, bag, d, mean ? 1.0f / float(bag) : 1.0f);
  launched(fn);
}

namespace {
/// Copies the F features [n, d] into T [n, F, d] (toStack) or back.
void stackFeatures(const Tensor &T, const std::vector<Tensor> &features,
                   int64_t n, int64_t d, bool toStack, const char *fn) {
  const int64_t F = int64_t(features.size());
  const size_t row = sizeof(float) * size_t(d);
  for (int64_t a = 0; a < F; ++a) {
    float *stacked = T.f32() + a * d;
    float *f = features[size_t(a)].f32();
    cuda::check(toStack ? cudaMemcpy2DAsync(stacked, row * F, f, row, row,
                                            size_t(n),
                                            cudaMemcpyDeviceToDevice, stream())
                        : cudaMemcpy2DAsync(f, row, stacked, row * F, row,
                                            size_t(n),
                                            cudaMemcpyDeviceToDevice,
                                            stream()),
                fn);
  }
}
} // namespace

void dotInteractionForward(Tensor &out, const std::vector<Tensor> &features) {
  const char *fn = "dotInteractionForward";
  int64_t n, d;
  detail::checkDotInteraction(out, features, fn, n, d);
  if (!n)
    return;
  const int64_t F = int64_t(features.size());
  Tensor T({n, F, d});
  stackFeatures(T, features, n, d, true, fn);
  TRIDENT_LAUNCH(kDotInteract, blocksFor(n * out.dim(-1)), kThreads, 0, stream())(
      out.f32(), T.f32(), n, F, d);
  launched(fn);
}

void dotInteractionBackward(const std::vector<Tensor> &dfeatures,
                            const Tensor &dout,
                            const std::vector<Tensor> &features) {
  const char *fn = "dotInteractionBackward";
  int64_t n, d;
  detail::checkDotInteraction(dout, features, fn, n, d);
  detail::checkDotInteractionGrads(dfeatures, features.size(), n, d, fn);
  if (!n)
    return;
  const int64_t F = int64_t(features.size());
  Tensor T({n, F, d}), dT({n, F, d});
  stackFeatures(T, features, n, d, true, fn);
  TRIDENT_LAUNCH(kDotInteractBwd, blocksFor(n * F * d), kThreads, 0, stream())(
      dT.f32(), dout.f32(), T.f32(), n, F, d);
  launched(fn);
  stackFeatures(dT, dfeatures, n, d, false, fn);
}

void binaryCrossEntropyForward(Tensor &lossSum, const Tensor &logits,
                               const Tensor &labels) {
  const char *fn = "binaryCrossEntropyForward";
  detail::checkBce(logits, labels, fn);
  check(lossSum.numel() == 1, fn, "lossSum must have one element");
  if (!logits.numel())
    return;
  // As on the CPU: a label other than 0 or 1 is an error.
  for (int32_t y : labels.toHostI32())
    check(y == 0 || y == 1, fn,
          "label " + std::to_string(y) + " is not 0 or 1");
  TRIDENT_LAUNCH(kBce, 1, kThreads, 0, stream())(lossSum.f32(), logits.f32(), labels.i32(),
                                     logits.numel());
  launched(fn);
}

void binaryCrossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                                const Tensor &labels, float gradScale) {
  const char *fn = "binaryCrossEntropyBackward";
  detail::checkBce(logits, labels, fn);
  sameNumel(dlogits, logits, fn);
  if (!logits.numel())
    return;
  TRIDENT_LAUNCH(kBceBwd, blocksFor(logits.numel()), kThreads, 0, stream())(
      dlogits.f32(), logits.f32(), labels.i32(), logits.numel(), gradScale);
  launched(fn);
}

void crossEntropyForward(Tensor &lossSum, Tensor &lse, const Tensor &logits,
                         const Tensor &targets) {
  const char *fn = "crossEntropyForward";
  int64_t n, V;
  detail::checkCrossEntropy(lossSum, lse, logits, targets, fn, n, V);
  if (!n)
    return;
  // As on the CPU: a target outside the vocabulary is an error, not a
  // silently smaller loss.
  for (int32_t t : targets.toHostI32())
    check(t >= 0 && t < V, fn,
          "target " + std::to_string(t) + " outside [0, " +
              std::to_string(V) + ")");
  rowGrid(n, fn);
  Tensor mx({n}), z({n}), tl({n});
  TRIDENT_LAUNCH(kRowMax, unsigned(n), rowThreads(V), 0, stream())(mx.f32(), logits.f32(), V,
                                                  V);
  launched(fn);
  TRIDENT_LAUNCH(kSumExp, unsigned(n), rowThreads(V), 0, stream())(
      z.f32(), tl.f32(), logits.f32(), mx.f32(), targets.i32(), V, V, 0);
  launched(fn);
  TRIDENT_LAUNCH(kCeFinish, 1, kThreads, 0, stream())(lossSum.f32(), lse.f32(), mx.f32(), z.f32(),
                                   tl.f32(), n);
  launched(fn);
}

void vocabParallelCrossEntropyForward(Tensor &lossSum, Tensor &lse,
                                      const Tensor &logits,
                                      const Tensor &targets,
                                      int64_t vocabOffset, const Group &tp,
                                      int64_t vocab) {
  const char *fn = "vocabParallelCrossEntropyForward";
  int64_t n, V;
  detail::checkCrossEntropy(lossSum, lse, logits, targets, fn, n, V);
  // No rows here still takes part in the tp collectives, as on the CPU.
  const int64_t padded = V * std::max(1, detail::groupImpl(tp, fn).size);
  const int64_t real = detail::realVocab(vocab, padded, fn);
  const int64_t valid = detail::validColumns(real, vocabOffset, V);
  // A target outside the whole vocabulary would match no shard and
  // silently lower the loss.
  for (int32_t t : targets.toHostI32())
    check(t >= 0 && t < real, fn,
          "target " + std::to_string(t) + " outside [0, " +
              std::to_string(real) + ")");
  rowGrid(n, fn);
  Tensor mx({n}), z({n}), tl({n});
  if (n) {
    TRIDENT_LAUNCH(kRowMax, unsigned(n), rowThreads(V), 0, stream())(mx.f32(), logits.f32(),
                                                    V, valid);
    launched(fn);
  }
  allReduceMax(mx, tp);
  if (n) {
    TRIDENT_LAUNCH(kSumExp, unsigned(n), rowThreads(V), 0, stream())(
        z.f32(), tl.f32(), logits.f32(), mx.f32(), targets.i32(), V, valid,
        vocabOffset);
    launched(fn);
  }
  allReduceSum(z, tp);
  allReduceSum(tl, tp);
  if (!n)
    return;
  TRIDENT_LAUNCH(kCeFinish, 1, kThreads, 0, stream())(lossSum.f32(), lse.f32(), mx.f32(), z.f32(),
                                   tl.f32(), n);
  launched(fn);
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
  if (!n)
    return;
  const int64_t valid =
      vocab > 0 ? detail::validColumns(vocab, vocabOffset, V) : V;
  TRIDENT_LAUNCH(kCeBwd, blocksFor(n * V), kThreads, 0, stream())(
      dlogits.f32(), logits.f32(), targets.i32(), lse.f32(), n, V, valid,
      vocabOffset, gradScale);
  launched(fn);
}

void adamUpdate(Tensor &param, const Tensor &grad, Tensor &m, Tensor &v,
                const AdamConfig &cfg, int64_t step) {
  float bc1, bc2;
  if (!detail::adamStep(param, grad, m, v, cfg, step, bc1, bc2))
    return;
  TRIDENT_LAUNCH(kAdam, blocksFor(param.numel()), kThreads, 0, stream())(
      param.f32(), grad.f32(), m.f32(), v.f32(), param.numel(), cfg.lr,
      cfg.beta1, cfg.beta2, cfg.eps, cfg.weightDecay, bc1, bc2);
  launched("adamUpdate");
}

void adamUpdateMany(const std::vector<AdamTensors> &list, const AdamConfig &cfg,
                    int64_t step) {
  const char *fn = "adamUpdateMany";
  AdamLaunch a{};
  int64_t blocks = 0;
  float bc1 = 1.0f, bc2 = 1.0f;
  auto flush = [&] {
    if (a.count == 0)
      return;
    TRIDENT_LAUNCH(kAdamMany, unsigned(blocks), kThreads, 0, stream())(
        a, cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weightDecay, bc1, bc2);
    launched(fn);
    a = AdamLaunch{};
    blocks = 0;
  };
  for (const AdamTensors &t : list) {
    if (!detail::adamStep(t.param, t.grad, t.m, t.v, cfg, step, bc1, bc2))
      continue; // nothing to update
    const int64_t need = (t.param.numel() + kAdamChunk - 1) / kAdamChunk;
    if (a.count == kAdamTensors || blocks + need > 65535)
      flush();
    if (need > 65535) { // a tensor of over 2^30 elements: a launch of its own
      Tensor p = t.param, m = t.m, v = t.v; // views
      adamUpdate(p, t.grad, m, v, cfg, step);
      continue;
    }
    const int64_t k = a.count++;
    a.p[k] = t.param.f32(), a.g[k] = t.grad.f32();
    a.m[k] = t.m.f32(), a.v[k] = t.v.f32();
    a.n[k] = t.param.numel(), a.firstBlock[k] = blocks;
    blocks += need;
  }
  flush();
}

// --- mixture of experts: the router (Common/MoERouting.h) ----------------
namespace {
__global__ void kRouterLogits(double *logit, const float *x,
                              const float *router, const float *bias,
                              int64_t rows, int64_t h, int64_t E) {
  GRID_STRIDE(i, rows * E) {
    logit[i] = moe::routerLogit(x + (i / E) * h, router, bias, h, E, i % E);
  }
}
/// One thread a row: its logits (overwritten), flagged when one is not
/// finite, else routed.
__global__ void kRouteRows(float *flag, double *logit, float *choice,
                           double *groupScore, float *prob, int32_t *expert,
                           float *weight, const float *select,
                           moe::RouteSpec s, int64_t rows) {
  GRID_STRIDE(q, rows) {
    double *l = logit + q * s.E;
    bool ok = true;
    for (int64_t e = 0; e < s.E; ++e)
      ok = ok && moe::finite(l[e]);
    flag[q] = ok ? 0.0f : 1.0f;
    if (ok)
      moe::routeToken(s, l, select, prob + q * s.E, choice + q * s.E,
                      groupScore + q * s.groups, expert + q * s.k,
                      weight + q * s.k);
  }
}
/// chunkFirst[c]: the first flagged row of rows c * kChoiceChunk ..
/// (c + 1) * kChoiceChunk - 1, or -1.
__global__ void kFirstFlaggedInChunk(float *chunkFirst, const float *flag,
                                     int64_t rows) {
  const int64_t chunks = (rows + moe::kChoiceChunk - 1) / moe::kChoiceChunk;
  GRID_STRIDE(c, chunks) {
    int64_t q = c * moe::kChoiceChunk;
    const int64_t end =
        q + moe::kChoiceChunk < rows ? q + moe::kChoiceChunk : rows;
    while (q < end && flag[q] == 0.0f)
      ++q;
    chunkFirst[c] = q < end ? float(q) : -1.0f;
  }
}
/// first[0]: the first flagged row, or -1 (one thread, over the chunks).
__global__ void kFirstFlagged(int32_t *first, const float *chunkFirst,
                              int64_t chunks) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int64_t c = 0;
    while (c < chunks && chunkFirst[c] < 0.0f)
      ++c;
    first[0] = c < chunks ? int32_t(chunkFirst[c]) : -1;
  }
}
__global__ void kRouterDlogit(float *dlogit, float *dp, const float *prob,
                              const int32_t *expert, const float *weight,
                              const float *dgate, moe::RouteSpec s,
                              int64_t rows) {
  GRID_STRIDE(q, rows) {
    moe::routerGradToken(s, prob + q * s.E, expert + q * s.k,
                         weight + q * s.k, dgate + q * s.k, dp + q * s.E,
                         dlogit + q * s.E);
  }
}
__global__ void kRouterBiasGrad(float *db, const float *dlogit, int64_t rows,
                                int64_t E) {
  GRID_STRIDE(e, E) { db[e] = moe::routerBiasGrad(dlogit, rows, E, e, db[e]); }
}
__global__ void kRouterWeightGrad(float *dr, const float *x,
                                  const float *dlogit, int64_t rows,
                                  int64_t h, int64_t E) {
  GRID_STRIDE(i, h * E) {
    dr[i] = moe::routerWeightGrad(x, dlogit, rows, h, E, i / E, i % E, dr[i]);
  }
}
__global__ void kRouterInputGrad(float *dx, const float *router,
                                 const float *dlogit, int64_t rows, int64_t h,
                                 int64_t E) {
  GRID_STRIDE(i, rows * h) {
    dx[i] = moe::routerInputGrad(router, dlogit + (i / h) * E, E, i % h);
  }
}
/// counts[chunk * experts + e]: how many of the chunk's choices went to
/// expert firstExpert + e (Common/MoEExperts.h, kChoiceChunk).
__global__ void kChoiceCounts(int32_t *counts, const int32_t *expert, int64_t nk,
                              int64_t firstExpert, int64_t experts) {
  const int64_t chunks = (nk + moe::kChoiceChunk - 1) / moe::kChoiceChunk;
  GRID_STRIDE(i, chunks * experts) {
    const int64_t from = (i / experts) * moe::kChoiceChunk;
    const int64_t to = from + moe::kChoiceChunk < nk ? from + moe::kChoiceChunk
                                                     : nk;
    counts[i] = int32_t(
        moe::choiceCount(expert, from, to, firstExpert + i % experts));
  }
}
/// Per expert, each chunk's first row among the expert's (offsets, in the
/// counts' layout; null: not wanted) and the expert's total.
__global__ void kChunkOffsets(int32_t *offsets, int32_t *totals,
                              const int32_t *counts, int64_t chunks,
                              int64_t experts) {
  GRID_STRIDE(e, experts) {
    int32_t running = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      if (offsets)
        offsets[c * experts + e] = running;
      running += counts[c * experts + e];
    }
    totals[e] = running;
  }
}
/// begin[e] = the sum of totals[0 .. e - 1], e = 0 .. experts (one thread).
__global__ void kExpertBegin(int32_t *begin, const int32_t *totals,
                             int64_t experts) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    int32_t running = 0;
    for (int64_t e = 0; e < experts; ++e) {
      begin[e] = running;
      running += totals[e];
    }
    begin[experts] = running;
  }
}
__global__ void kAddCounts(float *load, const int32_t *totals,
                           int64_t experts) {
  GRID_STRIDE(e, experts) { load[e] += float(totals[e]); }
}
__global__ void kFillExpertRows(const int32_t *expert, const float *weight,
                                const int32_t *begin, const int32_t *offsets,
                                int32_t *token, int32_t *slot,
                                float *rowWeight, int32_t *rowExpert,
                                int32_t *slotRow, moe::ExpertSpec s) {
  const int64_t nk = s.n * s.k;
  const int64_t chunks = (nk + moe::kChoiceChunk - 1) / moe::kChoiceChunk;
  GRID_STRIDE(i, chunks * s.local) {
    const int64_t e = i % s.local, from = (i / s.local) * moe::kChoiceChunk;
    const int64_t to = from + moe::kChoiceChunk < nk ? from + moe::kChoiceChunk
                                                     : nk;
    moe::fillExpertRows(s, expert, weight, e, from, to,
                        int64_t(begin[e]) + offsets[i], token, slot,
                        rowWeight, rowExpert, slotRow);
  }
}
__global__ void kMoeGather(float *out, const float *src, const int32_t *token,
                           const float *scale, int64_t M, int64_t cols) {
  GRID_STRIDE(i, M * cols) {
    const int64_t q = i / cols;
    const float v = src[int64_t(token[q]) * cols + i % cols];
    out[i] = scale ? scale[q] * v : v;
  }
}
__global__ void kMoeAddBias(float *a, const float *bIn, const int32_t *rowExpert,
                            int64_t M, int64_t fin) {
  GRID_STRIDE(i, M * fin) {
    a[i] += bIn[int64_t(rowExpert[i / fin]) * fin + i % fin];
  }
}
__global__ void kMoeHidden(float *u, const float *a, moe::ExpertSpec s,
                           int64_t M) {
  GRID_STRIDE(i, M * s.f) {
    u[i] = moe::hiddenValue(s, a + (i / s.f) * s.fin, i % s.f);
  }
}
__global__ void kMoeCombine(float *y, const float *rows, const float *weight,
                            const float *bias, const int32_t *rowExpert,
                            const int32_t *slotRow, moe::ExpertSpec s) {
  GRID_STRIDE(i, s.n * s.h) {
    y[i] = moe::combineToken(s, rows, weight, bias, rowExpert, slotRow,
                             i / s.h, i % s.h);
  }
}
__global__ void kRowGateGrad(float *dgate, const int32_t *slot, const float *u,
                             const float *back, const float *bOut,
                             const int32_t *rowExpert, const float *dy,
                             moe::ExpertSpec s, int64_t M) {
  GRID_STRIDE(q, M) {
    dgate[slot[q]] = moe::rowGateGrad(
        s, u + q * s.f, back + q * s.f,
        bOut ? bOut + int64_t(rowExpert[q]) * s.h : nullptr, dy + q * s.h);
  }
}
__global__ void kHiddenGrad(float *da, const float *a, const float *back,
                            const float *weight, moe::ExpertSpec s,
                            int64_t M) {
  GRID_STRIDE(i, M * s.f) {
    const int64_t q = i / s.f, j = i % s.f;
    moe::hiddenGrad(s, a + q * s.fin, weight[q] * back[i], da + q * s.fin, j);
  }
}
__global__ void kExpertColumnSum(float *out, const float *rows,
                                 const float *weight, const int32_t *begin,
                                 int64_t local, int64_t cols) {
  GRID_STRIDE(i, local * cols) {
    const int64_t e = i / cols;
    out[i] = moe::expertColumnSum(rows, weight, int64_t(begin[e]),
                                  int64_t(begin[e + 1]), cols, i % cols,
                                  out[i]);
  }
}
} // namespace

namespace detail {

void moeRoute(Tensor &prob, Tensor &expert, Tensor &weight, Tensor &status,
              const Tensor &x, const Tensor &router, const Tensor &routerBias,
              const Tensor &select, const moe::RouteSpec &s, int64_t begin,
              int64_t end) {
  const char *fn = "moeRoute";
  const int64_t rows = end - begin;
  if (rows <= 0) {
    const int32_t none = -1;
    status.fromHostI32({none});
    return;
  }
  // Doubles in float tensors (cudaMalloc aligns them).
  Tensor logit({rows, 2 * s.E}), choice({rows, s.E}),
      groupScore({rows, 2 * s.groups}), flag({rows});
  double *L = reinterpret_cast<double *>(logit.f32());
  TRIDENT_LAUNCH(kRouterLogits, blocksFor(rows * s.E), kThreads, 0, stream())(
      L, x.f32() + begin * s.h, router.f32(),
      routerBias.defined() ? routerBias.f32() : nullptr, rows, s.h, s.E);
  launched(fn);
  TRIDENT_LAUNCH(kRouteRows, blocksFor(rows), kThreads, 0, stream())(
      flag.f32(), L, choice.f32(),
      reinterpret_cast<double *>(groupScore.f32()), prob.f32(), expert.i32(),
      weight.f32(), select.defined() ? select.f32() : nullptr, s, rows);
  launched(fn);
  const int64_t chunks = (rows + moe::kChoiceChunk - 1) / moe::kChoiceChunk;
  Tensor chunkFirst({chunks});
  TRIDENT_LAUNCH(kFirstFlaggedInChunk, blocksFor(chunks), kThreads, 0,
                 stream())(chunkFirst.f32(), flag.f32(), rows);
  launched(fn);
  TRIDENT_LAUNCH(kFirstFlagged, 1, 32, 0, stream())(status.i32(),
                                                    chunkFirst.f32(), chunks);
  launched(fn);
}

namespace {
/// Counts expert [nk]'s choices of experts firstExpert .. + experts - 1 in
/// chunks; the chunks' offsets (nullptr: not wanted) and each expert's
/// total, added to totals [experts].
void countChoices(Tensor &totals, Tensor *offsets, const Tensor &expert,
                  int64_t firstExpert, int64_t experts, const char *fn) {
  const int64_t nk = expert.numel();
  const int64_t chunks = (nk + moe::kChoiceChunk - 1) / moe::kChoiceChunk;
  Tensor counts({chunks, experts}, DType::I32);
  TRIDENT_LAUNCH(kChoiceCounts, blocksFor(chunks * experts), kThreads, 0,
                 stream())(counts.i32(), expert.i32(), nk, firstExpert,
                           experts);
  launched(fn);
  if (offsets)
    *offsets = Tensor({chunks, experts}, DType::I32);
  TRIDENT_LAUNCH(kChunkOffsets, blocksFor(experts), kThreads, 0, stream())(
      offsets ? offsets->i32() : nullptr, totals.i32(), counts.i32(), chunks,
      experts);
  launched(fn);
}
} // namespace

void moeExpertLoad(Tensor &load, const Tensor &expert) {
  const char *fn = "moeExpertLoad";
  const int64_t E = load.numel();
  if (!E || !expert.numel())
    return;
  Tensor totals({E}, DType::I32);
  countChoices(totals, nullptr, expert, 0, E, fn);
  TRIDENT_LAUNCH(kAddCounts, blocksFor(E), kThreads, 0, stream())(
      load.f32(), totals.i32(), E);
  launched(fn);
}

void moeRouterGrad(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                   const Tensor &dgate, const Tensor &x, const Tensor &router,
                   const Tensor &prob, const Tensor &expert,
                   const Tensor &weight, const moe::RouteSpec &s,
                   int64_t begin, int64_t end) {
  const char *fn = "moeRouterGrad";
  const int64_t rows = end - begin;
  if (rows <= 0)
    return;
  Tensor dlogit({rows, s.E}), dp({rows, s.E});
  TRIDENT_LAUNCH(kRouterDlogit, blocksFor(rows), kThreads, 0, stream())(
      dlogit.f32(), dp.f32(), prob.f32(), expert.i32(), weight.f32(),
      dgate.f32() + begin * s.k, s, rows);
  launched(fn);
  if (dRouterBias.defined()) {
    TRIDENT_LAUNCH(kRouterBiasGrad, blocksFor(s.E), kThreads, 0, stream())(
        dRouterBias.f32(), dlogit.f32(), rows, s.E);
    launched(fn);
  }
  TRIDENT_LAUNCH(kRouterWeightGrad, blocksFor(s.h * s.E), kThreads, 0,
                 stream())(drouter.f32(), x.f32() + begin * s.h, dlogit.f32(),
                           rows, s.h, s.E);
  launched(fn);
  TRIDENT_LAUNCH(kRouterInputGrad, blocksFor(rows * s.h), kThreads, 0,
                 stream())(dx.f32(), router.f32(), dlogit.f32(), rows, s.h,
                           s.E);
  launched(fn);
}

MoeRows moeExpertRows(const Tensor &expert, const Tensor &weight,
                      const Tensor &status, const moe::ExpertSpec &s) {
  const char *fn = "moeExpertRows";
  MoeRows r;
  r.hostBegin.assign(size_t(s.local + 1), 0);
  r.begin = Tensor({s.local + 1}, DType::I32);
  r.slotRow = Tensor({s.n * s.k}, DType::I32);
  Tensor offsets;
  // The experts' row counts, and after them the routing's status: one
  // copy to the host.
  Tensor totals({s.local + 1}, DType::I32);
  if (s.local > 0 && s.n > 0)
    countChoices(totals, &offsets, expert, s.first, s.local, fn);
  copyOnBackend(totals.i32() + s.local, status.i32(), sizeof(int32_t));
  const std::vector<int32_t> c = totals.toHostI32();
  if ((r.badRow = c[size_t(s.local)]) >= 0)
    return r;
  for (int64_t e = 0; e < s.local; ++e)
    r.hostBegin[size_t(e + 1)] = r.hostBegin[size_t(e)] + c[size_t(e)];
  // The same offsets on the device, summed there (no upload, no wait).
  TRIDENT_LAUNCH(kExpertBegin, 1, 32, 0, stream())(r.begin.i32(),
                                                   totals.i32(), s.local);
  launched(fn);
  const int64_t M = r.size();
  r.token = Tensor({M}, DType::I32), r.slot = Tensor({M}, DType::I32);
  r.weight = Tensor({M}), r.rowExpert = Tensor({M}, DType::I32);
  if (M > 0) {
    TRIDENT_LAUNCH(kFillExpertRows, blocksFor(offsets.numel()), kThreads, 0,
                   stream())(expert.i32(), weight.f32(), r.begin.i32(),
                             offsets.i32(), r.token.i32(), r.slot.i32(),
                             r.weight.f32(), r.rowExpert.i32(),
                             r.slotRow.i32(), s);
    launched(fn);
  }
  return r;
}

void moeGather(Tensor &out, const Tensor &src, const Tensor &token,
               const Tensor &scale) {
  const int64_t M = token.numel(), cols = src.dim(-1);
  if (!M)
    return;
  TRIDENT_LAUNCH(kMoeGather, blocksFor(M * cols), kThreads, 0, stream())(
      out.f32(), src.f32(), token.i32(),
      scale.defined() ? scale.f32() : nullptr, M, cols);
  launched("moeGather");
}

void moeHidden(Tensor &a, Tensor &u, const Tensor &bIn, const MoeRows &rows,
               const moe::ExpertSpec &s) {
  const int64_t M = rows.size();
  if (!M)
    return;
  if (bIn.defined()) {
    TRIDENT_LAUNCH(kMoeAddBias, blocksFor(M * s.fin), kThreads, 0, stream())(
        a.f32(), bIn.f32(), rows.rowExpert.i32(), M, s.fin);
    launched("moeHidden");
  }
  TRIDENT_LAUNCH(kMoeHidden, blocksFor(M * s.f), kThreads, 0, stream())(
      u.f32(), a.f32(), s, M);
  launched("moeHidden");
}

void moeCombine(Tensor &y, const Tensor &rowsOut, bool weighted,
                const Tensor &bias, const MoeRows &rows,
                const moe::ExpertSpec &s) {
  if (s.n * s.h == 0)
    return;
  TRIDENT_LAUNCH(kMoeCombine, blocksFor(s.n * s.h), kThreads, 0, stream())(
      y.f32(), rowsOut.f32(), weighted ? rows.weight.f32() : nullptr,
      weighted && bias.defined() ? bias.f32() : nullptr, rows.rowExpert.i32(),
      rows.slotRow.i32(), s);
  launched("moeCombine");
}

void moeGateGrads(Tensor &dgate, Tensor &dbOut, const Tensor &u,
                  const Tensor &back, const Tensor &dyRows,
                  const Tensor &bOut, const MoeRows &rows,
                  const moe::ExpertSpec &s) {
  const char *fn = "moeGateGrads";
  const int64_t M = rows.size();
  cuda::check(cudaMemsetAsync(dgate.f32(), 0,
                              sizeof(float) * size_t(s.n * s.k), stream()),
              fn);
  if (!M)
    return;
  TRIDENT_LAUNCH(kRowGateGrad, blocksFor(M), kThreads, 0, stream())(
      dgate.f32(), rows.slot.i32(), u.f32(), back.f32(),
      bOut.defined() ? bOut.f32() : nullptr, rows.rowExpert.i32(),
      dyRows.f32(), s, M);
  launched(fn);
  if (dbOut.defined()) {
    TRIDENT_LAUNCH(kExpertColumnSum, blocksFor(s.local * s.h), kThreads, 0,
                   stream())(dbOut.f32(), dyRows.f32(), rows.weight.f32(),
                             rows.begin.i32(), s.local, s.h);
    launched(fn);
  }
}

void moeHiddenGrads(Tensor &da, Tensor &dbIn, const Tensor &a,
                    const Tensor &back, const MoeRows &rows,
                    const moe::ExpertSpec &s) {
  const char *fn = "moeHiddenGrads";
  const int64_t M = rows.size();
  if (!M)
    return;
  TRIDENT_LAUNCH(kHiddenGrad, blocksFor(M * s.f), kThreads, 0, stream())(
      da.f32(), a.f32(), back.f32(), rows.weight.f32(), s, M);
  launched(fn);
  if (dbIn.defined()) {
    TRIDENT_LAUNCH(kExpertColumnSum, blocksFor(s.local * s.fin), kThreads, 0,
                   stream())(dbIn.f32(), da.f32(), nullptr, rows.begin.i32(),
                             s.local, s.fin);
    launched(fn);
  }
}

} // namespace detail

} // namespace trident::rt
