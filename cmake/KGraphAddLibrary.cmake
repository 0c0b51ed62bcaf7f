# kgraph_add_library(name
#   <sources...>
#   [DEPENDS <tablegen targets...>]
#   [LINK_LIBS <kgraph libraries...>]
#   [MLIR_LIBS <MLIR libraries...>])
#
# One static library per component. MLIR libraries go through
# mlir_target_link_libraries, so they collapse to libMLIR.so when
# KGRAPH_LINK_MLIR_DYLIB is on. The library joins the KGraphTargets export set
# (see KGraphInstall.cmake) so consumers can find_package(KGraph).
function(kgraph_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_mlir_library(${name}
    ${ARG_UNPARSED_ARGUMENTS}
    EXCLUDE_FROM_LIBMLIR
    DISABLE_INSTALL
    DEPENDS ${ARG_DEPENDS}
    LINK_LIBS PUBLIC ${ARG_LINK_LIBS}
  )
  mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${KGRAPH_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${KGRAPH_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  if(KGRAPH_SANITIZE)
    # Whatever links a sanitized kgraph library needs the sanitizer runtime.
    target_link_options(${name} INTERFACE -fsanitize=${KGRAPH_SANITIZE})
  endif()
  set_property(GLOBAL APPEND PROPERTY KGRAPH_EXPORTED_LIBS ${name})
endfunction()
