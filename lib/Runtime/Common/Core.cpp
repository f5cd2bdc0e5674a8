//===- Core.cpp - Bootstrap, grid, step reports and parameter dumps -------===//

#include "../Internal.h"
#include "Dims.h"

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace trident::rt {

using detail::check;

//===----------------------------------------------------------------------===//
// Bootstrap
//===----------------------------------------------------------------------===//

namespace {
bool initialised = false;
bool ownsMpi = false;
} // namespace

void init(int *argc, char ***argv) {
  if (initialised)
    return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    ownsMpi = true;
  }
  // Report errors as return codes so they become rt::Error messages.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  initialised = true;
  detail::backendInit();
}

void finalize() {
  if (!initialised)
    return;
  waitAllSends();
  detail::backendFinalize();
  initialised = false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (ownsMpi && !finalized)
    MPI_Finalize();
}

void reportFatal(const std::exception &e) {
  int rank = -1, ok = 0;
  MPI_Initialized(&ok);
  if (ok)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "trident-runtime: error (rank %d): %s\n", rank,
               e.what());
  std::fflush(stderr);
  if (ok)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

static void requireInit(const char *fn) {
  check(initialised, fn, "rt::init was not called");
}

int worldRank() {
  requireInit("worldRank");
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int worldSize() {
  requireInit("worldSize");
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

double wallSeconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch())
      .count();
}

//===----------------------------------------------------------------------===//
// Groups and grid
//===----------------------------------------------------------------------===//

Group::Impl::~Impl() {
  backend.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD && !finalized)
    MPI_Comm_free(&comm);
}

Group::Impl &detail::groupImpl(const Group &g, const char *fn) {
  check(g.impl() != nullptr, fn, "the group is empty (not from a Grid)");
  return *g.impl();
}

Group::Impl &detail::memberImpl(const Group &g, const char *fn) {
  Group::Impl &G = groupImpl(g, fn);
  check(G.size > 0, fn, "this rank is not a member of group '" + G.name + "'");
  return G;
}

int Group::size() const { return detail::groupImpl(*this, "Group::size").size; }
int Group::rank() const { return detail::groupImpl(*this, "Group::rank").rank; }
const std::vector<int> &Group::worldRanks() const {
  return detail::groupImpl(*this, "Group::worldRanks").worldRanks;
}
const std::string &Group::name() const {
  return detail::groupImpl(*this, "Group::name").name;
}

const char *axisName(Axis axis) {
  switch (axis) {
  case Axis::PP: return "pp";
  case Axis::DP: return "dp";
  case Axis::CP: return "cp";
  case Axis::TP: return "tp";
  case Axis::EP: return "ep";
  case Axis::DPCP: return "dpcp";
  case Axis::EDP: return "edp";
  case Axis::EDPCP: return "edpcp";
  case Axis::World: return "world";
  }
  return "?";
}

namespace {
/// Creates the group of the ranks sharing `color`, ordered by `key`
/// (MPI_UNDEFINED: this rank is in no group and gets an empty one).
Group makeGroup(const std::string &name, int color, int key) {
  auto impl = std::make_shared<Group::Impl>();
  impl->name = name;
  if (color == MPI_UNDEFINED) {
    MPI_Comm none;
    MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
    impl->size = 0;
    impl->rank = -1;
    detail::backendGroupCreated(*impl); // collective over the world too
    return Group(impl);
  }
  int rc = MPI_Comm_split(MPI_COMM_WORLD, color, key, &impl->comm);
  check(rc == MPI_SUCCESS, "Grid", "MPI_Comm_split failed for " + name);
  MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(impl->comm, &impl->rank);
  MPI_Comm_size(impl->comm, &impl->size);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  impl->worldRanks.resize(impl->size);
  MPI_Allgather(&world, 1, MPI_INT, impl->worldRanks.data(), 1, MPI_INT,
                impl->comm);
  detail::backendGroupCreated(*impl);
  return Group(impl);
}
} // namespace

