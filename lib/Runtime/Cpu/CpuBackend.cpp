//===- CpuBackend.cpp - Host memory and MPI communication -----------------===//
//
// The CPU backend keeps tensors in host memory and communicates with MPI.
// Sums are reduced with MPI_Reduce to group rank 0 followed by MPI_Bcast, so
// every member holds bit-identical results and the summation order depends
// only on the group and the message size.
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"

#include <cstdlib>
#include <cstring>
#include <map>

namespace trident::rt {

using detail::check;

const char *backendName() { return "cpu"; }
bool setTf32Gemms(bool) { return false; }
bool setBf16Gemms(Bf16Gemms) { return false; }
bool setFusedAttention(bool) { return false; }
void synchronize() {}
void synchronizeCompute() {}

namespace detail {
std::shared_ptr<void> allocate(size_t bytes) {
  void *p = std::calloc(bytes, 1);
  if (!p)
    fail("Tensor", "out of host memory allocating " + std::to_string(bytes) +
                       " bytes");
  return std::shared_ptr<void>(p, [](void *q) { std::free(q); });
}
void copyToHost(void *dst, const void *src, size_t bytes) {
  noteHostCopy(bytes);
  std::memmove(dst, src, bytes);
}
void copyFromHost(void *dst, const void *src, size_t bytes) {
  noteHostCopy(bytes);
  std::memmove(dst, src, bytes);
}
void copyOnBackend(void *dst, const void *src, size_t bytes) {
  std::memmove(dst, src, bytes);
}
void backendInit() {}
void backendFinalize() {}
void backendGroupCreated(Group::Impl &) {}
} // namespace detail

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
void mpiCheck(int rc, const char *fn, const Group::Impl &g) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  detail::fail(fn, "MPI error on group '" + g.name + "': " +
                       std::string(text, len));
}

/// Splits `shape` around `dim` into (outer, D, inner) element counts.
void around(const Tensor &t, int dim, const char *fn, int64_t &outer,
            int64_t &d, int64_t &inner) {
  check(dim >= 0 && dim < t.rank(), fn,
        "dimension " + std::to_string(dim) + " out of range for " +
            t.shapeString());
  outer = 1, inner = 1;
  for (int i = 0; i < dim; ++i)
    outer *= t.shape()[i];
  for (int i = dim + 1; i < t.rank(); ++i)
    inner *= t.shape()[i];
  d = t.shape()[dim];
}

/// out [A, g*D, B] <- blocks [g][A, D, B].
void unpackBlocks(float *out, const float *blocks, int g, int64_t a,
                  int64_t d, int64_t b) {
  for (int r = 0; r < g; ++r)
    for (int64_t i = 0; i < a; ++i)
      std::memcpy(out + (i * g + r) * d * b, blocks + (r * a + i) * d * b,
                  sizeof(float) * d * b);
}

/// blocks [g][A, D, B] <- in [A, g*D, B].
void packBlocks(float *blocks, const float *in, int g, int64_t a, int64_t d,
                int64_t b) {
  for (int r = 0; r < g; ++r)
    for (int64_t i = 0; i < a; ++i)
      std::memcpy(blocks + (r * a + i) * d * b, in + (i * g + r) * d * b,
                  sizeof(float) * d * b);
}

} // namespace

void allReduceSum(Tensor &t, const Group &g) {
  const char *fn = "allReduceSum";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (G.size == 1 || t.numel() == 0)
    return;
  int n = static_cast<int>(t.numel());
  void *sendbuf = G.rank == 0 ? MPI_IN_PLACE : t.f32();
  mpiCheck(MPI_Reduce(sendbuf, t.f32(), n, MPI_FLOAT, MPI_SUM, 0, G.comm), fn,
           G);
  mpiCheck(MPI_Bcast(t.f32(), n, MPI_FLOAT, 0, G.comm), fn, G);
}

void allReduceMax(Tensor &t, const Group &g) {
  const char *fn = "allReduceMax";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (G.size == 1 || t.numel() == 0)
    return;
  mpiCheck(MPI_Allreduce(MPI_IN_PLACE, t.f32(), static_cast<int>(t.numel()),
                         MPI_FLOAT, MPI_MAX, G.comm),
           fn, G);
}

void allGather(Tensor &out, const Tensor &in, int dim, const Group &g) {
  const char *fn = "allGather";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  detail::checkScaled(out, in, dim, G.size, 1, fn);
  int64_t a, d, b;
  around(in, dim, fn, a, d, b);
  std::vector<float> blocks(in.numel() * G.size);
  mpiCheck(MPI_Allgather(in.f32(), static_cast<int>(in.numel()), MPI_FLOAT,
                         blocks.data(), static_cast<int>(in.numel()),
                         MPI_FLOAT, G.comm),
           fn, G);
  unpackBlocks(out.f32(), blocks.data(), G.size, a, d, b);
}

void reduceScatterSum(Tensor &out, const Tensor &in, int dim, const Group &g) {
  const char *fn = "reduceScatterSum";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  detail::checkScaled(out, in, dim, 1, G.size, fn);
  int64_t a, d, b;
  around(out, dim, fn, a, d, b);
  std::vector<float> blocks(in.numel());
  packBlocks(blocks.data(), in.f32(), G.size, a, d, b);
  mpiCheck(MPI_Reduce_scatter_block(blocks.data(), out.f32(),
                                    static_cast<int>(out.numel()), MPI_FLOAT,
                                    MPI_SUM, G.comm),
           fn, G);
}

