"""`python -m runners.cli ...` = `private-mteb ...`."""

from . import main

main()
