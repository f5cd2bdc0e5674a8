//===- Emu.cpp - CUDA runtime, cuBLAS and NCCL emulated on the host -------===//
//
// The implementation behind include/{cuda_runtime,cublas_v2,nccl}.h: the
// CUDA backend's own sources (CudaBackend.cpp, CudaKernels.cu) compiled by
// the host compiler against these run on any machine, so that every test
// of the CUDA backend runs where no GPU is (docs/runtime.md, "CUDA source
// on the CPU").
//
// Semantics are the documented ones, executed at the call (a stream's work
// is done when it is queued), but completion is reported late, as a busy
// GPU reports it: after new work on a stream, its next
// TRIDENT_CUDA_EMU_NOT_READY (default 2) cudaStreamQuery or cudaEventQuery
// calls answer cudaErrorNotReady (synchronising, or a stream's completion
// implied by another's that waited for it, ends that), so the callers'
// polling paths run. An NCCL call's result reaches its buffer only when
// its stream is seen to pass the call (EmuCommit: a later operation on
// that stream, a wait for an event recorded after it, a synchronisation
// or a query answering "done"), and its buffers must keep their bytes
// until then. Each stream keeps a vector clock (events waited for, what
// the host saw complete), and every use of a device block is checked
// against the other streams' last write and reads of it (use()). What
// the emulation checks beyond a GPU:
// - device memory: every cudaMalloc block is registered and filled with
//   0xff bytes (a float NaN) so that reading what was never written shows;
//   copies, memsets, cuBLAS operands, NCCL buffers and kernel pointer
//   arguments must lie inside a registered block (a copy's direction is
//   checked against its cudaMemcpyKind; copies may not overlap, NCCL's
//   buffers only in NCCL's in-place forms, cuBLAS's C not A, B or another
//   batch's C; a receive must get exactly its count); a violation is
//   reported on stderr and returned as the CUDA error the call would
//   give, or that a GPU would report for a faulting kernel.
// - kernels: block and grid limits; all threads of a block pass the same
//   number of barriers; TRIDENT_CUDA_EMU_ORDER=reverse runs blocks and
//   threads in reverse order (races show as other results).
// The ordering check is per block (stricter than a GPU where streams use
// disjoint parts of one) and leaves out host memory and the legacy
// stream. What it cannot show: reads of __shared__ memory before a write,
// the GPU's rounding of expf and friends (the host's libm), timing and
// memory capacity.
//
// Environment: TRIDENT_CUDA_EMU_DEVICES (default 1), the devices each
// node shows; ranks on the same device stage their collectives through
// the host, ranks on different devices use the (emulated) NCCL.
// TRIDENT_CUDA_EMU_REPORT=1 prints what ran at exit.
//
//===----------------------------------------------------------------------===//

#include "cublas_v2.h"
#include "cuda_runtime.h"
#include "nccl.h"

#include <mpi.h>
#include <sys/mman.h>

// The kernels' built-in names are macros (EmuKernel.h); not needed here.
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <pthread.h>

// Under AddressSanitizer each switch is announced (its fiber API), so that
// the kernels run instrumented on their fiber stacks.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TRIDENT_EMU_ASAN 1
#endif

/// What an NCCL operation on a stream leaves to do until that stream is
/// seen to pass it: its result is computed at the call but written to
/// its buffer only then (as a GPU's may land any time before), and its
/// buffers must not change before (the GPU may still read them).
struct EmuCommit {
  long at = 0;                   ///< the stream's operation count
  std::string what;              ///< the call, for messages
  char *dst = nullptr;           ///< receive buffer (null: a send)
  std::vector<char> result;      ///< what to write there
  const char *src = nullptr;     ///< send buffer (may be dst)
  std::vector<char> srcAtCall;   ///< its bytes at the call
  std::vector<char> dstAtCall;   ///< the receive buffer's bytes then
  uint64_t dstGen = 0, srcGen = 0; ///< their blocks' allocations
};

/// A stream's work is done at the call, but it reports completion as a
/// GPU may, late: work queued since the last completion makes the next
/// TRIDENT_CUDA_EMU_NOT_READY queries (default 2) answer
/// cudaErrorNotReady, so that the callers' polling paths run.
struct CUstream_st {
  int device;
  long queued = 0, done = 0; ///< operations queued; completed up to
  int notReady = 0;          ///< queries still to answer "not ready"
  /// Events this stream waits for (cudaStreamWaitEvent) since it was last
  /// complete: its completion implies theirs.
  std::vector<std::pair<CUstream_st *, long>> waits;
  std::vector<EmuCommit> pending; ///< NCCL results not yet visible
  /// How far this stream is ordered after each other stream (through
  /// event waits and host synchronisation): operation counts.
  std::map<CUstream_st *, long> knows;
};
struct CUevent_st {
  CUstream_st *stream = nullptr; ///< where it was recorded (null: done)
  long at = 0;                   ///< that stream's operation count then
  int notReady = 0;
  /// What a stream that waits for it is ordered after.
  std::map<CUstream_st *, long> clock;
};
struct CUmemPoolHandle_st {
  int device;
};
struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};
struct ncclComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 0;
  ~ncclComm() {
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }
};

namespace trident::emu {
namespace {

std::recursive_mutex &lock() {
  static std::recursive_mutex m;
  return m;
}

/// This process's MPI rank, once MPI is up (-1 before).
int worldRank() {
  static int rank = -1;
  int init = 0, done = 0;
  if (rank < 0 && MPI_Initialized(&init) == MPI_SUCCESS && init &&
      MPI_Finalized(&done) == MPI_SUCCESS && !done)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/// A misuse the emulation found (ctest's emulated tests fail on the
/// "cuda-emu" in it).
void report(const std::string &what) {
  std::fprintf(stderr, "trident cuda-emu (rank %d): %s\n", worldRank(),
               what.c_str());
}

/// What ran, printed at exit under TRIDENT_CUDA_EMU_REPORT=1 (the tests
/// check that the NCCL paths were taken).
struct Counts {
  long launches = 0, blocks = 0, gemms = 0, bf16Gemms = 0, ncclCalls = 0,
       comms = 0, splits = 0, notReady = 0, warpMmas = 0;
  ~Counts() {
    const char *v = std::getenv("TRIDENT_CUDA_EMU_REPORT");
    if (v && std::string(v) == "1")
      std::fprintf(stderr,
                   "trident cuda emulation (rank %d): %ld kernel launches "
                   "(%ld blocks), %ld cuBLAS calls (%ld on bf16 operands), "
                   "%ld warp matrix products, %ld NCCL calls on %ld "
                   "communicators (%ld split), %ld queries answered not "
                   "ready\n",
                   worldRank(), launches, blocks, gemms, bf16Gemms, warpMmas,
                   ncclCalls, comms, splits, notReady);
  }
};
Counts counts;

thread_local cudaError_t lastError = cudaSuccess;

cudaError_t fail(cudaError_t e, const std::string &what) {
  report(what);
  lastError = e;
  return e;
}

/// The whole number in environment variable `name` (`fallback` when unset
/// or empty); outside [lo, hi], or not a number, ends the process with a
/// message.
int envCount(const char *name, long lo, long hi, int fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  errno = 0;
  long k = std::strtol(v, &end, 10);
  if (*end || errno || k < lo || k > hi) {
    report(std::string(name) + "='" + v + "' must be a whole number from " +
           std::to_string(lo) + " to " + std::to_string(hi));
    std::exit(2);
  }
  return int(k);
}

/// GPUs a node shows (TRIDENT_CUDA_EMU_DEVICES).
int deviceCount() {
  static const int n = envCount("TRIDENT_CUDA_EMU_DEVICES", 1, 1024, 1);
  return n;
}
thread_local int currentDevice = 0;

// --- device memory ---------------------------------------------------------

/// The cudaMalloc blocks: start -> size in bytes. What is still allocated
/// at exit is freed then, as the driver frees a context's memory (the CUDA
/// backend does not free tensors that outlive rt::finalize).
struct DeviceMemory {
  std::map<uintptr_t, size_t> blocks;
  ~DeviceMemory() {
    for (auto &[start, bytes] : blocks)
      std::free(reinterpret_cast<void *>(start));
  }
};
std::map<uintptr_t, size_t> &blocks() {
  static DeviceMemory m;
  return m.blocks;
}
/// Each block's allocation number (a block freed and another allocated
/// at its address differ).
std::map<uintptr_t, uint64_t> &generations() {
  static std::map<uintptr_t, uint64_t> g;
  return g;
}
/// The allocation number of the block holding [p, p + bytes), 0 if none.
uint64_t generationOf(const void *p, size_t bytes);
/// Drops the streams' recorded uses of a freed block.
void forgetUses(uintptr_t start);

/// The block holding [p, p + bytes) (a zero-byte range may sit at a
/// block's end), or null.
const std::pair<const uintptr_t, size_t> *blockOf(const void *p,
                                                  size_t bytes) {
  std::lock_guard<std::recursive_mutex> g(lock());
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = blocks().upper_bound(a);
  if (it == blocks().begin())
    return nullptr;
  --it;
  if (a - it->first > it->second || bytes > it->second - (a - it->first))
    return nullptr;
  return &*it;
}

uint64_t generationOf(const void *p, size_t bytes) {
  const auto *b = blockOf(p, bytes);
  if (!b)
    return 0;
  auto it = generations().find(b->first);
  return it == generations().end() ? 0 : it->second;
}

bool onDevice(const void *p, size_t bytes) {
  return bytes == 0 ? (p == nullptr || blockOf(p, 0))
                    : blockOf(p, bytes) != nullptr;
}

std::string where(const void *p, size_t bytes) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%p, +%zu bytes)", p, bytes);
  return buf;
}

cudaError_t allocate(void **p, size_t bytes) {
  if (!p)
    return fail(cudaErrorInvalidValue, "cudaMalloc: null result pointer");
  *p = nullptr;
  if (bytes == 0)
    return cudaSuccess;
  // 256-byte aligned, as cudaMalloc's blocks are.
  void *q = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!q)
    return fail(cudaErrorMemoryAllocation,
                "cudaMalloc of " + std::to_string(bytes) + " bytes failed");
  std::memset(q, 0xff, bytes);
  std::lock_guard<std::recursive_mutex> g(lock());
  blocks()[reinterpret_cast<uintptr_t>(q)] = bytes;
  static uint64_t next = 0;
  generations()[reinterpret_cast<uintptr_t>(q)] = ++next;
  *p = q;
  return cudaSuccess;
}

