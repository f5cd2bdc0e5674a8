//===- trident-compare-params.cpp - Compare two parameter dumps -----------===//
//
// Usage: trident-compare-params DIR_A DIR_B [--rtol R] [--atol A]
//        trident-compare-params --losses LOG_A LOG_B [--rtol R]
// Assembles the shards that rt::ParamDump wrote in each directory and
// checks |a - b| <= rtol * max(|a|, |b|) + atol for every element (defaults
// rtol 1e-5, atol 0). With --losses, compares the "step N loss L time T"
// lines of two program outputs (same steps, losses within rtol). Prints the
// worst element; exits 0 on a match, 1 on a mismatch, 2 on bad input.
//
//===----------------------------------------------------------------------===//

#include "trident/Runtime/ParamCompare.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace trident::rt;

namespace {
int usage(const char *msg) {
  std::fprintf(stderr,
               "trident-compare-params: %s\n"
               "usage: trident-compare-params DIR_A DIR_B [--rtol R] "
               "[--atol A]\n"
               "       trident-compare-params --losses LOG_A LOG_B [--rtol R]\n",
               msg);
  return 2;
}

bool parseNumber(const char *text, double &out) {
  char *end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && out >= 0 && std::isfinite(out);
}

/// Reads "step N loss L time T" lines (other lines are ignored).
bool readLosses(const std::string &path, std::vector<std::pair<long long, double>> &out,
                std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open";
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    long long s;
    double l, t;
    int used = 0;
    if (std::sscanf(line.c_str(), "step %lld loss %lf time %lf%n", &s, &l, &t,
                    &used) == 3 &&
        used == static_cast<int>(line.size()))
      out.push_back({s, l});
  }
  if (out.empty()) {
    error = path + ": no 'step N loss L time T' lines";
    return false;
  }
  return true;
}

int compareLosses(const std::string &a, const std::string &b, double rtol) {
  std::vector<std::pair<long long, double>> la, lb;
  std::string error;
  if (!readLosses(a, la, error) || !readLosses(b, lb, error)) {
    std::fprintf(stderr, "trident-compare-params: %s\n", error.c_str());
    return 2;
  }
  if (la.size() != lb.size()) {
    std::printf("MISMATCH: %zu steps in %s, %zu in %s\n", la.size(), a.c_str(),
                lb.size(), b.c_str());
    return 1;
  }
  bool ok = true;
  double worst = 0;
  for (size_t i = 0; i < la.size(); ++i) {
    double x = la[i].second, y = lb[i].second;
    double rel = std::fabs(x - y) / std::max(std::fabs(x), std::fabs(y));
    if (std::isnan(rel))
      rel = x == y ? 0 : INFINITY;
    worst = std::max(worst, rel);
    bool bad = la[i].first != lb[i].first || !(rel <= rtol);
    std::printf("step %lld: %.9g vs %.9g rel %.3g%s\n", la[i].first, x, y, rel,
                bad ? "  MISMATCH" : "");
    ok &= !bad;
  }
  std::printf("%s: %zu steps, worst relative difference %.3g (rtol %g)\n",
              ok ? "OK" : "MISMATCH", la.size(), worst, rtol);
  return ok ? 0 : 1;
}
} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> pos;
  double rtol = 1e-5, atol = 0.0;
  bool losses = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--rtol" || arg == "--atol") {
      if (i + 1 >= argc || !parseNumber(argv[i + 1], arg == "--rtol" ? rtol : atol))
        return usage((arg + " needs a non-negative number").c_str());
      ++i;
    } else if (arg == "--losses") {
      losses = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else {
      pos.push_back(arg);
    }
  }
  if (pos.size() != 2)
    return usage("expected two inputs");
  if (losses)
    return compareLosses(pos[0], pos[1], rtol);

  std::map<std::string, AssembledParam> a, b;
  std::string error;
  if (!readParamDump(pos[0], a, error) || !readParamDump(pos[1], b, error)) {
    std::fprintf(stderr, "trident-compare-params: %s\n", error.c_str());
    return 2;
  }
  CompareResult r = compareParamDumps(a, b, rtol, atol);
  for (const std::string &p : r.problems)
    std::printf("MISMATCH: %s\n", p.c_str());
  if (r.worstIndex >= 0)
    std::printf("worst: %s[%lld] %.9g vs %.9g (|diff| / bound = %.3g)\n",
                r.worstName.c_str(), static_cast<long long>(r.worstIndex),
                r.worstA, r.worstB, r.worstRatio);
  std::printf("%s: %zu parameters, %lld elements, %lld outside rtol %g atol "
              "%g\n",
              r.ok ? "OK" : "MISMATCH", a.size(),
              static_cast<long long>(r.compared),
              static_cast<long long>(r.mismatched), rtol, atol);
  return r.ok ? 0 : 1;
}
