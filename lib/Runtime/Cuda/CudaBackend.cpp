//===- CudaBackend.cpp - Device memory, NCCL collectives, p2p -------------===//
//
// Kernels run on one compute stream; collectives run on one communication
// stream. Each blocking collective records an event on the compute stream
// that the communication stream waits for, runs the NCCL call, and makes
// the compute stream wait for an event after it: the host never blocks, and
// allReduceSumAsync lets compute continue until Pending::wait().
//
// Point-to-point transfers are NCCL groups of sends and one receive on the
// same communication stream, formed by Common/P2p.cpp (see docs/runtime.md,
// "Pipeline point-to-point"); the CPU twin runs the same groups over MPI
// with the same blocking rule, so the end-to-end tests check that the
// emitted schedules cannot deadlock on NCCL.
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"
#include "trident/Support/Bf16Gemm.h"

#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace trident::rt {

using detail::check;

namespace cuda {
State &state() {
  static State s;
  return s;
}

void check(cudaError_t rc, const char *fn) {
  if (rc != cudaSuccess)
    detail::fail(fn, std::string("CUDA error: ") + cudaGetErrorString(rc));
}

void check(cublasStatus_t rc, const char *fn) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    detail::fail(fn, "cuBLAS error " + std::to_string(int(rc)));
}

State &ready(const char *fn) {
  State &s = state();
  if (!s.ready)
    detail::fail(fn, "rt::init was not called (CUDA backend)");
  return s;
}

/// `height` rows of `row` bytes from src (rows `spitch` apart) to dst (rows
/// `dpitch` apart), on the compute stream. cudaMemcpy2D refuses pitches
/// above cudaDevAttrMaxPitch (2^31 - 1 bytes on current GPUs), which a
/// flat ZeRO buffer of over 512 M floats exceeds: one row, or pitches that
/// large, go as plain copies instead.
void copyRows(float *dst, size_t dpitch, const float *src, size_t spitch,
              size_t row, int64_t height, const char *fn,
              cudaStream_t stream) {
  constexpr size_t kMaxPitch = (size_t(1) << 31) - 1;
  cudaStream_t s = stream ? stream : cuda::state().compute;
  if (height > 1 && dpitch <= kMaxPitch && spitch <= kMaxPitch) {
    cuda::check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, row, height,
                                  cudaMemcpyDeviceToDevice, s),
                fn);
    return;
  }
  for (int64_t i = 0; i < height; ++i)
    cuda::check(cudaMemcpyAsync(reinterpret_cast<char *>(dst) + i * dpitch,
                                reinterpret_cast<const char *>(src) +
                                    i * spitch,
                                row, cudaMemcpyDeviceToDevice, s),
                fn);
}

} // namespace cuda

