# Script mode: cmake -DOUT=file.cpp -DROOT=dir -DFUNC=name -DFILES="a;b" -P embed.cmake
# Writes every file as a raw string literal keyed by its path relative to ROOT, returned by
# `ts::FUNC()`, so a binary carried to another machine needs no source tree.
set(body "#include <map>\n#include <string>\n#include <string_view>\nnamespace ts {\nconst std::map<std::string, std::string_view>& ${FUNC}() {\n  static const std::map<std::string, std::string_view> files = {\n")
foreach(f ${FILES})
  file(READ "${f}" content)
  file(RELATIVE_PATH rel "${ROOT}" "${f}")
  string(APPEND body "    {\"${rel}\", R\"TSEMBED(${content})TSEMBED\"},\n")
endforeach()
string(APPEND body "  };\n  return files;\n}\n}  // namespace ts\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${body}")
  file(WRITE "${OUT}" "${body}")
endif()
