# Install rules: the library, its public headers, the strop tool, and a CMake package so that
# another project can write
#   find_package(strop REQUIRED)
#   target_link_libraries(app PRIVATE strop::strop)
# (tests/install/ is such a project; the test install.find_package builds and runs it).
include(CMakePackageConfigHelpers)

install(TARGETS strop EXPORT stropTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
                                          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/strop DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET strop_cli)
  # The installed tool finds a shared libstrop beside it ($ORIGIN: bin/../lib).
  set_target_properties(strop_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS strop_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(STROP_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/strop)
install(EXPORT stropTargets NAMESPACE strop:: DESTINATION ${STROP_PACKAGE_DIR})
configure_package_config_file(cmake/stropConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/stropConfig.cmake INSTALL_DESTINATION ${STROP_PACKAGE_DIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/stropConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/stropConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/stropConfigVersion.cmake
        DESTINATION ${STROP_PACKAGE_DIR})