namespace {
using cuda::copyRows;
void ncclCheck(ncclResult_t rc, const char *fn, const std::string &group) {
  if (rc != ncclSuccess)
    detail::fail(fn, "NCCL error on group '" + group +
                         "': " + ncclGetErrorString(rc) + " (" +
                         ncclGetLastError(nullptr) + ")");
}

/// TRIDENT_CUDA_NCCL_SELF=1: groups of one get a one-rank NCCL
/// communicator (backendGroupCreated), so that the NCCL collectives run on
/// a machine with one GPU (scripts/gpu-check.sh, ctest's
/// runtime-smoke-cuda-nccl-self). Unset or 0: they do not.
bool ncclSelf() {
  static const int on = [] {
    const char *v = std::getenv("TRIDENT_CUDA_NCCL_SELF");
    if (!v || !*v || std::string(v) == "0")
      return 0;
    if (std::string(v) == "1")
      return 1;
    return -1;
  }();
  if (on < 0)
    detail::fail("init (CUDA)", "TRIDENT_CUDA_NCCL_SELF must be 0 or 1");
  return on == 1;
}

/// A group's NCCL communicator (Group::Impl::backend points at one).
struct Comm {
  ncclComm_t comm = nullptr;
  std::string name;
  /// Live; aborted after an error (ncclCommAbort); released by finalize
  /// (ncclCommDestroy). Only a live one may be used or destroyed.
  enum class Status { Live, Aborted, Released } status = Status::Live;
  bool live() const { return status == Status::Live; }
};
/// The live communicators in creation order (the same on every rank),
/// polled for asynchronous errors while the host waits for the device
/// (drain) and destroyed in the reverse order by finalize.
std::vector<Comm *> &liveComms() {
  static std::vector<Comm *> live;
  return live;
}

/// The world's NCCL communicator, made from one NCCL unique id that world
/// rank 0 creates and broadcasts over MPI; every group's communicator is
/// split from it (ncclCommSplit), so a run bootstraps NCCL once. It is
/// made at the first group's creation, which every rank reaches together.
/// None when no group needs NCCL (one rank, no TRIDENT_CUDA_NCCL_SELF) or
/// when ranks share a GPU, which NCCL does not support in one communicator
/// ("Duplicate GPU detected", NVIDIA/nccl#418: more ranks on a node than
/// it has GPUs, as in the end-to-end tests on a one-GPU machine). Then a
/// group whose members have distinct GPUs gets a communicator from its
/// own unique id, and one whose members share a GPU keeps none: its
/// collectives are staged through host memory over its MPI communicator.
struct Parent {
  bool decided = false;
  std::unique_ptr<Comm> comm; ///< null: none
};
Parent &parent() {
  static Parent p;
  return p;
}

/// NCCL communicators created and NCCL operations issued (each call of
/// commOf), for finalize's TRIDENT_CUDA_NCCL_SELF=1 report: an emitted
/// program releases its groups, and with them their communicators, before
/// it calls finalize, so the live ones alone would show nothing.
struct NcclUse {
  long comms = 0, ops = 0;
};
NcclUse &ncclUse() {
  static NcclUse u;
  return u;
}

ncclComm_t commOf(const Group::Impl &G) {
  ++ncclUse().ops;
  const Comm *c = static_cast<const Comm *>(G.backend.get());
  if (!c) // callers handle groups of one and host-staged groups first
    detail::fail("NCCL", "group '" + G.name + "' has no NCCL communicator");
  if (c->status == Comm::Status::Released)
    detail::fail("NCCL", "the communicator of group '" + G.name +
                             "' was released by finalize");
  if (c->status == Comm::Status::Aborted)
    detail::fail("NCCL", "the communicator of group '" + G.name +
                             "' was aborted after an earlier error");
  return c->comm;
}

/// A failed peer or link leaves NCCL's kernels waiting forever; NCCL
/// reports it through ncclCommGetAsyncError. Aborts every communicator
/// (which lets the kernels end) and throws, naming the group.
void checkCommErrors(const char *fn) {
  for (Comm *c : liveComms()) {
    ncclResult_t st = ncclSuccess;
    if (!c->live() || ncclCommGetAsyncError(c->comm, &st) != ncclSuccess ||
        st == ncclSuccess || st == ncclInProgress)
      continue;
    std::string what = "NCCL reported an asynchronous error on group '" +
                       c->name + "': " + ncclGetErrorString(st) + " (" +
                       ncclGetLastError(c->comm) +
                       "); a peer rank may have failed or a link dropped";
    for (Comm *other : liveComms())
      if (other->live()) {
        ncclCommAbort(other->comm);
        other->status = Comm::Status::Aborted;
      }
    detail::fail(fn, what);
  }
}

/// Waits for `stream` without blocking inside the CUDA driver, so that a
/// communicator's asynchronous error ends the wait with a message instead
/// of a hang.
void drain(cudaStream_t stream, const char *fn) {
  for (unsigned spins = 0;; ++spins) {
    cudaError_t rc = cudaStreamQuery(stream);
    if (rc == cudaSuccess)
      return;
    if (rc != cudaErrorNotReady)
      cuda::check(rc, fn);
    if (spins % 256 == 255)
      checkCommErrors(fn);
    std::this_thread::yield();
  }
}

/// ncclGroupStart, and ncclGroupEnd however the scope is left: a failed
/// call inside must not leave the group open for the next NCCL calls.
class NcclGroup {
public:
  NcclGroup(const char *fn, const std::string &name) : fn_(fn), name_(name) {
    ncclCheck(ncclGroupStart(), fn_, name_);
  }
  void end() {
    open_ = false;
    ncclCheck(ncclGroupEnd(), fn_, name_);
  }
  ~NcclGroup() {
    if (open_)
      ncclGroupEnd();
  }
  NcclGroup(const NcclGroup &) = delete;
  NcclGroup &operator=(const NcclGroup &) = delete;

private:
  const char *fn_;
  std::string name_;
  bool open_ = true;
};

/// Whether the byte ranges [a, a + n) and [b, b + m) overlap (std::less: a
/// total order even for unrelated allocations).
bool overlaps(const void *a, size_t n, const void *b, size_t m) {
  std::less<const char *> lt;
  const char *x = static_cast<const char *>(a);
  const char *y = static_cast<const char *>(b);
  return lt(x, y + m) && lt(y, x + n);
}
/// The same for float tensors' elements.
bool overlaps(const Tensor &a, const Tensor &b) {
  return overlaps(a.f32(), sizeof(float) * size_t(a.numel()), b.f32(),
                  sizeof(float) * size_t(b.numel()));
}

/// Orders the communication stream after the compute work issued so far.
void beginComm(const char *fn) {
  cuda::State &s = cuda::ready(fn);
  cudaEvent_t e;
  cuda::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), fn);
  cuda::check(cudaEventRecord(e, s.compute), fn);
  cuda::check(cudaStreamWaitEvent(s.comm, e, 0), fn);
  cudaEventDestroy(e);
}

/// Orders later compute work after the communication issued so far.
void endComm(const char *fn) {
  cuda::State &s = cuda::state();
  cudaEvent_t e;
  cuda::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), fn);
  cuda::check(cudaEventRecord(e, s.comm), fn);
  cuda::check(cudaStreamWaitEvent(s.compute, e, 0), fn);
  cudaEventDestroy(e);
}

/// Host-staged collectives read their tensors through the compute stream,
/// which must first pass the collectives already queued on the
/// communication stream: an asynchronous sum still running on the same
/// tensor (a gradient summed over tp, then over a group whose ranks share
/// a GPU) comes before, as in issue order on NCCL.
void beforeHostStaged(const char *fn) { endComm(fn); }

void around(const std::vector<int64_t> &shape, int dim, int64_t &a,
            int64_t &d, int64_t &b) {
  a = 1, b = 1;
  for (int i = 0; i < dim; ++i)
    a *= shape[i];
  for (size_t i = dim + 1; i < shape.size(); ++i)
    b *= shape[i];
  d = shape[dim];
}

