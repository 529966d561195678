# DESIGN.md: sm_90 first, and keep sm_80 (the A100) compiling. Where sm_80 is not among the
# architectures built (scripts/build.sh and CI build sm_90 only), every CUDA source of the
# library is also compiled to sm_80 PTX and assembled by ptxas, without host code or objects to
# link (about 3 minutes on 2 cores): device code that needs sm_90 and has no fallback (thread-
# block clusters, griddepcontrol, wgmma outside `#if __CUDA_ARCH__ >= 900`) fails the build.
# Included from CMakeLists.txt after the strop target; STROP_CUDA_SOURCES lists its sources.
set(strop_sm80_sources ${STROP_CUDA_SOURCES})
list(FILTER strop_sm80_sources INCLUDE REGEX "\\.cu$")
add_library(strop_sm80_ptx OBJECT ${strop_sm80_sources})
set_target_properties(strop_sm80_ptx PROPERTIES CUDA_PTX_COMPILATION ON
                                                CUDA_ARCHITECTURES 80-virtual)
target_include_directories(strop_sm80_ptx PRIVATE
  $<TARGET_PROPERTY:strop,INCLUDE_DIRECTORIES>)
target_compile_definitions(strop_sm80_ptx PRIVATE STROP_HAVE_CUDA=1)
target_compile_features(strop_sm80_ptx PRIVATE cxx_std_20)  # as strop (no -std=c++17 added)
target_link_libraries(strop_sm80_ptx PRIVATE Eigen3::Eigen CUDA::cudart CUDA::cublas
                                             CUDA::cusolver)
strop_warnings(strop_sm80_ptx)

find_program(STROP_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR} REQUIRED)
set(strop_sm80_stamp ${CMAKE_CURRENT_BINARY_DIR}/strop_sm80_check.stamp)
add_custom_command(
  OUTPUT ${strop_sm80_stamp}
  COMMAND ${CMAKE_COMMAND} -DPTXAS=${STROP_PTXAS} "-DFILES=$<TARGET_OBJECTS:strop_sm80_ptx>"
          -DSTAMP=${strop_sm80_stamp} -P ${CMAKE_CURRENT_LIST_DIR}/sm80_ptxas.cmake
  DEPENDS strop_sm80_ptx $<TARGET_OBJECTS:strop_sm80_ptx> ${CMAKE_CURRENT_LIST_DIR}/sm80_ptxas.cmake
  COMMENT "ptxas: the library's device code for sm_80"
  VERBATIM)
add_custom_target(strop_sm80_check ALL DEPENDS ${strop_sm80_stamp})
