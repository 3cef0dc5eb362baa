# Installation and packaging of gpuprof (docs/internals/install.md). Three components, which are
# also the three Debian packages:
#   lib    libgpuprof.so.<SOVERSION>                                      -> libgpuprof<SOVERSION>
#   dev    headers, libgpuprof.so, libgpuprof.a, gpuprof.pc, CMake package -> libgpuprof-dev
#   tools  the gpuprof CLI, the injection libraries, man pages, completion -> gpuprof
include(CMakePackageConfigHelpers)

set(GP_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprof)
set(GP_PC_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- libraries and headers ----------------------------------------------------------------------
install(TARGETS gpuprof_shared gpuprof_static EXPORT gpuprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY include/gpuprof DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

# ---- what libgpuprof.a needs besides itself -----------------------------------------------------
# The layer libraries link zlib, libiberty (static only), pthread, dl and m (gp_core), libyaml (the
# monitor's configuration), libmicrohttpd (the exporter and the profile server), jansson and nettle
# (the TORCH_TRACE reader of gpuprof compile): src/CMakeLists.txt and the layers'. The readelf
# check of scripts/check-install holds these lists against libgpuprof.so's DT_NEEDED.
set(GP_PC_REQUIRES_PRIVATE "zlib yaml-0.1 libmicrohttpd jansson nettle")
set(GP_PC_REQUIRES_PRIVATE_NOZLIB "yaml-0.1 libmicrohttpd jansson nettle")
set(GP_STATIC_LIBS_PLAIN "yaml microhttpd jansson nettle")
set(GP_STATIC_SYSTEM_LIBS "iberty ${CMAKE_DL_LIBS} m")
set(GP_PC_LIBS_PRIVATE "-liberty -pthread")
foreach(lib ${CMAKE_DL_LIBS} m)
  string(APPEND GP_PC_LIBS_PRIVATE " -l${lib}")
endforeach()

# ---- pkg-config: paths relative to ${pcfiledir} ---------------------------------------------------
# gp_pc_path(DIR OUT): DIR (an install dir, relative to the prefix or absolute) as pkg-config writes it.
function(gp_pc_path dir out)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${GP_PC_INSTALL_DIR}")
  message(FATAL_ERROR "gpuprof: an absolute CMAKE_INSTALL_LIBDIR (${CMAKE_INSTALL_LIBDIR}) makes "
                      "gpuprof.pc not relocatable; give it relative to the prefix")
endif()
file(RELATIVE_PATH GP_PC_PREFIX /gp_prefix/${GP_PC_INSTALL_DIR} /gp_prefix)
string(REGEX REPLACE "/$" "" GP_PC_PREFIX "${GP_PC_PREFIX}")
gp_pc_path(${CMAKE_INSTALL_LIBDIR} GP_PC_LIBDIR)
gp_pc_path(${CMAKE_INSTALL_INCLUDEDIR} GP_PC_INCLUDEDIR)
# gpuprof.pc: libgpuprof.so (its Requires.private/Libs.private: what `pkg-config --static` adds for
# a fully static program); gpuprof-static.pc: libgpuprof.a with the other libraries as they are.
foreach(pc gpuprof gpuprof-static)
  configure_file(cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/install/${pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/install/${pc}.pc DESTINATION ${GP_PC_INSTALL_DIR} COMPONENT dev)
endforeach()

# ---- CMake package: find_package(gpuprof) -------------------------------------------------------
install(EXPORT gpuprofTargets NAMESPACE gpuprof:: DESTINATION ${GP_CMAKE_INSTALL_DIR}
  COMPONENT dev)
configure_package_config_file(cmake/gpuprofConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/gpuprofConfig.cmake INSTALL_DESTINATION ${GP_CMAKE_INSTALL_DIR})
# 0.x: a minor version may change the API; from 1.0 on, SameMajorVersion.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(gp_compat SameMinorVersion)
else()
  set(gp_compat SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/gpuprofConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${gp_compat})
install(FILES ${CMAKE_BINARY_DIR}/install/gpuprofConfig.cmake
  ${CMAKE_BINARY_DIR}/install/gpuprofConfigVersion.cmake
  DESTINATION ${GP_CMAKE_INSTALL_DIR} COMPONENT dev)

# ---- man pages and bash completion, from the built CLI's --help ----------------------------------
option(GP_MAN_PAGES "Generate man pages and bash completion from gpuprof --help" ON)
find_package(Python3 COMPONENTS Interpreter)
if(GP_MAN_PAGES AND NOT Python3_Interpreter_FOUND)
  message(STATUS "gpuprof: python3 not found: no man pages and no bash completion")
elseif(GP_MAN_PAGES AND CMAKE_CROSSCOMPILING)
  message(STATUS "gpuprof: cross-compiling: the CLI cannot run, so no man pages and completion")
elseif(GP_MAN_PAGES)
  set(gp_docs_stamp ${CMAKE_BINARY_DIR}/man/generated.stamp)
  add_custom_command(OUTPUT ${gp_docs_stamp}
    COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/cmake/gen_cli_docs.py
            $<TARGET_FILE:gpuprof_cli> ${PROJECT_VERSION} ${CMAKE_BINARY_DIR}/man/man1
            ${CMAKE_BINARY_DIR}/completion/gpuprof
    COMMAND ${CMAKE_COMMAND} -E touch ${gp_docs_stamp}
    DEPENDS gpuprof_cli ${CMAKE_SOURCE_DIR}/cmake/gen_cli_docs.py
    COMMENT "Man pages and bash completion from gpuprof --help"
    VERBATIM)
  add_custom_target(gpuprof_docs ALL DEPENDS ${gp_docs_stamp})
  install(DIRECTORY ${CMAKE_BINARY_DIR}/man/man1 DESTINATION ${CMAKE_INSTALL_MANDIR}
    COMPONENT tools FILES_MATCHING PATTERN "*.1")
  install(FILES ${CMAKE_BINARY_DIR}/completion/gpuprof
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT tools)
endif()

# ---- Debian packages: cpack --config build/CPackConfig.cmake (scripts/check-install) -------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The gpuprof authors")
set(GP_PACKAGE_CONTACT "The gpuprof authors <gpuprof@users.noreply.invalid>"
  CACHE STRING "Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${GP_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "GPU profiling toolkit: trace analysis, in-process profiler, CUPTI tracer, NVML monitor")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tools lib dev)
set(CPACK_COMPONENT_DEV_DEPENDS lib)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME gpuprof)
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "GPU profiling toolkit: the gpuprof command
 Summaries, HTA-style analyses, flame graphs, timelines, dashboards and comparisons of
 PyTorch-profiler / Kineto traces; a CUPTI tracer for unmodified CUDA programs; an NVML
 monitor and Prometheus exporter. Includes the CUPTI and NVTX injection libraries.")
set(CPACK_DEBIAN_LIB_PACKAGE_NAME libgpuprof${GP_SOVERSION})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_LIB_DESCRIPTION "GPU profiling toolkit: shared library
 The in-process profiler (ranges, CUDA-event timers, memory tracker), the trace model and
 its analyses, and the NVML monitor, as libgpuprof.so.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libgpuprof-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# libgpuprof.a and gpuprof.pc's Requires.private need the -dev packages of what the library links.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "zlib1g-dev, libiberty-dev, libyaml-dev, libmicrohttpd-dev, libjansson-dev, nettle-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DEV_DESCRIPTION "GPU profiling toolkit: development files
 Headers (include/gpuprof), the static library, gpuprof.pc for pkg-config and the CMake
 package (find_package(gpuprof): gpuprof::gpuprof, gpuprof::gpuprof_static).")
include(CPack)
