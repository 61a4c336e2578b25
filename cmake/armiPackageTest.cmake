# cmake -DBUILD_DIR=<armi build tree> -DPREFIX=<install prefix>
#       -DCONSUMER_SOURCE=<tests/package> -DCONSUMER_BINARY=<dir>
#       -DGENERATOR=<generator> -DCXX_COMPILER=<c++> [-DCONFIG=<config>]
#       -P armiPackageTest.cmake
#
# (a) installs the armi build tree into PREFIX, (b) configures and builds the
# consumer project in CONSUMER_SOURCE with find_package(armi) against it,
# (c) runs the consumer on 1, 3 and 16 locations (and, with MPI, the armi::mpi
# consumer on 2 ranks).
cmake_minimum_required(VERSION 3.21)

foreach(var BUILD_DIR PREFIX CONSUMER_SOURCE CONSUMER_BINARY GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "armiPackageTest.cmake: -D${var}=... is missing")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(step what)
  string(REPLACE ";" " " _shown "${ARGN}")
  message(STATUS "package test: ${what}\n  ${_shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc INPUT_FILE /dev/null)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "package test: '${what}' failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BINARY}")

step("install armi into ${PREFIX}"
     "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}")

foreach(f include/armi/armi.hpp lib/cmake/armi/armiConfig.cmake
          lib/cmake/armi/armiConfigVersion.cmake lib/cmake/armi/armiTargets.cmake)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "package test: ${PREFIX}/${f} was not installed")
  endif()
endforeach()

step("configure the consumer"
     "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE}" -B "${CONSUMER_BINARY}"
     -G "${GENERATOR}"
     "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_BUILD_TYPE=${CONFIG}"
     "-DCMAKE_PREFIX_PATH=${PREFIX}"
     # Only the prefix above may provide armi.
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

step("build the consumer"
     "${CMAKE_COMMAND}" --build "${CONSUMER_BINARY}" --config "${CONFIG}")

find_program(_exe armi_package_consumer
             PATHS "${CONSUMER_BINARY}" "${CONSUMER_BINARY}/${CONFIG}" NO_DEFAULT_PATH)
if(NOT _exe)
  message(FATAL_ERROR "package test: the consumer program was not built")
endif()
# 1 to 16 locations (16 outnumber the cores of a small machine).
foreach(n 1 3 16)
  step("run the consumer on ${n} locations" "${_exe}" --armi-locations=${n})
endforeach()

# armi built with MPI: the armi::mpi consumer runs on two ranks.
find_program(_exe_mpi armi_package_consumer_mpi
             PATHS "${CONSUMER_BINARY}" "${CONSUMER_BINARY}/${CONFIG}" NO_DEFAULT_PATH)
if(DEFINED MPIEXEC AND NOT MPIEXEC STREQUAL "")
  if(NOT _exe_mpi)
    message(FATAL_ERROR "package test: armi was built with MPI but armi::mpi gave no consumer program")
  endif()
  step("run the armi::mpi consumer on 2 ranks" "${MPIEXEC}" -n 2 "${_exe_mpi}" --armi-backend=mpi)
endif()
message(STATUS "package test: ok")
