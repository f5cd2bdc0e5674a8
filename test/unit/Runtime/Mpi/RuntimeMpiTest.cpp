//===- RuntimeMpiTest.cpp - Runtime collectives on several ranks ----------===//
//
// Run with `mpirun -np 4`. Checks every collective and point-to-point call,
// the grid's rank mapping, ZeRO-1/2/3 against the unsharded optimizer,
// vocab-parallel cross-entropy against the plain one, and a
// tensor-parallel MLP (column- then row-parallel + all-reduce) against the
// single-rank MLP forward and backward. Every rank checks; the exit code is
// non-zero on any failure. With a directory argument, rank r also writes
// sharded parameter dumps there (used by compare-params-test.sh).
//
// The same source linked to the CUDA runtime is
// trident-runtime-mpi-test-cuda, which scripts/gpu-check.sh runs on a GPU
// machine: host-staged collectives where the 4 ranks share GPUs, NCCL
// where each has its own. It leaves out the two refusals of wrongly
// ordered or sized transfers, which the CPU twin exists to make (NCCL,
// without tags or sizes on the wire, would hang or hand over the wrong
// tensor).
//
//===----------------------------------------------------------------------===//

#include "trident/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>

using namespace trident::rt;

namespace {
int failures = 0;

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      std::fprintf(stderr, "rank %d: %s:%d: FAILED %s: ", worldRank(),         \
                   __FILE__, __LINE__, #cond);                                 \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
    }                                                                          \
  } while (0)

/// max |a-b| / max(|a|,|b|, floor) over the vectors.
double relDiff(const std::vector<float> &a, const std::vector<float> &b,
               double floor = 1e-6) {
  if (a.size() != b.size())
    return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(double(a[i]) - b[i]);
    double s = std::max({std::fabs(double(a[i])), std::fabs(double(b[i])), floor});
    worst = std::max(worst, d / s);
  }
  return worst;
}

Tensor param(const std::string &name, std::vector<int64_t> g,
             std::vector<int64_t> off, std::vector<int64_t> shape,
             float scale = 0.5f) {
  Tensor t(shape);
  initParam(t, name, g, off, shape, 11, scale);
  return t;
}

Tensor full(const std::string &name, std::vector<int64_t> g,
            float scale = 0.5f) {
  return param(name, g, std::vector<int64_t>(g.size(), 0), g, scale);
}

/// Rows [r0, r0+nr) of a row-major [*, cols] host vector.
std::vector<float> rows(const std::vector<float> &v, int64_t cols, int64_t r0,
                        int64_t nr) {
  return std::vector<float>(v.begin() + r0 * cols,
                            v.begin() + (r0 + nr) * cols);
}
/// Columns [c0, c0+nc) of a row-major [r, cols] host vector.
std::vector<float> cols(const std::vector<float> &v, int64_t ncols, int64_t c0,
                        int64_t nc) {
  std::vector<float> out;
  for (size_t r = 0; r < v.size() / ncols; ++r)
    for (int64_t c = 0; c < nc; ++c)
      out.push_back(v[r * ncols + c0 + c]);
  return out;
}

/// The message of the rt::Error that `f` throws, or "" if none.
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

constexpr double kTol = 1e-5; // fp32 reductions in another order

