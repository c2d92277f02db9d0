"""``python -m metagame run CONFIG [--out DIR] [--resume] [--overwrite] [--ray ADDRESS]``:
the CLI's ``run`` for Python users, locally or on a Ray cluster."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metagame", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a config into a run folder")
    run.add_argument("config", help="a TOML config (metagame config --example ALGORITHM)")
    run.add_argument("--out", help="the run folder (default: runs/<config name>)")
    run.add_argument("--resume", action="store_true", help="continue the run in the folder")
    run.add_argument("--overwrite", action="store_true", help="replace a run in the folder")
    run.add_argument("--ray", metavar="ADDRESS", help="run payoff entries and responses as Ray tasks (address: auto, or host:port)")
    run.add_argument("--json", action="store_true", help="one JSON object per iteration on stdout")
    args = parser.parse_args(argv)

    import metagame

    experiment = None
    try:
        if args.ray:
            from metagame import distributed

            experiment = distributed.Experiment(
                args.config, out=args.out, resume=args.resume, overwrite=args.overwrite, address=args.ray
            )
        else:
            experiment = metagame.Experiment(args.config, out=args.out, resume=args.resume, overwrite=args.overwrite)
        last = None
        for report in experiment:
            last = report
            if args.json:
                print(json.dumps(report), flush=True)
            else:
                print(f"iteration {report['iteration']:>5}  NashConv {report['nash_conv']:.6g}", flush=True)
        experiment.close()
    except (ValueError, TypeError, metagame.MetagameError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if experiment is not None:
            experiment.close()
            print(f"interrupted: {experiment.out} holds what the run did; continue with --resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed (`| head`): the run stops after its step with its folder written.
        if experiment is not None:
            experiment.close()
        sys.stderr.close()
        return 0
    if last is not None and not args.json:
        print(f"results in {experiment.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
