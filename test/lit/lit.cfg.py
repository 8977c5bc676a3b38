# -*- Python -*-
# lit configuration for kiln's FileCheck tests (test/lit mirrors the source folders).
#
# Run from the build tree:   lit -v build/test/lit
# or from the source tree:   lit -v test/lit   (finds build/, or $KILN_BUILD_DIR)
# ctest runs the first form as the test `lit`.

import os

import lit.formats

if not hasattr(config, "kiln_obj_root"):
    # Started on the source folder: load the site config CMake wrote into the build
    # tree, which sets the paths and then loads this file again.
    _src = os.path.dirname(os.path.abspath(__file__))
    _root = os.path.normpath(os.path.join(_src, "..", ".."))
    _build = os.environ.get("KILN_BUILD_DIR", os.path.join(_root, "build"))
    if not os.path.isabs(_build):
        _build = os.path.join(_root, _build)
    _site = os.path.join(_build, "test", "lit", "lit.site.cfg.py")
    if not os.path.exists(_site):
        lit_config.fatal(
            "no %s: configure and build kiln first (bash scripts/setup.sh), "
            "or set KILN_BUILD_DIR to the build folder" % _site)
    lit_config.load_config(config, _site)
else:
    from lit.llvm import llvm_config
    from lit.llvm.subst import ToolSubst

    config.name = "kiln"
    # The internal shell (the only one lit 24 keeps).
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".mlir"]
    config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                       "Inputs"]
    config.test_source_root = os.path.dirname(os.path.abspath(__file__))
    config.test_exec_root = os.path.join(config.kiln_obj_root, "test", "lit")

    # kiln's tools first, then LLVM 22's (FileCheck, not, count, split-file): never
    # another LLVM's tools that happen to be on PATH.
    llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "KILN_MODELS_DIR"])
    llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
    llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
    llvm_config.use_default_substitutions()

    config.substitutions.append(("%PATH%", config.environment["PATH"]))
    config.substitutions.append(("%kiln_src_root", config.kiln_src_root))
    config.substitutions.append(("%models", config.kiln_models_dir))

    tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
    tools = [
        ToolSubst("kiln-opt", unresolved="fatal"),
        ToolSubst("kiln", unresolved="ignore"),
        ToolSubst("kiln-run", unresolved="ignore"),
        ToolSubst("split-file", unresolved="fatal"),
        ToolSubst("mlir-opt", unresolved="ignore"),
        ToolSubst("mlir-translate", unresolved="ignore"),
    ]
    llvm_config.add_tool_substitutions(tools, tool_dirs)

    if os.path.isdir(config.kiln_models_dir):
        config.available_features.add("models")