void testGrid() {
  // 4 ranks as pp=2 x tp=2: world = tp + 2 * pp.
  Grid g({2, 1, 1, 2, 1});
  int me = worldRank();
  EXPECT(g.coord(Axis::TP) == me % 2, "tp coord %d", g.coord(Axis::TP));
  EXPECT(g.coord(Axis::PP) == me / 2, "pp coord %d", g.coord(Axis::PP));
  EXPECT(g.group(Axis::TP).worldRanks() ==
             std::vector<int>({me - me % 2, me - me % 2 + 1}),
         "tp group");
  EXPECT(g.group(Axis::PP).worldRanks() == std::vector<int>({me % 2, me % 2 + 2}),
         "pp group");
  EXPECT(g.worldRankOf(1, 0, 0, 1) == 3, "worldRankOf");
  // A sum over tp, then over pp. On CUDA with 2 GPUs for the 4 ranks
  // (local rank % 2; ctest's runtime-mpi-4-cuda-emu-2gpu) the tp groups
  // {0, 1} {2, 3} have distinct GPUs (NCCL) and the pp groups {0, 2}
  // {1, 3} share one (host-staged), in one run.
  {
    Tensor t({2});
    t.fromHost({float(me), 1.0f});
    Pending tp = allReduceSumAsync(t, g.group(Axis::TP));
    tp.wait();
    EXPECT(t.toHost() == std::vector<float>({float(2 * (me / 2) * 2 + 1), 2}),
           "tp sum");
    allReduceSum(t, g.group(Axis::PP));
    EXPECT(t.toHost() == std::vector<float>({6, 4}), "tp then pp sum");
  }
  // dp=2 x cp=2 (ep=2 carved out of dp): world = cp + 2 * dp.
  Grid h({1, 2, 2, 1, 2});
  EXPECT(h.coord(Axis::CP) == me % 2 && h.coord(Axis::DP) == me / 2, "dp/cp");
  EXPECT(h.group(Axis::DPCP).size() == 4 && h.coord(Axis::DPCP) == me,
         "dpcp %d", h.coord(Axis::DPCP));
  EXPECT(h.group(Axis::EP).worldRanks() ==
             std::vector<int>({me % 2, me % 2 + 2}),
         "ep group");
  EXPECT(h.group(Axis::EP).rank() == h.coord(Axis::EP), "ep rank");
  // dp=4 with ep=2 (pp=1, cp=1, tp=1): ep groups {0,1} {2,3}; the expert
  // data-parallel groups hold the ranks with the same experts, {0,2} {1,3}.
  Grid e({1, 4, 1, 1, 2});
  EXPECT(e.group(Axis::EP).worldRanks() ==
             std::vector<int>({me - me % 2, me - me % 2 + 1}),
         "ep group of dp 4");
  EXPECT(e.group(Axis::EDP).worldRanks() ==
             std::vector<int>({me % 2, me % 2 + 2}),
         "edp group");
  EXPECT(e.coord(Axis::EDP) == me / 2 && e.group(Axis::EDP).rank() == me / 2 &&
             e.size(Axis::EDP) == 2,
         "edp coord %d", e.coord(Axis::EDP));
  // dp=2 x cp=2 with ep=2: each ep group is {dp 0, dp 1} at one cp; the
  // ranks with the same experts are the cp pair at the same dp % 2:
  // world = cp + 2 * dp, so edpcp = {2 * (dp % 2), 2 * (dp % 2) + 1}.
  EXPECT(h.group(Axis::EDPCP).worldRanks() ==
             std::vector<int>({2 * (me / 2 % 2), 2 * (me / 2 % 2) + 1}),
         "edpcp group");
  EXPECT(h.size(Axis::EDPCP) == 2 && h.coord(Axis::EDPCP) == me % 2 &&
             h.group(Axis::EDPCP).rank() == me % 2,
         "edpcp coord %d", h.coord(Axis::EDPCP));
  // Sub-group of the dp axis {1, 0} (e.g. tied embedding of two stages):
  // only dp coordinates 0 and 1 are members, ordered as listed.
  Group sub = h.subgroup(Axis::DP, {1, 0}, "emb");
  EXPECT(sub.size() == 2 && sub.rank() == 1 - h.coord(Axis::DP),
         "subgroup rank %d", sub.rank());
  // world = cp + 2 * dp: members dp 1 then dp 0 with this rank's cp.
  EXPECT(sub.worldRanks() == std::vector<int>({2 + me % 2, me % 2}),
         "subgroup members");
  {
    Tensor s({1});
    fillConstant(s, float(me));
    allReduceSum(s, sub);
    EXPECT(s.toHost()[0] == float(2 * (me % 2) + 2), "subgroup sum");
  }
  // dp {3, 1} of dp = 4 (world = dp): ranks 3 and 1, in that order; ranks
  // 0 and 2 are in no group.
  Group odd = e.subgroup(Axis::DP, {3, 1}, "odd");
  if (me % 2 == 1) {
    EXPECT(odd.size() == 2 && odd.rank() == (me == 3 ? 0 : 1) &&
               odd.worldRanks() == std::vector<int>({3, 1}),
           "subgroup {3, 1} rank %d", odd.rank());
    Tensor s({1});
    fillConstant(s, float(me));
    allReduceSum(s, odd);
    EXPECT(s.toHost()[0] == 4.0f, "subgroup {3, 1} sum");
  } else {
    const Group &sub = odd;
    EXPECT(sub.size() == 0, "non-member size %d", sub.size());
    Tensor s({1});
    bool threw = false;
    try {
      allReduceSum(s, sub);
    } catch (const Error &e) {
      threw = std::string(e.what()).find("not a member of group 'odd'") !=
              std::string::npos;
    }
    EXPECT(threw, "non-member use must throw");
  }
}

