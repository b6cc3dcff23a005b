"""`python -m benchmarks <name> [--quick] [options]`: run one benchmark, print JSON."""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks import domain, embeddings, parse, sync, vectors

BENCHMARKS = {
    "domain": domain,
    "embeddings": embeddings,
    "parse": parse,
    "sync": sync,
    "vectors": vectors,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("name", choices=sorted(BENCHMARKS))
    parser.add_argument("--quick", action="store_true", help="a run under a minute")
    args, rest = parser.parse_known_args(argv)
    module = BENCHMARKS[args.name]
    result = module.run(quick=args.quick, argv=rest)
    json.dump(result, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
