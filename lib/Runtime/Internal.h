//===- Internal.h - Shared internals of the runtime backends ---*- C++ -*-===//
//
// Declarations that the backend-neutral sources (Common/) and the backends
// (Cpu/, Cuda/) share. Never included by emitted programs: it includes MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_RUNTIME_INTERNAL_H
#define TRIDENT_LIB_RUNTIME_INTERNAL_H

#include "trident/Runtime/Runtime.h"

#include <mpi.h>

#include <string>
#include <vector>

namespace trident::rt {

struct Group::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::string name;
  std::vector<int> worldRanks;
  /// Backend state attached to the group (the NCCL communicator on CUDA).
  std::shared_ptr<void> backend;
  ~Impl();
};

namespace detail {

/// Throws rt::Error("<fn>: <message>").
[[noreturn]] void fail(const char *fn, const std::string &message);
/// Throws unless `cond`.
inline void check(bool cond, const char *fn, const std::string &message) {
  if (!cond)
    fail(fn, message);
}
std::string shapeToString(const std::vector<int64_t> &shape);

/// Argument checks of ropeApply, shared by the backends.
inline void checkRope(const Tensor &y, const Tensor &x, int64_t seq,
                      int64_t heads, int64_t headDim, int64_t rotaryDim,
                      double theta, const char *fn) {
  check(seq > 0 && heads > 0 && headDim > 0, fn,
        "seq, heads and headDim must be positive");
  check(rotaryDim > 0 && rotaryDim <= headDim && rotaryDim % 2 == 0, fn,
        "rotaryDim " + std::to_string(rotaryDim) +
            " must be even and within headDim " + std::to_string(headDim));
  check(theta > 1, fn, "theta must exceed 1");
  check(y.numel() == x.numel(), fn,
        "sizes differ: " + y.shapeString() + " vs " + x.shapeString());
  check(x.numel() % (heads * headDim) == 0 &&
            (x.numel() / (heads * headDim)) % seq == 0,
        fn,
        "x " + x.shapeString() + " is not whole sequences of " +
            std::to_string(seq) + " rows of " + std::to_string(heads) +
            " heads x " + std::to_string(headDim));
}

/// The group's implementation, or an error naming `fn` for an empty Group.
Group::Impl &groupImpl(const Group &g, const char *fn);
/// Same, and also an error if this rank is not a member (size() == 0).
Group::Impl &memberImpl(const Group &g, const char *fn);

// Implemented by each backend.
/// Zero-filled storage of `bytes` bytes in the backend's memory.
std::shared_ptr<void> allocate(size_t bytes);
void copyToHost(void *dst, const void *src, size_t bytes);
void copyFromHost(void *dst, const void *src, size_t bytes);
void copyOnBackend(void *dst, const void *src, size_t bytes);
/// Called once after MPI_Init (device selection, handles, streams).
void backendInit();
/// Called from finalize() before MPI_Finalize.
void backendFinalize();
/// Called collectively by every member after `g` got its MPI communicator.
void backendGroupCreated(Group::Impl &g);

} // namespace detail
} // namespace trident::rt

#endif // TRIDENT_LIB_RUNTIME_INTERNAL_H
