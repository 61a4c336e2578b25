# armi_project_options(<target>)
#
# Compile settings for armi's own programs (tests, examples, benchmarks):
#   -Wall -Wextra -Wpedantic, plus -Werror when ARMI_WERROR is ON;
#   -fsanitize=<ARMI_SANITIZE> -fno-omit-frame-pointer -g when ARMI_SANITIZE is set.
# The settings are PRIVATE to <target>.  They are never put on the armi
# INTERFACE target, so projects that link armi::armi do not inherit them.
include_guard(GLOBAL)

set(_armi_valid_sanitizers "" "address,undefined" "undefined,address" "address" "undefined" "thread")
if(NOT "${ARMI_SANITIZE}" IN_LIST _armi_valid_sanitizers)
  message(FATAL_ERROR
    "ARMI_SANITIZE='${ARMI_SANITIZE}' is not supported; use \"\", \"address,undefined\" or \"thread\"")
endif()

function(armi_project_options target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "armi_project_options: '${target}' is not a target")
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    message(FATAL_ERROR "armi_project_options: '${target}' is an INTERFACE library; "
                        "warnings and sanitizers belong on our own programs only")
  endif()

  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      # GCC 12 reports a bogus -Wrestrict inside libstdc++'s std::string
      # operator+ at -O2 (GCC bug 105651), so -Werror would fail valid code.
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
    if(ARMI_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
    if(NOT ARMI_SANITIZE STREQUAL "")
      set(_san -fsanitize=${ARMI_SANITIZE} -fno-omit-frame-pointer -g)
      if(ARMI_SANITIZE MATCHES "undefined")
        # A UBSan report fails the program instead of scrolling past.
        list(APPEND _san -fno-sanitize-recover=undefined)
      endif()
      if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        # GCC's sanitizer instrumentation makes -Wmaybe-uninitialized fire on
        # libstdc++ code (std::function inside std::regex, ...); its manual
        # warns about these false positives.
        list(APPEND _san -Wno-maybe-uninitialized)
        if(ARMI_SANITIZE STREQUAL "thread" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
          # Boost.Asio (the sp2 process mode, included by every armi program
          # where it is installed) uses std::atomic_thread_fence, which GCC 12
          # warns TSan does not instrument (-Wtsan), in every translation unit.
          list(APPEND _san -Wno-tsan)
        endif()
      endif()
      target_compile_options(${target} PRIVATE ${_san})
      target_link_options(${target} PRIVATE -fsanitize=${ARMI_SANITIZE})
    endif()
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive-)
    if(ARMI_WERROR)
      target_compile_options(${target} PRIVATE /WX)
    endif()
  endif()
endfunction()