Grid::Grid(GridShape shape) : shape_(shape) {
  const char *fn = "Grid";
  requireInit(fn);
  check(shape.pp >= 1 && shape.dp >= 1 && shape.cp >= 1 && shape.tp >= 1 &&
            shape.ep >= 1,
        fn, "every axis size must be >= 1");
  check(shape.dp % shape.ep == 0, fn,
        "ep (" + std::to_string(shape.ep) + ") must divide dp (" +
            std::to_string(shape.dp) + ")");
  int world = worldSize(), me = worldRank();
  int64_t product = int64_t(shape.pp) * shape.dp * shape.cp * shape.tp;
  check(product == world, fn,
        "pp*dp*cp*tp = " + std::to_string(product) + " but " +
            std::to_string(world) + " ranks were started");
  int tp = me % shape.tp;
  int cp = (me / shape.tp) % shape.cp;
  int dp = (me / (shape.tp * shape.cp)) % shape.dp;
  int pp = me / (shape.tp * shape.cp * shape.dp);
  coords_[0] = pp, coords_[1] = dp, coords_[2] = cp, coords_[3] = tp;

  // The colour of a group is the rank with the group's own coordinates
  // zeroed; members are ordered by their coordinate along the group's axes.
  groups_.resize(9);
  groups_[int(Axis::PP)] = makeGroup("pp", worldRankOf(0, dp, cp, tp), pp);
  groups_[int(Axis::DP)] = makeGroup("dp", worldRankOf(pp, 0, cp, tp), dp);
  groups_[int(Axis::CP)] = makeGroup("cp", worldRankOf(pp, dp, 0, tp), cp);
  groups_[int(Axis::TP)] = makeGroup("tp", worldRankOf(pp, dp, cp, 0), tp);
  int epBase = dp - dp % shape.ep;
  groups_[int(Axis::EP)] =
      makeGroup("ep", worldRankOf(pp, epBase, cp, tp), dp % shape.ep);
  groups_[int(Axis::DPCP)] =
      makeGroup("dpcp", worldRankOf(pp, 0, 0, tp), dp * shape.cp + cp);
  // Expert data parallel: the dp ranks holding the same experts (same
  // dp % EP), ordered by dp / EP; and edp x cp under context parallelism.
  // Without expert parallelism they are the dp and dpcp groups (no second
  // communicator).
  if (shape.ep == 1) {
    groups_[int(Axis::EDP)] = groups_[int(Axis::DP)];
    groups_[int(Axis::EDPCP)] = groups_[int(Axis::DPCP)];
  } else {
    groups_[int(Axis::EDP)] = makeGroup(
        "edp", worldRankOf(pp, dp % shape.ep, cp, tp), dp / shape.ep);
    groups_[int(Axis::EDPCP)] =
        makeGroup("edpcp", worldRankOf(pp, dp % shape.ep, 0, tp),
                  (dp / shape.ep) * shape.cp + cp);
  }
  groups_[int(Axis::World)] = makeGroup("world", 0, me);
}

int Grid::size(Axis axis) const {
  switch (axis) {
  case Axis::PP: return shape_.pp;
  case Axis::DP: return shape_.dp;
  case Axis::CP: return shape_.cp;
  case Axis::TP: return shape_.tp;
  case Axis::EP: return shape_.ep;
  case Axis::DPCP: return shape_.dp * shape_.cp;
  case Axis::EDP: return shape_.dp / shape_.ep;
  case Axis::EDPCP: return shape_.dp / shape_.ep * shape_.cp;
  case Axis::World: return shape_.pp * shape_.dp * shape_.cp * shape_.tp;
  }
  return 0;
}

int Grid::coord(Axis axis) const {
  switch (axis) {
  case Axis::PP: return coords_[0];
  case Axis::DP: return coords_[1];
  case Axis::CP: return coords_[2];
  case Axis::TP: return coords_[3];
  case Axis::EP: return coords_[1] % shape_.ep;
  case Axis::DPCP: return coords_[1] * shape_.cp + coords_[2];
  case Axis::EDP: return coords_[1] / shape_.ep;
  case Axis::EDPCP: return (coords_[1] / shape_.ep) * shape_.cp + coords_[2];
  case Axis::World:
    return worldRankOf(coords_[0], coords_[1], coords_[2], coords_[3]);
  }
  return 0;
}

const Group &Grid::group(Axis axis) const { return groups_.at(int(axis)); }

Group Grid::subgroup(Axis axis, const std::vector<int> &members,
                     const std::string &name) const {
  const char *fn = "Grid::subgroup";
  check(axis == Axis::PP || axis == Axis::DP || axis == Axis::CP ||
            axis == Axis::TP,
        fn, std::string("axis must be pp, dp, cp or tp, got ") +
                axisName(axis));
  int c[4] = {coords_[0], coords_[1], coords_[2], coords_[3]};
  int a = axis == Axis::PP ? 0 : axis == Axis::DP ? 1 : axis == Axis::CP ? 2 : 3;
  int key = -1;
  for (size_t i = 0; i < members.size(); ++i) {
    check(members[i] >= 0 && members[i] < size(axis), fn,
          "member " + std::to_string(members[i]) + " outside axis " +
              axisName(axis) + " of size " + std::to_string(size(axis)));
    for (size_t j = 0; j < i; ++j)
      check(members[j] != members[i], fn, "member listed twice");
    if (members[i] == c[a])
      key = static_cast<int>(i);
  }
  c[a] = 0;
  int color = key < 0 ? MPI_UNDEFINED : worldRankOf(c[0], c[1], c[2], c[3]);
  return makeGroup(name, color, key);
}