/// out [A, g*D, B] <- blocks [g][A, D, B] (on the compute stream).
void unpackBlocks(float *out, const float *blocks, int g, int64_t a,
                  int64_t d, int64_t b, const char *fn) {
  size_t row = sizeof(float) * d * b;
  for (int r = 0; r < g; ++r)
    copyRows(out + r * d * b, row * g, blocks + r * a * d * b, row, row, a,
             fn);
}

/// blocks [g][A, D, B] <- in [A, g*D, B] (on `stream`, compute if null).
void packBlocks(float *blocks, const float *in, int g, int64_t a, int64_t d,
                int64_t b, const char *fn, cudaStream_t stream = nullptr) {
  size_t row = sizeof(float) * d * b;
  for (int r = 0; r < g; ++r)
    copyRows(blocks + r * a * d * b, row, in + r * d * b, row * g, row, a,
             fn, stream);
}


} // namespace

const char *backendName() { return "cuda"; }

bool setTf32Gemms(bool on) {
  cuda::State &s = cuda::state();
  check(s.ready, "setTf32Gemms", "call rt::init first");
  cuda::check(cublasSetMathMode(s.cublas, on ? CUBLAS_TF32_TENSOR_OP_MATH
                                             : CUBLAS_DEFAULT_MATH),
              "setTf32Gemms");
  return true;
}

bool setBf16Gemms(Bf16Gemms mode) {
  cuda::State &s = cuda::state();
  check(s.ready, "setBf16Gemms", "call rt::init first");
  if (const char *v = std::getenv("TRIDENT_BF16_GEMMS")) {
    const std::string e = v;
    check(e == "off" || e == "large" || e == "all", "setBf16Gemms",
          "TRIDENT_BF16_GEMMS is '" + e + "', expected off, large or all");
    mode = e == "off"     ? Bf16Gemms::Off
           : e == "large" ? Bf16Gemms::Large
                          : Bf16Gemms::All;
  }
  // cuBLAS's bf16 GEMMs need compute capability 8.0 (Ampere) or later.
  int major = 0;
  cuda::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                     s.device),
              "setBf16Gemms");
  if (major < 8)
    return false;
  s.bf16Gemms = mode;
  return true;
}

bool setFusedAttention(bool on) {
  cuda::State &s = cuda::state();
  check(s.ready, "setFusedAttention", "call rt::init first");
  if (const char *v = std::getenv("TRIDENT_FUSED_ATTENTION")) {
    const std::string e = v;
    check(e == "on" || e == "off", "setFusedAttention",
          "TRIDENT_FUSED_ATTENTION is '" + e + "', expected on or off");
    on = e == "on";
  }
  s.fusedAttention = on;
  return true;
}

bool cuda::bf16Gemm(int64_t m, int64_t n, int64_t k, bool aBf16, bool bBf16) {
  switch (state().bf16Gemms) {
  case Bf16Gemms::Off:
    return false;
  case Bf16Gemms::All:
    return true;
  case Bf16Gemms::Large:
    return bf16GemmPays(double(m), double(n), double(k), aBf16, bBf16);
  }
  return false;
}

namespace {
void releaseFinishedSends(bool all);
} // namespace

void synchronize() {
  cuda::State &s = cuda::state();
  if (s.ready) {
    drain(s.compute, "synchronize");
    drain(s.comm, "synchronize");
  }
  cuda::check(cudaDeviceSynchronize(), "synchronize");
  // Sent copies whose transfer is done go now (else only at the next
  // exchange), so a memory report after a step counts what the CPU twin's
  // does.
  if (s.ready)
    releaseFinishedSends(false);
}

void synchronizeCompute() {
  cuda::State &s = cuda::ready("synchronizeCompute");
  drain(s.compute, "synchronizeCompute");
}


namespace detail {
std::shared_ptr<void> allocate(size_t bytes) {
  cuda::State &s = cuda::ready("Tensor");
  void *p = nullptr;
  cudaError_t rc = cudaMallocAsync(&p, bytes, s.compute);
  if (rc != cudaSuccess)
    detail::fail("Tensor (allocate)",
                 std::string("CUDA error: ") + cudaGetErrorString(rc) +
                     " allocating " + std::to_string(bytes) + " bytes");
  cuda::check(cudaMemsetAsync(p, 0, bytes, s.compute), "Tensor (zero)");
  return std::shared_ptr<void>(p, [](void *q) {
    // Stream-ordered: freed after every kernel already queued on compute.
    if (cuda::state().ready)
      cudaFreeAsync(q, cuda::state().compute);
  });
}
void copyToHost(void *dst, const void *src, size_t bytes) {
  noteHostCopy(bytes);
  cuda::State &s = cuda::ready("Tensor::toHost");
  // A copy into pageable memory returns only when it is done, blocking in
  // the driver behind whatever compute waits for (an NCCL event): drained
  // first, a failed peer ends the wait with an error instead of a hang.
  drain(s.compute, "Tensor::toHost");
  cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                              s.compute),
              "Tensor::toHost");
  drain(s.compute, "Tensor::toHost");
}
void copyFromHost(void *dst, const void *src, size_t bytes) {
  noteHostCopy(bytes);
  cuda::State &s = cuda::ready("Tensor::fromHost");
  cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                              s.compute),
              "Tensor::fromHost");
  drain(s.compute, "Tensor::fromHost");
}
void copyOnBackend(void *dst, const void *src, size_t bytes) {
  cudaStream_t s = cuda::ready("copy").compute;
  if (dst == src || !bytes)
    return;
  if (overlaps(dst, bytes, src, bytes)) {
    // cudaMemcpy's ranges must not overlap (the CPU twin's memmove allows
    // it): through a temporary.
    void *tmp = nullptr;
    cuda::check(cudaMallocAsync(&tmp, bytes, s), "copy");
    cuda::check(cudaMemcpyAsync(tmp, src, bytes, cudaMemcpyDeviceToDevice, s),
                "copy");
    cuda::check(cudaMemcpyAsync(dst, tmp, bytes, cudaMemcpyDeviceToDevice, s),
                "copy");
    cuda::check(cudaFreeAsync(tmp, s), "copy");
    return;
  }
  cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s),
              "copy");
}

