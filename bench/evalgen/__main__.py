import sys

from bench.evalgen.generate import main

raise SystemExit(main(sys.argv[1:]))
