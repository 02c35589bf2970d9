# A sample linked without the dashboard: --report exits 2 before training,
# names the reason, and writes no picture.
#   cmake -DSAMPLE=<binary> [-DEMULATOR=<runner>] -DWORK=<dir> -P check_no_dashboard.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${EMULATOR} ${SAMPLE} --epochs 1 --report ${WORK}/storm.png
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit status 2, got ${rc}:\n${out}${err}")
endif()
if(NOT err MATCHES "this build has no dashboard")
  message(FATAL_ERROR "the refusal does not say why:\n${err}")
endif()
if(EXISTS ${WORK}/storm.png)
  message(FATAL_ERROR "a picture was written")
endif()
