#===- KilnAddModel.cmake - kiln_add_model() for users' CMake projects -----===#
#
# Included by kilnConfig.cmake (find_package(kiln)); see docs/embedding.md.
#
#   kiln_add_model(<target> MODEL <model.onnx>
#                  [NAME <prefix>]            symbol prefix (default: the model file's
#                                             stem made a C identifier)
#                  [CPU <cpu>[,<cpu>...]]     what `kiln compile --cpu` gets (default:
#                                             KILN_DEFAULT_CPU, else `portable`: one variant
#                                             per CPU level of the architecture, the best
#                                             picked when the program opens the model;
#                                             `native` for a build that runs only on
#                                             machines like the one compiling)
#                  [OPTIONS <kiln compile options>...]   e.g. --shape x=1,3,224,224
#                  [DEPENDS <files>...])      more files the compile reads (external data)
#
# At build time it runs `kiln compile --emit obj --name <prefix> --cpu <cpu>
# [--target <triple>]` for the target of the toolchain in use (kiln_target_triple()
# below; Apple targets get one variant, kiln's default CPU), adds the
# object to <target>, puts the generated header <prefix>.h on its include path
# and links the kiln runtime (kiln::runtime), built from source by the same
# toolchain. The compile re-runs when the model, a DEPENDS file or kiln itself
# changes. Call it in the directory that created <target>.
#
# Several calls may add several models, or the same model under several NAMEs,
# to one target: every symbol of a model carries its prefix.
#===----------------------------------------------------------------------===#
include_guard(GLOBAL)

