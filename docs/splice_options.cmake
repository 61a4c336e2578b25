# cmake -DGENERATOR=<armi_options_markdown> -DDOC=<docs/guide/options.md> -P splice_options.cmake
#
# The armi_options_doc target: replaces what DOC holds between its lines
#   <!-- options:begin -->  and  <!-- options:end -->
# with the table GENERATOR prints (detail::options_markdown(), from the
# option table that also drives the parser and --armi-help).  The rest of
# DOC is left as written.  DOC is rewritten only if the table changed.
foreach(var GENERATOR DOC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "splice_options.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${GENERATOR}" RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR table STREQUAL "")
  message(FATAL_ERROR "${GENERATOR} failed (${rc}): ${err}")
endif()

set(begin "<!-- options:begin -->\n")
set(end "<!-- options:end -->")
file(READ "${DOC}" text)
string(FIND "${text}" "${begin}" b)
string(FIND "${text}" "${end}" e)
if(b EQUAL -1 OR e EQUAL -1 OR e LESS b)
  message(FATAL_ERROR "${DOC} needs the lines '<!-- options:begin -->' and '<!-- options:end -->', "
                      "in that order, around the table")
endif()
string(LENGTH "${begin}" begin_length)
math(EXPR table_start "${b} + ${begin_length}")
string(SUBSTRING "${text}" 0 ${table_start} head)
string(SUBSTRING "${text}" ${e} -1 tail)
set(new_text "${head}${table}${tail}")
if(new_text STREQUAL text)
  message(STATUS "${DOC}: the options table is up to date")
else()
  file(WRITE "${DOC}" "${new_text}")
  message(STATUS "${DOC}: options table rewritten")
endif()
