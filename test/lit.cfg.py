# -*- Python -*-
# lit configuration for Trident: IR tests (Dialect/, Transforms/), tool tests
# (tools/) and example scripts (examples/).
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "TRIDENT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.trident_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "unit", "lib", "data", "Inputs",
                   "golden",
                   "bad-inputs", "e2e"]

config.substitutions.append(("%shared", config.trident_shared_dir))
config.substitutions.append(("%srcroot", config.trident_src_root))
config.substitutions.append(("%data", os.path.join(config.trident_src_root, "test", "data")))
config.substitutions.append(("%trident_bin", config.trident_tools_dir))
# Environment for a script that builds a program against the runtime of
# this build and runs it under MPI: in a sanitizer build, the link flags
# and the MPI leak-check setting (CMakeLists.txt says why); else nothing.
sanitize_env = ""
if config.trident_sanitize_link_flags:
    sanitize_env = "TRIDENT_E2E_SANITIZE=%s %s" % (
        config.trident_sanitize_link_flags, config.trident_mpi_test_env)
config.substitutions.append(("%sanitize_env", sanitize_env))
# The examples that emit and build a project compile its main.cpp at -O0
# (python-free-examples/_emit-build.sh): about half the project's default
# -O1 build time, while a step takes about 15 % longer (the kernels are in
# the prebuilt runtime archive; docs/emit.md, "Building the project").
# tools/emit-build-bench.test checks the default itself.
config.environment["TRIDENT_PROGRAM_OPT"] = "-O0"
# Feature 'sanitizer': tests that only repeat, more slowly, runtime paths
# the sanitizer build's e2e-cpu plans already drive can opt out of it; so
# can the refits over every published run, whose code unit-analysis runs
# under the sanitizers on a subset of the runs (the figures they check are
# the normal build's).
if config.trident_sanitize_link_flags:
    config.available_features.add("sanitizer")

# Headless Chromium renders the HTML report in test/tools/report-browser.test
# (scripts/setup.sh installs Debian's chromium); without it that test is
# reported UNSUPPORTED.
if os.path.exists("/usr/bin/chromium"):
    config.available_features.add("chromium")

# The published runs of the sibling shared/ folder (TRIDENT_SHARED_DIR):
# tests that read them need it. Without it they run and fail, unless
# TRIDENT_SKIP_VALIDATION is set (then they are UNSUPPORTED).
if os.path.isfile(os.path.join(config.trident_shared_dir, "validation",
                               "cases.json")) or \
        not os.environ.get("TRIDENT_SKIP_VALIDATION"):
    config.available_features.add("shared")

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
tool_dirs = [config.trident_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["trident", "trident-opt", "trident-translate"],
                                   tool_dirs)
# Upstream mlir-opt (LLVM 22) checks that exported shard IR parses and
# partitions without any Trident code (test/Transforms/trident-export-shard.mlir).
llvm_config.add_tool_substitutions(["mlir-opt"], [config.llvm_tools_dir])
llvm_config.with_environment("PATH", config.trident_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
