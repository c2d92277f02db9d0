"""The one virtual environment the peer scripts share (benches/peers/.venv).

Each script calls `ensure_venv(...)` before importing anything outside the standard
library: it creates the venv if needed, installs what the probe finds missing, and
re-executes the script inside the venv.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
VENV = os.path.join(HERE, ".venv")
VENV_PY = os.path.join(VENV, "bin", "python")
RESULTS = os.path.join(HERE, "results")


def in_our_venv():
    return os.path.realpath(sys.prefix) == os.path.realpath(VENV)


def ensure_venv(script, requirements, imports, pins):
    """Make the venv hold `requirements` (probe: `imports` import and `pins` match), then
    re-run `script` with the current arguments inside it. Exits with code 2 on failure."""
    if in_our_venv():
        return
    try:
        if not os.path.exists(VENV_PY):
            print(f"[setup] creating venv {VENV}", file=sys.stderr)
            subprocess.check_call([sys.executable, "-m", "venv", VENV])
        checks = "".join(f";assert m.version({k!r}) == {v!r}" for k, v in pins.items())
        probe = subprocess.run(
            [VENV_PY, "-c", f"import importlib.metadata as m, {imports}{checks}"],
            capture_output=True)
        if probe.returncode != 0:
            print(f"[setup] pip install {' '.join(requirements)}", file=sys.stderr)
            subprocess.check_call([VENV_PY, "-m", "pip", "install", "-q"] + requirements)
    except (subprocess.CalledProcessError, OSError) as e:
        print(f"[setup] failed to prepare venv: {e}", file=sys.stderr)
        sys.exit(2)
    os.execv(VENV_PY, [VENV_PY, os.path.abspath(script)] + sys.argv[1:])
