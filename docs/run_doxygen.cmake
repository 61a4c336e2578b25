# cmake -DDOXYGEN=<doxygen> -DDOXYFILE=<Doxyfile> -DLOGFILE=<warnings log>
#       -DXML_DIR=<doxygen's XML output> -P run_doxygen.cmake
#
# Runs doxygen (used by the armi_docs target and the docs.reference test).
# The Doxyfile sends every warning to LOGFILE and sets WARN_AS_ERROR =
# FAIL_ON_WARNINGS; this prints the warnings and fails if there were any, so
# an undocumented public name fails the test with its file and line.
#
# Doxygen 1.9 does not warn about a class that has no members of its own
# (struct my_error : std::runtime_error { using runtime_error::runtime_error; }),
# so this also reads the XML output and reports every class, struct, union
# or concept outside a detail namespace that has no description (paths in
# these reports are relative to the source directory).
foreach(var DOXYGEN DOXYFILE LOGFILE XML_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_doxygen.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE "${LOGFILE}")
file(REMOVE_RECURSE "${XML_DIR}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(warnings "")
if(EXISTS "${LOGFILE}")
  file(READ "${LOGFILE}" warnings)
  string(STRIP "${warnings}" warnings)
endif()
# Classes without a description that doxygen let pass.
if(EXISTS "${XML_DIR}/index.xml")
  file(READ "${XML_DIR}/index.xml" index)
  # A specialization's name holds "&lt;" and "&gt;", whose ";" would split the list.
  string(REPLACE "&lt;" "<" index "${index}")
  string(REPLACE "&gt;" ">" index "${index}")
  string(REPLACE "&amp;" "&" index "${index}")
  string(REGEX MATCHALL "<compound refid=\"[^\"]*\" kind=\"(class|struct|union|concept)\"><name>[^\n]*</name>"
         compounds "${index}")
  foreach(compound IN LISTS compounds)
    string(REGEX MATCH "^<compound refid=\"([^\"]*)\" kind=\"([a-z]*)\"><name>(.*)</name>$" _ "${compound}")
    set(refid "${CMAKE_MATCH_1}")
    set(kind "${CMAKE_MATCH_2}")
    set(name "${CMAKE_MATCH_3}")
    if(name MATCHES "(^|::)detail(::|$)|_detail(::|$)" OR NOT EXISTS "${XML_DIR}/${refid}.xml")
      continue()
    endif()
    file(READ "${XML_DIR}/${refid}.xml" xml)
    # A private nested class is no one's API (the XML lists it all the same).
    if(xml MATCHES "<compounddef [^>]*prot=\"private\"")
      continue()
    endif()
    # The compound's own description follows its members' sections.
    string(REGEX REPLACE "<sectiondef.*</sectiondef>" "" xml "${xml}")
    string(REGEX REPLACE "<templateparamlist>.*</templateparamlist>" "" xml "${xml}")
    set(described FALSE)
    foreach(part briefdescription detaileddescription)
      if(xml MATCHES "<${part}>(.*)</${part}>")
        string(REGEX REPLACE "<[^>]*>" "" text "${CMAKE_MATCH_1}")
        string(STRIP "${text}" text)
        if(NOT text STREQUAL "")
          set(described TRUE)
        endif()
      endif()
    endforeach()
    if(NOT described)
      set(where "")
      if(xml MATCHES "<location file=\"([^\"]*)\" line=\"([0-9]*)\"")
        set(where "${CMAKE_MATCH_1}:${CMAKE_MATCH_2}: ")
      endif()
      string(APPEND warnings "\n${where}error: ${kind} ${name} is not documented.")
    endif()
  endforeach()
  string(STRIP "${warnings}" warnings)
endif()

if(NOT rc EQUAL 0 OR NOT warnings STREQUAL "")
  set(count 0)
  if(NOT warnings STREQUAL "")
    string(REGEX MATCHALL "\n" _lines "\n${warnings}")
    list(LENGTH _lines count)
  endif()
  message("${out}${err}")
  message("${warnings}\n")
  message(FATAL_ERROR
    "doxygen exited with ${rc} and ${count} warning line(s) (above).  Document each "
    "public name it names with a /// comment (first sentence: what it is), or move "
    "it into a detail namespace.")
endif()
message(STATUS "API reference: no doxygen warnings")