void allToAll(Tensor &out, const Tensor &in, int splitDim, int concatDim,
              const Group &g) {
  const char *fn = "allToAll";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  detail::checkAllToAll(out, in, splitDim, concatDim, G.size, fn);
  std::vector<int64_t> block = in.shape(); // one block of the split
  block[splitDim] /= G.size;
  int64_t a, d, b;
  around(in, splitDim, fn, a, d, b);
  std::vector<float> send(in.numel()), recvd(in.numel());
  packBlocks(send.data(), in.f32(), G.size, a, d / G.size, b);
  int per = static_cast<int>(in.numel() / G.size);
  mpiCheck(MPI_Alltoall(send.data(), per, MPI_FLOAT, recvd.data(), per,
                        MPI_FLOAT, G.comm),
           fn, G);
  Tensor blockT({block}); // only for `around`
  around(blockT, concatDim, fn, a, d, b);
  unpackBlocks(out.f32(), recvd.data(), G.size, a, d, b);
}

void broadcast(Tensor &t, int root, const Group &g) {
  const char *fn = "broadcast";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  check(root >= 0 && root < G.size, fn,
        "root " + std::to_string(root) + " outside group '" + G.name + "'");
  if (G.size == 1 || t.numel() == 0)
    return;
  mpiCheck(MPI_Bcast(t.f32(), static_cast<int>(t.numel()), MPI_FLOAT, root,
                     G.comm),
           fn, G);
}

void barrier(const Group &g) {
  Group::Impl &G = detail::collectiveImpl(g, "barrier");
  mpiCheck(MPI_Barrier(G.comm), "barrier", G);
}

struct Pending::Impl {};
void Pending::wait() {
  impl_.reset();
  finish();
}

// The CPU backend has no separate communication engine: the asynchronous
// collectives complete now, so their results equal the blocking ones bit
// for bit. With TRIDENT_RT_DEFER_ASYNC=1 the result goes to a scratch
// tensor and reaches the caller's only in wait(), as on a GPU where the
// collective may still be running until then.
namespace {
bool deferAsync() {
  static const bool on = [] {
    const char *v = std::getenv("TRIDENT_RT_DEFER_ASYNC");
    return v && std::string(v) == "1";
  }();
  return on;
}
/// The newest held-back result per destination buffer. A GPU runs a
/// rank's collectives in issue order on one stream, so a second one on
/// the same buffer (a gradient summed over tp, then over dp) reads what
/// the first wrote, not what the caller can see yet.
std::map<const float *, Tensor> &heldBack() {
  static std::map<const float *, Tensor> held;
  return held;
}
/// What a collective issued now reads from `t`: its newest held-back
/// result, if any.
Tensor issuedView(const Tensor &t) {
  auto it = heldBack().find(t.f32());
  return it != heldBack().end() ? it->second : t;
}
/// A Pending that copies `result` into `target` when waited for.
///
/// With `in` (the gathers and scatters, and the all-reduce's own buffer):
/// NCCL reads it on the
/// communication stream, possibly until wait(), so it too must stay as it
/// was; a change made before wait() is refused, since the GPU would have
/// sent some of it. An `in` that has a held-back result of its own is left
/// out (waiting for that one writes it).
Pending deferred(Tensor target, Tensor result, const Tensor *in = nullptr,
                 const char *fn = nullptr) {
  Tensor seen;
  if (in && !heldBack().count(in->f32()))
    seen = in->clone();
  heldBack()[target.f32()] = result;
  return Pending(std::make_shared<Pending::Impl>())
      .then([target, result, source = seen.defined() ? *in : Tensor(), seen,
             fn]() mutable {
        bool unchanged =
            !seen.defined() ||
            std::memcmp(source.f32(), seen.f32(),
                        sizeof(float) * size_t(seen.numel())) == 0;
        copy(target, result);
        auto it = heldBack().find(target.f32());
        if (it != heldBack().end() && it->second.f32() == result.f32())
          heldBack().erase(it);
        if (!unchanged)
          detail::fail(fn, "its input " + source.shapeString() +
                               " was written before wait(); a GPU may "
                               "still be reading it");
      });
}
} // namespace

Pending allReduceSumAsync(Tensor &t, const Group &g) {
  if (!deferAsync()) {
    allReduceSum(t, g);
    return Pending();
  }
  Tensor result = issuedView(t).clone();
  allReduceSum(result, g);
  // NCCL reads and writes `t` in place until wait(): a write before it is
  // refused, as for the gathers' and scatters' inputs.
  return deferred(t, result, &t, "allReduceSumAsync");
}
Pending reduceScatterSumAsync(Tensor &out, const Tensor &in, int dim,
                              const Group &g) {
  if (!deferAsync()) {
    reduceScatterSum(out, in, dim, g);
    return Pending();
  }
  Tensor result(out.shape());
  reduceScatterSum(result, issuedView(in), dim, g);
  return deferred(out, result, &in, "reduceScatterSumAsync");
}

Pending allGatherAsync(Tensor &out, const Tensor &in, const Group &g) {
  if (!deferAsync()) {
    allGather(out, in, 0, g);
    return Pending();
  }
  Tensor result(out.shape());
  allGather(result, issuedView(in), 0, g);
  return deferred(out, result, &in, "allGatherAsync");
}

namespace detail {
void backendExchange(std::vector<QueuedSend> &sends,
                     std::vector<Receive> &recvs, const char *fn) {
  mpiExchange(sends, recvs, fn);
}
} // namespace detail

} // namespace trident::rt
