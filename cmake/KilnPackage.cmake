# kiln's CMake package (find_package(kiln)), usable from the build tree and
# installed: kilnConfig.cmake + KilnAddModel.cmake, the compiler, the runtime's
# headers and its sources (users' toolchains compile them).
set(KILN_VERSION 0.1.0)

# Build tree: -Dkiln_DIR=<build>
set(KILN_CONFIG_PRELUDE "")
set(KILN_CONFIG_EXECUTABLE "${PROJECT_BINARY_DIR}/bin/kiln")
set(KILN_CONFIG_RUNTIME_DIR "${PROJECT_SOURCE_DIR}/runtime")
set(KILN_CONFIG_FUNCTIONS "${PROJECT_SOURCE_DIR}/cmake/KilnAddModel.cmake")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
               ${PROJECT_BINARY_DIR}/kilnConfig.cmake @ONLY)

# Installed: <prefix>/lib/cmake/kiln, paths relative to it (relocatable).
set(KILN_CONFIG_PRELUDE
    "get_filename_component(_kiln_prefix \"\${CMAKE_CURRENT_LIST_DIR}/../../..\" ABSOLUTE)")
set(KILN_CONFIG_EXECUTABLE "\${_kiln_prefix}/bin/kiln")
set(KILN_CONFIG_RUNTIME_DIR "\${_kiln_prefix}/share/kiln/runtime")
set(KILN_CONFIG_FUNCTIONS "\${CMAKE_CURRENT_LIST_DIR}/KilnAddModel.cmake")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kilnConfig.cmake.in
               ${PROJECT_BINARY_DIR}/install-config/kilnConfig.cmake @ONLY)

include(CMakePackageConfigHelpers)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  VERSION ${KILN_VERSION} COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)

install(FILES ${PROJECT_BINARY_DIR}/install-config/kilnConfig.cmake
              ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/KilnAddModel.cmake
        DESTINATION lib/cmake/kiln)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cmake/toolchains DESTINATION share/kiln)
install(FILES ${PROJECT_SOURCE_DIR}/runtime/CMakeLists.txt DESTINATION share/kiln/runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/src ${PROJECT_SOURCE_DIR}/runtime/include
        DESTINATION share/kiln/runtime)
# The headers generated code and packaging need (kiln finds them at ../include).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/kiln DESTINATION include)
if(TARGET kiln)
  # The installed kiln still finds the MLIR/LLVM shared libraries it was built with.
  set_target_properties(kiln PROPERTIES INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
  install(TARGETS kiln RUNTIME DESTINATION bin)
endif()
