"""`python -m gymnasium_solver.cli.app`: the gsolve command."""

import sys

from gymnasium_solver.cli.app.app import main

sys.exit(main())
