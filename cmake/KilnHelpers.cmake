# Helpers shared by the compiler's libraries.

# kiln_add_compiler_library(<name> <sources...> [DEPENDS <tablegen targets>] [LINK <libs>])
# A static library of compiler code. It links the LLVM and MLIR shared libraries (never the
# hundreds of static component libraries), so links stay sub-second and the process holds one
# copy of MLIR.
function(kiln_add_compiler_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK} MLIR LLVM)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
endfunction()
