# Finds LLVM/MLIR 22 and defines stc_link_mlir(target), which links the MLIR
# C API the light way (NOTES-mlir-c-api.md): the static libMLIRCAPI*.a
# archive files, resolved against the shared libMLIR and libLLVM. Linking
# the imported CMake targets instead pulls ~600 archives into a 100+ MB tool.
if(NOT MLIR_DIR AND EXISTS /usr/lib/llvm-22/lib/cmake/mlir)
  set(MLIR_DIR /usr/lib/llvm-22/lib/cmake/mlir)
endif()
find_package(MLIR REQUIRED CONFIG)
message(STATUS "MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")

set(STC_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}" CACHE PATH "FileCheck, not, mlir-opt, ...")
set(STC_LLVM_LIB_DIR "${LLVM_LIBRARY_DIR}")

set(STC_MLIR_CAPI_COMPONENTS
  RegisterEverything Transforms Conversion Func Arith Linalg SCF MemRef Tensor
  Vector Bufferization GPU LLVM NVVM TransformDialect TransformDialectTransforms
  ExecutionEngine Target Interfaces Debug IR)

function(stc_link_mlir target)
  target_include_directories(${target} SYSTEM PRIVATE ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
  set(archives)
  foreach(component ${STC_MLIR_CAPI_COMPONENTS})
    list(APPEND archives "${STC_LLVM_LIB_DIR}/libMLIRCAPI${component}.a")
  endforeach()
  target_link_libraries(${target} PRIVATE
    -Wl,--start-group ${archives} -Wl,--end-group
    "${STC_LLVM_LIB_DIR}/libMLIR.so" "${STC_LLVM_LIB_DIR}/libLLVM.so" stdc++ m)
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH TRUE
    INSTALL_RPATH "${STC_LLVM_LIB_DIR}")
endfunction()

# stc_link_llvm(target): libLLVM alone (LLVM's C API: ORC, target machines),
# for what must start without MLIR (stc-run's driver).
function(stc_link_llvm target)
  target_include_directories(${target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE "${STC_LLVM_LIB_DIR}/libLLVM.so" m)
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH TRUE
    INSTALL_RPATH "${STC_LLVM_LIB_DIR}")
endfunction()
