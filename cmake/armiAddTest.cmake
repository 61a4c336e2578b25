# How armi's tests are registered; tests/CMakeLists.txt includes this and
# makes one call per test program (the model is HPX's add_hpx_test):
#
#   armi_add_test_program(<target> GROUP <group> SOURCES <src>... [CATCH_MAIN] [HEADER_ONLY])
#       builds one test program the way all of them are built.
#   armi_add_matrix_test(<stem> [PROGRAM <target>] [BACKENDS <backend>...] [ARGS <arg>...]
#                        [TIMEOUT <s>] [PROPERTIES <prop> <value>...])
#       registers every run of a matrix program: each backend x shape x
#       aggregation that the ARMI_TEST_* cache variables name.
#   armi_add_test_run(<name> PROGRAM <target> BACKEND <backend> ...)
#       registers one run of a program on one backend and shape.
#   armi_add_death_tests(<stem> SOURCE <src> [TIMEOUT <s>])
#       builds a death-test program and registers its // CASE: lines.
#   armi_cluster_command(<out> <hosts> <ranks per host>)
#       the launcher of a run across emulated hosts.
#
# The functions read the caller's variables (tests/CMakeLists.txt sets them):
# _armi_lib (armi::mpi_header_only or armi::header_only), ARMI_TEST_SEPARATE_COMPILATION,
# ARMI_TEST_TIMEOUT, ARMI_TEST_HAVE_BOOST_ASIO, ARMI_TEST_CLUSTER, ARMI_CLUSTER_DIR
# and the shape lists.
include_guard(GLOBAL)

# The folder of armiExpectFailure.cmake (this file's own folder).
set(_armi_add_test_scripts "${CMAKE_CURRENT_LIST_DIR}")

