# SPDX-License-Identifier: LGPL-2.1-or-later
# The library's source folders, one subsystem each.  What each one does and
# which of the others it may call is in its README (libsrc/*/README), the
# one place tests/routing/call_cycles.py reads the layering from.
#
# Every folder is an include directory of the library, of rto_common and of
# whatever builds against libsrc's headers (tools/, bench/, man/, tests/):
# files include each other by name ("route.h"), wherever they live.
set(RTO_LIBSRC_FOLDERS common base backstop observe predict alloc core async report trap wrap
  init)
set(RTO_LIBSRC_DIRS)
foreach(folder IN LISTS RTO_LIBSRC_FOLDERS)
  list(APPEND RTO_LIBSRC_DIRS ${CMAKE_CURRENT_LIST_DIR}/${folder})
endforeach()

# rto_in_folders(VAR): the sources named in VAR (by file name, or a path
# from libsrc/) as the folder that holds each one.  A file in no folder
# stops the configuration: give it its subsystem's folder.
function(rto_in_folders var)
  set(found_all)
  foreach(src IN LISTS ${var})
    if(IS_ABSOLUTE ${src})
      list(APPEND found_all ${src})
      continue()
    endif()
    set(found)
    foreach(dir IN LISTS RTO_LIBSRC_DIRS)
      if(EXISTS ${dir}/${src})
        set(found ${dir}/${src})
        break()
      endif()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "libsrc: ${src} is in none of the folders of libsrc/folders.cmake")
    endif()
    list(APPEND found_all ${found})
  endforeach()
  set(${var} ${found_all} PARENT_SCOPE)
endfunction()
