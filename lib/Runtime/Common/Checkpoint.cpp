//===- Checkpoint.cpp - Checkpoints that outlive a plan -------------------===//
//
// CheckpointWriter and CheckpointReader (Runtime.h; docs/elastic.md,
// "Checkpoints"). A checkpoint is a directory DIR/step-K holding one file
// per rank of the plan that wrote it and a manifest:
//
//   rank<R>.ckpt   "trident-checkpoint 1", then per tensor a header line
//                  tensor NAME global D,.. offset D,.. local D,.. blocks
//                  DIM COUNT flat BEGIN count N fnv HEX
//                  followed by N little-endian float32 values and "\n"
//   manifest       "trident-checkpoint 1", "step K", "ranks R", then the
//                  writer's meta lines "KEY VALUE"
//
// Each tensor's slice says where its elements sit in the logical
// parameter, so a reader of any plan assembles what its own slices need.
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"
#include "Dims.h"

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace trident::rt {

namespace {

constexpr const char *kMagic = "trident-checkpoint 1";

/// FNV-1a (Fowler, Noll and Vo), 64 bits, over the values' bytes.
uint64_t fnv1a(const void *data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string dims(const std::vector<int64_t> &v) { return detail::joinDims(v); }
using detail::parseDims;

std::string sliceText(const Slice &s, int64_t count) {
  return "offset [" + dims(s.offset) + "] of shape [" + dims(s.local) +
         "], elements " + std::to_string(s.flatBegin) + " to " +
         std::to_string(s.flatBegin + count);
}

/// The logical element of a slice's flat element `i` (counted from the
/// slice's flatBegin), or -1 where it belongs to none (chunk padding past
/// the shard, vocabulary rows past the global shape).
int64_t logicalIndex(const Slice &s, int64_t i) {
  int64_t local = s.flatBegin + i;
  if (local >= numelOf(s.local))
    return -1;
  const int bd = s.blocks.count > 1 ? s.blocks.dim : -1;
  const size_t r = s.local.size();
  int64_t flat = 0, stride = 1;
  for (size_t k = r; k-- > 0;) {
    const int64_t l = local % s.local[k];
    local /= s.local[k];
    const int64_t g =
        int(k) == bd ? detail::blockedGlobalIndex(l, s.local[k], s.global[k],
                                                  s.blocks.count, s.offset[k])
                     : s.offset[k] + l;
    if (g >= s.global[k])
      return -1;
    flat += g * stride;
    stride *= s.global[k];
  }
  return flat;
}

void checkSlice(const Slice &s, const std::string &name, const char *fn) {
  detail::check(s.offset.size() == s.global.size() &&
                    s.local.size() == s.global.size() && s.flatBegin >= 0,
                fn,
                name + ": slice offset [" + dims(s.offset) + "], shape [" +
                    dims(s.local) + "] does not match global [" +
                    dims(s.global) + "]");
  detail::checkShardBlocks(s.blocks, s.global, s.local, name, fn);
}

int worldRankOrZero(int *size = nullptr) {
  int ok = 0, rank = 0, n = 1;
  MPI_Initialized(&ok);
  if (ok) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
  }
  if (size)
    *size = n;
  return rank;
}

/// Every rank's `ok` and'ed (so that one failing rank stops all of them,
/// none left waiting in a barrier).
bool allOk(bool ok) {
  int mine = ok ? 1 : 0, all = mine, init = 0;
  MPI_Initialized(&init);
  if (init)
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

/// Removes a directory of plain files (a partial or replaced checkpoint).
bool removeTree(const std::string &dir) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return errno == ENOENT;
  while (dirent *e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..")
      ::unlink((dir + "/" + n).c_str());
  }
  ::closedir(d);
  return ::rmdir(dir.c_str()) == 0;
}

bool syncPath(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

/// Writes `text` to `path` through `path`.tmp, synced, then renamed.
std::string writeFileSynced(const std::string &path,
                            const std::function<bool(FILE *)> &body) {
  const std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return tmp + ": cannot open: " + std::strerror(errno);
  bool ok = body(f);
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(fileno(f)) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
    return path + ": write failed: " + std::strerror(errno);
  return "";
}

} // namespace

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

void CheckpointWriter::add(const std::string &name, const Slice &slice,
                           const Tensor &data) {
  const char *fn = "CheckpointWriter::add";
  detail::check(!name.empty() && name.find_first_of(" \n") == std::string::npos,
                fn, "tensor name '" + name + "' is empty or holds a space");
  checkSlice(slice, name, fn);
  entries_.push_back({name, slice, data.toHost()});
}

void CheckpointWriter::write(
    const std::string &dir, int64_t step,
    const std::vector<std::pair<std::string, std::string>> &meta) const {
  const char *fn = "CheckpointWriter::write";
  int size = 1;
  const int rank = worldRankOrZero(&size);
  const std::string name = "step-" + std::to_string(step);
  const std::string partial = dir + "/." + name + ".partial";
  const std::string final = dir + "/" + name;
  std::string error;
  if (rank == 0) {
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
      error = dir + ": cannot create directory: " + std::strerror(errno);
    else if (!removeTree(partial) ||
             (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST))
      error = partial + ": cannot create directory: " + std::strerror(errno);
  }
  if (!allOk(error.empty()))
    detail::fail(fn, error.empty() ? "world rank 0 could not create " + partial
                                   : error);
  // For the crash test (docs/elastic.md): TRIDENT_RT_CHECKPOINT_KILL=S:R
  // kills world rank R with SIGKILL halfway through its file of step S.
  size_t killAfter = entries_.size() + 1;
  if (const char *k = std::getenv("TRIDENT_RT_CHECKPOINT_KILL")) {
    long long ks = -1, kr = -1;
    if (std::sscanf(k, "%lld:%lld", &ks, &kr) == 2 && ks == step && kr == rank)
      killAfter = entries_.size() / 2;
  }
  error = writeFileSynced(
      partial + "/rank" + std::to_string(rank) + ".ckpt", [&](FILE *f) {
        bool ok = std::fprintf(f, "%s\n", kMagic) > 0;
        for (const Entry &e : entries_) {
          if (size_t(&e - entries_.data()) == killAfter) {
            std::fflush(f);
            std::raise(SIGKILL);
          }
          const size_t bytes = e.values.size() * sizeof(float);
          ok = ok &&
               std::fprintf(
                   f,
                   "tensor %s global %s offset %s local %s blocks %d %" PRId64
                   " flat %" PRId64 " count %zu fnv %016" PRIx64 "\n",
                   e.name.c_str(), dims(e.slice.global).c_str(),
                   dims(e.slice.offset).c_str(), dims(e.slice.local).c_str(),
                   e.slice.blocks.dim, e.slice.blocks.count, e.slice.flatBegin,
                   e.values.size(), fnv1a(e.values.data(), bytes)) > 0;
          ok = ok && std::fwrite(e.values.data(), 1, bytes, f) == bytes &&
               std::fputc('\n', f) != EOF;
        }
        return ok;
      });
  if (!allOk(error.empty()))
    detail::fail(fn, error.empty() ? "another rank could not write its file "
                                     "of " +
                                         partial
                                   : error);
  if (rank == 0) {
    error = writeFileSynced(partial + "/manifest", [&](FILE *f) {
      bool ok = std::fprintf(f, "%s\nstep %" PRId64 "\nranks %d\n", kMagic,
                             step, size) > 0;
      for (const auto &[k, v] : meta)
        ok = ok && std::fprintf(f, "%s %s\n", k.c_str(), v.c_str()) > 0;
      return ok;
    });
    // The same step written again (a resumed run) replaces the old copy.
    if (error.empty() && !removeTree(final))
      error = final + ": cannot replace: " + std::strerror(errno);
    if (error.empty() && std::rename(partial.c_str(), final.c_str()) != 0)
      error =
          final + ": cannot rename " + partial + ": " + std::strerror(errno);
    if (error.empty() && !syncPath(dir))
      error = dir + ": cannot sync: " + std::strerror(errno);
  }
  if (!allOk(error.empty()))
    detail::fail(fn, error.empty() ? "world rank 0 could not complete " + final
                                   : error);
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

CheckpointReader::CheckpointReader(const std::string &dir) {
  const char *fn = "CheckpointReader";
  // The complete checkpoints: step-K directories whose manifest names
  // every rank's file; the newest wins.
  std::vector<int64_t> steps;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("step-", 0) != 0 || n.size() == 5 ||
          n.find_first_not_of("0123456789", 5) != std::string::npos)
        continue;
      steps.push_back(std::strtoll(n.c_str() + 5, nullptr, 10));
    }
    ::closedir(d);
  } else {
    detail::fail(fn, dir + ": cannot open: " + std::strerror(errno));
  }
  std::sort(steps.rbegin(), steps.rend());
  std::string why;
  int ranks = 0;
  for (int64_t k : steps) {
    const std::string path = dir + "/step-" + std::to_string(k);
    std::ifstream m(path + "/manifest");
    std::string line;
    if (!m || !std::getline(m, line) || line != kMagic) {
      why += "; " + path + ": no manifest";
      continue;
    }
    meta_.clear();
    int64_t step = -1;
    ranks = 0;
    while (std::getline(m, line)) {
      size_t sp = line.find(' ');
      std::string key = line.substr(0, sp);
      std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
      if (key == "step")
        step = std::strtoll(value.c_str(), nullptr, 10);
      else if (key == "ranks")
        ranks = std::atoi(value.c_str());
      else
        meta_.push_back({key, value});
    }
    bool files = step == k && ranks > 0;
    for (int r = 0; files && r < ranks; ++r)
      files = ::access((path + "/rank" + std::to_string(r) + ".ckpt").c_str(),
                       R_OK) == 0;
    if (!files) {
      why += "; " + path + ": manifest and rank files disagree";
      continue;
    }
    path_ = path;
    step_ = k;
    break;
  }
  if (path_.empty())
    detail::fail(fn, dir +
                         ": no complete checkpoint (a step-K directory "
                         "with its manifest and every rank's file)" +
                         why);
  // Index every file: headers only, values skipped.
  for (int r = 0; r < ranks; ++r) {
    const std::string file = path_ + "/rank" + std::to_string(r) + ".ckpt";
    FILE *f = std::fopen(file.c_str(), "rb");
    if (!f)
      detail::fail(fn, file + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    ::fstat(fileno(f), &st);
    char buf[4096];
    int lineNo = 0;
    auto bad = [&](const std::string &what) {
      std::fclose(f);
      detail::fail(fn, file + ":" + std::to_string(lineNo) + ": " + what);
    };
    ++lineNo;
    if (!std::fgets(buf, sizeof buf, f) ||
        std::string(buf) != std::string(kMagic) + "\n")
      bad("not a trident checkpoint file (expected '" + std::string(kMagic) +
          "')");
    while (std::fgets(buf, sizeof buf, f)) {
      ++lineNo;
      std::istringstream in(buf);
      std::string tag, name, kg, g, ko, o, kl, l, kb, kf, kc, kh, h;
      Entry e;
      if (!(in >> tag >> name >> kg >> g >> ko >> o >> kl >> l >> kb >>
            e.slice.blocks.dim >> e.slice.blocks.count >> kf >>
            e.slice.flatBegin >> kc >> e.count >> kh >> h) ||
          tag != "tensor" || kg != "global" || ko != "offset" ||
          kl != "local" || kb != "blocks" || kf != "flat" || kc != "count" ||
          kh != "fnv" || !parseDims(g, e.slice.global) ||
          !parseDims(o, e.slice.offset) || !parseDims(l, e.slice.local) ||
          e.count < 0 || e.slice.flatBegin < 0)
        bad("malformed tensor header (expected 'tensor NAME global D,.. "
            "offset D,.. local D,.. blocks DIM N flat BEGIN count N fnv "
            "HEX')");
      e.checksum = std::strtoull(h.c_str(), nullptr, 16);
      e.file = file;
      e.line = lineNo;
      e.offset = std::ftell(f);
      const long next = e.offset + long(e.count * sizeof(float)) + 1;
      if (next > long(st.st_size))
        bad("tensor '" + name + "' (" + sliceText(e.slice, e.count) +
            ") is truncated: the file ends inside its values");
      std::fseek(f, next, SEEK_SET);
      entries_.push_back({name, e});
    }
    std::fclose(f);
  }
}

std::string CheckpointReader::meta(const std::string &key) const {
  for (const auto &[k, v] : meta_)
    if (k == key)
      return v;
  return "";
}

void CheckpointReader::read(const std::string &name, const Slice &slice,
                            Tensor &out) const {
  const char *fn = "CheckpointReader::read";
  checkSlice(slice, name, fn);
  const int64_t total = numelOf(slice.global);
  std::vector<float> full;
  std::vector<char> have;
  bool any = false;
  for (const auto &[n, e] : entries_) {
    if (n != name)
      continue;
    if (e.slice.global != slice.global)
      detail::fail(fn, e.file + ":" + std::to_string(e.line) + ": tensor '" +
                           name + "' is [" + dims(e.slice.global) +
                           "] in the checkpoint, [" + dims(slice.global) +
                           "] in this program");
    if (!any) {
      full.assign(size_t(total), 0.0f);
      have.assign(size_t(total), 0);
      any = true;
    }
    std::vector<float> values(size_t(e.count));
    FILE *f = std::fopen(e.file.c_str(), "rb");
    bool ok = f && std::fseek(f, e.offset, SEEK_SET) == 0 &&
              std::fread(values.data(), sizeof(float), values.size(), f) ==
                  values.size();
    if (f)
      std::fclose(f);
    const std::string where = e.file + ":" + std::to_string(e.line) +
                              ": tensor '" + name + "' (" +
                              sliceText(e.slice, e.count) + ")";
    if (!ok)
      detail::fail(fn, where + ": cannot read its values");
    if (fnv1a(values.data(), values.size() * sizeof(float)) != e.checksum)
      detail::fail(fn, where + ": checksum mismatch (the file is corrupted)");
    for (int64_t i = 0; i < e.count; ++i) {
      const int64_t g = logicalIndex(e.slice, i);
      if (g >= 0) {
        full[size_t(g)] = values[size_t(i)];
        have[size_t(g)] = 1;
      }
    }
  }
  if (!any)
    detail::fail(fn, path_ + ": no tensor '" + name +
                         "' (written by a program of another model or "
                         "optimizer?)");
  std::vector<float> host(size_t(out.numel()), 0.0f);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const int64_t g = logicalIndex(slice, i);
    if (g < 0)
      continue;
    if (!have[size_t(g)])
      detail::fail(fn, path_ + ": tensor '" + name + "': logical element " +
                           std::to_string(g) + " (needed by " +
                           sliceText(slice, out.numel()) +
                           ") is in no rank's file");
    host[size_t(i)] = full[size_t(g)];
  }
  out.fromHost(host);
}

} // namespace trident::rt