int Grid::worldRankOf(int pp, int dp, int cp, int tp) const {
  check(pp >= 0 && pp < shape_.pp && dp >= 0 && dp < shape_.dp && cp >= 0 &&
            cp < shape_.cp && tp >= 0 && tp < shape_.tp,
        "Grid::worldRankOf", "coordinates out of range");
  return tp + shape_.tp * (cp + shape_.cp * (dp + shape_.dp * pp));
}

//===----------------------------------------------------------------------===//
// Step reporting
//===----------------------------------------------------------------------===//

double globalMeanLoss(const Tensor &lossSum, double globalTokens,
                      const Grid &grid) {
  const char *fn = "globalMeanLoss";
  check(lossSum.numel() == 1, fn, "lossSum must have one element, got " +
                                      lossSum.shapeString());
  check(globalTokens > 0, fn, "globalTokens must be positive");
  double mine = 0.0;
  if (grid.isLastStage() && grid.coord(Axis::TP) == 0)
    mine = lossSum.toHost()[0];
  // Reduce to rank 0 then broadcast: one fixed summation order, the same
  // value on every rank.
  double total = 0.0;
  detail::flushSends(fn);
  MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Bcast(&total, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return total / globalTokens;
}

Pending::Pending(Pending &&other) noexcept
    : impl_(std::move(other.impl_)), then_(std::exchange(other.then_, {})) {}

Pending &Pending::operator=(Pending &&other) noexcept {
  if (this != &other) {
    settle(); // what this one still owed
    impl_ = std::move(other.impl_);
    then_ = std::exchange(other.then_, {});
  }
  return *this;
}

Pending::~Pending() { settle(); }

void Pending::settle() noexcept {
  if (done())
    return;
  try {
    wait();
  } catch (const std::exception &e) {
    // Called from a destructor, which must not throw; the run is broken
    // anyway, and the next runtime call reports the device's error.
    std::fprintf(stderr, "trident runtime: Pending: %s\n", e.what());
  }
}

Pending Pending::then(std::function<void()> f) && {
  if (!impl_) { // finished already
    f();
    return Pending();
  }
  if (then_)
    then_ = [first = std::move(then_), next = std::move(f)] {
      first();
      next();
    };
  else
    then_ = std::move(f);
  return std::move(*this);
}

void Pending::finish() {
  if (!then_)
    return;
  std::function<void()> f = std::move(then_);
  then_ = nullptr;
  f();
}

void reportStep(int64_t step, double loss, double seconds, const Grid &grid) {
  (void)grid;
  detail::flushSends("reportStep");
  double worst = 0.0;
  MPI_Reduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (worldRank() == 0) {
    std::printf("step %" PRId64 " loss %.9g time %.6f\n", step, loss, worst);
    std::fflush(stdout);
  }
}

void reportMemory(const Grid &grid) {
  (void)grid;
  detail::flushSends("reportMemory");
  long long mine = static_cast<long long>(peakTensorBytes()), hi = 0, lo = 0;
  MPI_Reduce(&mine, &hi, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&mine, &lo, 1, MPI_LONG_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
  if (worldRank() == 0) {
    std::printf("memory: peak tensor bytes %lld (max over ranks), %lld "
                "(min)\n",
                hi, lo);
    std::fflush(stdout);
  }
}

bool parseStepLine(const std::string &line, int64_t &step, double &loss,
                   double &seconds) {
  long long s = 0;
  double l = 0, t = 0;
  int consumed = 0;
  if (std::sscanf(line.c_str(), "step %lld loss %lf time %lf%n", &s, &l, &t,
                  &consumed) != 3)
    return false;
  for (size_t i = consumed; i < line.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(line[i])))
      return false;
  step = s, loss = l, seconds = t;
  return true;
}

//===----------------------------------------------------------------------===//
// Parameter dumps
//===----------------------------------------------------------------------===//

void ParamDump::add(const std::string &name,
                    const std::vector<int64_t> &globalShape,
                    const std::vector<int64_t> &shardOffset,
                    const Tensor &shard, ShardBlocks blocks) {
  const char *fn = "ParamDump::add";
  check(!name.empty() && name.find_first_of(" \t\n") == std::string::npos, fn,
        "parameter name '" + name + "' must be non-empty without spaces");
  const size_t r = globalShape.size();
  check(shardOffset.size() == r, fn,
        name + ": offset rank differs from the global shape's");
  // The shard's shape: its own shape when the ranks agree, else flattened
  // trailing dims are not allowed: require the same rank.
  check(static_cast<size_t>(shard.rank()) == r, fn,
        name + ": shard " + shard.shapeString() + " must have the rank of " +
            detail::shapeToString(globalShape));
  const int d =
      detail::checkShardBlocks(blocks, globalShape, shard.shape(), name, fn);
  // Each block's piece is a box of its own, at the global index of its
  // first element.
  const int64_t count = d < 0 ? 1 : blocks.count;
  std::vector<int64_t> shape = shard.shape();
  const int64_t local = d < 0 ? 1 : shape[d], piece = local / count;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i)
    outer *= shape[i];
  for (size_t i = d + 1; d >= 0 && i < r; ++i)
    inner *= shape[i];
  if (d >= 0)
    shape[d] = piece;
  std::vector<float> all = shard.toHost();
  for (int64_t k = 0; k < count; ++k) {
    std::vector<int64_t> offset = shardOffset;
    if (d >= 0)
      offset[d] = detail::blockedGlobalIndex(k * piece, local, globalShape[d],
                                             count, shardOffset[d]);
    for (size_t i = 0; i < r; ++i)
      check(offset[i] >= 0 && offset[i] + shape[i] <= globalShape[i], fn,
            name + ": shard " + detail::shapeToString(shape) + " at " +
                detail::shapeToString(offset) + " exceeds " +
                detail::shapeToString(globalShape));
    std::vector<float> part;
    if (d < 0) {
      part = std::move(all);
    } else {
      part.reserve(size_t(outer * piece * inner));
      for (int64_t o = 0; o < outer; ++o) {
        auto from = all.begin() + (o * local + k * piece) * inner;
        part.insert(part.end(), from, from + piece * inner);
      }
    }
    entries_.push_back({name, globalShape, offset, shape, std::move(part)});
  }
}

