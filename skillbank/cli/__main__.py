"""`python -m skillbank.cli`: the same as the `skillbank` console script."""

import sys

from skillbank.cli import main

sys.exit(main())