void testCollectives(const Grid &grid) {
  const Group &w = grid.group(Axis::World);
  int r = w.rank(), n = w.size();
  // all-reduce sum and max.
  Tensor t({3});
  t.fromHost({float(r), 1.0f, float(r * r)});
  allReduceSum(t, w);
  EXPECT(t.toHost() == std::vector<float>({6, 4, 14}), "allReduceSum");
  t.fromHost({float(r), -float(r), 0.5f});
  allReduceMax(t, w);
  EXPECT(t.toHost() == std::vector<float>({3, 0, 0.5f}), "allReduceMax");
  Tensor a({2});
  a.fromHost({float(r), 2.0f});
  Pending p = allReduceSumAsync(a, w);
  p.wait();
  EXPECT(a.toHost() == std::vector<float>({6, 8}), "allReduceSumAsync");
  // Under TRIDENT_RT_DEFER_ASYNC=1 (ctest runtime-mpi-4-deferred) the
  // CPU runtime holds the result back until wait(), and a second sum on
  // the same buffer reads the first one's result, as a GPU stream would.
  if (const char *d = std::getenv("TRIDENT_RT_DEFER_ASYNC");
      d && std::string(d) == "1") {
    Tensor h({2});
    h.fromHost({float(r), 1.0f});
    Pending first = allReduceSumAsync(h, w);
    Pending second = allReduceSumAsync(h, w);
    EXPECT(h.toHost() == std::vector<float>({float(r), 1.0f}),
           "deferred: the buffer changed before wait()");
    EXPECT(!first.done() && !second.done(), "deferred: done before wait()");
    first.wait();
    EXPECT(h.toHost() == std::vector<float>({6, 4}),
           "deferred: first sum after its wait()");
    second.wait();
    EXPECT(h.toHost() == std::vector<float>({24, 16}),
           "deferred: the second sum did not read the first's result");
  }
  // then(): what it adds runs after the sum (at once where the backend
  // has finished it already, else in wait()), in the order added.
  std::vector<int> ran;
  Pending chained = allReduceSumAsync(a, w)
                        .then([&] { ran.push_back(int(a.toHost()[1])); })
                        .then([&] { ran.push_back(-1); });
  chained.wait();
  chained.wait(); // a second wait runs nothing again
  EXPECT(ran == std::vector<int>({32, -1}), "Pending::then order");
  EXPECT(chained.done(), "Pending::done after wait");
  // The asynchronous reduce-scatter gives the blocking one's bits.
  Tensor rsIn({2 * n}), rsOut({2}), rsRef({2});
  std::vector<float> rsv(size_t(2 * n));
  for (int i = 0; i < 2 * n; ++i)
    rsv[size_t(i)] = 0.1f * float(r + 1) * float(i + 1);
  rsIn.fromHost(rsv);
  reduceScatterSum(rsRef, rsIn, 0, w);
  Pending rsPending = reduceScatterSumAsync(rsOut, rsIn, 0, w);
  rsPending.wait();
  EXPECT(rsOut.toHost() == rsRef.toHost(), "reduceScatterSumAsync");
  // The asynchronous all-gather (outermost dimension) and ZeRO-3's gather
  // built on it give the blocking ones' values; deferred, `out` is left
  // alone until wait().
  {
    Tensor agIn({3}), agOut({3 * n}), agRef({3 * n});
    agIn.fromHost({float(r), 10.0f + r, 100.0f + r});
    allGather(agRef, agIn, 0, w);
    Pending ag = allGatherAsync(agOut, agIn, w);
    if (const char *d = std::getenv("TRIDENT_RT_DEFER_ASYNC");
        d && std::string(d) == "1")
      EXPECT(agOut.toHost() == std::vector<float>(size_t(3 * n), 0.0f),
             "deferred: allGatherAsync wrote before wait()");
    ag.wait();
    EXPECT(agOut.toHost() == agRef.toHost(), "allGatherAsync");
    // A 7-element parameter over n ranks: slices of 2, the last padded.
    ZeroRange zr = zeroRange(7, n, r);
    Tensor slice({zr.chunk}), full({7}), fullRef({7});
    std::vector<float> sv(size_t(zr.chunk), 0.0f);
    for (int64_t i = zr.begin; i < zr.end; ++i)
      sv[size_t(i - zr.begin)] = 0.5f * float(i + 1);
    slice.fromHost(sv);
    zero3Gather(fullRef, slice, w);
    Pending g3 = zero3GatherAsync(full, slice, w);
    g3.wait();
    EXPECT(full.toHost() == fullRef.toHost() &&
               fullRef.toHost() ==
                   std::vector<float>({0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f}),
           "zero3GatherAsync");
    // 4 n elements: no padding, gathered straight into the parameter.
    ZeroRange ur = zeroRange(4 * n, n, r);
    Tensor uslice({ur.chunk}), ufull({4 * n});
    std::vector<float> uv;
    for (int64_t i = ur.begin; i < ur.end; ++i)
      uv.push_back(float(i));
    uslice.fromHost(uv);
    Pending ug = zero3GatherAsync(ufull, uslice, w);
    ug.wait();
    std::vector<float> uwant;
    for (int i = 0; i < 4 * n; ++i)
      uwant.push_back(float(i));
    EXPECT(ufull.toHost() == uwant, "zero3GatherAsync without padding");
    // NCCL's in-place form: `in` is this rank's block of `out`.
    Tensor whole({2 * n});
    std::vector<float> wv(size_t(2 * n), -1.0f);
    wv[size_t(2 * r)] = float(r);
    wv[size_t(2 * r + 1)] = 0.5f + float(r);
    whole.fromHost(wv);
    Tensor mine = whole.view(2 * r, {2});
    Pending ip = allGatherAsync(whole, mine, w);
    ip.wait();
    std::vector<float> ipWant;
    for (int i = 0; i < n; ++i) {
      ipWant.push_back(float(i));
      ipWant.push_back(0.5f + float(i));
    }
    EXPECT(whole.toHost() == ipWant, "allGatherAsync in place");
    // Deferred, `in` written before wait() is refused (NCCL may still be
    // reading it on a GPU); unchanged, the gather and scatter pass.
    if (const char *d = std::getenv("TRIDENT_RT_DEFER_ASYNC");
        d && std::string(d) == "1") {
      Tensor src({2}), dst({2 * n});
      src.fromHost({1.0f, 2.0f});
      Pending early = allGatherAsync(dst, src, w);
      src.fromHost({3.0f, 4.0f});
      std::string msg = errorOf([&] { early.wait(); });
      EXPECT(msg.find("allGatherAsync") != std::string::npos &&
                 msg.find("written before wait()") != std::string::npos,
             "deferred: allGatherAsync's input written early");
      Tensor rin({2 * n}), rout({2});
      Pending rs = reduceScatterSumAsync(rout, rin, 0, w);
      rin.fromHost(std::vector<float>(size_t(2 * n), 1.0f));
      msg = errorOf([&] { rs.wait(); });
      EXPECT(msg.find("reduceScatterSumAsync") != std::string::npos &&
                 msg.find("written before wait()") != std::string::npos,
             "deferred: reduceScatterSumAsync's input written early");
      // The in-place sum's own buffer, which NCCL reads and writes.
      Tensor sumBuf({2});
      sumBuf.fromHost({1.0f, float(r)});
      Pending sum = allReduceSumAsync(sumBuf, w);
      sumBuf.fromHost({5.0f, 5.0f});
      msg = errorOf([&] { sum.wait(); });
      EXPECT(msg.find("allReduceSumAsync") != std::string::npos &&
                 msg.find("written before wait()") != std::string::npos,
             "deferred: allReduceSumAsync's buffer written early");
    }
  }
  // all-gather along dim 1 of [2, 2]: out[i, 2r + j] = 10 r + 2 i + j.
  Tensor in({2, 2}), out({2, 2 * n});
  in.fromHost({10.0f * r, 10.0f * r + 1, 10.0f * r + 2, 10.0f * r + 3});
  allGather(out, in, 1, w);
  auto o = out.toHost();
  bool ok = true;
  for (int i = 0; i < 2; ++i)
    for (int q = 0; q < n; ++q)
      for (int j = 0; j < 2; ++j)
        ok &= o[i * 2 * n + 2 * q + j] == 10.0f * q + 2 * i + j;
  EXPECT(ok, "allGather dim 1");
  // reduce-scatter along dim 0 of [2n, 3] (the sequence dim): member q
  // contributes value (q+1) * (row*3 + col); block r holds rows 2r, 2r+1.
  Tensor big({2 * n, 3}), part({2, 3});
  std::vector<float> bv(6 * n);
  for (int i = 0; i < 6 * n; ++i)
    bv[i] = float((r + 1) * i);
  big.fromHost(bv);
  reduceScatterSum(part, big, 0, w);
  auto pv = part.toHost();
  ok = true;
  for (int i = 0; i < 6; ++i)
    ok &= pv[i] == float(10 * (6 * r + i)); // sum (q+1) = 10
  EXPECT(ok, "reduceScatterSum dim 0");
  // reduce-scatter along dim 1 of [2, 2n]: inverse of all-gather dim 1.
  Tensor rs({2, 2});
  reduceScatterSum(rs, out, 1, w);
  auto rv = rs.toHost(), iv = in.toHost();
  ok = true;
  for (int i = 0; i < 4; ++i)
    ok &= rv[i] == float(n) * iv[i];
  EXPECT(ok, "reduceScatterSum dim 1");
  // all-to-all: in [n, 2] (row j for member j) -> out [2, n] concatenated
  // along dim 1: out[:, j] = row r of member j = {100 j + r, 100 j + r + .5}.
  Tensor x({n, 2}), y({1, 2 * n});
  std::vector<float> xv;
  for (int j = 0; j < n; ++j)
    xv.insert(xv.end(), {100.0f * r + j, 100.0f * r + j + 0.5f});
  x.fromHost(xv);
  allToAll(y, x, 0, 1, w);
  auto yv = y.toHost();
  ok = true;
  for (int j = 0; j < n; ++j)
    ok &= yv[2 * j] == 100.0f * j + r && yv[2 * j + 1] == 100.0f * j + r + 0.5f;
  EXPECT(ok, "allToAll");
  // broadcast from member 2.
  Tensor b({2});
  b.fromHost({float(r), float(-r)});
  broadcast(b, 2, w);
  EXPECT(b.toHost() == std::vector<float>({2, -2}), "broadcast");
  barrier(w);
  // Bad input names the function.
  Tensor wrong({3, 2 * n});
  bool threw = false;
  try {
    allGather(wrong, in, 1, w);
  } catch (const Error &e) {
    threw = std::string(e.what()).find("allGather: output") == 0;
  }
  EXPECT(threw, "allGather shape error");
}