namespace {
/// Every member's GPU as "host#PCI bus id", gathered over `comm` in rank
/// order: by bus id, not by device ordinal, since under per-rank
/// CUDA_VISIBLE_DEVICES (Slurm's --gpus-per-task) every rank of a node sees
/// its own GPU as device 0.
std::vector<std::string> gatherGpuIds(MPI_Comm comm, int size,
                                      const char *fn) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  char bus[32] = {};
  cuda::check(cudaDeviceGetPCIBusId(bus, int(sizeof bus) - 1,
                                    cuda::state().device),
              fn);
  constexpr int kKey = MPI_MAX_PROCESSOR_NAME + 48;
  std::vector<char> mine(kKey, 0), all(size_t(kKey) * size_t(size), 0);
  std::snprintf(mine.data(), kKey, "%s#%s", name, bus);
  check(MPI_Allgather(mine.data(), kKey, MPI_CHAR, all.data(), kKey, MPI_CHAR,
                      comm) == MPI_SUCCESS,
        fn, "MPI_Allgather of the GPU identities failed");
  std::vector<std::string> ids;
  for (int r = 0; r < size; ++r)
    ids.emplace_back(all.data() + size_t(r) * kKey);
  return ids;
}
} // namespace

void backendInit() {
  cuda::State &s = cuda::state();
  const char *fn = "init (CUDA)";
  // Read on every rank here: a bad value must not stop only the ranks
  // that read it later (those of groups of one), inside a collective.
  ncclSelf();
  int count = 0;
  cuda::check(cudaGetDeviceCount(&count), fn);
  check(count > 0, fn, "no CUDA device visible");
  // Node-local rank picks the device.
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                            MPI_INFO_NULL, &local) == MPI_SUCCESS,
        fn, "MPI_Comm_split_type (the node's ranks) failed");
  int localRank = 0, localSize = 1;
  check(MPI_Comm_rank(local, &localRank) == MPI_SUCCESS &&
            MPI_Comm_size(local, &localSize) == MPI_SUCCESS,
        fn, "MPI_Comm_rank/size of the node's ranks failed");
  s.device = localRank % count;
  cuda::check(cudaSetDevice(s.device), fn);
  // How many of the node's ranks use this GPU.
  const std::vector<std::string> nodeGpus = gatherGpuIds(local, localSize, fn);
  MPI_Comm_free(&local);
  const auto onThisGpu = std::count(nodeGpus.begin(), nodeGpus.end(),
                                    nodeGpus[size_t(localRank)]);
  cuda::check(cudaStreamCreateWithFlags(&s.compute, cudaStreamNonBlocking), fn);
  cuda::check(cudaStreamCreateWithFlags(&s.comm, cudaStreamNonBlocking), fn);
  cuda::check(cublasCreate(&s.cublas), fn);
  cuda::check(cublasSetStream(s.cublas, s.compute), fn);
  // Deterministic cuBLAS: no split-K atomics.
  cuda::check(cublasSetAtomicsMode(s.cublas, CUBLAS_ATOMICS_NOT_ALLOWED), fn);
  // Keep freed blocks in the stream-ordered pool instead of returning them
  // to the driver at every synchronisation (the default threshold 0), when
  // this rank has its GPU to itself: ranks sharing one keep the default,
  // so that no process holds its peak while another needs the memory.
  cudaMemPool_t pool;
  if (onThisGpu == 1 &&
      cudaDeviceGetDefaultMemPool(&pool, s.device) == cudaSuccess) {
    uint64_t keep = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  s.ready = true;
}

void backendFinalize() {
  cuda::State &s = cuda::state();
  if (!s.ready)
    return;
  try { // a communicator's error ends the wait (and aborts them all)
    drain(s.compute, "finalize");
    drain(s.comm, "finalize");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "trident runtime: %s\n", e.what());
  }
  cudaDeviceSynchronize();
  releaseFinishedSends(true);
  // Runtime.h: finalize frees the communicators, also of groups that are
  // still alive (their deleters then skip them), before the streams go and
  // before MPI_Finalize; in the reverse of the order they were created in,
  // the same on every rank.
  const std::vector<Comm *> comms = liveComms();
  if (ncclSelf()) // what test/e2e/nccl-self.sh looks for
    std::fprintf(stderr,
                 "trident runtime: TRIDENT_CUDA_NCCL_SELF=1: %ld NCCL "
                 "communicators created, %ld NCCL operations issued, %d "
                 "communicators live at finalize\n",
                 ncclUse().comms, ncclUse().ops,
                 int(std::count_if(comms.begin(), comms.end(),
                                   [](const Comm *c) { return c->live(); })));
  // Newest first: the groups' communicators before the world's they were
  // split from.
  for (auto it = comms.rbegin(); it != comms.rend(); ++it) {
    Comm *c = *it;
    if (c->live())
      ncclCommDestroy(c->comm);
    c->status = Comm::Status::Released; // later use is refused by commOf
  }
  liveComms().clear();
  parent() = Parent(); // a later init makes a new one
  cublasDestroy(s.cublas);
  cudaStreamDestroy(s.comm);
  cudaStreamDestroy(s.compute);
  s.ready = false;
}

