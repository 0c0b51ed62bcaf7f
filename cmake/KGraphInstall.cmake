# Installs kgraph as a CMake package that other MLIR compilers embed with
#   find_package(KGraph CONFIG REQUIRED)
#   target_link_libraries(my-tool PRIVATE KGraph::KGraphRegistration)
#
# Layout under the prefix:
#   lib/libKGraph*.a, lib/libKGraphCAPI.so     exported as KGraph::<name>
#   lib/libKGraphPlugin.so                      mlir-opt dialect/pass plugin
#   bin/kgraph-opt                              (installed by add_mlir_tool)
#   include/kgraph/**.{h,td,inc}, include/kgraph-c/*.h
#   lib/cmake/kgraph/KGraph{Config,ConfigVersion,Targets}.cmake
#   lib/python3/site-packages/kgraph, bin/kgraph-import, bin/kgraph-tune
#
# Included at the end of the top-level CMakeLists.txt, so every library
# kgraph_add_library registered (KGRAPH_EXPORTED_LIBS) is known here.

include(CMakePackageConfigHelpers)

set(KGRAPH_INSTALL_PACKAGE_DIR lib${LLVM_LIBDIR_SUFFIX}/cmake/kgraph)
set(KGRAPH_INSTALL_LIB_DIR lib${LLVM_LIBDIR_SUFFIX})

get_property(KGRAPH_EXPORTED_TARGETS GLOBAL PROPERTY KGRAPH_EXPORTED_LIBS)
list(REMOVE_DUPLICATES KGRAPH_EXPORTED_TARGETS)

# The C++ libraries need C++17 from their users too (MLIR's headers do).
foreach(lib IN LISTS KGRAPH_EXPORTED_TARGETS)
  target_compile_features(${lib} INTERFACE cxx_std_17)
endforeach()

if(TARGET KGraphCAPI)
  list(APPEND KGRAPH_EXPORTED_TARGETS KGraphCAPI)
endif()

# Installed shared objects and tools find libMLIR.so / libLLVM.so in the MLIR
# install they were built against: Debian keeps them out of the loader path.
set(KGRAPH_INSTALL_RPATH "\$ORIGIN/../${KGRAPH_INSTALL_LIB_DIR}" "${LLVM_LIBRARY_DIR}")
foreach(target KGraphCAPI KGraphPlugin kgraph-opt kgraph-translate)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "${KGRAPH_INSTALL_RPATH}")
  endif()
endforeach()

install(TARGETS ${KGRAPH_EXPORTED_TARGETS}
  EXPORT KGraphTargets
  ARCHIVE DESTINATION ${KGRAPH_INSTALL_LIB_DIR}
  LIBRARY DESTINATION ${KGRAPH_INSTALL_LIB_DIR}
  RUNTIME DESTINATION bin)

if(TARGET KGraphPlugin)
  install(TARGETS KGraphPlugin LIBRARY DESTINATION ${KGRAPH_INSTALL_LIB_DIR})
endif()

install(EXPORT KGraphTargets
  NAMESPACE KGraph::
  FILE KGraphTargets.cmake
  DESTINATION ${KGRAPH_INSTALL_PACKAGE_DIR})