void testSendRecv(const Grid &grid) {
  // Sends wait in a queue and go out with the rank's next receive as one
  // group that finishes only when every send met its receive (NCCL's rule,
  // docs/runtime.md). A ring shift in each direction: every rank's group
  // {send right, receive from left} meets its neighbours' groups.
  const Group &w = grid.group(Axis::World);
  int r = w.rank(), n = w.size();
  for (int round = 0; round < 3; ++round) {
    Tensor s1({4}), s2({2});
    fillConstant(s1, float(100 * round + r));
    fillConstant(s2, float(-r));
    EXPECT(!sendsQueued(), "no send queued before sendAsync");
    sendAsync(s1, (r + 1) % n, 1, w);
    EXPECT(sendsQueued(), "sendAsync queues its send");
    fillConstant(s1, -1.0f); // the queued copy keeps the sent values
    Tensor r1({4}), r2({2});
    recv(r1, (r + n - 1) % n, 1, w);
    EXPECT(!sendsQueued(), "recv issues the queued send");
    sendAsync(s2, (r + n - 1) % n, 2, w);
    recv(r2, (r + 1) % n, 2, w);
    EXPECT(r1.toHost()[3] == float(100 * round + (r + n - 1) % n), "ring fwd");
    EXPECT(r2.toHost()[1] == float(-((r + 1) % n)), "ring bwd");
  }
  // Crossing transfers of a 1F1B pipeline: ranks 0 and 1 (and 2 and 3)
  // each send first and then receive from the other.
  {
    int other = r ^ 1;
    Tensor act({3}), grad({3});
    fillConstant(act, float(10 + r));
    sendAsync(act, other, 7, w);
    recv(grad, other, 7, w);
    EXPECT(grad.toHost()[2] == float(10 + other), "crossing pair");
  }
  // A collective issues the queued sends first, in program order: the
  // odd ranks receive before the all-reduce (a send held back past it
  // would leave them waiting there for good).
  {
    Tensor x({2}), y({2}), s({1});
    fillConstant(x, float(r));
    if (r % 2 == 0)
      sendAsync(x, r + 1, 3, w);
    else
      recv(y, r - 1, 3, w);
    fillConstant(s, 1.0f);
    EXPECT(sendsQueued() == (r % 2 == 0), "queued before the collective");
    allReduceSum(s, w);
    EXPECT(!sendsQueued(), "a collective issues the queued sends");
    if (r % 2 == 1)
      EXPECT(y.toHost()[0] == float(r - 1), "send before a collective");
    EXPECT(s.toHost()[0] == float(n), "collective after a send");
  }
  // Receiving out of send order is refused by tag (NCCL, which has no
  // tags, would hand over the other tensor).
  const bool cpuTwin = std::string(backendName()) == "cpu";
  if (cpuTwin) {
    Tensor a({2}), b({2});
    fillConstant(a, 1.0f);
    fillConstant(b, 2.0f);
    if (r == 0) {
      sendAsync(a, 1, 5, w);
      sendAsync(b, 1, 6, w);
      waitAllSends();
    } else if (r == 1) {
      Tensor got({2});
      std::string what = errorOf([&] { recv(got, 0, 6, w); });
      EXPECT(what.find("has tag 5, not the awaited 6") != std::string::npos,
             "out-of-order receive: '%s'", what.c_str());
      recv(got, 0, 6, w); // the second message, so rank 0's group ends
      EXPECT(got.toHost()[0] == 2.0f, "second message");
    }
  }
  // exchangeStep: the queued sends and a step's receives as one group,
  // what arrives held until recv takes it. Two receives from one peer in
  // one group (pp 2 under interleaving: the forward's input and the
  // backward's gradient both come from the other stage) pair with that
  // peer's sends in its issue order.
  {
    int other = r ^ 1;
    Tensor act({2}), grad({3});
    fillConstant(act, float(20 + r));
    fillConstant(grad, float(30 + r));
    sendAsync(act, other, 20, w);
    sendAsync(grad, other, 21, w);
    exchangeStep({{other, 20, {2}}, {other, 21, {3}}}, w);
    EXPECT(!sendsQueued(), "exchangeStep issues the queued sends");
    Tensor g({3}), a({2});
    recv(g, other, 21, w); // taken in any order: nothing moves now
    recv(a, other, 20, w);
    EXPECT(a.toHost()[1] == float(20 + other), "step activation");
    EXPECT(g.toHost()[2] == float(30 + other), "step gradient");
    exchangeStep({}, w); // nothing to do: returns at once
  }
  // A collective over a group without the receiver leaves the send queued
  // for the step's exchange (the stage's tp or dp collectives between a
  // forward and the backward it is paired with); one with the receiver
  // issues it first (the all-reduce above).
  {
    Grid pairs({2, 2, 1, 1, 1}); // pp pairs {0, 2}, {1, 3}; dp {0, 1}, {2, 3}
    const Group &pp = pairs.group(Axis::PP), &dp = pairs.group(Axis::DP);
    int peer = 1 - pp.rank();
    Tensor x({2}), s({1});
    fillConstant(x, float(40 + r));
    fillConstant(s, 1.0f);
    sendAsync(x, peer, 40, pp);
    allReduceSum(s, dp);
    EXPECT(sendsQueued(), "a collective without the receiver holds sends");
    EXPECT(s.toHost()[0] == 2.0f, "dp sum beside a queued send");
    exchangeStep({{peer, 40, {2}}}, pp);
    Tensor y({2});
    recv(y, peer, 40, pp);
    int from = pairs.worldRankOf(peer, pairs.coord(Axis::DP), 0, 0);
    EXPECT(y.toHost()[0] == float(40 + from), "held send delivered");
    // A received tensor of another shape, and one never taken.
    sendAsync(x, peer, 41, pp);
    exchangeStep({{peer, 41, {2}}}, pp);
    Tensor wrong({3});
    std::string what = errorOf([&] { recv(wrong, peer, 41, pp); });
    EXPECT(what.find("is [2], not [3]") != std::string::npos,
           "shape of a held tensor: '%s'", what.c_str());
    what = errorOf([] { waitAllSends(); });
    EXPECT(what.find("1 received tensor(s) never taken by recv") !=
               std::string::npos,
           "untaken tensor: '%s'", what.c_str());
  }
  // A message of another size is refused by the receiver.
  if (cpuTwin) {
    Tensor a({3});
    if (r == 2) {
      sendAsync(a, 3, 9, w);
      waitAllSends();
    } else if (r == 3) {
      Tensor got({4});
      std::string what = errorOf([&] { recv(got, 2, 9, w); });
      EXPECT(what.find("received 3 values from peer 2") != std::string::npos,
             "size mismatch: '%s'", what.c_str());
    }
  }
  waitAllSends();
}