cudaError_t release(void *p, const char *fn) {
  if (!p)
    return cudaSuccess;
  std::lock_guard<std::recursive_mutex> g(lock());
  auto it = blocks().find(reinterpret_cast<uintptr_t>(p));
  if (it == blocks().end())
    return fail(cudaErrorInvalidValue,
                std::string(fn) + ": " + where(p, 0) +
                    " is not the start of a cudaMalloc block");
  std::memset(p, 0xff, it->second); // a later read of it shows as NaN
  blocks().erase(it);
  generations().erase(reinterpret_cast<uintptr_t>(p));
  forgetUses(reinterpret_cast<uintptr_t>(p));
  std::free(p);
  return cudaSuccess;
}

/// Checks a copy's ranges, [dst, dst + dBytes) and [src, src + sBytes),
/// against its kind: a device side must lie inside one cudaMalloc block, a
/// host side outside every block.
cudaError_t checkKind(void *dst, size_t dBytes, const void *src,
                      size_t sBytes, cudaMemcpyKind kind, const char *fn) {
  const bool dDev = onDevice(dst, dBytes), sDev = onDevice(src, sBytes);
  const bool dHost = !blockOf(dst, 0), sHost = !blockOf(src, 0);
  bool ok = true;
  switch (kind) {
  case cudaMemcpyHostToDevice:
    ok = dDev && sHost;
    break;
  case cudaMemcpyDeviceToHost:
    ok = sDev && dHost;
    break;
  case cudaMemcpyDeviceToDevice:
    ok = dDev && sDev;
    break;
  case cudaMemcpyHostToHost:
    ok = dHost && sHost;
    break;
  case cudaMemcpyDefault:
    ok = (dDev || dHost) && (sDev || sHost);
    break;
  default:
    return fail(cudaErrorInvalidValue,
                std::string(fn) + ": unknown cudaMemcpyKind " +
                    std::to_string(int(kind)));
  }
  if (!ok)
    return fail(cudaErrorInvalidValue,
                std::string(fn) + ": kind " + std::to_string(int(kind)) +
                    " does not fit destination " + where(dst, dBytes) +
                    (dDev ? " (device)" : " (not a whole device range)") +
                    " and source " + where(src, sBytes) +
                    (sDev ? " (device)" : " (not a whole device range)"));
  return cudaSuccess;
}

/// Whether [a, a + n) and [b, b + m) share a byte.
bool overlaps(const void *a, size_t n, const void *b, size_t m) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a),
                  y = reinterpret_cast<uintptr_t>(b);
  return n && m && x < y + m && y < x + n;
}

/// A 1-D copy: kind and ranges; the ranges may not overlap (cudaMemcpy's
/// are undefined then), unless they are the same.
cudaError_t checkCopy(void *dst, const void *src, size_t bytes,
                      cudaMemcpyKind kind, const char *fn) {
  if (bytes == 0)
    return cudaSuccess;
  if (cudaError_t e = checkKind(dst, bytes, src, bytes, kind, fn);
      e != cudaSuccess)
    return e;
  if (dst != src && overlaps(dst, bytes, src, bytes))
    return fail(cudaErrorInvalidValue,
                std::string(fn) + ": overlapping ranges " + where(dst, bytes) +
                    " and " + where(src, bytes));
  return cudaSuccess;
}

cudaError_t copy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                   size_t width, size_t height, cudaMemcpyKind kind,
                   const char *fn) {
  if (width == 0 || height == 0)
    return cudaSuccess;
  if (dpitch < width || spitch < width)
    return fail(cudaErrorInvalidValue,
                std::string(fn) + ": a pitch is below the row width");
  constexpr size_t kMaxPitch = (size_t(1) << 31) - 1; // cudaDevAttrMaxPitch
  if (dpitch > kMaxPitch || spitch > kMaxPitch)
    return fail(cudaErrorInvalidValue,
                std::string(fn) + ": pitch above cudaDevAttrMaxPitch");
  const size_t dExtent = dpitch * (height - 1) + width,
               sExtent = spitch * (height - 1) + width;
  if (cudaError_t e = checkKind(dst, dExtent, src, sExtent, kind, fn);
      e != cudaSuccess)
    return e;
  // The two areas may not overlap: each destination row against the
  // source rows that reach its bytes.
  if (overlaps(dst, dExtent, src, sExtent)) {
    const char *d = static_cast<const char *>(dst),
               *sp = static_cast<const char *>(src);
    for (size_t r = 0; r < height; ++r) {
      const char *row = d + r * dpitch;
      for (size_t q = 0; q < height; ++q) {
        const char *other = sp + q * spitch;
        if (other >= row + width)
          break; // later source rows start further on
        if (overlaps(row, width, other, width))
          return fail(cudaErrorInvalidValue,
                      std::string(fn) + ": destination row " +
                          std::to_string(r) + " overlaps source row " +
                          std::to_string(q));
      }
    }
  }
  for (size_t r = 0; r < height; ++r)
    std::memcpy(static_cast<char *>(dst) + r * dpitch,
                static_cast<const char *>(src) + r * spitch, width);
  return cudaSuccess;
}

// --- handles ---------------------------------------------------------------

template <class T> std::set<T *> &live() {
  static std::set<T *> s;
  return s;
}
template <class T> bool isLive(T *p) {
  std::lock_guard<std::recursive_mutex> g(lock());
  return live<T>().count(p) != 0;
}
/// A new handle, registered live.
template <class T> T *adopt(T *p) {
  std::lock_guard<std::recursive_mutex> g(lock());
  live<T>().insert(p);
  return p;
}
/// Unregisters and deletes a live handle; false if `p` is none.
template <class T> bool drop(T *p) {
  std::lock_guard<std::recursive_mutex> g(lock());
  if (!p || !live<T>().erase(p))
    return false;
  delete p;
  return true;
}
bool streamOk(cudaStream_t s) { return s == nullptr || isLive(s); }

/// Queries answered "not ready" after new work (TRIDENT_CUDA_EMU_NOT_READY).
int notReadyQueries() {
  static const int n = envCount("TRIDENT_CUDA_EMU_NOT_READY", 0, 100000, 2);
  return n;
}

/// Makes the results of `s`'s NCCL operations up to `upTo` visible,
/// after checking that their buffers kept their bytes since the call.
void commitUpTo(CUstream_st *s, long upTo) {
  if (s->pending.empty())
    return;
  // pending is in call order (CallBuffers::deferResult inserts so).
  size_t n = 0;
  while (n < s->pending.size() && s->pending[n].at <= upTo)
    ++n;
  if (n == 0)
    return;
  std::vector<EmuCommit> due(std::make_move_iterator(s->pending.begin()),
                             std::make_move_iterator(s->pending.begin() + n));
  s->pending.erase(s->pending.begin(), s->pending.begin() + n);
  for (EmuCommit &c : due) {
    const size_t sb = c.srcAtCall.size(), db = c.result.size();
    if ((c.src && sb && generationOf(c.src, sb) != c.srcGen) ||
        (c.dst && db && generationOf(c.dst, db) != c.dstGen)) {
      fail(cudaErrorLaunchFailure,
           c.what + ": a buffer was freed before the stream reached the "
                    "call (the GPU would still use it)");
      continue;
    }
    if (c.src && sb && std::memcmp(c.src, c.srcAtCall.data(), sb) != 0)
      fail(cudaErrorLaunchFailure,
           c.what + ": its send buffer " + where(c.src, sb) +
               " changed before its stream was waited for (the GPU may "
               "still be reading it)");
    if (c.dst && db && c.dst != c.src &&
        std::memcmp(c.dst, c.dstAtCall.data(), db) != 0)
      fail(cudaErrorLaunchFailure,
           c.what + ": its receive buffer " + where(c.dst, db) +
               " was written before its stream was waited for (the GPU "
               "writes it then)");
    if (c.dst && db)
      std::memcpy(c.dst, c.result.data(), db);
  }
}

