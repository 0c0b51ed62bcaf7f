# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "KGRAPH"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kgraph_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%kgraph_src_root", config.kgraph_src_root))
config.substitutions.append(("%kgraph_obj_root", config.kgraph_obj_root))
# CPU models and checkers of the code generator that RUN lines invoke.
config.substitutions.append(
    ("%kgraph_test_tools", os.path.join(config.kgraph_src_root, "test", "Tools"))
)

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.kgraph_tools_dir, config.llvm_tools_dir]
# A sanitizer build (KGRAPH_SANITIZE, see CMakeLists.txt): kgraph's own
# executables carry the runtime; the hosts that are not sanitized and load
# kgraph's shared objects (upstream mlir-opt with the plugin, python with the
# C API through ctypes) run with it preloaded. Their own leaks are not
# kgraph's, so leak checking is off in them; kgraph-opt and kgraph-capi-test
# keep it.
#
# ASan reports abort (so `not` does not take a report for the expected
# failure). allow_user_poisoning=0: LLVM's inline allocator code
# (BumpPtrAllocator, used by MLIR's StorageUniquer) poisons the slabs it starts
# and unpoisons what it hands out when compiled with ASan, i.e. in kgraph's
# objects, but not in the uninstrumented libMLIR.so; the two share one
# allocator per context, so memory libMLIR.so hands out from a slab kgraph's
# code started reads as poisoned (use-after-poison in
# FileLineColRange::get on parsing). Heap, stack and global checks stay.
host_prefix = ""
if config.kgraph_sanitize:
    config.available_features.add("sanitizer")
    for var, value in [
        ("ASAN_OPTIONS", "abort_on_error=1:allow_user_poisoning=0"),
        ("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:abort_on_error=1"),
    ]:
        config.environment[var] = os.environ.get(var, value)
    if config.kgraph_sanitizer_preload:
        host_prefix = "env LD_PRELOAD={} ASAN_OPTIONS={}:detect_leaks=0 ".format(
            config.kgraph_sanitizer_preload, config.environment["ASAN_OPTIONS"]
        )
tools = [
    "kgraph-opt",
    "kgraph-translate",
    "kgraph-capi-test",
    ToolSubst(
        "mlir-opt",
        command=host_prefix + os.path.join(config.llvm_tools_dir, "mlir-opt"),
    ),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas proves emitted PTX valid without a GPU.
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None
)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

config.substitutions.append(("%python", "/usr/bin/python3"))
# Python that loads kgraph's shared objects (the C API through ctypes).
config.substitutions.append(("%host_python", host_prefix + "/usr/bin/python3"))

# Embedding tests (test/Embedding, test/Plugin, test/CAPI): install the
# package, build a consumer with the compilers and MLIR this tree was
# configured with, load the mlir-opt plugin, use the C API. The plugin and the
# C API exist only when kgraph links libMLIR.so (KGRAPH_LINK_MLIR_DYLIB).
if config.kgraph_link_mlir_dylib:
    config.available_features.add("mlir-dylib")
config.substitutions.append(("%cmake_exe", config.cmake_command))
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake_make_program", config.cmake_make_program))
config.substitutions.append(("%c_compiler", config.c_compiler))
config.substitutions.append(("%cxx_compiler", config.cxx_compiler))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(
    ("%mlir_include_dir", os.path.join(config.mlir_install_prefix, "include"))
)
config.substitutions.append(
    ("%kgraph_plugin", os.path.join(config.kgraph_obj_root, "lib", "libKGraphPlugin" + config.llvm_shlib_ext))
)
config.substitutions.append(
    ("%kgraph_capi_lib", os.path.join(config.kgraph_obj_root, "lib", "libKGraphCAPI" + config.llvm_shlib_ext))
)
