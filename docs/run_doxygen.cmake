# cmake -DDOXYGEN=<doxygen> -DDOXYFILE=<Doxyfile> -DLOGFILE=<warnings log> -P run_doxygen.cmake
#
# Runs doxygen (used by the armi_docs target and the docs.reference test).
# The Doxyfile sends every warning to LOGFILE and sets WARN_AS_ERROR =
# FAIL_ON_WARNINGS; this prints the warnings and fails if there were any, so
# an undocumented public name fails the test with its file and line.
foreach(var DOXYGEN DOXYFILE LOGFILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_doxygen.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE "${LOGFILE}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(warnings "")
if(EXISTS "${LOGFILE}")
  file(READ "${LOGFILE}" warnings)
  string(STRIP "${warnings}" warnings)
endif()
if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  string(REGEX MATCHALL "\n" _lines "\n${warnings}")
  list(LENGTH _lines count)
  message("${out}${err}")
  message("${warnings}\n")
  message(FATAL_ERROR
    "doxygen exited with ${rc} and ${count} warning line(s) (above).  Document each "
    "public name it names with a /// comment (first sentence: what it is), or move "
    "it into a detail namespace.")
endif()
message(STATUS "API reference: no doxygen warnings")
