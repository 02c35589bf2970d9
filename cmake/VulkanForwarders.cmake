# vkamp calls the Vulkan loader through functions of its own with the
# loader's names and signatures, each of which finds its namesake in the
# loader, opened at run time, on its first call
# (engine/src/platform/vulkan_library.cpp). So no binary links the loader:
# none needs an import library to build or fails to start where there is no
# loader; each says so and exits 1 instead. The functions are written from
# the Vulkan headers' PFN_ typedefs (one line each, every parameter named).
function(vkamp_vulkan_forwarders header out)
  file(STRINGS ${header} typedefs REGEX "^typedef .* \\(VKAPI_PTR \\*PFN_vk[A-Za-z0-9]+\\)\\(.*\\);$")
  set(body "// Written by cmake/VulkanForwarders.cmake from ${header}.\n")
  string(APPEND body "#include <vulkan/vulkan.h>\n\nnamespace vkamp::platform {\nvoid* vulkan_symbol(const char* name);\n}\n\n")
  string(APPEND body "extern \"C\" {\n")
  foreach(line IN LISTS typedefs)
    string(REGEX REPLACE "^typedef (.*) \\(VKAPI_PTR \\*PFN_(vk[A-Za-z0-9]+)\\)\\((.*)\\);$" "\\1;\\2;\\3" parts "${line}")
    list(GET parts 0 ret)
    list(GET parts 1 name)
    list(GET parts 2 params)
    if(name STREQUAL "vkVoidFunction" OR params STREQUAL "void" OR NOT ret MATCHES "^(void|Vk[A-Za-z0-9]+|PFN_vkVoidFunction|uint32_t|uint64_t)$")
      continue()  # not an entry point (the PFN_ of callbacks take other forms)
    endif()
    string(REPLACE ", " ";" param_list "${params}")
    set(args "")
    foreach(p IN LISTS param_list)
      string(REGEX REPLACE "\\[[^]]*\\]$" "" p "${p}")
      string(REGEX MATCH "[A-Za-z_][A-Za-z0-9_]*$" arg "${p}")
      list(APPEND args ${arg})
    endforeach()
    list(JOIN args ", " arg_text)
    string(APPEND body "VKAPI_ATTR ${ret} VKAPI_CALL ${name}(${params}) {\n"
      "  static const auto f = reinterpret_cast<PFN_${name}>(vkamp::platform::vulkan_symbol(\"${name}\"));\n"
      "  return f(${arg_text});\n}\n")
  endforeach()
  string(APPEND body "}  // extern \"C\"\n")
  file(CONFIGURE OUTPUT ${out} CONTENT "${body}" @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
endfunction()
