"""Print scenario transcripts, one item per line: `python tests/engine/parity/dump.py [lib] [name...]`.

`lib` is "lg" (default) or "gr"; with no names every scenario is printed. Handy for reading what a
scenario records and for diffing the two sides: run it for both and `diff` the outputs.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/engine: import as `parity`
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # repository root: `engine`

from parity.harness import load_lib  # noqa: E402
from parity.scenarios import SCENARIOS  # noqa: E402


def main(argv: list[str]) -> None:
    lib_name = argv[0] if argv and argv[0] in ("lg", "gr") else "lg"
    names = [a for a in argv if a not in ("lg", "gr")] or sorted(SCENARIOS)
    lib = load_lib(lib_name)
    for name in names:
        print(f"===== {name}")
        for label, item in SCENARIOS[name](lib):
            print(f"{label}: {item!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
