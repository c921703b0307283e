# Writes OUT, the man page cuproof.1, with the built cuproof's hidden
# `cuproof help --man`: the page is printed from the same table as
# `cuproof help` (cli/commands.c), so the two cannot drift. OUT is replaced
# only when its text changed, so an unchanged page rebuilds nothing.
#   cmake -DCUPROOF=path/to/cuproof -DOUT=man/cuproof.1 -P help_pages.cmake
execute_process(COMMAND "${CUPROOF}" help --man
  OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "'${CUPROOF} help --man' exited ${rc}: ${err}")
endif()
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
