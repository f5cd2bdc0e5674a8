//===- main.cpp - The one Catch2 main for every unit-test binary ----------===//
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