void testZero(const Grid &grid) {
  // dp = 4 replicas with different local gradients of a [5, 3] parameter
  // (15 elements: not a multiple of 4, so the last slice is padded).
  const Group &dp = grid.group(Axis::World);
  std::vector<int64_t> g = {5, 3};
  AdamConfig cfg;
  cfg.lr = 0.05f;
  cfg.weightDecay = 0.01f;
  // Reference: the unsharded optimizer on the summed gradient (computed on
  // every rank from the known per-rank gradients).
  Tensor ref = full("zw", g), mr(g), vr(g);
  Tensor p1 = full("zw", g), p3full(g);
  ZeroRange zr = zeroRange(15, dp.size(), dp.rank());
  Tensor m1({zr.chunk}), v1({zr.chunk}), m3({zr.chunk}), v3({zr.chunk});
  Tensor p3slice({zr.chunk}), g3slice({zr.chunk});
  zero3TakeSlice(p3slice, full("zw", g), dp);
  // ZeRO-2: each step's gradient arrives in two micro-batch halves, each
  // reduce-scattered into the slice as it completes.
  Tensor p2 = full("zw", g), m2({zr.chunk}), v2({zr.chunk});
  Tensor g2slice({zr.chunk});
  // The same with both parts' sums started before either is waited for,
  // their full gradients released at once (the emitted programs' window).
  Tensor p2a = full("zw", g), m2a({zr.chunk}), v2a({zr.chunk});
  Tensor g2aslice({zr.chunk});
  // ZeRO-1/2 steps that leave the gather running (the emitted programs'
  // --overlap-param-gather), on parameters held padded ([chunk * dp], 15
  // elements over 4 ranks: one zero of padding), waited for one step late:
  // they must equal the blocking steps bit for bit.
  auto paddedParam = [&](Tensor &storage) {
    storage = Tensor({zr.chunk * dp.size()});
    Tensor head = storage.view(0, g);
    copy(head, full("zw", g));
    return head;
  };
  Tensor s1a, s2b, s2s, s1s, s2c;
  // As the emitted programs use them: the chunk updated in the step, the
  // gather started later, after other collectives on the same group.
  Tensor p2c = paddedParam(s2c), m2c({zr.chunk}), v2c({zr.chunk});
  Tensor p1a = paddedParam(s1a), p2b = paddedParam(s2b),
         p2s = paddedParam(s2s), p2sRef = full("zw", g),
         p1s = paddedParam(s1s), p1sRef = full("zw", g);
  Tensor m1a({zr.chunk}), v1a({zr.chunk}), m2b({zr.chunk}), v2b({zr.chunk});
  Pending gather1a, gather2b, gather2s, gather1s;
  for (int step = 1; step <= 3; ++step) {
    Tensor sumg(g);
    for (int q = 0; q < dp.size(); ++q)
      axpy(sumg, full("grad" + std::to_string(q * 10 + step), g, 0.1f));
    adamUpdate(ref, sumg, mr, vr, cfg, step);
    Tensor mine = full("grad" + std::to_string(dp.rank() * 10 + step), g, 0.1f);
    Tensor mine1 = mine.clone();
    zero1AdamStep(p1, mine1, m1, v1, cfg, step, dp);
    zero(g2slice);
    // Two parts that are not proportional to the sum (Adam would not see
    // a lost part that only rescaled the gradient).
    Tensor part = full("part" + std::to_string(dp.rank() * 10 + step), g, 0.1f);
    Tensor rest = mine.clone();
    axpy(rest, part, -1.0f);
    zero2AccumulateGrad(g2slice, part, dp);
    zero2AccumulateGrad(g2slice, rest, dp);
    zero2AdamStep(p2, g2slice, m2, v2, cfg, step, dp);
    zero(g2aslice);
    std::vector<Pending> inFlight;
    {
      Tensor partA = part.clone(), restA = rest.clone();
      inFlight.push_back(zero2AccumulateGradAsync(g2aslice, partA, dp));
      inFlight.push_back(zero2AccumulateGradAsync(g2aslice, restA, dp));
    }
    for (Pending &q : inFlight)
      q.wait();
    zero2AdamStep(p2a, g2aslice, m2a, v2a, cfg, step, dp);
    gather1a.wait();
    zero1AdamUpdateChunk(s1a, mine, m1a, v1a, cfg, step, dp);
    gather1a = zeroGatherChunksAsync(s1a, dp);
    gather2b.wait();
    zero2AdamUpdateChunk(s2b, g2slice, m2b, v2b, cfg, step, dp);
    gather2b = zeroGatherChunksAsync(s2b, dp);
    zero2SgdStep(p2sRef, g2slice, 0.5f, dp);
    gather2s.wait();
    zero2SgdUpdateChunk(s2s, g2slice, 0.5f, dp);
    gather2s = zeroGatherChunksAsync(s2s, dp);
    Tensor mineSgd = mine.clone();
    zero1SgdStep(p1sRef, mineSgd, 0.5f, dp);
    gather1s.wait();
    zero1SgdUpdateChunk(s1s, mine, 0.5f, dp);
    gather1s = zeroGatherChunksAsync(s1s, dp);
    zero2AdamUpdateChunk(s2c, g2slice, m2c, v2c, cfg, step, dp);
    Tensor between = full("between" + std::to_string(step), g);
    allReduceSum(between, dp);
    Pending gather2c = zeroGatherChunksAsync(s2c, dp);
    gather2c.wait();
    EXPECT(p2c.toHost() == p2.toHost(),
           "zero2AdamUpdateChunk + zeroGatherChunksAsync vs zero2AdamStep "
           "(step %d)", step);
    zero3Gather(p3full, p3slice, dp);
    EXPECT(relDiff(p3full.toHost(), step == 1 ? full("zw", g).toHost()
                                              : p3full.toHost()) == 0,
           "gather");
    zero3ReduceGrad(g3slice, mine, dp);
    adamUpdate(p3slice, g3slice, m3, v3, cfg, step);
  }
  zero3Gather(p3full, p3slice, dp);
  double d1 = relDiff(p1.toHost(), ref.toHost());
  double d3 = relDiff(p3full.toHost(), ref.toHost());
  double d2 = relDiff(p2.toHost(), ref.toHost());
  EXPECT(d1 <= kTol, "ZeRO-1 vs unsharded Adam: %.3g", d1);
  EXPECT(d2 <= kTol, "ZeRO-2 vs unsharded Adam: %.3g", d2);
  gather1a.wait();
  gather2b.wait();
  gather2s.wait();
  gather1s.wait();
  EXPECT(p1a.toHost() == p1.toHost(), "zero1AdamUpdateChunk + gather vs zero1AdamStep");
  EXPECT(p1s.toHost() == p1sRef.toHost(), "zero1SgdUpdateChunk + gather vs zero1SgdStep");
  EXPECT(p2b.toHost() == p2.toHost(), "zero2AdamUpdateChunk + gather vs zero2AdamStep");
  EXPECT(p2s.toHost() == p2sRef.toHost(),
         "zero2SgdUpdateChunk + gather vs zero2SgdStep");
  for (Tensor *st : {&s1a, &s2b, &s2s, &s1s})
    EXPECT(st->toHost().back() == 0.0f, "padding of a padded parameter: %g",
           double(st->toHost().back()));
  bool refused = false;
  try {
    Tensor flat({15});
    zero2SgdUpdateChunk(flat, g2slice, 0.5f, dp);
  } catch (const std::exception &e) {
    refused = std::string(e.what()).find("multiple of") != std::string::npos;
  }
  EXPECT(refused, "zero2SgdUpdateChunk on an unpadded parameter");
  double d2a = relDiff(p2a.toHost(), ref.toHost());
  EXPECT(d2a <= kTol, "ZeRO-2 (asynchronous sums) vs unsharded Adam: %.3g",
         d2a);
  Tensor copy2 = p2.clone();
  broadcast(copy2, 0, dp);
  EXPECT(copy2.toHost() == p2.toHost(), "ZeRO-2 replicas differ");
  EXPECT(d3 <= kTol, "ZeRO-3 vs unsharded Adam: %.3g", d3);
  // Replicas agree bit for bit after ZeRO-1.
  Tensor copy = p1.clone();
  broadcast(copy, 0, dp);
  EXPECT(copy.toHost() == p1.toHost(), "ZeRO-1 replicas differ");
  // ZeRO-1 SGD.
  Tensor ps = full("zw", g), gs = full("grad" + std::to_string(dp.rank()), g);
  Tensor ref2 = full("zw", g);
  for (int q = 0; q < dp.size(); ++q)
    sgdUpdate(ref2, full("grad" + std::to_string(q), g), 0.1f);
  zero1SgdStep(ps, gs, 0.1f, dp);
  EXPECT(relDiff(ps.toHost(), ref2.toHost()) <= kTol, "ZeRO-1 SGD");
  Tensor ps2 = full("zw", g), gslice({zr.chunk});
  zero2AccumulateGrad(gslice, gs, dp);
  zero2SgdStep(ps2, gslice, 0.1f, dp);
  EXPECT(relDiff(ps2.toHost(), ref2.toHost()) <= kTol, "ZeRO-2 SGD");
  // A slice of the wrong size is refused.
  Tensor bad({zr.chunk + 1});
  bool threw = false;
  try {
    zero2AccumulateGrad(bad, gs, dp);
  } catch (const Error &e) {
    threw = std::string(e.what()).find("zero2AccumulateGrad") == 0;
  }
  EXPECT(threw, "zero2AccumulateGrad accepted a wrong slice size");
}

