//===- Zero.cpp - ZeRO-1 and ZeRO-3 from collectives and Adam -------------===//
//
// Backend-neutral: built only from the public collectives and update
// kernels, so both backends share one definition of the slice layout
// (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
// Parameter Models", SC'20: stage 1 shards optimizer states, stage 2 also
// the gradients, stage 3 also the parameters).
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"

namespace trident::rt {

using detail::check;

ZeroRange zeroRange(int64_t numel, int dpSize, int dpRank) {
  check(dpSize >= 1 && dpRank >= 0 && dpRank < dpSize, "zeroRange",
        "dp rank " + std::to_string(dpRank) + " outside a group of " +
            std::to_string(dpSize));
  check(numel >= 0, "zeroRange", "negative element count");
  ZeroRange r;
  r.chunk = (numel + dpSize - 1) / dpSize;
  r.begin = std::min<int64_t>(numel, dpRank * r.chunk);
  r.end = std::min<int64_t>(numel, r.begin + r.chunk);
  return r;
}

namespace {
/// A [chunk * dp] buffer holding `full` flattened, zero padding at the end.
Tensor padded(const Tensor &full, int64_t chunk, int dpSize) {
  Tensor p({chunk * dpSize});
  if (full.numel()) {
    Tensor head = p.view(0, {full.numel()});
    copy(head, full.reshape({full.numel()}));
  }
  return p;
}

/// Reduce-scatters `grad` into a [chunk] slice (sum over dp).
Tensor reduceScatterFlat(const Tensor &grad, int64_t chunk, const Group &dp) {
  Tensor in = padded(grad, chunk, dp.size());
  Tensor out({chunk});
  reduceScatterSum(out, in, 0, dp);
  return out;
}

/// All-gathers [chunk] slices and copies the first numel into `full`.
void allGatherFlat(Tensor &full, const Tensor &slice, int64_t chunk,
                   const Group &dp) {
  Tensor all({chunk * dp.size()});
  allGather(all, slice.reshape({chunk}), 0, dp);
  if (full.numel()) {
    Tensor flat = full.reshape({full.numel()});
    copy(flat, all.view(0, {full.numel()}));
  }
}
} // namespace

namespace {
/// This rank's slice of `param`, padded to `chunk` (padding 0).
Tensor ownSlice(const Tensor &param, const ZeroRange &r) {
  Tensor pslice({r.chunk});
  int64_t own = r.end - r.begin;
  if (own > 0) {
    Tensor dst = pslice.view(0, {own});
    copy(dst, param.reshape({param.numel()}).view(r.begin, {own}));
  }
  return pslice;
}

void checkStates(const Tensor &m, const Tensor &v, const ZeroRange &r,
                 const char *fn) {
  check(m.numel() == r.chunk && v.numel() == r.chunk, fn,
        "optimizer states must have " + std::to_string(r.chunk) +
            " elements (zeroRange chunk), got " + std::to_string(m.numel()) +
            " and " + std::to_string(v.numel()));
}

void checkSliceGrad(const Tensor &param, const Tensor &sliceGrad,
                    const ZeroRange &r, const char *fn) {
  check(sliceGrad.numel() == r.chunk, fn,
        "slice gradient must have " + std::to_string(r.chunk) +
            " elements for a " + param.shapeString() + " parameter, got " +
            std::to_string(sliceGrad.numel()));
}
} // namespace

void zero1AdamStep(Tensor &param, Tensor &grad, Tensor &m, Tensor &v,
                   const AdamConfig &cfg, int64_t step, const Group &dp) {
  const char *fn = "zero1AdamStep";
  check(param.numel() == grad.numel(), fn,
        "param " + param.shapeString() + " and grad " + grad.shapeString() +
            " differ in size");
  ZeroRange r = zeroRange(param.numel(), dp.size(), dp.rank());
  checkStates(m, v, r, fn);
  zero2AdamStep(param, reduceScatterFlat(grad, r.chunk, dp), m, v, cfg, step,
                dp);
}

void zero1SgdStep(Tensor &param, Tensor &grad, float lr, const Group &dp) {
  check(param.numel() == grad.numel(), "zero1SgdStep",
        "param " + param.shapeString() + " and grad " + grad.shapeString() +
            " differ in size");
  ZeroRange r = zeroRange(param.numel(), dp.size(), dp.rank());
  zero2SgdStep(param, reduceScatterFlat(grad, r.chunk, dp), lr, dp);
}

void zero2AccumulateGrad(Tensor &sliceGrad, const Tensor &fullGrad,
                         const Group &dp) {
  ZeroRange r = zeroRange(fullGrad.numel(), dp.size(), dp.rank());
  checkSliceGrad(fullGrad, sliceGrad, r, "zero2AccumulateGrad");
  zero2AccumulateGradAsync(sliceGrad, fullGrad, dp).wait();
}

Pending zero2AccumulateGradAsync(Tensor &sliceGrad, const Tensor &fullGrad,
                                 const Group &dp) {
  ZeroRange r = zeroRange(fullGrad.numel(), dp.size(), dp.rank());
  checkSliceGrad(fullGrad, sliceGrad, r, "zero2AccumulateGradAsync");
  Tensor in = padded(fullGrad, r.chunk, dp.size());
  Tensor part({r.chunk});
  Pending sum = reduceScatterSumAsync(part, in, 0, dp);
  Tensor acc = sliceGrad.reshape({r.chunk});
  return std::move(sum).then([acc, part]() mutable { axpy(acc, part); });
}

void zero2AdamStep(Tensor &param, const Tensor &sliceGrad, Tensor &m,
                   Tensor &v, const AdamConfig &cfg, int64_t step,
                   const Group &dp) {
  const char *fn = "zero2AdamStep";
  ZeroRange r = zeroRange(param.numel(), dp.size(), dp.rank());
  checkStates(m, v, r, fn);
  checkSliceGrad(param, sliceGrad, r, fn);
  // Update the padded copy of the own slice (padding stays 0: zero grad,
  // zero state, zero param).
  Tensor pslice = ownSlice(param, r);
  adamUpdate(pslice, sliceGrad.reshape({r.chunk}), m, v, cfg, step);
  allGatherFlat(param, pslice, r.chunk, dp);
}

void zero2SgdStep(Tensor &param, const Tensor &sliceGrad, float lr,
                  const Group &dp) {
  ZeroRange r = zeroRange(param.numel(), dp.size(), dp.rank());
  checkSliceGrad(param, sliceGrad, r, "zero2SgdStep");
  Tensor pslice = ownSlice(param, r);
  sgdUpdate(pslice, sliceGrad.reshape({r.chunk}), lr);
  allGatherFlat(param, pslice, r.chunk, dp);
}

namespace {
/// The chunk of a padded parameter ([chunk * dp], see zero2AdamUpdateChunk).
int64_t paddedChunkSize(const Tensor &padded, const Group &dp,
                        const char *fn) {
  check(padded.rank() == 1 && padded.numel() % dp.size() == 0, fn,
        "padded parameter must be flat with a multiple of " +
            std::to_string(dp.size()) + " elements, got " +
            padded.shapeString());
  return padded.numel() / dp.size();
}

/// This rank's chunk of a padded parameter, after checking the slice
/// gradient against it.
Tensor paddedChunk(Tensor &padded, const Tensor &sliceGrad, const Group &dp,
                   const char *fn) {
  const int64_t chunk = paddedChunkSize(padded, dp, fn);
  check(sliceGrad.numel() == chunk, fn,
        "slice gradient must have " + std::to_string(chunk) +
            " elements for a padded " + padded.shapeString() +
            " parameter, got " + std::to_string(sliceGrad.numel()));
  return padded.view(int64_t(dp.rank()) * chunk, {chunk});
}
} // namespace

void zero2AdamUpdateChunk(Tensor &padded, const Tensor &sliceGrad, Tensor &m,
                          Tensor &v, const AdamConfig &cfg, int64_t step,
                          const Group &dp) {
  const char *fn = "zero2AdamUpdateChunk";
  Tensor own = paddedChunk(padded, sliceGrad, dp, fn);
  check(m.numel() == own.numel() && v.numel() == own.numel(), fn,
        "optimizer states must have " + std::to_string(own.numel()) +
            " elements (zeroRange chunk), got " + std::to_string(m.numel()) +
            " and " + std::to_string(v.numel()));
  adamUpdate(own, sliceGrad.reshape({own.numel()}), m, v, cfg, step);
}

void zero2SgdUpdateChunk(Tensor &padded, const Tensor &sliceGrad, float lr,
                         const Group &dp) {
  Tensor own = paddedChunk(padded, sliceGrad, dp, "zero2SgdUpdateChunk");
  sgdUpdate(own, sliceGrad.reshape({own.numel()}), lr);
}

Pending zeroGatherChunksAsync(Tensor &padded, const Group &dp) {
  const int64_t chunk =
      paddedChunkSize(padded, dp, "zeroGatherChunksAsync");
  if (dp.size() == 1) // the chunk is the parameter
    return Pending();
  Tensor own = padded.view(int64_t(dp.rank()) * chunk, {chunk});
  return allGatherAsync(padded, own, dp);
}

namespace {
/// ZeRO-1: the summed slice of `grad` for a padded parameter.
Tensor sliceOfSum(const Tensor &padded, const Tensor &grad, const Group &dp,
                  const char *fn) {
  const int64_t chunk = paddedChunkSize(padded, dp, fn);
  check(grad.numel() <= padded.numel() &&
            zeroRange(grad.numel(), dp.size(), dp.rank()).chunk == chunk,
        fn,
        "gradient " + grad.shapeString() + " does not fit a padded " +
            padded.shapeString() + " parameter over " +
            std::to_string(dp.size()) + " ranks");
  return reduceScatterFlat(grad, chunk, dp);
}
} // namespace

void zero1AdamUpdateChunk(Tensor &padded, const Tensor &grad, Tensor &m,
                          Tensor &v, const AdamConfig &cfg, int64_t step,
                          const Group &dp) {
  Tensor slice = sliceOfSum(padded, grad, dp, "zero1AdamUpdateChunk");
  zero2AdamUpdateChunk(padded, slice, m, v, cfg, step, dp);
}

void zero1SgdUpdateChunk(Tensor &padded, const Tensor &grad, float lr,
                         const Group &dp) {
  Tensor slice = sliceOfSum(padded, grad, dp, "zero1SgdUpdateChunk");
  zero2SgdUpdateChunk(padded, slice, lr, dp);
}

void zero3Gather(Tensor &full, const Tensor &slice, const Group &dp) {
  zero3GatherAsync(full, slice, dp).wait();
}

Pending zero3GatherAsync(Tensor &full, const Tensor &slice,
                         const Group &dp) {
  ZeroRange r = zeroRange(full.numel(), dp.size(), dp.rank());
  check(slice.numel() == r.chunk, "zero3Gather",
        "slice must have " + std::to_string(r.chunk) + " elements for a " +
            full.shapeString() + " parameter over " +
            std::to_string(dp.size()) + " ranks, got " +
            std::to_string(slice.numel()));
  Tensor flat = full.numel() ? full.reshape({full.numel()}) : Tensor();
  // Slices without padding: the members' slices are the parameter in
  // order, gathered straight into it.
  if (flat.numel() && r.chunk * dp.size() == flat.numel())
    return allGatherAsync(flat, slice.reshape({r.chunk}), dp);
  Tensor all({r.chunk * dp.size()});
  Pending gather = allGatherAsync(all, slice.reshape({r.chunk}), dp);
  return std::move(gather).then([flat, all]() mutable {
    if (flat.numel()) {
      Tensor head = all.view(0, {flat.numel()});
      copy(flat, head);
    }
  });
}

void zero3ReduceGrad(Tensor &sliceGrad, const Tensor &fullGrad,
                     const Group &dp) {
  ZeroRange r = zeroRange(fullGrad.numel(), dp.size(), dp.rank());
  check(sliceGrad.numel() == r.chunk, "zero3ReduceGrad",
        "slice gradient must have " + std::to_string(r.chunk) +
            " elements, got " + std::to_string(sliceGrad.numel()));
  Tensor in = padded(fullGrad, r.chunk, dp.size());
  Tensor out = sliceGrad.reshape({r.chunk});
  reduceScatterSum(out, in, 0, dp);
}

void zero3TakeSlice(Tensor &slice, const Tensor &full, const Group &dp) {
  ZeroRange r = zeroRange(full.numel(), dp.size(), dp.rank());
  check(slice.numel() == r.chunk, "zero3TakeSlice",
        "slice must have " + std::to_string(r.chunk) + " elements, got " +
            std::to_string(slice.numel()));
  zero(slice);
  int64_t own = r.end - r.begin;
  if (own > 0) {
    Tensor dst = slice.reshape({r.chunk}).view(0, {own});
    copy(dst, full.reshape({full.numel()}).view(r.begin, {own}));
  }
}

} // namespace trident::rt
