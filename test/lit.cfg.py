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
                   "bad-inputs"]

config.substitutions.append(("%shared", config.trident_shared_dir))
config.substitutions.append(("%srcroot", config.trident_src_root))
config.substitutions.append(("%data", os.path.join(config.trident_src_root, "test", "data")))
config.substitutions.append(("%trident_bin", config.trident_tools_dir))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
tool_dirs = [config.trident_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["trident", "trident-opt"], tool_dirs)
llvm_config.with_environment("PATH", config.trident_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