namespace {
/// Whether group `g` gets an NCCL communicator. A group of one
/// communicates with nobody: its collectives are copies (or nothing) on
/// the device, and it holds no communicator (a one-rank run would
/// otherwise create one per grid axis); except under
/// TRIDENT_CUDA_NCCL_SELF=1, where it gets a one-rank communicator and its
/// collectives run through NCCL, so that a machine with one GPU exercises
/// the NCCL paths. A rank outside every group (size 0) gets none.
bool wantsComm(const Group::Impl &g) {
  return g.size > 1 || (g.size == 1 && ncclSelf());
}

/// Whether the GPUs of `ids` (gatherGpuIds) are all different.
bool distinct(const std::vector<std::string> &ids) {
  return std::set<std::string>(ids.begin(), ids.end()).size() == ids.size();
}

void makeParent(const char *fn) {
  Parent &p = parent();
  if (p.decided)
    return;
  p.decided = true;
  const int world = worldSize(), me = worldRank();
  if (world == 1 && !ncclSelf())
    return;
  if (!distinct(gatherGpuIds(MPI_COMM_WORLD, world, fn)))
    return;
  ncclUniqueId id;
  if (me == 0)
    ncclCheck(ncclGetUniqueId(&id), fn, "world");
  check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) ==
            MPI_SUCCESS,
        fn, "MPI_Bcast of the NCCL unique id failed");
  auto c = std::make_unique<Comm>();
  c->name = "world (the parent of the groups' communicators)";
  ncclCheck(ncclCommInitRank(&c->comm, world, id, me), fn, "world");
  ++ncclUse().comms;
  liveComms().push_back(c.get());
  p.comm = std::move(c);
}

/// Gives `g` the communicator `nc` (its Group::Impl::backend).
void attach(Group::Impl &g, ncclComm_t nc) {
  auto c = std::make_unique<Comm>();
  c->name = g.name;
  c->comm = nc;
  ++ncclUse().comms;
  liveComms().push_back(c.get());
  g.backend = std::shared_ptr<void>(c.release(), [](void *v) {
    auto *c = static_cast<Comm *>(v);
    // Nothing queued on the communication stream may still use it: a
    // polling wait, with this communicator still among those polled (a
    // failed peer aborts them all and ends it).
    if (c->live() && cuda::state().ready) {
      try {
        drain(cuda::state().comm, "Grid (releasing an NCCL communicator)");
      } catch (const std::exception &e) {
        std::fprintf(stderr, "trident runtime: %s\n", e.what());
      }
    }
    std::erase(liveComms(), c);
    if (c->live()) // an aborted or released one is gone already
      ncclCommDestroy(c->comm);
    delete c;
  });
}
} // namespace

void backendGroupCreated(Group::Impl &g) {
  const char *fn = "Grid (NCCL)";
  g.backend = nullptr;
  makeParent(fn);
  if (Comm *world = parent().comm.get()) {
    check(world->live(), fn,
          "the world's NCCL communicator was aborted after an error or "
          "released by finalize");
    // Every rank of the world splits, those without a communicator with
    // NCCL_SPLIT_NOCOLOR; a group's colour is its first member's world
    // rank (groups formed together are disjoint), its key the rank in the
    // MPI communicator, so NCCL ranks the members in the same order.
    const bool wants = wantsComm(g);
    ncclComm_t nc = nullptr;
    ncclCheck(ncclCommSplit(world->comm,
                            wants ? g.worldRanks.at(0) : NCCL_SPLIT_NOCOLOR,
                            wants ? g.rank : 0, &nc, nullptr),
              fn, g.name);
    if (!wants)
      return;
    check(nc != nullptr, fn, "ncclCommSplit gave group '" + g.name +
                                 "' no communicator");
    int count = 0, rank = -1;
    ncclCheck(ncclCommCount(nc, &count), fn, g.name);
    ncclCheck(ncclCommUserRank(nc, &rank), fn, g.name);
    if (count != g.size || rank != g.rank) {
      ncclCommDestroy(nc);
      detail::fail(fn, "ncclCommSplit made group '" + g.name + "' rank " +
                           std::to_string(rank) + " of " +
                           std::to_string(count) + ", MPI rank " +
                           std::to_string(g.rank) + " of " +
                           std::to_string(g.size));
    }
    attach(g, nc);
    return;
  }
  if (!wantsComm(g))
    return;
  // No parent (ranks share GPUs): a group of distinct GPUs makes its
  // communicator from its own unique id; one whose members share a GPU
  // stays host-staged (g.backend == nullptr).
  if (g.size > 1 && !distinct(gatherGpuIds(g.comm, g.size, fn)))
    return;
  ncclUniqueId id;
  if (g.rank == 0)
    ncclCheck(ncclGetUniqueId(&id), fn, g.name);
  check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, g.comm) == MPI_SUCCESS, fn,
        "MPI_Bcast of the NCCL unique id failed");
  ncclComm_t nc = nullptr;
  ncclCheck(ncclCommInitRank(&nc, g.size, id, g.rank), fn, g.name);
  attach(g, nc);
}
} // namespace detail

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// Groups whose members share a GPU (backendGroupCreated) move their data
/// through host memory with the MPI collective of the same layout as the
/// NCCL one (rank-major blocks). Groups of one have no communicator
/// either, but every collective handles them first, on the device.
bool hostStaged(const Group::Impl &G) {
  return G.backend == nullptr && G.size > 1;
}

