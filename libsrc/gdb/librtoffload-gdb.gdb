# librtoffload: auto-loaded by gdb next to the library (installed as
# <datadir>/gdb/auto-load/<libdir>/librtoffload.so.<version>-gdb.gdb).
#
# The library's backstop traps the raw system calls of realtime threads
# with Syscall User Dispatch: each trap is a SIGSYS with si_code 2
# (SYS_USER_DISPATCH), which the library's handler answers.  A program
# started under gdb does not arm it (the library sees its tracer), but one
# that gdb attaches to later does: these SIGSYS are not the program's, so
# they pass silently.  A SIGSYS of the program's own (a seccomp filter's
# RET_TRAP, si_code 1) still stops, at the catchpoint below.
handle SIGSYS nostop noprint pass
catch signal SIGSYS
condition $bpnum $_siginfo.si_code != 2