void testVocabParallelCE(const Grid &grid) {
  // tp = 4 over a vocab of 12: rank r holds columns [3r, 3r + 3).
  const Group &tp = grid.group(Axis::World);
  int64_t n = 5, V = 12, Vl = V / tp.size(), off = tp.rank() * Vl;
  Tensor logits = full("logits", {n, V}, 4.0f);
  Tensor tgt({n}, DType::I32);
  tgt.fromHostI32({0, 11, 5, 3, 7});
  Tensor loss({1}), lse({n}), dl({n, V});
  crossEntropyForward(loss, lse, logits, tgt);
  crossEntropyBackward(dl, logits, tgt, lse, 1.0f / n);
  Tensor local = param("logits", {n, V}, {0, off}, {n, Vl}, 4.0f);
  Tensor lossP({1}), lseP({n}), dlP({n, Vl});
  vocabParallelCrossEntropyForward(lossP, lseP, local, tgt, off, tp);
  vocabParallelCrossEntropyBackward(dlP, local, tgt, lseP, off, 1.0f / n);
  double dLoss = relDiff(lossP.toHost(), loss.toHost());
  double dGrad = relDiff(dlP.toHost(), cols(dl.toHost(), V, off, Vl), 1e-3);
  EXPECT(dLoss <= kTol, "vocab-parallel loss %.3g", dLoss);
  EXPECT(dGrad <= kTol, "vocab-parallel dlogits %.3g", dGrad);

  // A vocabulary of 10 padded to 12: rank 3 holds column 9 and two padding
  // columns, filled with 100 here so that counting them would show.
  const int64_t R = 10, valid = std::max<int64_t>(0, std::min(Vl, R - off));
  Tensor real = full("logits10", {n, R}, 4.0f);
  Tensor tgt10({n}, DType::I32);
  tgt10.fromHostI32({0, 9, 5, 3, 7});
  Tensor loss10({1}), lse10({n}), dl10({n, R});
  crossEntropyForward(loss10, lse10, real, tgt10);
  crossEntropyBackward(dl10, real, tgt10, lse10, 1.0f / n);
  std::vector<float> mine(size_t(n * Vl), 100.0f);
  std::vector<float> have = cols(real.toHost(), R, std::min(off, R), valid);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < valid; ++j)
      mine[i * Vl + j] = have[i * valid + j];
  Tensor padded({n, Vl});
  padded.fromHost(mine);
  Tensor lossQ({1}), lseQ({n}), dlQ({n, Vl});
  vocabParallelCrossEntropyForward(lossQ, lseQ, padded, tgt10, off, tp, R);
  vocabParallelCrossEntropyBackward(dlQ, padded, tgt10, lseQ, off, 1.0f / n,
                                    R);
  std::vector<float> dq = dlQ.toHost(), dReal, dPad;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < Vl; ++j)
      (j < valid ? dReal : dPad).push_back(dq[i * Vl + j]);
  double dLossQ = relDiff(lossQ.toHost(), loss10.toHost());
  double dGradQ =
      relDiff(dReal, cols(dl10.toHost(), R, std::min(off, R), valid), 1e-3);
  EXPECT(dLossQ <= kTol, "padded vocab-parallel loss %.3g", dLossQ);
  EXPECT(dGradQ <= kTol, "padded vocab-parallel dlogits %.3g", dGradQ);
  EXPECT(std::all_of(dPad.begin(), dPad.end(), [](float g) { return g == 0; }),
         "padding columns get zero gradient");
  // Targets must lie in the real vocabulary.
  Tensor bad({n}, DType::I32), l({1}), e({n});
  bad.fromHostI32({0, 10, 5, 3, 7});
  std::string what = errorOf([&] {
    vocabParallelCrossEntropyForward(l, e, padded, bad, off, tp, R);
  });
  EXPECT(what.find("target 10 outside [0, 10)") != std::string::npos,
         "padded target check: '%s'", what.c_str());
}

