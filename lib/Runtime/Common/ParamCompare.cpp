//===- ParamCompare.cpp - Reading and comparing parameter dumps -----------===//

#include "trident/Runtime/ParamCompare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>

#include "Dims.h"

namespace trident::rt {

namespace {
using detail::parseDims;

int64_t product(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
}

struct Partial {
  AssembledParam param;
  std::vector<char> covered;
};

bool readOne(const std::string &path, std::map<std::string, Partial> &acc,
             std::string &error, double replicaRtol) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  std::string line;
  int64_t lineNo = 1;
  if (!std::getline(in, line) || line != "trident-params 1") {
    error = path + ":1: expected the header 'trident-params 1'";
    return false;
  }
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty())
      continue;
    std::istringstream ls(line);
    std::string kw, name, kg, g, ko, o, ks, s, extra;
    ls >> kw >> name >> kg >> g >> ko >> o >> ks >> s;
    std::vector<int64_t> global, offset, shape;
    if (kw != "tensor" || kg != "global" || ko != "offset" || ks != "shape" ||
        (ls >> extra) || !parseDims(g, global) || !parseDims(o, offset) ||
        !parseDims(s, shape) || offset.size() != global.size() ||
        shape.size() != global.size()) {
      error = path + ":" + std::to_string(lineNo) +
              ": expected 'tensor <name> global <dims> offset <dims> shape "
              "<dims>'";
      return false;
    }
    for (size_t i = 0; i < global.size(); ++i)
      if (offset[i] + shape[i] > global[i]) {
        error = path + ":" + std::to_string(lineNo) + ": shard of '" + name +
                "' exceeds its global shape";
        return false;
      }
    Partial &p = acc[name];
    if (p.param.shape.empty() && p.covered.empty()) {
      p.param.shape = global;
      p.param.values.assign(product(global), 0.0f);
      p.covered.assign(product(global), 0);
    } else if (p.param.shape != global) {
      error = path + ":" + std::to_string(lineNo) + ": '" + name +
              "' has a different global shape than in another shard";
      return false;
    }
    int64_t n = product(shape);
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t e = 0; e < n; ++e) {
      ++lineNo;
      if (!std::getline(in, line)) {
        error = path + ":" + std::to_string(lineNo) + ": '" + name +
                "' ends early (expected " + std::to_string(n) + " values)";
        return false;
      }
      char *end = nullptr;
      float v = std::strtof(line.c_str(), &end);
      if (end == line.c_str() || *end != '\0') {
        error = path + ":" + std::to_string(lineNo) + ": '" + line +
                "' is not a number";
        return false;
      }
      int64_t flat = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        flat = flat * global[d] + offset[d] + idx[d];
      if (p.covered[flat]) {
        double a = p.param.values[flat];
        if (std::fabs(a - v) > replicaRtol * std::max(std::fabs(a),
                                                      std::fabs(double(v)))) {
          error = path + ":" + std::to_string(lineNo) + ": replicated copy of '" +
                  name + "' element " + std::to_string(flat) + " is " +
                  line + " but another shard has " + std::to_string(a);
          return false;
        }
      }
      p.param.values[flat] = v;
      p.covered[flat] = 1;
      for (size_t d = shape.size(); d-- > 0;) {
        if (++idx[d] < shape[d])
          break;
        idx[d] = 0;
      }
    }
  }
  return true;
}
} // namespace

bool readParamDump(const std::string &dir,
                   std::map<std::string, AssembledParam> &out,
                   std::string &error, double replicaRtol) {
  DIR *d = opendir(dir.c_str());
  if (!d) {
    error = dir + ": cannot open directory";
    return false;
  }
  std::vector<std::string> files;
  while (dirent *e = readdir(d)) {
    std::string n = e->d_name;
    if (n.rfind("rank", 0) == 0 && n.size() > 11 &&
        n.compare(n.size() - 7, 7, ".params") == 0)
      files.push_back(dir + "/" + n);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    error = dir + ": no rank*.params files";
    return false;
  }
  std::map<std::string, Partial> acc;
  for (const std::string &f : files)
    if (!readOne(f, acc, error, replicaRtol))
      return false;
  out.clear();
  for (auto &[name, p] : acc) {
    auto gap = std::find(p.covered.begin(), p.covered.end(), 0);
    if (gap != p.covered.end()) {
      error = dir + ": parameter '" + name + "' element " +
              std::to_string(gap - p.covered.begin()) +
              " is covered by no shard";
      return false;
    }
    out[name] = std::move(p.param);
  }
  return true;
}

CompareResult compareParamDumps(const std::map<std::string, AssembledParam> &a,
                                const std::map<std::string, AssembledParam> &b,
                                double rtol, double atol) {
  CompareResult r;
  for (const auto &[name, pa] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      r.problems.push_back("'" + name + "' only in the first dump");
      continue;
    }
    const AssembledParam &pb = it->second;
    if (pa.shape != pb.shape) {
      r.problems.push_back("'" + name + "' has different shapes");
      continue;
    }
    for (size_t i = 0; i < pa.values.size(); ++i) {
      double x = pa.values[i], y = pb.values[i];
      double bound = rtol * std::max(std::fabs(x), std::fabs(y)) + atol;
      double diff = std::fabs(x - y);
      double ratio = bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0.0);
      if (std::isnan(x) || std::isnan(y))
        ratio = INFINITY;
      ++r.compared;
      if (ratio > 1.0)
        ++r.mismatched;
      if (ratio > r.worstRatio || r.worstIndex < 0) {
        r.worstRatio = ratio;
        r.worstName = name;
        r.worstIndex = static_cast<int64_t>(i);
        r.worstA = x;
        r.worstB = y;
      }
    }
  }
  for (const auto &[name, pb] : b)
    if (!a.count(name))
      r.problems.push_back("'" + name + "' only in the second dump");
  r.ok = r.problems.empty() && r.mismatched == 0;
  return r;
}

} // namespace trident::rt
