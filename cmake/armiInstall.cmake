# Install rules and the package configuration for find_package(armi).
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(ARMI_INSTALL_CMAKEDIR "lib/cmake/armi" CACHE STRING
  "Where armiConfig.cmake is installed, relative to the prefix")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/armi"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
foreach(target armi_headers armi_mpi_headers armi_runtime armi_runtime_mpi armi armi_mpi)
  if(TARGET ${target})
    install(TARGETS ${target} EXPORT armiTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  endif()
endforeach()
install(EXPORT armiTargets
        NAMESPACE armi::
        FILE armiTargets.cmake
        DESTINATION "${ARMI_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/armiConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/armiConfig.cmake"
  INSTALL_DESTINATION "${ARMI_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/armiConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/armiConfig.cmake"
              "${PROJECT_BINARY_DIR}/armiConfigVersion.cmake"
        DESTINATION "${ARMI_INSTALL_CMAKEDIR}")
if(EXISTS "${PROJECT_SOURCE_DIR}/LICENSE")
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
endif()
