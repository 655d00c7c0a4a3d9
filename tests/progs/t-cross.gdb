# t-cross under gdb (tests/progs/t-cross.c): thread Y (gdb's thread 3)
# stopped as it is about to claim a slot; thread X alone runs until it
# holds its file's turn again; then every thread runs.
set pagination off
set confirm off
break claim if $_thread == 3
break t_cross_x_holds
run
delete 1
set var go = 1
set scheduler-locking on
thread 1
continue
set scheduler-locking off
delete
continue