# armi_mpi_command(<out> <np>): mpiexec -n <np> [preflags], to put before a
# program and its arguments.
function(armi_mpi_command out np)
  set(${out} "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS} PARENT_SCOPE)
endfunction()

# armi_cluster_command(<out> <hosts> <ranks per host>): the testbed's
# mpirun.sh (ARMI_CLUSTER_DIR) starting that many ranks on each of the first
# <hosts> emulated hosts, under its own time limit (ARMI_TEST_TIMEOUT), to
# put before a program and its arguments.
function(armi_cluster_command out hosts ppn)
  set(${out} env PPN=${ppn} TIMEOUT=${ARMI_TEST_TIMEOUT} "${ARMI_CLUSTER_DIR}/mpirun.sh" ${hosts} PARENT_SCOPE)
endfunction()

# armi_add_test_program(<target> GROUP <group> SOURCES <src>... [CATCH_MAIN] [HEADER_ONLY])
# An executable linked with armi (armi::mpi_header_only where MPI is found), the Catch2
# main object with CATCH_MAIN, and the runtime compiled once
# (armi_test_runtime) unless it is header-only: HEADER_ONLY, or a source with
# the line `// armi-test: header-only`.  It joins the build-only target
# armi_tests_<group>.
function(armi_add_test_program target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "CATCH_MAIN;HEADER_ONLY" "GROUP" "SOURCES")
  if(TARGET ${target})
    message(FATAL_ERROR "armi tests: two test sources map to the target '${target}' "
                        "(${arg_SOURCES}); rename one of them")
  endif()
  foreach(src IN LISTS arg_SOURCES)
    file(STRINGS "${src}" _marker REGEX "^// armi-test: header-only")
    if(_marker)
      set(arg_HEADER_ONLY TRUE)
    endif()
  endforeach()
  if(arg_CATCH_MAIN AND arg_HEADER_ONLY AND ARMI_TEST_SEPARATE_COMPILATION)
    message(FATAL_ERROR "armi tests: ${target}: the Catch2 main is built with ARMI_SEPARATE_COMPILATION; "
                        "a header-only test program needs its own main")
  endif()
  add_executable(${target} ${arg_SOURCES})
  if(arg_CATCH_MAIN)
    target_link_libraries(${target} PRIVATE armi_test_main)
  endif()
  # (An object library's objects reach only the targets that link it directly.)
  if(ARMI_TEST_SEPARATE_COMPILATION AND NOT arg_HEADER_ONLY)
    target_link_libraries(${target} PRIVATE armi_test_runtime)
  endif()
  target_link_libraries(${target} PRIVATE ${_armi_lib} Catch2::Catch2)
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  target_compile_definitions(${target} PRIVATE
    ARMI_TEST_SCALE_DIVISOR=${ARMI_TEST_SCALE_DIVISOR})
  armi_project_options(${target})
  add_dependencies(armi_tests_${arg_GROUP} ${target})
endfunction()

# armi_add_test_run(<name> PROGRAM <target> BACKEND threads|sp2|sp2p|mpi|mixed
#                   [LOCATIONS <n>] [RANKS <p>] [HOSTS <h>] [ARGS <arg>...] [LABELS <label>...]
#                   [PROCESSORS <n>] [TIMEOUT <s>] [PROPERTIES <prop> <value>...])
# The backend decides how the program starts; <args> follow:
#   threads  <program> --armi-locations=<n>
#   sp2      <program> --armi-backend=sp2 --armi-locations=<n>
#   sp2p     <program> --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=<n>
#   mpi      mpiexec -n <p> <program> --armi-backend=mpi
#   mixed    mpiexec -n <p> <program> --armi-backend=mixed --armi-locations=<n>
# With HOSTS (mpi and mixed), RANKS is per host, and the testbed's mpirun.sh
# starts them on <h> emulated hosts instead of mpiexec (label cluster; the
# run needs the armi_cluster fixture, which brings the hosts up).
# The defaults: LABELS threads;matrix, sp2;matrix (sp2 and sp2p), mpi or
# mixed (cluster with HOSTS); PROCESSORS 2 for one process (its threads take
# both cores), else the ranks (x the locations of a rank, on mixed);
# TIMEOUT ARMI_TEST_TIMEOUT.
function(armi_add_test_run name)
  cmake_parse_arguments(PARSE_ARGV 1 arg ""
    "PROGRAM;BACKEND;LOCATIONS;RANKS;HOSTS;PROCESSORS;TIMEOUT" "ARGS;LABELS;PROPERTIES")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_PROGRAM)
    message(FATAL_ERROR "armi_add_test_run(${name}): needs PROGRAM; unknown arguments: '${arg_UNPARSED_ARGUMENTS}'")
  endif()
  set(_program ${arg_PROGRAM})
  set(_launch "")
  set(_cpus 2)
  if(arg_BACKEND STREQUAL "threads")
    set(_flags --armi-locations=${arg_LOCATIONS})
    set(_labels threads matrix)
  elseif(arg_BACKEND STREQUAL "sp2")
    set(_flags --armi-backend=sp2 --armi-locations=${arg_LOCATIONS})
    set(_labels sp2 matrix)
  elseif(arg_BACKEND STREQUAL "sp2p")
    set(_flags --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=${arg_LOCATIONS})
    set(_labels sp2 matrix)
  elseif(arg_BACKEND MATCHES "^(mpi|mixed)$")
    # Under mpiexec the program must be named by its file, not its target.
    set(_program $<TARGET_FILE:${arg_PROGRAM}>)
    if(DEFINED arg_HOSTS)
      armi_cluster_command(_launch ${arg_HOSTS} ${arg_RANKS})
      set(_labels cluster)
      math(EXPR _cpus "${arg_HOSTS} * ${arg_RANKS}")
    else()
      armi_mpi_command(_launch ${arg_RANKS})
      set(_labels ${arg_BACKEND})
      set(_cpus ${arg_RANKS})
    endif()
    if(arg_BACKEND STREQUAL "mpi")
      set(_flags --armi-backend=mpi)
    else()
      set(_flags --armi-backend=mixed --armi-locations=${arg_LOCATIONS})
      math(EXPR _cpus "${_cpus} * ${arg_LOCATIONS}")
    endif()
  else()
    message(FATAL_ERROR "armi_add_test_run(${name}): BACKEND '${arg_BACKEND}' is not "
                        "threads, sp2, sp2p, mpi or mixed")
  endif()
  if(DEFINED arg_LABELS)
    set(_labels ${arg_LABELS})
  endif()
  if(DEFINED arg_PROCESSORS)
    set(_cpus ${arg_PROCESSORS})
  endif()
  set(_timeout ${ARMI_TEST_TIMEOUT})
  if(DEFINED arg_TIMEOUT)
    set(_timeout ${arg_TIMEOUT})
  endif()
  add_test(NAME ${name} COMMAND ${_launch} ${_program} ${_flags} ${arg_ARGS})
  set_tests_properties(${name} PROPERTIES
    LABELS "${_labels}" TIMEOUT ${_timeout} PROCESSORS ${_cpus})
  if(DEFINED arg_HOSTS)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED armi_cluster)
  endif()
  if(arg_PROPERTIES)
    set_tests_properties(${name} PROPERTIES ${arg_PROPERTIES})
  endif()
