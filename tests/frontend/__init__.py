# A package, so that test_errors.py here and tests/interpreter/test_errors.py do not collide
# under pytest's default (prepend) import mode.
