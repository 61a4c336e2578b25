# cmake -DSOURCE=<file.cpp> -DFLAGS_FILE=<armi_compile_fail_flags.cmake>
#       -P armiExpectCompileError.cmake
#
# Compiles SOURCE with -fsyntax-only and the flags armi's users get.  Passes
# iff the compiler FAILS and its output matches every `// EXPECT: <regex>`
# line of SOURCE (CMake regular expressions).
cmake_minimum_required(VERSION 3.21)

foreach(var SOURCE FLAGS_FILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "armiExpectCompileError.cmake: -D${var}=... is missing")
  endif()
endforeach()
include("${FLAGS_FILE}")   # ARMI_CXX_COMPILER, ARMI_CXX_FLAGS

file(READ "${SOURCE}" _text)
string(REGEX MATCHALL "//[ \t]*EXPECT:[^\n]*" _lines "${_text}")
set(_regexes "")
foreach(line IN LISTS _lines)
  string(REGEX REPLACE "^//[ \t]*EXPECT:" "" _re "${line}")
  string(STRIP "${_re}" _re)
  list(APPEND _regexes "${_re}")
endforeach()
if(NOT _regexes)
  message(FATAL_ERROR "armiExpectCompileError.cmake: no `// EXPECT: <regex>` line in ${SOURCE}")
endif()

execute_process(
  COMMAND "${ARMI_CXX_COMPILER}" ${ARMI_CXX_FLAGS} -fdiagnostics-color=never "${SOURCE}"
  RESULT_VARIABLE _rc
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _out
  INPUT_FILE /dev/null
  TIMEOUT 280)

string(REPLACE ";" " " _shown_flags "${ARMI_CXX_FLAGS}")
set(_problems "")
if(_rc STREQUAL "0")
  string(APPEND _problems "  it compiled, a compile error was expected\n")
elseif(_rc MATCHES "timeout")
  string(APPEND _problems "  the compiler did not finish (${_rc})\n")
endif()
foreach(re IN LISTS _regexes)
  if(NOT _out MATCHES "${re}")
    string(APPEND _problems "  the compiler output does not match: ${re}\n")
  endif()
endforeach()

if(_problems STREQUAL "")
  message(STATUS "ok: ${SOURCE} fails to compile as expected")
else()
  message("command: ${ARMI_CXX_COMPILER} ${_shown_flags} ${SOURCE}\n"
          "exit:    '${_rc}'\n"
          "---- compiler output ----\n${_out}\n"
          "-------------------------")
  message(FATAL_ERROR "compile_fail test failed:\n${_problems}")
endif()
