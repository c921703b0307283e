# Writes OUT, a C header defining `static const char NAME[]` with the bytes
# of IN and a terminating NUL: kernel sources compiled at run time travel
# inside the binary, never read from the working directory.
#   cmake -DIN=file.cu -DOUT=file.h -DNAME=symbol -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
get_filename_component(base "${IN}" NAME)
file(WRITE "${OUT}.tmp"
     "/* Generated from ${base} by cmake/embed.cmake; do not edit. */\n"
     "static const char ${NAME}[] = {\n${bytes}0x00};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