/// How far the host has seen each stream complete (a synchronisation, a
/// query answering "done"): what it queues next is ordered after that.
std::map<CUstream_st *, long> &hostKnows() {
  static std::map<CUstream_st *, long> k;
  return k;
}

void merge(std::map<CUstream_st *, long> &into,
           const std::map<CUstream_st *, long> &from) {
  for (auto [t, at] : from)
    into[t] = std::max(into[t], at);
}

/// An operation queued on `s` (the legacy stream, null, is not tracked);
/// it sees what the stream's earlier operations wrote.
void queued(cudaStream_t s) {
  if (!s)
    return;
  commitUpTo(s, s->queued);
  ++s->queued;
  s->notReady = notReadyQueries();
  merge(s->knows, hostKnows());
}

/// The streams' last uses of each device block (by its start): the last
/// write, and the last read per stream, each at its stream's operation
/// count. A use by another stream must be ordered after them (events),
/// or the GPU may run the two at once.
struct BlockUse {
  CUstream_st *writer = nullptr;
  long writeAt = 0;
  std::map<CUstream_st *, long> readers;
};
std::map<uintptr_t, BlockUse> &blockUses() {
  static std::map<uintptr_t, BlockUse> u;
  return u;
}

void forgetUses(uintptr_t start) { blockUses().erase(start); }

/// Whether `s`'s current operation is ordered after `t`'s operation `at`.
bool orderedAfter(CUstream_st *s, CUstream_st *t, long at) {
  if (!t || t == s || !isLive(t))
    return true;
  auto it = s->knows.find(t);
  return it != s->knows.end() && it->second >= at;
}

/// Records that `s`'s current operation (`what`) reads or writes the
/// block holding `p`, after checking that it is ordered after the other
/// streams' conflicting uses. Returns false (reported) when it is not.
bool use(cudaStream_t s, const void *p, bool writes, const std::string &what) {
  if (!s || !p)
    return true;
  const auto *b = blockOf(p, 0);
  if (!b)
    return true;
  BlockUse &u = blockUses()[b->first];
  bool ok = true;
  if (!orderedAfter(s, u.writer, u.writeAt))
    ok = false;
  if (writes)
    for (auto [t, at] : u.readers)
      if (!orderedAfter(s, t, at))
        ok = false;
  if (!ok)
    fail(cudaErrorLaunchFailure,
         what + ": uses " + where(p, 0) + ", which another stream " +
             (writes ? "reads or writes" : "writes") +
             " without this stream waiting for it (an event); on a GPU "
             "the two may run at once");
  if (writes) {
    u.writer = s;
    u.writeAt = s->queued;
    u.readers.clear();
  } else {
    u.readers[s] = s->queued;
  }
  return ok;
}

/// `s` complete up to operation `upTo`, with the streams it waited for.
void complete(CUstream_st *s, long upTo) {
  if (!s)
    return;
  commitUpTo(s, upTo);
  hostKnows()[s] = std::max(hostKnows()[s], std::min(upTo, s->queued));
  if (s->done >= upTo)
    return;
  s->done = std::min(upTo, s->queued);
  if (s->done == s->queued) {
    s->notReady = 0;
    std::vector<std::pair<CUstream_st *, long>> waits;
    waits.swap(s->waits);
    for (auto [other, at] : waits)
      if (isLive(other))
        complete(other, at);
  }
}

// --- kernels: fibers -------------------------------------------------------

constexpr size_t kStack = 128 * 1024;
constexpr unsigned kMaxThreads = 1024;

#if defined(__x86_64__)
// switchTo(&saveSp, sp): saves the callee-saved registers on this stack,
// stores its stack pointer, and resumes the stack at sp (System V ABI).
extern "C" void trident_emu_switch(void **save, void *sp);
extern "C" void trident_emu_start();
asm(R"(
  .text
  .globl trident_emu_switch
  .type trident_emu_switch,@function
trident_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size trident_emu_switch, .-trident_emu_switch
  .globl trident_emu_start
  .type trident_emu_start,@function
trident_emu_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size trident_emu_start, .-trident_emu_start
)");
#endif

struct Fiber {
  char *stack = nullptr;
  void *fakeStack = nullptr; ///< AddressSanitizer's, while switched away
#if defined(__x86_64__)
  void *sp = nullptr;
#else
  ucontext_t ctx;
#endif
  unsigned index = 0;
  uint3 thread{};    ///< its threadIdx
  long barriers = 0; ///< passed so far
  bool done = false;
};

struct BlockRun {
  std::vector<Fiber> fibers;
#if defined(__x86_64__)
  void *mainSp = nullptr;
#else
  ucontext_t mainCtx;
#endif
  void *mainFake = nullptr;
  const void *mainBottom = nullptr; ///< the launching thread's stack
  size_t mainSize = 0;
  unsigned current = 0;
  long endBarriers = -1; ///< barriers the first thread to end passed
  uint3 block{};
  dim3 blockSize, gridSize;
  void (*body)(void *) = nullptr;
  void *closure = nullptr;
  bool direct = false; ///< threads run one after another, no fibers
  bool sawBarrier = false;
  std::string error;
};

BlockRun *running = nullptr; // the block whose threads run now

char *stackPool() {
  static char *pool = [] {
    const size_t total = size_t(kMaxThreads) * kStack;
    void *p = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      report("mmap of the fiber stacks failed");
      std::abort();
    }
    // A guard page at the bottom of each stack.
    for (unsigned i = 0; i < kMaxThreads; ++i)
      mprotect(static_cast<char *>(p) + size_t(i) * kStack, 4096, PROT_NONE);
    return static_cast<char *>(p);
  }();
  return pool;
}

uint3 threadOf(const BlockRun &b, unsigned t) {
  return {t % b.blockSize.x, (t / b.blockSize.x) % b.blockSize.y,
          t / (b.blockSize.x * b.blockSize.y)};
}

/// The block's ids (at its start; a switch changes only the thread's).
void setBlockIds(const BlockRun &b) {
  ids.block = b.block;
  ids.blockSize = b.blockSize;
  ids.gridSize = b.gridSize;
}

/// AddressSanitizer: about to leave `save`'s stack (null when it ends) for
/// [bottom, bottom + size); and, back on a stack, the switch is complete.
void leaving(void **save, const void *bottom, size_t size) {
#ifdef TRIDENT_EMU_ASAN
  __sanitizer_start_switch_fiber(save, bottom, size);
#else
  (void)save, (void)bottom, (void)size;
#endif
}
void arrived(void *fake) {
#ifdef TRIDENT_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  (void)fake;
#endif
}

const void *stackBottom(const Fiber &f) { return f.stack + 4096; }
constexpr size_t kUsable = kStack - 4096;

void switchFiber(Fiber &from, Fiber *to) {
  BlockRun &b = *running;
  if (to)
    leaving(from.done ? nullptr : &from.fakeStack, stackBottom(*to), kUsable);
  else
    leaving(from.done ? nullptr : &from.fakeStack, b.mainBottom, b.mainSize);
#if defined(__x86_64__)
  void *target = to ? to->sp : b.mainSp;
  if (to) {
    b.current = to->index;
    ids.thread = to->thread;
  }
  trident_emu_switch(&from.sp, target);
#else
  if (to) {
    b.current = to->index;
    ids.thread = to->thread;
    swapcontext(&from.ctx, &to->ctx);
  } else {
    swapcontext(&from.ctx, &b.mainCtx);
  }
#endif
  // Resumed (the switch into this fiber set its ids).
  arrived(from.fakeStack);
}

/// The next fiber after `t` that has not ended, cyclically; null if none.
Fiber *nextLive(BlockRun &b, unsigned t) {
  // (A compare and wrap, not `% n`: this runs at every barrier of every
  // thread, and a division per step was a fifth of a smoke test's time.)
  const unsigned n = unsigned(b.fibers.size());
  unsigned k = t;
  for (unsigned i = 1; i <= n; ++i) {
    if (++k == n)
      k = 0;
    Fiber &f = b.fibers[k];
    if (!f.done)
      return &f;
  }
  return nullptr;
}

void fiberMain(void *arg) {
  arrived(nullptr); // a new stack: no fake stack to restore
  Fiber &self = *static_cast<Fiber *>(arg);
  BlockRun &b = *running;
  b.body(b.closure);
  self.done = true;
  // Every thread of a block passes the same number of barriers.
  if (b.endBarriers < 0)
    b.endBarriers = self.barriers;
  else if (b.endBarriers != self.barriers && b.error.empty())
    b.error = "thread " + std::to_string(self.index) + " of a block passed " +
              std::to_string(self.barriers) + " __syncthreads, an earlier "
              "one " + std::to_string(b.endBarriers);
  Fiber *next = nextLive(b, self.index);
  switchFiber(self, next); // never returns
  std::abort();
}

#if !defined(__x86_64__)
void fiberEntry(unsigned hi, unsigned lo) {
  fiberMain(reinterpret_cast<void *>((uintptr_t(hi) << 32) | uintptr_t(lo)));
}
#endif

