# `cmake --install` puts libvkamp.a, the public headers (engine/include/vkamp),
# a CMake package (find_package(vkamp CONFIG) -> vkamp::vkamp) and vkamp.pc
# under the prefix. Everything is relative to the prefix, so
# `cmake --install build --prefix DIR` works for any DIR.
include(CMakePackageConfigHelpers)

set(VKAMP_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkamp)

install(TARGETS vkamp EXPORT vkampTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/vkamp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(EXPORT vkampTargets
  NAMESPACE vkamp::
  DESTINATION ${VKAMP_CMAKE_PACKAGE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/vkampConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vkampConfig.cmake
  INSTALL_DESTINATION ${VKAMP_CMAKE_PACKAGE_DIR})
# Before 1.0 a minor release may change the API: 0.3 accepts 0.3.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkampConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkampConfig.cmake ${PROJECT_BINARY_DIR}/vkampConfigVersion.cmake
  DESTINATION ${VKAMP_CMAKE_PACKAGE_DIR})

# vkamp.pc finds the prefix from its own place (${pcfiledir}), so it stays
# right when the install prefix is chosen at install time.
# An MPI build's archive calls into libmpi: named by path, as in the CMake package.
set(VKAMP_PC_MPI_LIBS "")
if(VKAMP_WITH_MPI)
  string(JOIN " " VKAMP_PC_MPI_LIBS ${MPI_C_LIBRARIES})
endif()
file(RELATIVE_PATH VKAMP_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/vkamp.pc.in ${PROJECT_BINARY_DIR}/vkamp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkamp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
