# Turns one asset file into a C source defining `const char <NAME>[]` (NUL-terminated).
# Usage: cmake -DIN=file.js -DOUT=file.c -DNAME=gp__asset_x_js -P embed_asset.cmake
# Fails when the asset holds a sequence that would end its HTML/SVG container early.
file(READ "${IN}" text)
string(TOLOWER "${text}" lower)
foreach(bad "</script" "</style" "]]>")
  string(FIND "${lower}" "${bad}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "${IN}: contains '${bad}' at byte ${pos}; it cannot be embedded")
  endif()
endforeach()
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hexlen)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by embed_asset.cmake. Do not edit. */\nconst char ${NAME}[] = {\n${bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
