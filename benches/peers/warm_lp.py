"""The warm LP inside PSRO against a cold `metagame solve --solver lp` of the same meta-games.

Run (from the repository root, after `cargo build --release`; plain python3, no venv):

    python3 benches/peers/warm_lp.py [--iterations 300] [--runs 3] [--repeat 10]
        [--meta-solvers nash lp] [--metagame-bin target/release/metagame]

For each meta-solver, `examples/leduc_psro.toml` (Leduc PSRO, exact best responses and
payoffs, warm starts on) runs `--runs` times to `--iterations` iterations; each iteration's
`meta_solve_s` (which includes building the meta-game from the payoff table) counts at its
fastest over the runs, since the machine is shared. Then each iteration's meta-game, cut
from the run's final `meta_game.nfg` at that iteration's population sizes (PSRO keeps old
entries, so it is the leading block), is solved cold by `metagame solve FILE --solver lp
--json --repeat R`, whose `seconds_per_solve` excludes process start and file parsing: at
every iteration from 200 on, every tenth below. Printed: medians over ranges of iterations
of both times, their ratio, and the range of the per-iteration ratios.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from machine import cpu_model  # noqa: E402

REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RANGES = [(50, 100), (100, 150), (150, 200), (200, 10**9)]


def fail(message):
    """One line on stderr and exit 2, as the project's commands do on bad input."""
    print(f"warm_lp.py: {message}", file=sys.stderr)
    sys.exit(2)


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def leading_block(nfg_text, m, n):
    """The `m × n` leading block of a two-player Gambit payoff-list .nfg (player 1's
    strategy changes fastest), as .nfg text."""
    lines = nfg_text.split("\n")
    header, strategies = lines[0], lines[1]
    groups = strategies.split("} {")
    names = [g.replace("{", " ").replace("}", " ").split() for g in groups]
    big_m = len(names[0])
    payoffs = [line for line in lines[2:] if line.strip() and line.strip() != '""']
    if len(payoffs) != big_m * len(names[1]):
        fail("expected one payoff line per profile of a two-player .nfg")
    rows = [payoffs[i + big_m * j] for j in range(n) for i in range(m)]
    return "\n".join(
        [header, "{ { " + " ".join(names[0][:m]) + " } { " + " ".join(names[1][:n]) + " } }", '""', "", *rows, ""]
    )


def run_psro(binary, config, out):
    subprocess.run([binary, "run", config, "--out", out, "--overwrite"], check=True, capture_output=True)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    return report["iterations"], report["stop_reason"]


def cold_solve(binary, path, repeat):
    out = subprocess.run(
        [binary, "solve", path, "--solver", "lp", "--json", "--repeat", str(repeat)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)["seconds_per_solve"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=positive, default=300)
    parser.add_argument("--runs", type=positive, default=3)
    parser.add_argument("--repeat", type=positive, default=10)
    parser.add_argument("--meta-solvers", nargs="+", default=["nash", "lp"])
    parser.add_argument("--metagame-bin", default=os.path.join(REPO_ROOT, "target", "release", "metagame"))
    args = parser.parse_args()
    with open(os.path.join(REPO_ROOT, "examples", "leduc_psro.toml")) as f:
        example = f.read()
    # The config is the example with two lines rewritten; if they moved, say so rather than
    # silently timing the example as it is.
    for line in ('meta_solver = "nash"', "max_iterations = 100"):
        if line not in example:
            fail(f"examples/leduc_psro.toml has no line `{line}` to rewrite")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        for solver in args.meta_solvers:
            config = os.path.join(tmp, f"{solver}.toml")
            with open(config, "w") as f:
                f.write(
                    example.replace('meta_solver = "nash"', f'meta_solver = "{solver}"').replace(
                        "max_iterations = 100", f"max_iterations = {args.iterations}"
                    )
                )
            runs, stops = zip(
                *(run_psro(args.metagame_bin, config, os.path.join(tmp, f"{solver}-{k}")) for k in range(args.runs))
            )
            last = min(len(r) for r in runs)
            warm = [min(r[t]["times"]["meta_solve_s"] for r in runs) for t in range(last)]
            with open(os.path.join(tmp, f"{solver}-0", "meta_game.nfg")) as f:
                final = f.read()
            rows = []
            step = os.path.join(tmp, "step.nfg")
            for t in range(50, last):
                if t < 200 and t % 10:
                    continue
                m, n = runs[0][t]["population_sizes"]
                with open(step, "w") as f:
                    f.write(leading_block(final, m, n))
                rows.append((t, cold_solve(args.metagame_bin, step, args.repeat), warm[t]))
            print(f"meta_solver = {solver}: {args.runs} runs of {last} iterations (stopped at {last - 1}: {', '.join(sorted(set(stops)))})")
            print(f"{'iterations':>12} {'cold ms':>9} {'warm ms':>9} {'ratio':>7} {'per iteration':>15}")
            for lo, hi in RANGES:
                part = [r for r in rows if lo <= r[0] < hi]
                if not part:
                    continue
                cold = statistics.median(r[1] for r in part)
                warm_ms = statistics.median(r[2] for r in part)
                ratios = [r[1] / r[2] for r in part]
                label = f"{lo}-{min(hi, last) - 1}"
                print(
                    f"{label:>12} {1e3 * cold:>9.3f} {1e3 * warm_ms:>9.3f} {cold / warm_ms:>6.1f}x"
                    f" {min(ratios):>6.1f}-{max(ratios):.1f}x"
                )


if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as e:
        fail(f"{e.filename}: not found (build it with `cargo build --release`, or pass --metagame-bin)")
    except subprocess.CalledProcessError as e:
        said = (e.stderr or b"").decode(errors="replace").strip().splitlines() or ["no output"]
        fail(f"`{' '.join(e.cmd[:2])}` exited {e.returncode}: {said[-1]}")
    except BrokenPipeError:
        # The reader went away (a closed stdout): nothing more to say to it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(2)
