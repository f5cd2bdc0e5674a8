//===- DTypeTest.cpp - Element type names round trip ----------------------===//
#include "trident/Support/DType.h"
#include "trident/Support/Status.h"

#include <catch2/catch.hpp>

using namespace trident;

TEST_CASE("dtype names round trip and sizes", "[support]") {
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::FP8})
    CHECK(parseDType(dtypeName(t)) == t);
  CHECK(dtypeBytes(DType::BF16) == 2);
  CHECK(dtypeBytes(DType::FP8) == 1);
  CHECK_FALSE(parseDType("int4").has_value());
}

TEST_CASE("Result carries a value or an error", "[support]") {
  Result<int> ok = 3;
  CHECK(ok.isOk());
  CHECK(*ok == 3);
  Result<int> bad = Status::error("model.json: field 'hidden_size': expected a positive integer");
  CHECK_FALSE(bad.isOk());
  CHECK(bad.message().find("hidden_size") != std::string::npos);
}
