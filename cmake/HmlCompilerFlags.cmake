# hml_target_defaults(<target>): what every C and C++ target of the project
# is built with, set here once: the warning set, and the one feature-test
# macro set (POSIX.1-2008 plus glibc's defaults; a file that needs more,
# _GNU_SOURCE for dladdr or pipe2, says so at its top).
function(hml_target_defaults target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    message(FATAL_ERROR "hml_target_defaults: ${target} is an interface library")
  endif()
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  if(HML_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# hml_include_root(<target> <qualified> <folder>): the folder-qualified
# include root of one component. Its headers are included as
# "<qualified>/x.h" ("store/records.h", "search/opt/bo.h"), and they are
# found only through a directory of the build tree that holds a link to
# that folder and nothing else, given to <target> and to what links it. A
# target that does not link the component has no such directory, so an
# include across a forbidden arrow does not compile (tests/arrows).
function(hml_include_root target qualified folder)
  set(root "${PROJECT_BINARY_DIR}/include-roots/${target}")
  get_filename_component(parent "${root}/${qualified}" DIRECTORY)
  file(MAKE_DIRECTORY "${parent}")
  file(CREATE_LINK "${folder}" "${root}/${qualified}" SYMBOLIC)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE "$<BUILD_INTERFACE:${root}>")
  else()
    target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${root}>")
  endif()
endfunction()

if(HML_SANITIZE)
  add_compile_options(-fsanitize=${HML_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${HML_SANITIZE})
endif()

# Fuzzing: every object is instrumented for libFuzzer's coverage and
# checked by AddressSanitizer and UndefinedBehaviorSanitizer; only the
# fuzz executables link libFuzzer's main.
if(HML_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# hml_add_plugin(<target> FILE <name> ENTRY <symbol> SOURCES <src>... LINKS <lib>...):
# a run-time loaded plugin (runtime/loader/loader.h): the MODULE <name>.so,
# built in the build tree's runtime/ (where libhml and the hml CLI look for
# plugins) and installed in LIBDIR/hml (where the installed ones do). It
# exports nothing but its entry point (a version script made here), so its
# own copies of lib/core never mix with the program's, and it is linked
# with --no-undefined: a piece it lacks fails the build, not the dlopen.
function(hml_add_plugin target)
  cmake_parse_arguments(P "" "FILE;ENTRY" "SOURCES;LINKS" ${ARGN})
  set(map "${PROJECT_BINARY_DIR}/plugin-maps/${P_FILE}.map")
  file(CONFIGURE OUTPUT "${map}" CONTENT
       "/* ${P_FILE}.so exports its entry point only (cmake/HmlCompilerFlags.cmake). */\n{\n\tglobal: ${P_ENTRY};\n\tlocal: *;\n};\n")
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${P_FILE} PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/runtime" LINK_DEPENDS "${map}")
  target_link_libraries(${target} PRIVATE ${P_LINKS})
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}" -Wl,--no-undefined)
  hml_target_defaults(${target})
  install(TARGETS ${target} LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/hml")
endfunction()

# hml_fortran_defaults(<target>): the Fortran counterpart of
# hml_target_defaults(): standard Fortran 2018 (assumed-rank arrays,
# is_contiguous) with gfortran's warnings; -Werror with HML_WERROR. Only
# on the target's Fortran sources: a C file beside them takes
# hml_target_defaults().
function(hml_fortran_defaults target)
  if(CMAKE_Fortran_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:Fortran>:-std=f2018 -Wall -Wextra>)
    if(HML_WERROR)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:Fortran>:-Werror>)
    endif()
  endif()
endfunction()
