# -DKILN_SANITIZE=address,undefined (any list clang or gcc take after
# -fsanitize=): builds everything of kiln's own (compiler, runtime, kiln-run,
# tests) with those sanitizers. Use a separate build folder:
#   cmake -S . -B build-asan -G Ninja -DKILN_SANITIZE=address,undefined \
#     -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
# Models compiled by kiln are not instrumented (they are generated code); the
# runtime that opens and checks them is. See docs/reliability.md.
set(KILN_SANITIZE "" CACHE STRING
    "Sanitizers for kiln's own code, e.g. address,undefined (empty: none)")
if(KILN_SANITIZE)
  message(STATUS "kiln: building with -fsanitize=${KILN_SANITIZE}")
  add_compile_options(-fsanitize=${KILN_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KILN_SANITIZE})
endif()