using detail::joinDims;

void ParamDump::write(const std::string &dir) const {
  const char *fn = "ParamDump::write";
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    detail::fail(fn, dir + ": cannot create directory: " + std::strerror(errno));
  int rank = 0, ok = 0;
  MPI_Initialized(&ok);
  if (ok)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string path = dir + "/rank" + std::to_string(rank) + ".params";
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f)
    detail::fail(fn, tmp + ": cannot open: " + std::strerror(errno));
  std::fprintf(f, "trident-params 1\n");
  for (const Entry &e : entries_) {
    std::fprintf(f, "tensor %s global %s offset %s shape %s\n", e.name.c_str(),
                 joinDims(e.global).c_str(), joinDims(e.offset).c_str(),
                 joinDims(e.shape).c_str());
    for (float v : e.values)
      std::fprintf(f, "%a\n", static_cast<double>(v));
  }
  bool bad = std::fflush(f) != 0 || ::fsync(fileno(f)) != 0;
  bad |= std::fclose(f) != 0;
  if (bad || std::rename(tmp.c_str(), path.c_str()) != 0)
    detail::fail(fn, path + ": write failed: " + std::strerror(errno));
}

//===----------------------------------------------------------------------===//
// Overloads shared by the backends
//===----------------------------------------------------------------------===//

void attentionForward(Tensor &out, Tensor &probs, const Tensor &q,
                      const Tensor &k, const Tensor &v,
                      const AttentionDims &d) {
  attentionForward(out, probs, q, k, v, Tensor(), d);
}

void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, const Tensor &dout,
                       const Tensor &q, const Tensor &k, const Tensor &v,
                       const Tensor &probs, const AttentionDims &d) {
  Tensor none;
  attentionBackward(dq, dk, dv, none, dout, q, k, v, Tensor(), probs, d);
}

void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, Tensor &dsinks,
                       const Tensor &dout, const Tensor &q, const Tensor &k,
                       const Tensor &v, const Tensor &probs,
                       const AttentionDims &d) {
  attentionBackward(dq, dk, dv, dsinks, dout, q, k, v, Tensor(), probs, d);
}

// The unsplit cross-entropy's backward is the vocabulary-parallel one at
// offset 0, on every backend.
void crossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                          const Tensor &targets, const Tensor &lse,
                          float gradScale) {
  vocabParallelCrossEntropyBackward(dlogits, logits, targets, lse, 0,
                                    gradScale);
}

void sgdUpdate(Tensor &param, const Tensor &grad, float lr) {
  axpy(param, grad, -lr);
}

namespace detail {
bool adamStep(const Tensor &param, const Tensor &grad, const Tensor &m,
              const Tensor &v, const AdamConfig &cfg, int64_t step,
              float &bc1, float &bc2) {
  const char *fn = "adamUpdate";
  for (const Tensor *t : {&grad, &m, &v})
    check(t->numel() == param.numel(), fn,
          "sizes differ: " + param.shapeString() + " vs " +
              t->shapeString());
  check(step >= 1, fn, "step counts from 1");
  bc1 = 1.0f - static_cast<float>(std::pow(double(cfg.beta1), step));
  bc2 = 1.0f - static_cast<float>(std::pow(double(cfg.beta2), step));
  return param.numel() > 0;
}
} // namespace detail

} // namespace trident::rt
