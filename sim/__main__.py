"""python -m sim -> the command line."""

import sys

from sim.cli import main

sys.exit(main())
