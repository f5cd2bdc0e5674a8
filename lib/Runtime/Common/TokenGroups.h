//===- TokenGroups.h - Token positions grouped by table row -----*- C++ -*-===//
//
// The host side of the CUDA embedding backward: a stable counting sort of
// the token ids of one vocabulary shard, so that one GPU thread per
// (distinct row, feature) adds that row's token gradients in ascending
// position order (deterministic, O(tokens x hidden) work). Header-only and
// free of MPI and CUDA so that unit-runtime tests it on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_RUNTIME_COMMON_TOKENGROUPS_H
#define TRIDENT_LIB_RUNTIME_COMMON_TOKENGROUPS_H

#include <cstdint>
#include <vector>

namespace trident::rt::detail {

/// Rows of the shard [offset, offset + shard) that some token hits, in
/// increasing order (`rows`, shard-local); the positions of row rows[k]'s
/// tokens are order[start[k] .. start[k+1]), ascending. Tokens outside the
/// shard are left out (another vocabulary shard owns them).
struct TokenGroups {
  std::vector<int32_t> rows, start, order;
};

inline TokenGroups groupTokensByRow(const std::vector<int32_t> &tokens,
                                    int64_t offset, int64_t shard) {
  TokenGroups g;
  std::vector<int32_t> count(size_t(shard > 0 ? shard : 0), 0);
  auto local = [&](int32_t t) { return int64_t(t) - offset; };
  for (int32_t t : tokens)
    if (local(t) >= 0 && local(t) < shard)
      ++count[size_t(local(t))];
  std::vector<int32_t> next(count.size(), 0);
  g.start.push_back(0);
  for (int64_t r = 0; r < shard; ++r)
    if (count[size_t(r)]) {
      next[size_t(r)] = g.start.back();
      g.rows.push_back(int32_t(r));
      g.start.push_back(g.start.back() + count[size_t(r)]);
    }
  g.order.resize(size_t(g.start.back()));
  for (size_t i = 0; i < tokens.size(); ++i)
    if (local(tokens[i]) >= 0 && local(tokens[i]) < shard)
      g.order[size_t(next[size_t(local(tokens[i]))]++)] = int32_t(i);
  return g;
}

} // namespace trident::rt::detail

#endif // TRIDENT_LIB_RUNTIME_COMMON_TOKENGROUPS_H