void testTensorParallelMlp(const Grid &grid) {
  // y = gelu(x W1^T + b1) W2^T + b2 with W1 [F, H] split by rows (column
  // parallel) and W2 [H, F] split by columns (row parallel), then an
  // all-reduce of the partial outputs (Shoeybi et al., Megatron-LM 2019).
  const Group &tp = grid.group(Axis::World);
  int64_t n = 6, H = 4, F = 8, Fl = F / tp.size(), f0 = tp.rank() * Fl;
  Tensor x = full("x", {n, H}, 1.0f), dy = full("dy", {n, H}, 1.0f);
  // Single rank.
  Tensor w1 = full("w1", {F, H}), b1 = full("b1", {F}), w2 = full("w2", {H, F}),
         b2 = full("b2", {H});
  Tensor a({n, F}), h({n, F}), y({n, H});
  linearForward(a, x, w1, b1);
  geluForward(h, a);
  linearForward(y, h, w2, b2);
  Tensor dh({n, F}), da({n, F}), dx({n, H}), dw1({F, H}), db1({F}),
      dw2({H, F}), db2({H});
  linearBackward(dh, dw2, db2, dy, h, w2);
  geluBackward(da, dh, a);
  linearBackward(dx, dw1, db1, da, x, w1);
  // Tensor parallel.
  Tensor w1l = param("w1", {F, H}, {f0, 0}, {Fl, H});
  Tensor b1l = param("b1", {F}, {f0}, {Fl});
  Tensor w2l = param("w2", {H, F}, {0, f0}, {H, Fl});
  Tensor none, al({n, Fl}), hl({n, Fl}), yl({n, H});
  linearForward(al, x, w1l, b1l);
  geluForward(hl, al);
  linearForward(yl, hl, w2l, none);
  allReduceSum(yl, tp);
  Tensor b2full = full("b2", {H}); // bias added once, after the reduction
  for (int64_t i = 0; i < n; ++i) {
    Tensor row = yl.view(i * H, {H});
    axpy(row, b2full);
  }
  Tensor dhl({n, Fl}), dal({n, Fl}), dxl({n, H}), dw1l({Fl, H}), db1l({Fl}),
      dw2l({H, Fl}), db2l({H});
  linearBackward(dhl, dw2l, none, dy, hl, w2l);
  geluBackward(dal, dhl, al);
  linearBackward(dxl, dw1l, db1l, dal, x, w1l);
  allReduceSum(dxl, tp); // the column-parallel input gradient
  EXPECT(relDiff(yl.toHost(), y.toHost(), 1e-3) <= kTol, "TP MLP forward %.3g",
         relDiff(yl.toHost(), y.toHost(), 1e-3));
  EXPECT(relDiff(dxl.toHost(), dx.toHost(), 1e-3) <= kTol, "TP MLP dx %.3g",
         relDiff(dxl.toHost(), dx.toHost(), 1e-3));
  EXPECT(relDiff(dw1l.toHost(), rows(dw1.toHost(), H, f0, Fl), 1e-3) <= kTol,
         "TP MLP dW1");
  EXPECT(relDiff(db1l.toHost(), rows(db1.toHost(), 1, f0, Fl), 1e-3) <= kTol,
         "TP MLP db1");
  EXPECT(relDiff(dw2l.toHost(), cols(dw2.toHost(), F, f0, Fl), 1e-3) <= kTol,
         "TP MLP dW2");
}

