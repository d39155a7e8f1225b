import sys

from engine.cli import run_main

sys.exit(run_main())