endfunction()

# _armi_matrix_run(<name> <backend> <armi_add_test_run keywords>...): one run of
# armi_add_matrix_test, with its flags _args, the caller's ARGS and TIMEOUT.
macro(_armi_matrix_run name backend)
  armi_add_test_run(${name} BACKEND ${backend} PROGRAM ${arg_PROGRAM} ${_timeout_kw} ${ARGN}
                    ARGS ${_args} ${arg_ARGS})
  list(APPEND _runs ${name})
endmacro()

# armi_add_matrix_test(<stem> [PROGRAM <target>] [BACKENDS <backend>...] [ARGS <arg>...]
#                      [TIMEOUT <s>] [PROPERTIES <prop> <value>...])
# Every run of the matrix program <target> (default test_<stem>), named
# <backend>.<stem>.<shape>.<aggregation>:
#   threads  .np<N>.agg<A>  N in ARMI_TEST_LOCATIONS, A in ARMI_TEST_AGGREGATIONS
#   sp2      .np<N>.agg<A>  N in ARMI_TEST_SP2_NODES, A in ARMI_TEST_SP2_AGGREGATIONS
#   threads, sp2  .np4.aggauto; sp2 .np4.faults (ARMI_TEST_SP2_FAULTS)
#   sp2p     .np<N>.agg256  N in ARMI_TEST_SP2_PROCESS_NODES, and .np4.faults
#   mpi      .np<N>.agg<A>  N in ARMI_TEST_MPI_RANKS, A in ARMI_TEST_MPI_AGGREGATIONS,
#            .noshm appended where N is in ARMI_TEST_MPI_NOSHM_RANKS; .np2.aggauto
#   mixed    .<P>x<T>.agg<A>, .split, .aggauto  for <P>x<T> in ARMI_TEST_MIXED_SHAPES
#   routed (--armi-routing): threads .np7.grid, sp2 .np7.faults.grid, mixed .3x2.grid
#            and .3x2.node (MPICH told that every rank is a node of its own)
# BACKENDS (default: all) picks some; sp2p needs Boost.Asio, mpi and mixed
# need armi::mpi, and are left out without.  ARGS follow each run's own
# flags; TIMEOUT and PROPERTIES go to every run.  The runs are registered in
# this order (ctest starts them in it when it has no timings).
function(armi_add_matrix_test stem)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PROGRAM;TIMEOUT" "BACKENDS;ARGS;PROPERTIES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "armi_add_matrix_test(${stem}): unknown arguments '${arg_UNPARSED_ARGUMENTS}'")
  endif()
  if(NOT DEFINED arg_PROGRAM)
    set(arg_PROGRAM test_${stem})
  endif()
  if(NOT DEFINED arg_BACKENDS)
    set(arg_BACKENDS threads sp2 sp2p mpi mixed)
  endif()
  foreach(b threads sp2 sp2p mpi mixed)
    set(_on_${b} FALSE)
  endforeach()
  foreach(b IN LISTS arg_BACKENDS)
    if(NOT b MATCHES "^(threads|sp2|sp2p|mpi|mixed)$")
      message(FATAL_ERROR "armi_add_matrix_test(${stem}): unknown backend '${b}'")
    endif()
    set(_on_${b} TRUE)
  endforeach()
  if(NOT ARMI_TEST_HAVE_BOOST_ASIO)
    set(_on_sp2p FALSE)
  endif()
  if(NOT TARGET armi::mpi)
    set(_on_mpi FALSE)
    set(_on_mixed FALSE)
  endif()
  set(_timeout_kw "")
  if(DEFINED arg_TIMEOUT)
    set(_timeout_kw TIMEOUT ${arg_TIMEOUT})
  endif()
  set(_runs "")

  if(_on_threads)
    foreach(np IN LISTS ARMI_TEST_LOCATIONS)
      foreach(agg IN LISTS ARMI_TEST_AGGREGATIONS)
        set(_args --armi-aggregation=${agg})
        _armi_matrix_run(threads.${stem}.np${np}.agg${agg} threads LOCATIONS ${np})
      endforeach()
    endforeach()
  endif()
  # The emulated SP2, nodes as threads.
  if(_on_sp2)
    foreach(np IN LISTS ARMI_TEST_SP2_NODES)
      foreach(agg IN LISTS ARMI_TEST_SP2_AGGREGATIONS)
        set(_args --armi-aggregation=${agg})
        _armi_matrix_run(sp2.${stem}.np${np}.agg${agg} sp2 LOCATIONS ${np})
      endforeach()
    endforeach()
  endif()
  # Aggregation auto (the runtime picks factors online): one shape per
  # backend (threads and sp2 np4 here, mpi np2 and every mixed shape below),
  # to keep CI time down.
  set(_args --armi-aggregation=auto)
  if(_on_threads)
    _armi_matrix_run(threads.${stem}.np4.aggauto threads LOCATIONS 4)
  endif()
  if(_on_sp2)
    _armi_matrix_run(sp2.${stem}.np4.aggauto sp2 LOCATIONS 4)
    # Lossy, duplicating, reordering packets.
    set(_args ${ARMI_TEST_SP2_FAULTS})
    _armi_matrix_run(sp2.${stem}.np4.faults sp2 LOCATIONS 4)
  endif()
  # Every node a process of its own.
  if(_on_sp2p)
    set(_args --armi-aggregation=256)
    foreach(np IN LISTS ARMI_TEST_SP2_PROCESS_NODES)
      _armi_matrix_run(sp2p.${stem}.np${np}.agg256 sp2p LOCATIONS ${np})
    endforeach()
    set(_args ${ARMI_TEST_SP2_FAULTS})
    _armi_matrix_run(sp2p.${stem}.np4.faults sp2p LOCATIONS 4)
  endif()
  # MPI ranks.  The ranks of one node exchange through shared memory
  # (--armi-mpi-shm, on by default); the rank counts of
  # ARMI_TEST_MPI_NOSHM_RANKS run with it off, every buffer an MPI message,
  # as between nodes (.noshm).
  if(_on_mpi)
    foreach(np IN LISTS ARMI_TEST_MPI_RANKS)
      set(_shm "")
      set(_suffix "")
      if(np IN_LIST ARMI_TEST_MPI_NOSHM_RANKS)
        set(_shm --armi-mpi-shm=off)
        set(_suffix .noshm)
      endif()
      foreach(agg IN LISTS ARMI_TEST_MPI_AGGREGATIONS)
        set(_args --armi-aggregation=${agg} ${_shm})
        _armi_matrix_run(mpi.${stem}.np${np}.agg${agg}${_suffix} mpi RANKS ${np})
      endforeach()
    endforeach()
    set(_args --armi-aggregation=auto)
    _armi_matrix_run(mpi.${stem}.np2.aggauto mpi RANKS 2)
  endif()
  # Ranks x threads.  The .split runs aggregate within a rank and across
  # ranks differently.
  if(_on_mixed)
    foreach(shape IN LISTS ARMI_TEST_MIXED_SHAPES)
      if(NOT shape MATCHES "^([0-9]+)x([0-9]+)$")
        message(FATAL_ERROR "ARMI_TEST_MIXED_SHAPES: '${shape}' is not <ranks>x<threads>")
      endif()
      set(_shape RANKS ${CMAKE_MATCH_1} LOCATIONS ${CMAKE_MATCH_2})
      foreach(agg IN LISTS ARMI_TEST_MPI_AGGREGATIONS)
        set(_args --armi-aggregation=${agg})
        _armi_matrix_run(mixed.${stem}.${shape}.agg${agg} mixed ${_shape})
      endforeach()
      set(_args --armi-aggregation-local=7 --armi-aggregation-remote=256)
      _armi_matrix_run(mixed.${stem}.${shape}.split mixed ${_shape})
      set(_args --armi-aggregation=auto)
      _armi_matrix_run(mixed.${stem}.${shape}.aggauto mixed ${_shape})
    endforeach()
  endif()
  # Routed aggregation: requests through other locations of a grid's row
  # and column (7 locations: rows of 3, the last one short), and on mixed
  # through the location of this node that aggregates for the destination's
  # (3 ranks x 2 threads; MPIR_CVAR_NOLOCAL makes each rank a node of its own
  # on one host, so that the node rows exist).
  if(_on_threads)
    set(_args --armi-aggregation=7 --armi-routing=grid)
    _armi_matrix_run(threads.${stem}.np7.grid threads LOCATIONS 7)
    # An 8 x 8 grid: a location's send index (outbox::out) has 32 entries
    # for 64 destinations, so destinations share entries.
    if(stem MATCHES "^(ordering|fence|nested_sync|stress)$")
      _armi_matrix_run(threads.${stem}.np64.grid threads LOCATIONS 64)
    endif()
  endif()
  if(_on_sp2)
    set(_args --armi-routing=grid ${ARMI_TEST_SP2_FAULTS})
    _armi_matrix_run(sp2.${stem}.np7.faults.grid sp2 LOCATIONS 7)
  endif()
  if(_on_mixed)
    set(_args --armi-aggregation=7 --armi-routing=grid)
    _armi_matrix_run(mixed.${stem}.3x2.grid mixed RANKS 3 LOCATIONS 2)
    set(_args --armi-aggregation=7 --armi-routing=node)
    _armi_matrix_run(mixed.${stem}.3x2.node mixed RANKS 3 LOCATIONS 2 PROPERTIES ENVIRONMENT MPIR_CVAR_NOLOCAL=1)
  endif()
  if(arg_PROPERTIES AND _runs)
    set_tests_properties(${_runs} PROPERTIES ${arg_PROPERTIES})
  endif()
