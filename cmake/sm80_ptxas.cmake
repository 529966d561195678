# cmake -DPTXAS=... -DFILES="a.ptx;b.ptx" -DSTAMP=... -P sm80_ptxas.cmake: assembles each PTX
# file for sm_80 (the output is dropped) and touches STAMP when all of them assemble.
foreach(ptx IN LISTS FILES)
  execute_process(COMMAND ${PTXAS} -arch=sm_80 ${ptx} -o ${STAMP}.cubin
                  RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ptxas for sm_80 failed on ${ptx}:\n${errors}")
  endif()
endforeach()
file(REMOVE ${STAMP}.cubin)
file(TOUCH ${STAMP})