/// A group of one without a communicator: its collectives are done here,
/// on the device (a copy or nothing).
bool alone(const Group::Impl &G) {
  return G.size == 1 && G.backend == nullptr;
}

int mpiCount(int64_t n, const char *fn) {
  check(n <= int64_t(std::numeric_limits<int>::max()), fn,
        std::to_string(n) + " elements exceed one MPI call (host-staged "
                            "collective of ranks sharing a GPU)");
  return static_cast<int>(n);
}

void hostAllReduce(Tensor &t, MPI_Op op, const Group::Impl &G,
                   const char *fn) {
  beforeHostStaged(fn);
  std::vector<float> h = t.toHost();
  const int n = mpiCount(t.numel(), fn);
  if (op == MPI_SUM) {
    // As the CPU twin sums: onto group rank 0, then broadcast, so that
    // every member holds the same bits and the order depends only on the
    // group (MPI_Allreduce may pick another algorithm by size).
    void *send = G.rank == 0 ? MPI_IN_PLACE : h.data();
    if (MPI_Reduce(send, G.rank == 0 ? h.data() : nullptr, n, MPI_FLOAT,
                   MPI_SUM, 0, G.comm) != MPI_SUCCESS ||
        MPI_Bcast(h.data(), n, MPI_FLOAT, 0, G.comm) != MPI_SUCCESS)
      detail::fail(fn, "MPI_Reduce/MPI_Bcast failed on group '" + G.name + "'");
  } else if (MPI_Allreduce(MPI_IN_PLACE, h.data(), n, MPI_FLOAT, op,
                           G.comm) != MPI_SUCCESS) {
    detail::fail(fn, "MPI_Allreduce failed on group '" + G.name + "'");
  }
  t.fromHost(h);
}
} // namespace

void allReduceSum(Tensor &t, const Group &g) {
  const char *fn = "allReduceSum";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (alone(G) || !t.numel())
    return;
  if (hostStaged(G))
    return hostAllReduce(t, MPI_SUM, G, fn);
  beginComm(fn);
  ncclCheck(ncclAllReduce(t.f32(), t.f32(), t.numel(), ncclFloat, ncclSum,
                          commOf(G), cuda::state().comm),
            fn, G.name);
  endComm(fn);
}

void allReduceMax(Tensor &t, const Group &g) {
  const char *fn = "allReduceMax";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (alone(G) || !t.numel())
    return;
  if (hostStaged(G))
    return hostAllReduce(t, MPI_MAX, G, fn);
  beginComm(fn);
  ncclCheck(ncclAllReduce(t.f32(), t.f32(), t.numel(), ncclFloat, ncclMax,
                          commOf(G), cuda::state().comm),
            fn, G.name);
  endComm(fn);
}

void allGather(Tensor &out, const Tensor &in, int dim, const Group &g) {
  const char *fn = "allGather";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  detail::checkScaled(out, in, dim, G.size, 1, fn);
  if (alone(G)) // out = in
    return copy(out, in);
  int64_t a, d, b;
  around(in.shape(), dim, a, d, b);
  Tensor blocks({in.numel() * G.size});
  if (hostStaged(G)) {
    beforeHostStaged(fn);
    std::vector<float> mine = in.toHost(), all(size_t(blocks.numel()));
    int n = mpiCount(in.numel(), fn);
    if (MPI_Allgather(mine.data(), n, MPI_FLOAT, all.data(), n, MPI_FLOAT,
                      G.comm) != MPI_SUCCESS)
      detail::fail(fn, "MPI_Allgather failed on group '" + G.name + "'");
    blocks.fromHost(all);
  } else {
    beginComm(fn);
    ncclCheck(ncclAllGather(in.f32(), blocks.f32(), in.numel(), ncclFloat,
                            commOf(G), cuda::state().comm),
              fn, G.name);
    endComm(fn);
  }
  unpackBlocks(out.f32(), blocks.f32(), G.size, a, d, b, fn);
}

void reduceScatterSum(Tensor &out, const Tensor &in, int dim, const Group &g) {
  const char *fn = "reduceScatterSum";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  detail::checkScaled(out, in, dim, 1, G.size, fn);
  if (alone(G)) // out = in
    return copy(out, in);
  int64_t a, d, b;
  around(out.shape(), dim, a, d, b);
  Tensor blocks({in.numel()});
  if (hostStaged(G))
    beforeHostStaged(fn);
  packBlocks(blocks.f32(), in.f32(), G.size, a, d, b, fn);
  if (hostStaged(G)) {
    std::vector<float> all = blocks.toHost(), mine(size_t(out.numel()));
    if (MPI_Reduce_scatter_block(all.data(), mine.data(),
                                 mpiCount(out.numel(), fn), MPI_FLOAT,
                                 MPI_SUM, G.comm) != MPI_SUCCESS)
      detail::fail(fn, "MPI_Reduce_scatter_block failed on group '" + G.name +
                           "'");
    out.fromHost(mine);
    return;
  }
  beginComm(fn);
  ncclCheck(ncclReduceScatter(blocks.f32(), out.f32(), out.numel(), ncclFloat,
                              ncclSum, commOf(G), cuda::state().comm),
            fn, G.name);
  endComm(fn);
}