endfunction()

# armi_add_death_tests(<stem> SOURCE <src> [TIMEOUT <s>])
# Builds test_death_<stem> (its own main) and registers a test for each line
#   // CASE: <name> | <args> | <regex>      threads.death.<stem>.<name>, must fail
#   // RUN: <name> | <args> | <regex>       the same, must exit 0
#   // MPI_CASE: <name> | <ranks> <args> | <regex>   mpi.death.<stem>.<name>,
#   // MPI_RUN: ...                         under mpiexec -n <ranks>; left out without armi::mpi
#   // CLUSTER_CASE: <name> | <hosts>x<ranks per host> <args> | <regex>
#   // CLUSTER_RUN: ...                     cluster.death.<stem>.<name>, on emulated hosts
#                                           (armi_cluster_command); only with ARMI_TEST_CLUSTER
# run by armiExpectFailure.cmake, which reads the line again from <src>.
function(armi_add_death_tests stem)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SOURCE;TIMEOUT" "")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_SOURCE)
    message(FATAL_ERROR "armi_add_death_tests(${stem}): needs SOURCE; unknown arguments: '${arg_UNPARSED_ARGUMENTS}'")
  endif()
  set(src "${arg_SOURCE}")
  set(_timeout ${ARMI_TEST_TIMEOUT})
  if(DEFINED arg_TIMEOUT)
    set(_timeout ${arg_TIMEOUT})
  endif()
  armi_add_test_program(test_death_${stem} GROUP death SOURCES "${src}")
  # Editing a CASE line must re-run CMake.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${src}")
  file(STRINGS "${src}" _case_lines REGEX "^[ \t]*//[ \t]*(CASE|RUN|MPI_CASE|MPI_RUN|CLUSTER_CASE|CLUSTER_RUN):")
  set(_count 0)
  foreach(line IN LISTS _case_lines)
    if(NOT line MATCHES "^[ \t]*//[ \t]*(CASE|RUN|MPI_CASE|MPI_RUN|CLUSTER_CASE|CLUSTER_RUN):[ \t]*([A-Za-z0-9_.-]+)[ \t]*\\|([^|]*)")
      message(FATAL_ERROR "${src}: malformed line\n  ${line}\n"
                          "expected: // CASE: <name> | <args> | <regex>")
    endif()
    set(kind "${CMAKE_MATCH_1}")
    set(case "${CMAKE_MATCH_2}")
    set(args "${CMAKE_MATCH_3}")
    set(_fixture "")
    if(kind MATCHES "^CLUSTER_")
      if(NOT ARMI_TEST_CLUSTER)
        continue()
      endif()
      if(NOT args MATCHES "^[ \t]*([0-9]+)x([0-9]+)")
        message(FATAL_ERROR "${src}: ${kind} ${case}: the arguments must start with <hosts>x<ranks per host>")
      endif()
      armi_cluster_command(_launch ${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
      string(REPLACE ";" "\\;" _launch "${_launch}")
      set(name cluster.death.${stem}.${case})
      set(_extra "-DLAUNCHER=${_launch}")
      set(_labels "cluster;death")
      set(_fixture armi_cluster)
    elseif(kind MATCHES "^MPI_")
      if(NOT TARGET armi::mpi)
        continue()
      endif()
      if(NOT args MATCHES "^[ \t]*([0-9]+)")
        message(FATAL_ERROR "${src}: ${kind} ${case}: the arguments must start with the rank count")
      endif()
      armi_mpi_command(_launch ${CMAKE_MATCH_1})
      string(REPLACE ";" "\\;" _launch "${_launch}")
      set(name mpi.death.${stem}.${case})
      set(_extra "-DLAUNCHER=${_launch}")
      set(_labels "mpi;death")
    else()
      set(name threads.death.${stem}.${case})
      set(_extra "")
      set(_labels "threads;death")
    endif()
    add_test(NAME ${name}
             COMMAND "${CMAKE_COMMAND}"
                     "-DPROGRAM=$<TARGET_FILE:test_death_${stem}>"
                     "-DSOURCE=${src}" "-DKIND=${kind}" "-DCASE=${case}" ${_extra}
                     -P "${_armi_add_test_scripts}/armiExpectFailure.cmake")
    set_tests_properties(${name} PROPERTIES LABELS "${_labels}" TIMEOUT ${_timeout})
    if(_fixture)
      set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${_fixture})
    endif()
    math(EXPR _count "${_count} + 1")
  endforeach()
  if(_count EQUAL 0)
    message(WARNING "${src} has no `// CASE: <name> | <args> | <regex>` line; it is built but never run")
  endif()
endfunction()