/// TRIDENT_CUDA_EMU_ORDER: "forward" (default) runs a grid's blocks, and a
/// block's threads between two barriers, in index order; "reverse" in the
/// opposite order, so that a kernel whose threads or blocks race (one
/// reads what another writes without a barrier between) gives other
/// results under one of the two.
bool reverseOrder() {
  static const bool r = [] {
    const char *v = std::getenv("TRIDENT_CUDA_EMU_ORDER");
    if (!v || !*v || std::string(v) == "forward")
      return false;
    if (std::string(v) == "reverse")
      return true;
    report(std::string("TRIDENT_CUDA_EMU_ORDER='") + v +
           "' must be forward or reverse");
    std::exit(2);
  }();
  return r;
}

/// The thread index fiber (or turn) `t` of `n` runs.
unsigned logicalThread(unsigned t, unsigned n) {
  return reverseOrder() ? n - 1 - t : t;
}

void runBlockFibers(BlockRun &b, unsigned nThreads) {
  char *pool = stackPool();
  b.fibers.assign(nThreads, Fiber{});
  for (unsigned t = 0; t < nThreads; ++t) {
    Fiber &f = b.fibers[t];
    f.index = t;
    f.thread = threadOf(b, logicalThread(t, nThreads));
    f.stack = pool + size_t(t) * kStack;
#ifdef TRIDENT_EMU_ASAN
    // A fiber that ended left its frames' redzones poisoned.
    ASAN_UNPOISON_MEMORY_REGION(f.stack + 4096, kUsable);
#endif
#if defined(__x86_64__)
    // The frame trident_emu_switch pops: r15 r14 r13 r12 rbx rbp, then the
    // return address (trident_emu_start), which calls r13(r12) with the
    // stack 16-byte aligned.
    // Stack tops staggered by 5 cache lines per thread: tops a power of
    // two apart would all fall into the same cache sets.
    uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack) + kStack -
                     (size_t(t) * 320) % 32768) &
                    ~uintptr_t(15);
    void **sp = reinterpret_cast<void **>(top - 72);
    sp[0] = nullptr;                                    // r15
    sp[1] = nullptr;                                    // r14
    sp[2] = reinterpret_cast<void *>(&fiberMain);       // r13
    sp[3] = &f;                                         // r12
    sp[4] = nullptr;                                    // rbx
    sp[5] = nullptr;                                    // rbp
    sp[6] = reinterpret_cast<void *>(&trident_emu_start); // return address
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack + 4096;
    f.ctx.uc_stack.ss_size = kStack - 4096;
    f.ctx.uc_link = nullptr;
    const uintptr_t a = reinterpret_cast<uintptr_t>(&f);
    makecontext(&f.ctx, reinterpret_cast<void (*)()>(&fiberEntry), 2,
                unsigned(a >> 32), unsigned(a & 0xffffffffu));
#endif
  }
  b.current = 0;
  b.endBarriers = -1;
  setBlockIds(b);
  ids.thread = b.fibers[0].thread;
#ifdef TRIDENT_EMU_ASAN
  if (!b.mainBottom) {
    pthread_attr_t attr;
    void *addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &addr, &size);
      pthread_attr_destroy(&attr);
    }
    b.mainBottom = addr;
    b.mainSize = size;
  }
#endif
  leaving(&b.mainFake, stackBottom(b.fibers[0]), kUsable);
#if defined(__x86_64__)
  trident_emu_switch(&b.mainSp, b.fibers[0].sp);
#else
  swapcontext(&b.mainCtx, &b.fibers[0].ctx);
#endif
  arrived(b.mainFake);
}

} // namespace

ThreadIds ids;

bool lastLaneOfWarp() {
  const dim3 &n = ids.blockSize;
  const unsigned threads = n.x * n.y * n.z;
  const unsigned t = ids.thread.x + n.x * (ids.thread.y + n.y * ids.thread.z);
  const unsigned first = t / 32 * 32;
  const unsigned last = std::min(first + 32, threads) - 1;
  return t == (reverseOrder() ? first : last);
}

void countWarpMma() {
  if (lastLaneOfWarp())
    ++counts.warpMmas;
}

void syncthreads() {
  BlockRun *b = running;
  if (!b) {
    report("__syncthreads outside a kernel");
    std::abort();
  }
  if (b->direct) {
    report("a kernel reached __syncthreads after its first block ran "
           "without one (data-dependent barriers are not emulated)");
    std::abort();
  }
  b->sawBarrier = true;
  Fiber &self = b->fibers[b->current];
  ++self.barriers;
  // Round robin in thread order: when this fiber runs again, every other
  // live fiber has reached this barrier too.
  Fiber *next = nextLive(*b, self.index);
  if (next != &self)
    switchFiber(self, next);
}

void launchGrid(const char *name, dim3 grid, dim3 block, size_t shmem,
                cudaStream_t stream, void (*body)(void *), void *closure,
                const void *const *pointers, const unsigned char *writes,
                int nPointers) {
  std::lock_guard<std::recursive_mutex> g(lock());
  const std::string k = std::string("kernel ") + name;
  const unsigned long long threads =
      1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > kMaxThreads || block.z > 64 ||
      grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u ||
      grid.y > 65535 || grid.z > 65535) {
    fail(cudaErrorInvalidConfiguration,
         k + ": invalid launch configuration grid (" +
             std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
             std::to_string(grid.z) + ") block (" + std::to_string(block.x) +
             ", " + std::to_string(block.y) + ", " + std::to_string(block.z) +
             ")");
    return;
  }
  if (shmem != 0) {
    fail(cudaErrorInvalidValue,
         k + ": dynamic shared memory is not emulated");
    return;
  }
  if (!streamOk(stream)) {
    fail(cudaErrorInvalidValue, k + ": launched on a destroyed stream");
    return;
  }
  for (int i = 0; i < nPointers; ++i)
    if (pointers[i] && !onDevice(pointers[i], 0)) {
      fail(cudaErrorLaunchFailure,
           k + ": pointer argument " + std::to_string(i + 1) + " (" +
               where(pointers[i], 0) +
               ") is not in device memory (a GPU would fault)");
      return;
    }
  if (running) {
    report(k + ": launched from inside a kernel");
    std::abort();
  }
  ++counts.launches;
  counts.blocks += long(grid.x) * grid.y * grid.z;
  queued(stream);
  for (int i = 0; i < nPointers; ++i)
    use(stream, pointers[i], writes[i], k);
  BlockRun b;
  b.blockSize = block;
  b.gridSize = grid;
  b.body = body;
  b.closure = closure;
  running = &b;
  // A launch whose first block passed no barrier runs the threads of its
  // later blocks one after another on this stack.
  bool barrierFree = false;
  const unsigned long long nBlocks = 1ull * grid.x * grid.y * grid.z;
  for (unsigned long long i = 0; i < nBlocks; ++i) {
    const unsigned long long L = reverseOrder() ? nBlocks - 1 - i : i;
    b.block = {unsigned(L % grid.x), unsigned(L / grid.x % grid.y),
               unsigned(L / (1ull * grid.x * grid.y))};
    if (barrierFree) {
      b.direct = true;
      setBlockIds(b);
      for (unsigned t = 0; t < unsigned(threads); ++t) {
        ids.thread = threadOf(b, logicalThread(t, unsigned(threads)));
        body(closure);
      }
      continue;
    }
    b.direct = false;
    b.sawBarrier = false;
    runBlockFibers(b, unsigned(threads));
    if (!b.error.empty()) {
      running = nullptr;
      fail(cudaErrorLaunchFailure, k + ": " + b.error);
      return;
    }
    barrierFree = !b.sawBarrier;
  }
  running = nullptr;
}

} // namespace trident::emu

using namespace trident::emu;

// --- CUDA runtime ------------------------------------------------------------