void allToAll(Tensor &out, const Tensor &in, int splitDim, int concatDim,
              const Group &g) {
  const char *fn = "allToAll";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  detail::checkAllToAll(out, in, splitDim, concatDim, G.size, fn);
  std::vector<int64_t> block = in.shape(); // one block of the split
  block[splitDim] /= G.size;
  if (alone(G)) // one block, kept
    return copy(out, in);
  int64_t a, d, b;
  around(in.shape(), splitDim, a, d, b);
  Tensor send({in.numel()}), recvd({in.numel()});
  if (hostStaged(G))
    beforeHostStaged(fn);
  packBlocks(send.f32(), in.f32(), G.size, a, d / G.size, b, fn);
  size_t per = in.numel() / G.size;
  if (hostStaged(G)) {
    std::vector<float> hs = send.toHost(), hr(size_t(in.numel()));
    int n = mpiCount(int64_t(per), fn);
    if (MPI_Alltoall(hs.data(), n, MPI_FLOAT, hr.data(), n, MPI_FLOAT,
                     G.comm) != MPI_SUCCESS)
      detail::fail(fn, "MPI_Alltoall failed on group '" + G.name + "'");
    recvd.fromHost(hr);
  } else {
    beginComm(fn);
    NcclGroup group(fn, G.name);
    for (int j = 0; j < G.size; ++j) {
      ncclCheck(ncclSend(send.f32() + j * per, per, ncclFloat, j, commOf(G),
                         cuda::state().comm),
                fn, G.name);
      ncclCheck(ncclRecv(recvd.f32() + j * per, per, ncclFloat, j, commOf(G),
                         cuda::state().comm),
                fn, G.name);
    }
    group.end();
    endComm(fn);
  }
  around(block, concatDim, a, d, b);
  unpackBlocks(out.f32(), recvd.f32(), G.size, a, d, b, fn);
}

void broadcast(Tensor &t, int root, const Group &g) {
  const char *fn = "broadcast";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  check(root >= 0 && root < G.size, fn,
        "root " + std::to_string(root) + " outside group '" + G.name + "'");
  if (alone(G) || !t.numel())
    return;
  if (hostStaged(G)) {
    beforeHostStaged(fn);
    std::vector<float> h = t.toHost();
    if (MPI_Bcast(h.data(), mpiCount(t.numel(), fn), MPI_FLOAT, root,
                  G.comm) != MPI_SUCCESS)
      detail::fail(fn, "MPI_Bcast failed on group '" + G.name + "'");
    t.fromHost(h);
    return;
  }
  beginComm(fn);
  ncclCheck(ncclBroadcast(t.f32(), t.f32(), t.numel(), ncclFloat, root,
                          commOf(G), cuda::state().comm),
            fn, G.name);
  endComm(fn);
}

void barrier(const Group &g) {
  Group::Impl &G = detail::collectiveImpl(g, "barrier");
  synchronize();
  check(MPI_Barrier(G.comm) == MPI_SUCCESS, "barrier",
        "MPI_Barrier failed on group '" + G.name + "'");
}

struct Pending::Impl {
  cudaEvent_t done = nullptr;
  // Storage stays alive until the collective finished: what NCCL reads
  // and writes, and the caller's input when it is packed or copied on the
  // communication stream.
  Tensor keep, keep2, keep3;
  bool recorded = false, waited = false;
  ~Impl() {
    if (!done) // created first: nothing was queued
      return;
    // Not waited for (an error on the way): `keep` is freed stream-ordered
    // on the compute stream, which must not run ahead of the collective
    // that may still use it; without the event, drain the comm stream.
    if (!waited && cuda::state().ready) {
      if (recorded)
        cudaStreamWaitEvent(cuda::state().compute, done, 0);
      else
        cudaStreamSynchronize(cuda::state().comm);
    }
    cudaEventDestroy(done);
  }
};

void Pending::wait() {
  if (impl_) {
    cuda::check(cudaStreamWaitEvent(cuda::state().compute, impl_->done, 0),
                "Pending::wait");
    impl_->waited = true;
    impl_.reset();
  }
  finish(); // queued on the compute stream, after the event
}

Pending allReduceSumAsync(Tensor &t, const Group &g) {
  const char *fn = "allReduceSumAsync";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (alone(G) || !t.numel())
    return Pending();
  if (hostStaged(G)) {
    hostAllReduce(t, MPI_SUM, G, fn); // complete on return
    return Pending();
  }
  auto p = std::make_shared<Pending::Impl>();
  p->keep = t;
  // Created before NCCL holds the buffer: an error after this point
  // leaves ~Impl to order the buffer's free after the collective.
  cuda::check(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), fn);
  beginComm(fn);
  ncclCheck(ncclAllReduce(t.f32(), t.f32(), t.numel(), ncclFloat, ncclSum,
                          commOf(G), cuda::state().comm),
            fn, G.name);
  cuda::check(cudaEventRecord(p->done, cuda::state().comm), fn);
  p->recorded = true;
  return Pending(p);
}

