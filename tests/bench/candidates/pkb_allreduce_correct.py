# A correct candidate for the upstream fixture's problem 1, PKB-style: it imports a helper from the
# checkout's utils package.
from utils.collectives import sum_by_gather


def solution(tensor, group=None):
    return sum_by_gather(tensor)
