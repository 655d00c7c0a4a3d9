# The supervisor's fill children, for t-killfill and t-heldfd: the
# processes it made with clone that send no exit signal (supervise/
# apart.c).
import os, time


def fill_children(parent):
    """The supervisor's children without an exit signal (its fills)."""
    out = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            st = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the name: state, ppid, ...; exit_signal is field 38.
        if int(st[1]) == parent and int(st[35]) == 0:
            out.add(int(p))
    return out


def first(parent, old, seconds):
    """A fill child of PARENT's not in OLD, within SECONDS, or None."""
    end = time.time() + seconds
    while time.time() < end:
        new = fill_children(parent) - old
        if new:
            return new.pop()
        time.sleep(0.0002)
    return None
