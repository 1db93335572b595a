# Leaves the process from inside the call (as a candidate calling exit() would).
import sys


def solution(tensor):
    sys.exit(0)