const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidDevicePointer:
    return "invalid device pointer";
  case cudaErrorNotReady:
    return "device not ready";
  case cudaErrorLaunchFailure:
    return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  cudaError_t e = lastError;
  lastError = cudaSuccess;
  return e;
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = deviceCount();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= deviceCount())
    return fail(cudaErrorInvalidDevice,
                "cudaSetDevice(" + std::to_string(device) + ")");
  currentDevice = device;
  worldRank(); // remembered for the messages after MPI_Finalize
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int device) {
  if (device < 0 || device >= deviceCount() || len < 13)
    return fail(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId");
  std::snprintf(bus, size_t(len), "0000:%02x:00.0", unsigned(device) & 0xffu);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int) {
  // The emulated device is a Hopper (sm_90, bf16 tensor cores).
  if (attr == cudaDevAttrComputeCapabilityMajor) {
    *value = 9;
    return cudaSuccess;
  }
  if (attr != cudaDevAttrMaxPitch)
    return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute");
  *value = 2147483647;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  std::lock_guard<std::recursive_mutex> g(lock());
  for (CUstream_st *s : live<CUstream_st>())
    complete(s, s->queued);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
  *s = adopt(new CUstream_st{currentDevice});
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (isLive(s)) // its queued work still completes
    complete(s, s->queued);
  return drop(s) ? cudaSuccess
                 : fail(cudaErrorInvalidValue,
                        "cudaStreamDestroy of no live stream");
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue,
                "cudaStreamSynchronize of a destroyed stream");
  if (s)
    complete(s, s->queued);
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue, "cudaStreamQuery of a destroyed stream");
  if (!s || s->done == s->queued)
    return cudaSuccess;
  if (s->notReady > 0) {
    --s->notReady;
    ++counts.notReady;
    return cudaErrorNotReady;
  }
  complete(s, s->queued);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
  if (!streamOk(s) || !isLive(e))
    return fail(cudaErrorInvalidValue,
                "cudaStreamWaitEvent on a destroyed stream or event");
  if (s)
    merge(s->knows, e->clock);
  if (e->stream && isLive(e->stream)) {
    // What `s` runs next sees the event's stream up to the event.
    commitUpTo(e->stream, e->at);
    if (s && e->stream->done < e->at) {
      queued(s);
      s->waits.emplace_back(e->stream, e->at);
    }
  }
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  *e = adopt(new CUevent_st);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!streamOk(s) || !isLive(e))
    return fail(cudaErrorInvalidValue,
                "cudaEventRecord of a destroyed event or stream");
  e->stream = s;
  e->at = s ? s->queued : 0;
  e->clock.clear();
  if (s) {
    e->clock = s->knows;
    e->clock[s] = s->queued;
  }
  e->notReady = s && s->done < s->queued ? notReadyQueries() : 0;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  if (!isLive(e))
    return fail(cudaErrorInvalidValue, "cudaEventQuery of a destroyed event");
  if (!e->stream || !isLive(e->stream) || e->stream->done >= e->at)
    return cudaSuccess;
  if (e->notReady > 0) {
    --e->notReady;
    ++counts.notReady;
    return cudaErrorNotReady;
  }
  complete(e->stream, e->at);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  return drop(e) ? cudaSuccess
                 : fail(cudaErrorInvalidValue,
                        "cudaEventDestroy of no live event");
}

cudaError_t cudaMalloc(void **p, size_t bytes) { return allocate(p, bytes); }
cudaError_t cudaFree(void *p) { return release(p, "cudaFree"); }
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue, "cudaMallocAsync on a destroyed stream");
  queued(s);
  return allocate(p, bytes);
}
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue, "cudaFreeAsync on a destroyed stream");
  queued(s);
  use(s, p, true, "cudaFreeAsync");
  return release(p, "cudaFreeAsync");
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device) {
  static CUmemPoolHandle_st pools[1024];
  if (device < 0 || device >= deviceCount())
    return fail(cudaErrorInvalidDevice, "cudaDeviceGetDefaultMemPool");
  pools[device].device = device;
  *pool = &pools[device];
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr,
                                    void *value) {
  if (!pool || !value || attr != cudaMemPoolAttrReleaseThreshold)
    return fail(cudaErrorInvalidValue, "cudaMemPoolSetAttribute");
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
  if (cudaError_t e = checkCopy(dst, src, bytes, kind, "cudaMemcpy");
      e != cudaSuccess)
    return e;
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue, "cudaMemcpyAsync on a destroyed stream");
  if (cudaError_t e = checkCopy(dst, src, bytes, kind, "cudaMemcpyAsync");
      e != cudaSuccess)
    return e;
  queued(s);
  if (bytes) {
    use(s, src, false, "cudaMemcpyAsync");
    use(s, dst, true, "cudaMemcpyAsync");
  }
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind) {
  return copy2D(dst, dpitch, src, spitch, width, height, kind, "cudaMemcpy2D");
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue,
                "cudaMemcpy2DAsync on a destroyed stream");
  queued(s);
  if (width && height) {
    use(s, src, false, "cudaMemcpy2DAsync");
    use(s, dst, true, "cudaMemcpy2DAsync");
  }
  return copy2D(dst, dpitch, src, spitch, width, height, kind,
                "cudaMemcpy2DAsync");
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue, "cudaMemsetAsync on a destroyed stream");
  queued(s);
  if (bytes == 0)
    return cudaSuccess;
  use(s, p, true, "cudaMemsetAsync");
  if (!onDevice(p, bytes))
    return fail(cudaErrorInvalidValue,
                "cudaMemsetAsync: " + where(p, bytes) +
                    " is not inside one device block");
  std::memset(p, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width,
                              size_t height, cudaStream_t s) {
  if (!streamOk(s))
    return fail(cudaErrorInvalidValue,
                "cudaMemset2DAsync on a destroyed stream");
  queued(s);
  if (width == 0 || height == 0)
    return cudaSuccess;
  use(s, p, true, "cudaMemset2DAsync");
  if (pitch < width || !onDevice(p, pitch * (height - 1) + width))
    return fail(cudaErrorInvalidValue,
                "cudaMemset2DAsync: rows of " + std::to_string(width) +
                    " bytes, pitch " + std::to_string(pitch) + ", at " +
                    where(p, pitch * (height - 1) + width) +
                    " are not inside one device block");
  for (size_t r = 0; r < height; ++r)
    std::memset(static_cast<char *>(p) + r * pitch, value, width);
  return cudaSuccess;
}

// --- cuBLAS ------------------------------------------------------------------