Pending reduceScatterSumAsync(Tensor &out, const Tensor &in, int dim,
                              const Group &g) {
  const char *fn = "reduceScatterSumAsync";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (hostStaged(G) || alone(G) || !out.numel()) {
    reduceScatterSum(out, in, dim, g); // complete on return
    return Pending();
  }
  detail::checkScaled(out, in, dim, 1, G.size, fn);
  int64_t a, d, b;
  around(out.shape(), dim, a, d, b);
  auto p = std::make_shared<Pending::Impl>();
  // NCCL's one in-place form: out is this rank's block of in.
  bool inPlace = a == 1 && out.f32() == in.f32() + G.rank * out.numel();
  bool packed = !inPlace && (a != 1 || overlaps(in, out));
  p->keep = packed ? Tensor({in.numel()}) : in;
  p->keep2 = out;
  p->keep3 = in;
  cuda::check(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), fn);
  beginComm(fn);
  // Packed on the communication stream: `in` is read after the
  // collectives issued before this one (an earlier sum into it), as NCCL
  // reads it in issue order when no packing is needed.
  if (packed)
    packBlocks(p->keep.f32(), in.f32(), G.size, a, d, b, fn,
               cuda::state().comm);
  ncclCheck(ncclReduceScatter(p->keep.f32(), out.f32(), out.numel(),
                              ncclFloat, ncclSum, commOf(G),
                              cuda::state().comm),
            fn, G.name);
  cuda::check(cudaEventRecord(p->done, cuda::state().comm), fn);
  p->recorded = true;
  return Pending(p);
}

Pending allGatherAsync(Tensor &out, const Tensor &in, const Group &g) {
  const char *fn = "allGatherAsync";
  Group::Impl &G = detail::collectiveImpl(g, fn);
  if (hostStaged(G) || alone(G) || !in.numel()) {
    allGather(out, in, 0, g); // complete on return
    return Pending();
  }
  detail::checkScaled(out, in, 0, G.size, 1, fn);
  // Along the outermost dimension the members' blocks are already in
  // order: NCCL writes straight into `out`.
  auto p = std::make_shared<Pending::Impl>();
  // NCCL's one in-place form: in is this rank's block of out. Any other
  // overlap goes through a copy of in.
  bool inPlace = in.f32() == out.f32() + G.rank * in.numel();
  bool copied = !inPlace && overlaps(in, out);
  p->keep = copied ? Tensor({in.numel()}) : in;
  p->keep2 = out;
  p->keep3 = in;
  cuda::check(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), fn);
  beginComm(fn);
  if (copied)
    cuda::check(cudaMemcpyAsync(p->keep.f32(), in.f32(),
                                sizeof(float) * size_t(in.numel()),
                                cudaMemcpyDeviceToDevice, cuda::state().comm),
                fn);
  ncclCheck(ncclAllGather(p->keep.f32(), out.f32(), in.numel(), ncclFloat,
                          commOf(G), cuda::state().comm),
            fn, G.name);
  cuda::check(cudaEventRecord(p->done, cuda::state().comm), fn);
  p->recorded = true;
  return Pending(p);
}

//===----------------------------------------------------------------------===//
// Point-to-point (NCCL groups; Common/P2p.cpp decides when a group goes)
//===----------------------------------------------------------------------===//

namespace {
/// Send copies whose group is queued on the communication stream, freed
/// once its event has passed.
struct InFlight {
  std::vector<Tensor> copies;
  cudaEvent_t done = nullptr;
};
std::deque<InFlight> inFlight;

void releaseFinishedSends(bool all) {
  while (!inFlight.empty()) {
    InFlight &f = inFlight.front();
    // Only a passed event frees the copies (an error keeps them, and is
    // reported).
    if (!all) {
      cudaError_t rc = cudaEventQuery(f.done);
      if (rc == cudaErrorNotReady)
        return;
      cuda::check(rc, "sendAsync (releasing sent copies)");
    }
    cudaEventDestroy(f.done);
    inFlight.pop_front();
  }
}
} // namespace

namespace detail {
void backendExchange(std::vector<QueuedSend> &sends,
                     std::vector<Receive> &recvs, const char *fn) {
  // Every group of one exchange must go the same way on both sides: over
  // NCCL, or (ranks sharing a GPU) over MPI through host memory.
  std::set<bool> staged;
  for (const Receive &r : recvs)
    staged.insert(hostStaged(*r.G));
  for (const QueuedSend &s : sends)
    staged.insert(hostStaged(s.impl()));
  check(staged.size() == 1, fn,
        "one point-to-point exchange mixes groups with and without an NCCL "
        "communicator (ranks sharing a GPU); send over one group");
  if (*staged.begin()) {
    beforeHostStaged(fn);
    return mpiExchange(sends, recvs, fn);
  }
  // NCCL matches in issue order; the CPU twin checks the tags.
  beginComm(fn);
  cudaStream_t comm = cuda::state().comm;
  NcclGroup group(fn, recvs.empty() ? "(sends)" : recvs.front().G->name);
  for (const QueuedSend &s : sends)
    ncclCheck(ncclSend(s.copy.f32(), size_t(s.copy.numel()), ncclFloat,
                       s.peer, commOf(s.impl()), comm),
              fn, s.impl().name);
  for (const Receive &r : recvs)
    ncclCheck(ncclRecv(r.into->f32(), size_t(r.into->numel()), ncclFloat,
                       r.peer, commOf(*r.G), comm),
              fn, r.G->name);
  group.end();
  endComm(fn);
  if (sends.empty())
    return;
  InFlight f;
  for (QueuedSend &s : sends)
    f.copies.push_back(std::move(s.copy));
  cuda::check(cudaEventCreateWithFlags(&f.done, cudaEventDisableTiming), fn);
  cuda::check(cudaEventRecord(f.done, comm), fn);
  inFlight.push_back(std::move(f));
  releaseFinishedSends(false);
}
} // namespace detail

} // namespace trident::rt
