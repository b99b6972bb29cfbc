"""`python -m gymnasium_solver.cli`: the gsolve command."""

import sys

from gymnasium_solver.cli.app import main

sys.exit(main())