namespace {
bool handleOk(cublasHandle_t h) { return h && isLive(h); }

cublasStatus_t blasFail(const std::string &what) {
  report(what);
  return CUBLAS_STATUS_INVALID_VALUE;
}

/// A float rounded to TF32 (10 explicit mantissa bits, round to nearest
/// even), as tensor cores read fp32 operands under TF32 math.
float toTf32(float v) {
  if (!std::isfinite(v))
    return v;
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u += 0xfffu + ((u >> 13) & 1u);
  u &= ~0x1fffu;
  std::memcpy(&v, &u, 4);
  return v;
}

/// The elements a column-major operand of `rows` x `cols` with leading
/// dimension ld reaches: ld * (cols - 1) + rows.
size_t extent(int rows, int cols, int ld) {
  return rows == 0 || cols == 0 ? 0 : size_t(ld) * size_t(cols - 1) + size_t(rows);
}

/// An operand element: fp32, or bf16 bits (the upper half of an fp32).
float operandAt(const void *base, size_t i, int bytes) {
  if (bytes == 4)
    return static_cast<const float *>(base)[i];
  uint32_t u = uint32_t(static_cast<const uint16_t *>(base)[i]) << 16;
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

/// C = alpha op(A) op(B) + beta C over `batch` products; A and B hold
/// `abBytes`-byte elements (4: fp32, 2: bf16), C fp32.
cublasStatus_t gemm(const char *fn, cublasHandle_t h, cublasOperation_t ta,
                    cublasOperation_t tb, int m, int n, int k,
                    const float *alpha, const void *A, int lda,
                    long long strideA, const void *B, int ldb,
                    long long strideB, const float *beta, float *C, int ldc,
                    long long strideC, int batch, int abBytes = 4) {
  if (!handleOk(h))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  ++counts.gemms;
  queued(h->stream);
  const std::string f = fn;
  if ((ta != CUBLAS_OP_N && ta != CUBLAS_OP_T) ||
      (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T) || m < 0 || n < 0 || k < 0 ||
      batch < 0 || !alpha || !beta)
    return blasFail(f + ": invalid operation, size or scalar");
  const int aRows = ta == CUBLAS_OP_N ? m : k, aCols = ta == CUBLAS_OP_N ? k : m;
  const int bRows = tb == CUBLAS_OP_N ? k : n, bCols = tb == CUBLAS_OP_N ? n : k;
  if (lda < std::max(1, aRows) || ldb < std::max(1, bRows) ||
      ldc < std::max(1, m))
    return blasFail(f + ": leading dimensions lda " + std::to_string(lda) +
                    ", ldb " + std::to_string(ldb) + ", ldc " +
                    std::to_string(ldc) + " below the rows " +
                    std::to_string(aRows) + ", " + std::to_string(bRows) +
                    ", " + std::to_string(m));
  if (onDevice(alpha, 4) || onDevice(beta, 4))
    return blasFail(f + ": alpha and beta must be host pointers "
                        "(CUBLAS_POINTER_MODE_HOST)");
  if (m == 0 || n == 0 || batch == 0)
    return CUBLAS_STATUS_SUCCESS;
  const bool tf32 = h->math == CUBLAS_TF32_TENSOR_OP_MATH;
  const float al = *alpha, be = *beta;
  const size_t cBytes = 4 * extent(m, n, ldc);
  // The batches' C matrices may not share an element: they lie apart
  // (|strideC| past one C's extent), or side by side within each column
  // stride (strideC >= m, all of them inside ldc).
  const size_t sC = size_t(strideC < 0 ? -strideC : strideC);
  if (batch > 1 && 4 * sC < cBytes &&
      !(sC >= size_t(m) && size_t(batch - 1) * sC + size_t(m) <= size_t(ldc)))
    return blasFail(f + ": the batches' C matrices overlap (m " +
                    std::to_string(m) + ", ldc " + std::to_string(ldc) +
                    ", strideC " + std::to_string(strideC) + ", " +
                    std::to_string(batch) + " batches)");
  const size_t e = size_t(abBytes);
  if (abBytes == 2)
    ++counts.bf16Gemms;
  for (int b = 0; b < batch; ++b) {
    const char *a = static_cast<const char *>(A) + e * size_t(b * strideA);
    const char *bb = static_cast<const char *>(B) + e * size_t(b * strideB);
    float *c = C + b * strideC;
    const bool readAB = k > 0 && al != 0.0f;
    const size_t aBytes = e * extent(aRows, aCols, lda),
                 bBytes = e * extent(bRows, bCols, ldb);
    if ((readAB && (!onDevice(a, aBytes) || !onDevice(bb, bBytes))) ||
        !onDevice(c, 4 * extent(m, n, ldc)))
      return blasFail(f + ": batch " + std::to_string(b) +
                      ": an operand reaches outside its device block (A " +
                      where(a, aBytes) + ", B " + where(bb, bBytes) + ", C " +
                      where(c, 4 * extent(m, n, ldc)) + ")");
    if (readAB) {
      use(h->stream, a, false, f);
      use(h->stream, bb, false, f);
    }
    use(h->stream, c, true, f);
    if (readAB &&
        (overlaps(c, cBytes, a, aBytes) || overlaps(c, cBytes, bb, bBytes)))
      return blasFail(f + ": batch " + std::to_string(b) +
                      ": C overlaps A or B (cuBLAS leaves that undefined)");
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        if (readAB)
          for (int l = 0; l < k; ++l) {
            float x = operandAt(a,
                                ta == CUBLAS_OP_N ? i + size_t(l) * lda
                                                  : l + size_t(i) * lda,
                                abBytes);
            float y = operandAt(bb,
                                tb == CUBLAS_OP_N ? l + size_t(j) * ldb
                                                  : j + size_t(l) * ldb,
                                abBytes);
            if (tf32 && abBytes == 4) {
              x = toTf32(x);
              y = toTf32(y);
            }
            acc += double(x) * double(y);
          }
        float &out = c[i + size_t(j) * ldc];
        // beta 0: C is not read (it may hold NaN).
        out = be == 0.0f ? float(al * acc) : float(al * acc + double(be) * out);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
} // namespace

cublasStatus_t cublasCreate(cublasHandle_t *h) {
  *h = adopt(new cublasContext);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t h) {
  return drop(h) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  if (!handleOk(h))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!streamOk(s))
    return blasFail("cublasSetStream: a destroyed stream");
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
  if (!handleOk(h))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_DEFAULT_MATH && mode != CUBLAS_TF32_TENSOR_OP_MATH)
    return blasFail("cublasSetMathMode: unknown mode");
  h->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetAtomicsMode(cublasHandle_t h, cublasAtomicsMode_t) {
  return handleOk(h) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta,
                           float *C, int ldc) {
  return gemm("cublasSgemm", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0,
              beta, C, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const float *alpha, const float *A, int lda, long long strideA,
    const float *B, int ldb, long long strideB, const float *beta, float *C,
    int ldc, long long strideC, int batchCount) {
  return gemm("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda,
              strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

namespace {
/// cublasGemmEx's types as the runtime calls it: bf16 (or fp32) A and B,
/// fp32 C, fp32 compute; anything else is refused by name.
cublasStatus_t exTypes(const char *fn, cudaDataType_t at, cudaDataType_t bt,
                       cudaDataType_t ct, cublasComputeType_t compute,
                       int *abBytes) {
  if (at != bt || (at != CUDA_R_16BF && at != CUDA_R_32F) || ct != CUDA_R_32F ||
      compute != CUBLAS_COMPUTE_32F)
    return blasFail(std::string(fn) +
                    ": the emulation takes A and B both CUDA_R_16BF or "
                    "CUDA_R_32F, C CUDA_R_32F and CUBLAS_COMPUTE_32F");
  *abBytes = at == CUDA_R_16BF ? 2 : 4;
  return CUBLAS_STATUS_SUCCESS;
}
} // namespace

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType_t at,
                            int lda, const void *B, cudaDataType_t bt, int ldb,
                            const void *beta, void *C, cudaDataType_t ct,
                            int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t) {
  int bytes = 4;
  if (cublasStatus_t rc = exTypes("cublasGemmEx", at, bt, ct, compute, &bytes))
    return rc;
  return gemm("cublasGemmEx", h, ta, tb, m, n, k,
              static_cast<const float *>(alpha), A, lda, 0, B, ldb, 0,
              static_cast<const float *>(beta), static_cast<float *>(C), ldc, 0,
              1, bytes);
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const void *alpha, const void *A, cudaDataType_t at, int lda,
    long long strideA, const void *B, cudaDataType_t bt, int ldb,
    long long strideB, const void *beta, void *C, cudaDataType_t ct, int ldc,
    long long strideC, int batchCount, cublasComputeType_t compute,
    cublasGemmAlgo_t) {
  int bytes = 4;
  if (cublasStatus_t rc =
          exTypes("cublasGemmStridedBatchedEx", at, bt, ct, compute, &bytes))
    return rc;
  return gemm("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k,
              static_cast<const float *>(alpha), A, lda, strideA, B, ldb,
              strideB, static_cast<const float *>(beta),
              static_cast<float *>(C), ldc, strideC, batchCount, bytes);
}

cublasStatus_t cublasSscal(cublasHandle_t h, int n, const float *alpha,
                           float *x, int incx) {
  if (!handleOk(h))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0 || incx <= 0)
    return CUBLAS_STATUS_SUCCESS; // cuBLAS returns at once for these
  if (!alpha || onDevice(alpha, 4))
    return blasFail("cublasSscal: alpha must be a host pointer");
  if (!onDevice(x, 4 * (size_t(n - 1) * size_t(incx) + 1)))
    return blasFail("cublasSscal: x reaches outside its device block");
  ++counts.gemms;
  queued(h->stream);
  use(h->stream, x, true, "cublasSscal");
  for (int i = 0; i < n; ++i)
    x[size_t(i) * size_t(incx)] *= *alpha;
  return CUBLAS_STATUS_SUCCESS;
}

// --- NCCL over MPI -----------------------------------------------------------

namespace {
std::string ncclLast;

ncclResult_t ncclFail(ncclResult_t r, const std::string &what) {
  report(what);
  ncclLast = what;
  return r;
}

bool commOk(ncclComm_t c) { return c && isLive(c); }

int mpiWorldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// The id: "trident-emu", the creating world rank, its counter.
struct IdFields {
  char magic[12];
  int world;
  int counter;
};

MPI_Datatype mpiType(ncclDataType_t t) {
  return t == ncclFloat ? MPI_FLOAT : t == ncclInt32 ? MPI_INT : MPI_DATATYPE_NULL;
}
size_t typeSize(ncclDataType_t t) { return t == ncclFloat || t == ncclInt32 ? 4 : 0; }
MPI_Op mpiOp(ncclRedOp_t op) {
  switch (op) {
  case ncclSum:
    return MPI_SUM;
  case ncclProd:
    return MPI_PROD;
  case ncclMax:
    return MPI_MAX;
  case ncclMin:
    return MPI_MIN;
  }
  return MPI_OP_NULL;
}

/// A queued call of a group (ncclGroupStart .. ncclGroupEnd).
struct P2p {
  bool send;
  void *buf;
  size_t count;
  ncclDataType_t type;
  int peer;
  ncclComm_t comm;
  cudaStream_t stream;
  long at; ///< the stream's operation count at the call
};
int groupDepth = 0;
std::vector<P2p> groupOps;
constexpr int kP2pTag = 7;

/// A call's communicator, stream and type (before anything reads the
/// communicator).
ncclResult_t checkCall(const char *fn, ncclComm_t comm, cudaStream_t s,
                       ncclDataType_t type) {
  if (!commOk(comm))
    return ncclFail(ncclInvalidArgument, std::string(fn) + ": no live communicator");
  ++counts.ncclCalls;
  if (!streamOk(s))
    return ncclFail(ncclInvalidArgument, std::string(fn) + ": a destroyed stream");
  queued(s);
  if (mpiType(type) == MPI_DATATYPE_NULL)
    return ncclFail(ncclInvalidArgument, std::string(fn) + ": data type not emulated");
  return ncclSuccess;
}

/// Every buffer inside one device block.
ncclResult_t checkBuffers(
    const char *fn,
    std::initializer_list<std::pair<const void *, size_t>> buffers) {
  for (auto [p, bytes] : buffers)
    if (bytes && !onDevice(p, bytes))
      return ncclFail(ncclInvalidArgument,
                      std::string(fn) + ": buffer " + where(p, bytes) +
                          " is not inside one device block");
  return ncclSuccess;
}

/// The bytes of [p, p + n).
std::vector<char> bytesOf(const void *p, size_t n) {
  const char *c = static_cast<const char *>(p);
  return n && p ? std::vector<char>(c, c + n) : std::vector<char>();
}

/// The buffers of an NCCL call on a stream, taken before it runs; after
/// it ran, `deferResult` moves its result aside until the stream is seen
/// to pass the call (commitUpTo).
struct CallBuffers {
  cudaStream_t stream;
  const char *what;
  char *dst;
  size_t dstBytes;
  const char *src;
  size_t srcBytes;
  std::vector<char> dstAtCall, srcAtCall;
  CallBuffers(cudaStream_t s, const char *fn, void *d, size_t db,
              const void *sp, size_t sb)
      : stream(s), what(fn), dst(static_cast<char *>(d)), dstBytes(db),
        src(static_cast<const char *>(sp)), srcBytes(sb),
        dstAtCall(bytesOf(d, db)), srcAtCall(bytesOf(sp, sb)) {}
  /// Call after the operation wrote its result into dst; `at` is the
  /// call's place in its stream (default: the stream's current operation;
  /// a group's calls pass the place each was made at).
  void deferResult(long at = -1) {
    if (!stream)
      return; // the legacy stream: no later reader to check
    EmuCommit c;
    c.at = at < 0 ? stream->queued : at;
    c.what = what;
    c.dst = dstBytes ? dst : nullptr;
    c.result = bytesOf(dst, dstBytes);
    c.src = srcBytes ? src : nullptr;
    c.srcAtCall = std::move(srcAtCall);
    c.dstAtCall = dstAtCall;
    c.dstGen = generationOf(dst, dstBytes);
    c.srcGen = generationOf(src, srcBytes);
    if (dstBytes)
      std::memcpy(dst, dstAtCall.data(), dstBytes); // not visible yet
    // In call order, after those made at the same place (a group's
    // receives are registered before its sends).
    auto &p = stream->pending;
    auto pos = std::upper_bound(
        p.begin(), p.end(), c.at,
        [](long v, const EmuCommit &e) { return v < e.at; });
    p.insert(pos, std::move(c));
  }
};

ncclResult_t mpiOk(int rc, const char *fn) {
  return rc == MPI_SUCCESS
             ? ncclSuccess
             : ncclFail(ncclSystemError, std::string(fn) + ": MPI call failed");
}

/// A group's sends and receives, all checked before any is posted; the
/// sends are synchronous (MPI_Issend), as an NCCL send completes only
/// with its receive, and each receive must get exactly its count.
ncclResult_t runP2p(const std::vector<P2p> &ops) {
  for (const P2p &o : ops)
    if (o.count > size_t(INT32_MAX))
      return ncclFail(ncclInvalidArgument,
                      "ncclSend/ncclRecv: count above 2^31");
  std::vector<MPI_Request> reqs;
  std::vector<const P2p *> of;
  std::vector<CallBuffers> bufs;
  reqs.reserve(ops.size());
  bufs.reserve(ops.size());
  // Receives first, then sends.
  for (int pass = 0; pass < 2; ++pass)
    for (const P2p &o : ops) {
      if (o.send != (pass == 1))
        continue;
      reqs.emplace_back();
      of.push_back(&o);
      const size_t bytes = o.count * typeSize(o.type);
      bufs.emplace_back(o.stream, o.send ? "ncclSend" : "ncclRecv",
                        o.send ? nullptr : o.buf, o.send ? 0 : bytes,
                        o.send ? o.buf : nullptr, o.send ? bytes : 0);
      int rc = o.send ? MPI_Issend(o.buf, int(o.count), mpiType(o.type),
                                   o.peer, kP2pTag, o.comm->comm, &reqs.back())
                      : MPI_Irecv(o.buf, int(o.count), mpiType(o.type), o.peer,
                                  kP2pTag, o.comm->comm, &reqs.back());
      if (rc != MPI_SUCCESS)
        return ncclFail(ncclSystemError, "ncclSend/ncclRecv: MPI failed");
    }
  std::vector<MPI_Status> st(reqs.size());
  if (ncclResult_t r = mpiOk(MPI_Waitall(int(reqs.size()), reqs.data(),
                                         st.data()),
                             "ncclGroupEnd");
      r != ncclSuccess)
    return r;
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (of[i]->send)
      continue;
    int got = 0;
    MPI_Get_count(&st[i], mpiType(of[i]->type), &got);
    if (size_t(got) != of[i]->count)
      return ncclFail(ncclInvalidUsage,
                      "ncclRecv of " + std::to_string(of[i]->count) +
                          " elements from peer " + std::to_string(of[i]->peer) +
                          " matched a send of " + std::to_string(got));
  }
  // Visible (and their buffers free to change) once their streams pass
  // the calls, in the order the calls were made.
  for (size_t i = 0; i < bufs.size(); ++i)
    bufs[i].deferResult(of[i]->at); // at the call's own place in its stream
  return ncclSuccess;
}
} // namespace

const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error";
  case ncclSystemError:
    return "unhandled system error";
  case ncclInternalError:
    return "internal error";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclInvalidUsage:
    return "invalid usage";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  }
  return "unknown result code";
}

