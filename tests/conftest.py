import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.allocator import keep_freed_memory  # noqa: E402  (after the path set-up above)

keep_freed_memory()     # as the command line does: the spec suite's in-process runs without per-round page faults
