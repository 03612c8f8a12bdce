"""Make the repository root importable so the "gr" side finds `engine` and `checkpoints`."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
