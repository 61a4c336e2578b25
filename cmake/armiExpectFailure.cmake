# cmake -DPROGRAM=<exe> -DSOURCE=<death test source> -DKIND=CASE|RUN -DCASE=<name>
#       -P armiExpectFailure.cmake
#
# Finds the line `// <KIND>: <CASE> | <args> | <regex>` in SOURCE and runs
# PROGRAM with <args>.  KIND=CASE passes iff the program exits non-zero and
# its stdout+stderr matches <regex>; KIND=RUN passes iff it exits 0 and the
# output matches.  <regex> is a CMake regular expression (everything after
# the second '|', trimmed; it may itself contain '|').  Leading NAME=value
# words of <args> (after the rank count or the hosts x ranks shape, for
# MPI_ and CLUSTER_ kinds) are put in the program's environment.
cmake_minimum_required(VERSION 3.21)

foreach(var PROGRAM SOURCE KIND CASE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "armiExpectFailure.cmake: -D${var}=... is missing")
  endif()
endforeach()

if(NOT EXISTS "${PROGRAM}")
  message(FATAL_ERROR "armiExpectFailure.cmake: ${PROGRAM} does not exist (not built?)")
endif()

file(READ "${SOURCE}" _text)
string(REPLACE "." "\\." _case_re "${CASE}")
string(REGEX MATCH "//[ \t]*${KIND}:[ \t]*${_case_re}[ \t]*\\|[^\n]*" _line "${_text}")
if(_line STREQUAL "")
  message(FATAL_ERROR "armiExpectFailure.cmake: no `// ${KIND}: ${CASE} | ...` line in ${SOURCE}")
endif()
string(REGEX REPLACE "^//[ \t]*${KIND}:[ \t]*${_case_re}[ \t]*\\|" "" _rest "${_line}")
string(FIND "${_rest}" "|" _bar)
if(_bar EQUAL -1)
  message(FATAL_ERROR "armiExpectFailure.cmake: ${SOURCE}: expected `// ${KIND}: <name> | <args> | <regex>`, got\n  ${_line}")
endif()
string(SUBSTRING "${_rest}" 0 ${_bar} _args)
math(EXPR _bar "${_bar} + 1")
string(SUBSTRING "${_rest}" ${_bar} -1 _regex)
string(STRIP "${_args}" _args)
string(STRIP "${_regex}" _regex)

separate_arguments(_argv UNIX_COMMAND "${_args}")
# MPI_CASE / MPI_RUN: the first argument is the rank count (LAUNCHER, mpiexec
# -n, already has it); CLUSTER_CASE / CLUSTER_RUN: it is <hosts>x<ranks per
# host> (LAUNCHER, the testbed's mpirun.sh, has them); environment words may
# follow it.
if(KIND MATCHES "^(MPI|CLUSTER)_")
  list(REMOVE_AT _argv 0)
endif()
set(_env_shown "")
while(_argv)
  list(GET _argv 0 _word)
  if(_word MATCHES "^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
    set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
    string(APPEND _env_shown "${_word} ")
    list(REMOVE_AT _argv 0)
  else()
    break()
  endif()
endwhile()

string(REPLACE ";" " " _shown_args "${_argv}")
set(_cmdline "${_env_shown}${PROGRAM} ${_shown_args}")

if(KIND MATCHES "^(MPI|CLUSTER)_")
  string(REPLACE ";" " " _shown_launcher "${LAUNCHER}")
  set(_cmdline "${_env_shown}${_shown_launcher} ${PROGRAM} ${_shown_args}")
endif()

# Under mpiexec, a launcher killed by a signal before it forwarded a single
# byte says nothing about the program: MPICH 4.0's hydra, tearing down a job
# whose ranks exited at once, was seen killed by SIGPIPE, with no output, once
# in a CI run (mpi.death.bad_options.mpi_with_threads; 0 in 300 reruns).
# Such a run is repeated, twice at most; any other outcome is judged.
set(_attempts 0)
while(TRUE)
  execute_process(
    COMMAND ${LAUNCHER} "${PROGRAM}" ${_argv}
    RESULT_VARIABLE _rc
    OUTPUT_VARIABLE _out
    ERROR_VARIABLE _err
    INPUT_FILE /dev/null
    TIMEOUT 280)
  set(_all "${_out}${_err}")
  math(EXPR _attempts "${_attempts} + 1")
  if(NOT KIND MATCHES "^(MPI|CLUSTER)_" OR _rc MATCHES "^[0-9]+$" OR _rc MATCHES "timeout" OR NOT _all STREQUAL ""
     OR _attempts EQUAL 3)
    break()
  endif()
  message(STATUS "the launcher died of '${_rc}' with no output; running it again")
endwhile()

set(_problems "")
if(_rc MATCHES "timeout")
  string(APPEND _problems "  the program did not finish (${_rc})\n")
elseif(KIND MATCHES "CASE$")
  if(_rc STREQUAL "0")
    string(APPEND _problems "  the program exited 0, a failure was expected\n")
  endif()
else()
  if(NOT _rc STREQUAL "0")
    string(APPEND _problems "  the program exited with '${_rc}', 0 was expected\n")
  endif()
endif()
if(NOT _all MATCHES "${_regex}")
  string(APPEND _problems "  the output does not match the regex\n")
endif()

if(_problems STREQUAL "")
  message(STATUS "ok: `${_cmdline}` exited '${_rc}' and printed a match for: ${_regex}")
else()
  message("command:  ${_cmdline}\n"
          "expected: ${KIND} (CASE: non-zero exit, RUN: exit 0), output matching\n"
          "          ${_regex}\n"
          "got:      exit '${_rc}'\n"
          "---- stdout ----\n${_out}\n"
          "---- stderr ----\n${_err}\n"
          "----------------")
  message(FATAL_ERROR "threads.death ${CASE} failed:\n${_problems}")
endif()