# Headers, and the .td files so consumers can run mlir-tblgen against kgraph
# (e.g. to write ops on top of KGraph_Op or patterns in DRR).
install(DIRECTORY
    ${KGRAPH_SOURCE_DIR}/include/kgraph
    ${KGRAPH_SOURCE_DIR}/include/kgraph-c
  DESTINATION include
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td" PATTERN "*.def")
# The generated declarations and definitions (*.h.inc, *.cpp.inc).
install(DIRECTORY ${KGRAPH_BINARY_DIR}/include/kgraph
  DESTINATION include
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

configure_package_config_file(
  ${KGRAPH_SOURCE_DIR}/cmake/KGraphConfig.cmake.in
  ${KGRAPH_BINARY_DIR}/${KGRAPH_INSTALL_PACKAGE_DIR}/KGraphConfig.cmake
  INSTALL_DESTINATION ${KGRAPH_INSTALL_PACKAGE_DIR})
# 0.x: minor versions may break the API.
write_basic_package_version_file(
  ${KGRAPH_BINARY_DIR}/${KGRAPH_INSTALL_PACKAGE_DIR}/KGraphConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
    ${KGRAPH_BINARY_DIR}/${KGRAPH_INSTALL_PACKAGE_DIR}/KGraphConfig.cmake
    ${KGRAPH_BINARY_DIR}/${KGRAPH_INSTALL_PACKAGE_DIR}/KGraphConfigVersion.cmake
  DESTINATION ${KGRAPH_INSTALL_PACKAGE_DIR})

# The Python package (runtime, importers, tuner) beside the tools, so one
# prefix holds all of kgraph: <prefix>/lib/python3/site-packages/kgraph, its
# _prefix.py telling it where <prefix>/bin is (kgraph/tools.py), and the
# console scripts bin/kgraph-import and bin/kgraph-tune, which find the
# package themselves. Python users add the site-packages folder once (a .pth
# file, README "Install").
set(KGRAPH_INSTALL_PYTHON_DIR lib/python3/site-packages)
install(DIRECTORY ${KGRAPH_SOURCE_DIR}/python/kgraph
  DESTINATION ${KGRAPH_INSTALL_PYTHON_DIR}
  PATTERN "__pycache__" EXCLUDE
  PATTERN "*.pyc" EXCLUDE)
file(WRITE ${KGRAPH_BINARY_DIR}/python/_prefix.py
  "# Written by cmake --install: the installed tools, relative to this package.\n"
  "BIN = \"../../../../bin\"\n")
install(FILES ${KGRAPH_BINARY_DIR}/python/_prefix.py
  DESTINATION ${KGRAPH_INSTALL_PYTHON_DIR}/kgraph)
foreach(script import tune)
  set(module kgraph.importers.cli)
  if(script STREQUAL "tune")
    set(module kgraph.tune.cli)
  endif()
  file(WRITE ${KGRAPH_BINARY_DIR}/python/kgraph-${script}
    "#!/usr/bin/python3\n"
    "# kgraph-${script}, installed by cmake --install beside the kgraph package.\n"
    "import os\nimport sys\n"
    "sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),\n"
    "                                \"..\", \"${KGRAPH_INSTALL_PYTHON_DIR}\"))\n"
    "from ${module} import main  # noqa: E402\n"
    "sys.exit(main())\n")
  install(PROGRAMS ${KGRAPH_BINARY_DIR}/python/kgraph-${script} DESTINATION bin)
endforeach()
install(CODE "message(STATUS \"kgraph Python package: \${CMAKE_INSTALL_PREFIX}/${KGRAPH_INSTALL_PYTHON_DIR} (add it to Python's path, README 'Install')\")")

# Everything `cmake --install` copies must be built before a test installs
# the package (test/Embedding): kgraph-install-deps depends on every library
# and executable that is part of `all`, including tools added with
# add_mlir_tool elsewhere (LLVM's macros install those too).
function(kgraph_collect_buildable_targets dir out)
  set(result)
  get_directory_property(targets DIRECTORY ${dir} BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(excluded ${target} EXCLUDE_FROM_ALL)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$"
       AND NOT excluded)
      list(APPEND result ${target})
    endif()
  endforeach()
  get_directory_property(subdirs DIRECTORY ${dir} SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    kgraph_collect_buildable_targets(${subdir} subresult)
    list(APPEND result ${subresult})
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

kgraph_collect_buildable_targets(${KGRAPH_SOURCE_DIR} KGRAPH_INSTALL_DEPS)
add_custom_target(kgraph-install-deps)
add_dependencies(kgraph-install-deps ${KGRAPH_EXPORTED_TARGETS} ${KGRAPH_INSTALL_DEPS})
