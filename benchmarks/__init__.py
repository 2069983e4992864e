"""The project's benchmark (spec section 11): a synthetic vault generator and a runner.

``python -m benchmarks.generate_vault DIR --n 10000`` writes a vault; ``python -m benchmarks.run``
measures the performance targets of spec section 11 beside same-run baselines. Nothing here is
imported by the library or its tests' timing; speed is measured here, never asserted in a test.
"""