/// Writes a [6, 4] parameter column-sharded over the 4 ranks and a
/// replicated [3] bias; `perturb` changes one element on rank 1.
void writeDump(const std::string &dir, bool perturb) {
  int r = worldRank();
  std::vector<int64_t> g = {6, 4};
  Tensor shard = param("w", g, {0, r}, {6, 1});
  if (perturb && r == 1) {
    auto v = shard.toHost();
    v[2] *= 1.001f;
    shard.fromHost(v);
  }
  ParamDump d;
  d.add("w", g, {0, r}, shard);
  d.add("bias", {3}, {0}, full("bias", {3}));
  d.write(dir);
}
} // namespace

int main(int argc, char **argv) {
  try {
    init(&argc, &argv);
    if (worldSize() != 4) {
      std::fprintf(stderr, "run with mpirun -np 4 (got %d ranks)\n",
                   worldSize());
      finalize();
      return 2;
    }
    if (argc == 3) { // dump mode for compare-params-test.sh
      writeDump(argv[1], std::string(argv[2]) == "perturb");
      finalize();
      return 0;
    }
    testGrid();
    Grid grid({1, 4, 1, 1, 1});
    testCollectives(grid);
    testSendRecv(grid);
    testZero(grid);
    testVocabParallelCE(grid);
    testTensorParallelMlp(grid);
    Tensor lossSum({1});
    fillConstant(lossSum, float(worldRank() + 1));
    double loss = globalMeanLoss(lossSum, 10.0, grid);
    EXPECT(loss == 1.0, "globalMeanLoss %g", loss); // (1+2+3+4)/10
    reportStep(1, loss, 0.25 * worldRank(), grid);
  } catch (const std::exception &e) {
    reportFatal(e);
  }
  int total = 0;
  {
    Tensor f({1});
    fillConstant(f, float(failures));
    Grid g({1, 4, 1, 1, 1});
    allReduceSum(f, g.group(Axis::World));
    total = int(f.toHost()[0]);
  }
  if (worldRank() == 0)
    std::printf("%s: %d failed checks over 4 ranks\n",
                total ? "FAILED" : "PASSED", total);
  finalize();
  return total ? 1 : 0;
}
