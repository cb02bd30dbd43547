# SPDX-License-Identifier: LGPL-2.1-or-later
# rto_common (rto_common.h): the option parser, the CPU lists, the
# configuration checks, the JSON writer and the reports' row model, shared
# by the library, the launcher (tools/) and the fuzz target (tests/fuzz,
# which builds on its own too).
#
#   rto_common_library(TARGET [COMPILE_OPTIONS...])
#
# A static library: a program takes only the modules it uses.  Position
# independent and hidden, so the shared library can take it in; the
# program provides rto_common_syscall().
set(RTO_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../folders.cmake) # RTO_LIBSRC_DIRS
function(rto_common_library target)
  add_library(${target} STATIC
    ${RTO_COMMON_DIR}/options.c ${RTO_COMMON_DIR}/cpulist.c ${RTO_COMMON_DIR}/validate.c
    ${RTO_COMMON_DIR}/json.c ${RTO_COMMON_DIR}/report_rows.c ${RTO_COMMON_DIR}/proc_stat.c)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  # No fortified string calls: in the library they would reach our own wrappers' names.
  target_compile_options(${target} PRIVATE -U_FORTIFY_SOURCE ${ARGN})
  target_include_directories(${target} PUBLIC ${RTO_LIBSRC_DIRS} ${RTO_COMMON_DIR}/../../include)
endfunction()
