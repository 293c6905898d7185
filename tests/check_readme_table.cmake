# The README's configuration table must be what `onlinews-config --markdown`
# prints (both come from runtime/config_table.def).
execute_process(COMMAND ${TOOL} --markdown OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "onlinews-config --markdown failed")
endif()
file(READ ${README} readme)
string(FIND "${readme}" "${table}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "README.md's configuration table is out of date; replace it with the output of "
                      "'onlinews-config --markdown':\n${table}")
endif()
