# StcInstall.cmake - `cmake --install <build> --prefix <p>` (README "Install").
# Included last from the top-level CMakeLists.txt; adds install rules for
# targets defined elsewhere and changes nothing about how they build.
#
#   <p>/bin/                stc-prof, stc-cache (+ stc-opt, stc-run with the compiler)
#   <p>/lib/stc/            stc-run-compiler.so (stc-run compiles with it)
#   <p>/lib/                libstc_rt.so, libstc_rt.a (+ libstc_core.a, which
#                           the static runtime needs), libstc_rt_aot.a,
#                           libstc_runner_utils.a
#   <p>/include/stc/        the runtime's public headers (rt*.h and what they include)
#   <p>/lib/cmake/stc/      stcConfig.cmake, stcConfigVersion.cmake,
#                           stcTargets.cmake (stc::rt, stc::rt_static, stc::core,
#                           stc::runner_utils, stc::opt), StcAOT.cmake
#                           (stc_add_aot_executable)
#   <p>/lib/pkgconfig/      stc-rt.pc (the runtime), stc-aot.pc (stc-rt plus
#                           what AOT-compiled models link: libstc_runner_utils, libomp)
# (lib/ is CMAKE_INSTALL_LIBDIR.) Every file locates the prefix relative to
# itself, so an installed tree can be moved or installed with --prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/stc")
set(STC_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
# Relative paths from the cmake and pkgconfig folders back to the prefix.
file(RELATIVE_PATH STC_CMAKEDIR_TO_PREFIX "/stc-prefix/${STC_INSTALL_CMAKEDIR}" "/stc-prefix")
file(RELATIVE_PATH STC_PCDIR_TO_PREFIX "/stc-prefix/${STC_INSTALL_PKGCONFIGDIR}" "/stc-prefix")

# Where AOT programs find libomp (and, asked for, MLIR's runner utils; StcAOT.cmake).
if(STC_BUILD_COMPILER AND STC_LLVM_LIB_DIR)
  set(STC_INSTALL_LLVM_LIBDIR "${STC_LLVM_LIB_DIR}")
else()
  set(STC_INSTALL_LLVM_LIBDIR "/usr/lib/llvm-22/lib")
endif()

# ---- tools ----
set(_stc_tools stc-prof stc-cache)
if(STC_BUILD_COMPILER)
  list(APPEND _stc_tools stc-opt stc-run)
endif()
install(TARGETS ${_stc_tools} RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT tools)
if(STC_BUILD_COMPILER)
  # stc-run's compiler and JIT modules, where stc-run looks for them
  # (tools/stc-run).
  install(TARGETS stc-run-compiler stc-run-jit
    LIBRARY DESTINATION "${STC_RUN_COMPILER_DIR}" COMPONENT tools)
endif()

# ---- libraries ----
install(TARGETS stc_rt
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime)
# The static runtime is built as libstc_rt_static.a; installed as libstc_rt.a
# next to the shared one, with libstc_core.a, which it depends on.
install(FILES "$<TARGET_FILE:stc_rt_static>" DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RENAME "${CMAKE_STATIC_LIBRARY_PREFIX}stc_rt${CMAKE_STATIC_LIBRARY_SUFFIX}" COMPONENT runtime)
install(TARGETS stc_core ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime)
# The AOT start-up stub (runtime/aot_boot.c), found beside libstc_rt.so by
# StcAOT.cmake (STC_RT_LIBRARY) and test/e2e/aot-build.sh.
install(TARGETS stc_rt_aot ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime)
# MLIR's runner utilities without libMLIR (runtime/runner_utils.c), which
# AOT executables that print link instead of upstream's.
install(TARGETS stc_runner_utils ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime)

# ---- public headers: the runtime's API (stc/rt.h and what it and the
# other rt_*.h headers include); the core's internals (profile.h, hash.h,
# tuner_cache.h, input_bounds.h) stay private. ----
install(FILES
  include/stc/rt.h include/stc/rt_dispatch.h include/stc/rt_region.h
  include/stc/rt_blas.h include/stc/rt_gpu.h
  include/stc/status.h include/stc/hints.h include/stc/tuner.h
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/stc" COMPONENT runtime)

# ---- CMake package ----
set(STC_INSTALL_HAS_COMPILER ${STC_BUILD_COMPILER})
if(STC_INSTALL_HAS_COMPILER)
  set(STC_INSTALL_HAS_COMPILER TRUE)
else()
  set(STC_INSTALL_HAS_COMPILER FALSE)
endif()
set(_stc_pkg "${CMAKE_CURRENT_BINARY_DIR}/stc-package")
configure_package_config_file(cmake/install/stcConfig.cmake.in "${_stc_pkg}/stcConfig.cmake"
  INSTALL_DESTINATION "${STC_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${_stc_pkg}/stcConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
configure_file(cmake/install/stcTargets.cmake.in "${_stc_pkg}/stcTargets.cmake" @ONLY)
install(FILES "${_stc_pkg}/stcConfig.cmake" "${_stc_pkg}/stcConfigVersion.cmake"
  "${_stc_pkg}/stcTargets.cmake" cmake/StcAOT.cmake
  DESTINATION "${STC_INSTALL_CMAKEDIR}" COMPONENT runtime)

# ---- pkg-config ----
configure_file(cmake/install/stc-rt.pc.in "${_stc_pkg}/stc-rt.pc" @ONLY)
configure_file(cmake/install/stc-aot.pc.in "${_stc_pkg}/stc-aot.pc" @ONLY)
install(FILES "${_stc_pkg}/stc-rt.pc" "${_stc_pkg}/stc-aot.pc"
  DESTINATION "${STC_INSTALL_PKGCONFIGDIR}" COMPONENT runtime)
