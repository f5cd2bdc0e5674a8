#===- cmake/TridentInstall.cmake - `cmake --install` and find_package -----===#
#
# Installs what an out-of-tree MLIR tool needs to use Trident's dialects and
# passes: the headers (include/trident, dialects/*/IR and their generated
# .inc files), the TableGen files, the libraries and a CMake package, so
# that
#
#   find_package(Trident REQUIRED CONFIG)   # Trident_DIR=<prefix>/lib/cmake/trident
#   target_link_libraries(my-opt PRIVATE Trident::TridentTransforms
#                         Trident::TridentTGraphToExec MLIR)
#
# works (test/install builds such a tool against an installed prefix).
#
#===----------------------------------------------------------------------===#

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries a pass pipeline on tgraph/texec needs, and the plain C++
# ones below them (the runtime of emitted programs is built from source by
# each emitted project and is not part of the package).
set(TRIDENT_EXPORTED_LIBRARIES
  TridentSupport TridentSchedule TridentParallel TridentHardware TridentCost
  TridentSearch TridentPlan TridentExplore TridentServe TridentReport
  TridentValidationCore
  TridentFrontendConfig TridentFrontend TridentAnalysis TridentValidation
  TridentGraphDialect TridentExecDialect TridentTransforms TridentPlanAttr
  TridentTGraphToExec TridentTGraphToShard TridentTarget)

install(TARGETS ${TRIDENT_EXPORTED_LIBRARIES}
  EXPORT TridentTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT TridentTargets
  NAMESPACE Trident::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trident)

# Headers as the sources include them: "trident/..." and
# "dialects/<D>/IR/...", with the generated .inc files beside them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/trident
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dialects
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/dialects
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/trident
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/TridentConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TridentConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trident
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
install(FILES ${PROJECT_BINARY_DIR}/cmake/TridentConfig.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trident)