const char *ncclGetLastError(ncclComm_t) { return ncclLast.c_str(); }

namespace {
/// Empty when the ranks of `comm` each use a different GPU (node name and
/// device index); otherwise which two share one, the same on every rank.
std::string sharedDevice(MPI_Comm comm) {
  constexpr int kKey = MPI_MAX_PROCESSOR_NAME + 16;
  char mine[kKey] = {};
  int len = 0;
  MPI_Get_processor_name(mine, &len);
  std::snprintf(mine + len, size_t(kKey - len), "#%d", currentDevice);
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<char> all(size_t(kKey) * size_t(size));
  MPI_Allgather(mine, kKey, MPI_CHAR, all.data(), kKey, MPI_CHAR, comm);
  for (int a = 0; a < size; ++a)
    for (int b = 0; b < a; ++b)
      if (std::strncmp(&all[size_t(a) * kKey], &all[size_t(b) * kKey],
                       kKey) == 0)
        return "Duplicate GPU detected: ranks " + std::to_string(b) +
               " and " + std::to_string(a) + " both use device " +
               std::string(&all[size_t(a) * kKey]);
  return "";
}
} // namespace

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  static int counter = 0;
  std::memset(id, 0, sizeof *id);
  IdFields f{};
  std::memcpy(f.magic, "trident-emu", 12);
  f.world = mpiWorldRank();
  f.counter = counter++;
  std::memcpy(id->internal, &f, sizeof f);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank) {
  IdFields f;
  std::memcpy(&f, id.internal, sizeof f);
  if (std::memcmp(f.magic, "trident-emu", 12) != 0)
    return ncclFail(ncclInvalidArgument,
                    "ncclCommInitRank: the unique id was not made by "
                    "ncclGetUniqueId");
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return ncclFail(ncclInvalidArgument, "ncclCommInitRank: rank " +
                                             std::to_string(rank) + " of " +
                                             std::to_string(nranks));
  // The creating rank gathers every member's world rank in group order and
  // sends the list back; then the members form the MPI communicator. (So
  // the rank that made the id must be a member, which NCCL does not
  // require; the backend's groups make it on their rank 0.)
  const int me = mpiWorldRank();
  const int tag = 16384 + f.counter % 16384;
  std::vector<int> world(size_t(nranks), -1);
  if (me == f.world) {
    world[size_t(rank)] = me;
    for (int i = 1; i < nranks; ++i) {
      int msg[2];
      MPI_Status st;
      if (MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st) !=
          MPI_SUCCESS)
        return ncclFail(ncclSystemError, "ncclCommInitRank: MPI_Recv failed");
      if (msg[0] < 0 || msg[0] >= nranks || world[size_t(msg[0])] != -1)
        return ncclFail(ncclInvalidUsage,
                        "ncclCommInitRank: rank " + std::to_string(msg[0]) +
                            " joined twice or is out of range");
      world[size_t(msg[0])] = msg[1];
    }
    for (int r = 0; r < nranks; ++r)
      if (r != rank && MPI_Send(world.data(), nranks, MPI_INT,
                                world[size_t(r)], tag,
                                MPI_COMM_WORLD) != MPI_SUCCESS)
        return ncclFail(ncclSystemError,
                        "ncclCommInitRank: sending the member list failed");
  } else {
    int msg[2] = {rank, me};
    if (MPI_Send(msg, 2, MPI_INT, f.world, tag, MPI_COMM_WORLD) !=
            MPI_SUCCESS ||
        MPI_Recv(world.data(), nranks, MPI_INT, f.world, tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return ncclFail(ncclSystemError,
                      "ncclCommInitRank: joining the id's rank failed");
    if (world[size_t(rank)] != me)
      return ncclFail(ncclInvalidUsage,
                      "ncclCommInitRank: the member list does not hold this "
                      "rank");
  }
  MPI_Group all, members;
  MPI_Comm_group(MPI_COMM_WORLD, &all);
  MPI_Group_incl(all, nranks, world.data(), &members);
  auto *c = new ncclComm;
  int rc = MPI_Comm_create_group(MPI_COMM_WORLD, members, tag, &c->comm);
  MPI_Group_free(&members);
  MPI_Group_free(&all);
  if (rc != MPI_SUCCESS) {
    delete c;
    return ncclFail(ncclSystemError, "ncclCommInitRank: MPI_Comm_create_group failed");
  }
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  if (c->rank != rank || c->size != nranks) {
    delete c;
    return ncclFail(ncclInternalError, "ncclCommInitRank: rank order differs");
  }
  // NCCL does not support two ranks of one communicator on the same GPU
  // ("Duplicate GPU detected", NVIDIA/nccl#418: the ranks that share one
  // fail, the others may hang); here every member is refused.
  if (std::string dup = sharedDevice(c->comm); !dup.empty()) {
    delete c;
    return ncclFail(ncclInvalidUsage, "ncclCommInitRank: " + dup);
  }
  ++counts.comms;
  *comm = adopt(c);
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *config) {
  // The refusals below return before the collective MPI_Comm_split: a
  // rank refused alone leaves the others waiting in it (NCCL would join
  // its own exchange). The colour check follows NCCL's documentation
  // (non-negative, or NCCL_SPLIT_NOCOLOR), which its code does not enforce.
  if (!commOk(comm) || !newcomm)
    return ncclFail(ncclInvalidArgument,
                    "ncclCommSplit of no live communicator or into null");
  if (config)
    return ncclFail(ncclInvalidArgument,
                    "ncclCommSplit: a config is not emulated (null inherits "
                    "the parent's)");
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return ncclFail(ncclInvalidArgument,
                    "ncclCommSplit: colour " + std::to_string(color) +
                        " (non-negative, or NCCL_SPLIT_NOCOLOR)");
  if (groupDepth > 0)
    return ncclFail(ncclInvalidUsage,
                    "ncclCommSplit inside a group is not emulated");
  // Every rank of the parent calls it; those of one colour form a new
  // communicator, ranked by key, then by their rank in the parent.
  MPI_Comm out = MPI_COMM_NULL;
  if (MPI_Comm_split(comm->comm,
                     color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key,
                     &out) != MPI_SUCCESS)
    return ncclFail(ncclSystemError, "ncclCommSplit: MPI_Comm_split failed");
  *newcomm = nullptr;
  if (out == MPI_COMM_NULL)
    return ncclSuccess; // NCCL_SPLIT_NOCOLOR: no communicator
  auto *c = new ncclComm;
  c->comm = out;
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  ++counts.comms;
  ++counts.splits;
  *newcomm = adopt(c);
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!commOk(comm) || !count)
    return ncclFail(ncclInvalidArgument, "ncclCommCount of no live communicator");
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!commOk(comm) || !rank)
    return ncclFail(ncclInvalidArgument,
                    "ncclCommUserRank of no live communicator");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return drop(comm) ? ncclSuccess
                    : ncclFail(ncclInvalidArgument,
                               "ncclCommDestroy of no live communicator");
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  // Local, unlike MPI_Comm_free: the MPI communicator is left to MPI.
  if (commOk(comm))
    comm->comm = MPI_COMM_NULL;
  return drop(comm) ? ncclSuccess
                    : ncclFail(ncclInvalidArgument,
                               "ncclCommAbort of no live communicator");
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state) {
  if (!commOk(comm))
    return ncclFail(ncclInvalidArgument, "ncclCommGetAsyncError of no live communicator");
  *state = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return ncclFail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--groupDepth > 0)
    return ncclSuccess;
  std::vector<P2p> ops;
  ops.swap(groupOps);
  return runP2p(ops);
}