# kiln_target_triple(<out-var>): the `kiln compile --target` triple for the
# toolchain of this build; empty for a native build (kiln's host default).
#   KILN_TARGET_TRIPLE (cache/normal variable)  wins when set
#   Android (NDK toolchain)  ANDROID_ABI / CMAKE_ANDROID_ARCH_ABI: arm64-v8a ->
#                            aarch64-linux-android<API>, x86_64 -> x86_64-linux-android<API>
#                            (<API>: ANDROID_PLATFORM_LEVEL, else CMAKE_SYSTEM_VERSION)
#   iOS                      CMAKE_OSX_ARCHITECTURES (one of arm64, x86_64; default arm64)
#                            -> arm64-apple-ios<CMAKE_OSX_DEPLOYMENT_TARGET>, with
#                            -simulator when CMAKE_OSX_SYSROOT names a simulator SDK
#   Linux, cross             CMAKE_SYSTEM_PROCESSOR aarch64/arm64 -> aarch64-linux-gnu,
#                            x86_64/AMD64 -> x86_64-linux-gnu
#   Darwin, cross            arm64 -> arm64-apple-macos, x86_64 -> x86_64-apple-macos
function(kiln_target_triple out)
  if(KILN_TARGET_TRIPLE)
    set(${out} "${KILN_TARGET_TRIPLE}" PARENT_SCOPE)
    return()
  endif()
  string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" proc)
  set(triple "")
  if(CMAKE_SYSTEM_NAME STREQUAL "Android")
    set(abi "${ANDROID_ABI}")
    if(NOT abi)
      set(abi "${CMAKE_ANDROID_ARCH_ABI}")
    endif()
    set(api "${ANDROID_PLATFORM_LEVEL}")
    if(NOT api)
      set(api "${CMAKE_SYSTEM_VERSION}")
    endif()
    if(NOT api MATCHES "^[0-9]+$")
      message(FATAL_ERROR "kiln: cannot tell the Android API level (ANDROID_PLATFORM_LEVEL "
                          "or CMAKE_SYSTEM_VERSION, got '${api}'); set KILN_TARGET_TRIPLE")
    endif()
    if(abi STREQUAL "arm64-v8a")
      set(triple "aarch64-linux-android${api}")
    elseif(abi STREQUAL "x86_64")
      set(triple "x86_64-linux-android${api}")
    else()
      message(FATAL_ERROR "kiln: Android ABI '${abi}' is not supported "
                          "(arm64-v8a and x86_64 are); set KILN_TARGET_TRIPLE to try another")
    endif()
  elseif(CMAKE_SYSTEM_NAME STREQUAL "iOS")
    set(archs "${CMAKE_OSX_ARCHITECTURES}")
    if(NOT archs)
      set(archs arm64)
    endif()
    list(LENGTH archs count)
    if(count GREATER 1)
      message(FATAL_ERROR "kiln: one architecture per build (CMAKE_OSX_ARCHITECTURES is "
                          "'${archs}'); build each architecture separately")
    endif()
    if(NOT archs MATCHES "^(arm64|x86_64)$")
      message(FATAL_ERROR "kiln: iOS architecture '${archs}' is not supported (arm64, x86_64 are)")
    endif()
    set(triple "${archs}-apple-ios${CMAKE_OSX_DEPLOYMENT_TARGET}")
    if(CMAKE_OSX_SYSROOT MATCHES "[Ss]imulator" OR archs STREQUAL "x86_64")
      string(APPEND triple "-simulator")
    endif()
  elseif(NOT CMAKE_CROSSCOMPILING)
    set(triple "")
  elseif(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    if(proc MATCHES "^(aarch64|arm64)$")
      set(triple "aarch64-linux-gnu")
    elseif(proc MATCHES "^(x86_64|amd64)$")
      set(triple "x86_64-linux-gnu")
    else()
      message(FATAL_ERROR "kiln: Linux processor '${CMAKE_SYSTEM_PROCESSOR}' is not supported "
                          "(aarch64, x86_64 are); set KILN_TARGET_TRIPLE to try another")
    endif()
  elseif(CMAKE_SYSTEM_NAME STREQUAL "Darwin")
    if(proc MATCHES "^(arm64|aarch64)$")
      set(triple "arm64-apple-macos")
    elseif(proc STREQUAL "x86_64")
      set(triple "x86_64-apple-macos")
    else()
      message(FATAL_ERROR "kiln: macOS processor '${CMAKE_SYSTEM_PROCESSOR}' is not supported")
    endif()
  else()
    message(FATAL_ERROR "kiln: cannot derive a target triple for system '${CMAKE_SYSTEM_NAME}' "
                        "(processor '${CMAKE_SYSTEM_PROCESSOR}'); set KILN_TARGET_TRIPLE")
  endif()
  set(${out} "${triple}" PARENT_SCOPE)
endfunction()

# The kiln runtime, compiled from source by this build's toolchain (once).
function(_kiln_add_runtime)
  if(TARGET kiln_runtime)
    return()
  endif()
  if(NOT EXISTS "${KILN_RUNTIME_SOURCE_DIR}/CMakeLists.txt")
    message(FATAL_ERROR "kiln: the runtime sources are missing (${KILN_RUNTIME_SOURCE_DIR})")
  endif()
  add_subdirectory("${KILN_RUNTIME_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/_kiln_runtime")
endfunction()

function(kiln_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;NAME;CPU" "OPTIONS;DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model: unknown arguments '${ARG_UNPARSED_ARGUMENTS}' "
                        "(kiln_add_model(<target> MODEL <file> [NAME <prefix>] [CPU <cpu>] "
                        "[OPTIONS ...] [DEPENDS ...]))")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "kiln_add_model: '${target}' is not a target")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL <file.onnx> is required")
  endif()
  if(NOT KILN_EXECUTABLE)
    message(FATAL_ERROR "kiln_add_model: KILN_EXECUTABLE is not set (use find_package(kiln))")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  # A mistyped path fails here, not at build time with the build tool's "missing and
  # no known rule"; a model another rule of this directory writes is fine.
  get_source_file_property(model_generated "${model}" GENERATED)
  if(NOT EXISTS "${model}" AND NOT model_generated)
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL '${ARG_MODEL}' does not exist "
                        "(looked for ${model}; a relative path is taken from "
                        "${CMAKE_CURRENT_SOURCE_DIR}). A model written at build time must be "
                        "the OUTPUT of an add_custom_command() in this directory.")
  endif()
  if(IS_DIRECTORY "${model}")
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL '${ARG_MODEL}' is a directory, "
                        "not an .onnx file")
  endif()
  if(ARG_NAME)
    set(name "${ARG_NAME}")
  else()
    get_filename_component(name "${model}" NAME_WE)
  endif()
  string(MAKE_C_IDENTIFIER "${name}" cname)
  if(NOT cname STREQUAL name)
    if(ARG_NAME)
      message(FATAL_ERROR "kiln_add_model(${target}): NAME '${name}' is no C identifier "
                          "(it prefixes the model's C symbols: letters, digits and _); "
                          "for example NAME ${cname}")
    else()
      message(FATAL_ERROR "kiln_add_model(${target}): the model file's name '${name}' is "
                          "no C identifier, so it cannot be the symbol prefix; pass "
                          "NAME <prefix> (for example NAME ${cname})")
    endif()
  endif()
  get_target_property(names ${target} KILN_MODEL_NAMES)
  if(names AND name IN_LIST names)
    message(FATAL_ERROR "kiln_add_model(${target}): a model named '${name}' is already in "
                        "this target; give the second one another NAME")
  endif()
  set_property(TARGET ${target} APPEND PROPERTY KILN_MODEL_NAMES "${name}")

  kiln_target_triple(triple)
  set(target_args "")
  set(target_text "the host")
  if(triple)
    set(target_args --target "${triple}")
    set(target_text "${triple}")
  endif()

  # The CPU variants: CPU, else KILN_DEFAULT_CPU, else `portable` (what ships: the
  # program opens on every CPU of the architecture and runs the best variant). A
  # --cpu in OPTIONS is left alone. Apple objects hold one variant (Mach-O has no
  # relocatable link in lld): kiln's default CPU.
  set(cpu_args "")
  set(cpu_text "")
  if(NOT "--cpu" IN_LIST ARG_OPTIONS AND NOT ARG_OPTIONS MATCHES "(^|;)--cpu=")
    if(ARG_CPU)
      set(cpu "${ARG_CPU}")
    elseif(KILN_DEFAULT_CPU)
      set(cpu "${KILN_DEFAULT_CPU}")
    elseif(triple MATCHES "apple")
      set(cpu "")
    else()
      set(cpu "portable")
    endif()
    if(cpu)
      set(cpu_args --cpu "${cpu}")
      set(cpu_text ", cpu ${cpu}")
    endif()
  elseif(ARG_CPU)
    message(FATAL_ERROR "kiln_add_model(${target}): CPU and a --cpu in OPTIONS both given; "
                        "keep one")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/kiln_models/${name}")
  file(MAKE_DIRECTORY "${dir}")
  set(object "${dir}/${name}.o")
  set(header "${dir}/${name}.h")
  add_custom_command(
    OUTPUT "${object}" "${header}"
    COMMAND "${KILN_EXECUTABLE}" compile "${model}" -o "${object}" --emit obj
            --name "${name}" ${target_args} ${cpu_args} ${ARG_OPTIONS}
    DEPENDS "${model}" "${KILN_EXECUTABLE}" ${ARG_DEPENDS}
    COMMENT "kiln: compiling ${ARG_MODEL} as '${name}' for ${target_text}${cpu_text}"
    VERBATIM)
  set_source_files_properties("${object}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set_source_files_properties("${header}" PROPERTIES GENERATED TRUE HEADER_FILE_ONLY TRUE)
  target_sources(${target} PRIVATE "${object}" "${header}")

  _kiln_add_runtime()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "OBJECT_LIBRARY")
    target_include_directories(${target} PUBLIC "${dir}")
    target_link_libraries(${target} PUBLIC kiln::runtime)
  else()
    target_include_directories(${target} PRIVATE "${dir}")
    target_link_libraries(${target} PRIVATE kiln::runtime)
  endif()
endfunction()
