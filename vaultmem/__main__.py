"""``python -m vaultmem``: the same program as the ``vaultmem`` command."""

from vaultmem.launcher import main

main()