namespace {
/// One collective on `s`, after checkCall: the checks every one makes
/// (buffers inside their blocks, overlap only in the in-place form,
/// `count` within MPI's int, no group), then the stream
/// order of its buffers, then `run` (the MPI call, writing `recv`), whose
/// result becomes visible when the stream is seen to pass the call.
template <class Run>
ncclResult_t collective(const char *fn, cudaStream_t s, size_t count,
                        const void *send, size_t sendBytes, void *recv,
                        size_t recvBytes, bool inPlace, Run run) {
  if (ncclResult_t r = checkBuffers(fn, {{send, sendBytes}, {recv, recvBytes}});
      r != ncclSuccess)
    return r;
  // NCCL's in-place rule: the send buffer shares no byte with the
  // receive buffer, except in the operation's documented in-place form.
  if (!inPlace && overlaps(send, sendBytes, recv, recvBytes))
    return ncclFail(ncclInvalidArgument,
                    std::string(fn) + ": send " + where(send, sendBytes) +
                        " overlaps receive " + where(recv, recvBytes) +
                        " other than in NCCL's in-place form");
  if (groupDepth > 0)
    return ncclFail(ncclInvalidUsage,
                    "collectives inside a group are not emulated");
  if (count > size_t(INT32_MAX))
    return ncclFail(ncclInvalidArgument, std::string(fn) + ": count above 2^31");
  use(s, send, false, fn);
  use(s, recv, true, fn);
  CallBuffers b(s, fn, recv, recvBytes, send, sendBytes);
  if (ncclResult_t r = mpiOk(run(), fn); r != ncclSuccess)
    return r;
  b.deferResult();
  return ncclSuccess;
}
} // namespace

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t s) {
  const char *fn = "ncclAllReduce";
  if (ncclResult_t r = checkCall(fn, comm, s, type); r != ncclSuccess)
    return r;
  if (mpiOp(op) == MPI_OP_NULL)
    return ncclFail(ncclInvalidArgument, "ncclAllReduce: operation");
  const size_t bytes = count * typeSize(type);
  return collective(fn, s, count, send, bytes, recv, bytes, send == recv,
                    [&] {
                      return MPI_Allreduce(send == recv ? MPI_IN_PLACE : send,
                                           recv, int(count), mpiType(type),
                                           mpiOp(op), comm->comm);
                    });
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t s) {
  const char *fn = "ncclAllGather";
  if (ncclResult_t r = checkCall(fn, comm, s, type); r != ncclSuccess)
    return r;
  const size_t bytes = sendcount * typeSize(type),
               all = bytes * size_t(comm->size);
  // In place: the send buffer is this rank's block of the receive buffer.
  const bool inPlace =
      send == static_cast<const char *>(recv) + bytes * size_t(comm->rank);
  return collective(fn, s, sendcount, send, bytes, recv, all, inPlace,
                    [&] {
                      return MPI_Allgather(inPlace ? MPI_IN_PLACE : send,
                                           int(sendcount), mpiType(type), recv,
                                           int(sendcount), mpiType(type),
                                           comm->comm);
                    });
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t s) {
  const char *fn = "ncclReduceScatter";
  if (ncclResult_t r = checkCall(fn, comm, s, type); r != ncclSuccess)
    return r;
  if (mpiOp(op) == MPI_OP_NULL)
    return ncclFail(ncclInvalidArgument, "ncclReduceScatter: operation");
  const size_t bytes = recvcount * typeSize(type),
               all = bytes * size_t(comm->size);
  // In place: the receive buffer is this rank's block of the send buffer.
  const bool inPlace =
      recv == static_cast<const char *>(send) + bytes * size_t(comm->rank);
  return collective(fn, s, recvcount, send, all, recv, bytes, inPlace,
                    [&] {
                      // Through a buffer (MPI's in-place form keeps the
                      // result at the start).
                      std::vector<char> tmp(bytes);
                      int rc = MPI_Reduce_scatter_block(
                          send, tmp.data(), int(recvcount), mpiType(type),
                          mpiOp(op), comm->comm);
                      if (rc == MPI_SUCCESS && bytes)
                        std::memcpy(recv, tmp.data(), bytes);
                      return rc;
                    });
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t s) {
  const char *fn = "ncclBroadcast";
  if (ncclResult_t r = checkCall(fn, comm, s, type); r != ncclSuccess)
    return r;
  if (root < 0 || root >= comm->size)
    return ncclFail(ncclInvalidArgument,
                    "ncclBroadcast: root " + std::to_string(root) + " of " +
                        std::to_string(comm->size) + " ranks");
  const size_t bytes = count * typeSize(type);
  // Only the root reads its send buffer (in place: send == recv).
  const bool isRoot = comm->rank == root;
  const void *from = isRoot ? send : nullptr;
  return collective(fn, s, count, from, isRoot ? bytes : 0, recv, bytes,
                    from == recv, [&] {
                      if (isRoot && send != recv && bytes)
                        std::memcpy(recv, send, bytes);
                      return MPI_Bcast(recv, int(count), mpiType(type), root,
                                       comm->comm);
                    });
}

ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t comm, cudaStream_t s) {
  if (ncclResult_t r = checkCall("ncclSend", comm, s, type); r != ncclSuccess)
    return r;
  if (ncclResult_t r = checkBuffers("ncclSend", {{send, count * typeSize(type)}});
      r != ncclSuccess)
    return r;
  if (peer < 0 || peer >= comm->size)
    return ncclFail(ncclInvalidArgument, "ncclSend: peer " + std::to_string(peer));
  use(s, send, false, "ncclSend");
  P2p op{true, const_cast<void *>(send), count, type, peer, comm, s,
         s ? s->queued : 0};
  if (groupDepth > 0) {
    groupOps.push_back(op);
    return ncclSuccess;
  }
  return runP2p({op});
}

ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t s) {
  if (ncclResult_t r = checkCall("ncclRecv", comm, s, type); r != ncclSuccess)
    return r;
  if (ncclResult_t r = checkBuffers("ncclRecv", {{recv, count * typeSize(type)}});
      r != ncclSuccess)
    return r;
  if (peer < 0 || peer >= comm->size)
    return ncclFail(ncclInvalidArgument, "ncclRecv: peer " + std::to_string(peer));
  use(s, recv, true, "ncclRecv");
  P2p op{false, recv, count, type, peer, comm, s, s ? s->queued : 0};
  if (groupDepth > 0) {
    groupOps.push_back(op);
    return ncclSuccess;
  }
  return runP2p({op});
}
