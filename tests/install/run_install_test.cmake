# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... [-DCXX=...] [-DCUDA=...] -P this:
# installs strop from BUILD_DIR into WORK_DIR/prefix, builds tests/install against it with
# find_package(strop) and runs the program. Any failing step fails the test.
function(run_step)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    list(JOIN ARGV " " command)
    message(FATAL_ERROR "failed (${result}): ${command}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
file(GLOB_RECURSE package_files ${WORK_DIR}/prefix/*/stropConfig.cmake)
if(NOT EXISTS ${WORK_DIR}/prefix/include/strop/strop.hpp OR NOT package_files)
  message(FATAL_ERROR "the headers or stropConfig.cmake were not installed")
endif()

if(EXISTS ${WORK_DIR}/prefix/bin/strop)  # the installed tool runs (finds its libraries)
  run_step(${WORK_DIR}/prefix/bin/strop --version)
endif()

set(configure ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
if(CXX)
  list(APPEND configure -DCMAKE_CXX_COMPILER=${CXX})
endif()
if(CUDA)  # where FindCUDAToolkit looks for the toolkit strop was built with
  list(APPEND configure -DCUDAToolkit_ROOT=${CUDA})
endif()
run_step(${configure})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/strop_consumer ${WORK_DIR}/strop_consumer.h5)
