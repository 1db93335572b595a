# Your solution: define solution(...) with the signature of reference.py (see PROBLEM.md).
# `pkb check` tests this file; `pkb submit` then the submit action hands it in.
