#!/usr/bin/env bash
# Writes the corpus of real PSRO meta-games (tests/fixtures/meta_games/*.nfg): the final
# meta-game of PSRO runs on Kuhn (2 and 3 players) and Leduc with the nash, prd, rm and
# uniform meta-solvers. Sizes are chosen to keep each file under about 1 MB.
#
#   scripts/make-meta-game-corpus.sh            # the corpus, into tests/fixtures/meta_games/
#   scripts/make-meta-game-corpus.sh --leduc-301 DIR
#       # only the Leduc PSRO-nash meta-game of 301 iterations (245x236, 2.3 MB, not in the
#       # repo; lp_robust::lp_solves_the_301_strategy_leduc_meta_game makes its own), into DIR
#
# The binary is target/release/metagame (cargo build --release), or $METAGAME_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${METAGAME_BIN:-target/release/metagame}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME OUT_DIR GAME META_SOLVER ITERATIONS [extra config lines...]
run() {
  local name=$1 out=$2 game=$3 meta=$4 iterations=$5
  shift 5
  {
    printf 'game = "%s"\nalgorithm = "psro"\nmeta_solver = "%s"\nevaluator = "exact"\n' "$game" "$meta"
    printf 'max_iterations = %s\nseed = 0\n' "$iterations"
    printf '%s\n' "$@"
  } > "$tmp/$name.toml"
  "$bin" run "$tmp/$name.toml" --out "$tmp/$name" --json > /dev/null
  mkdir -p "$out"
  cp "$tmp/$name/meta_game.nfg" "$out/$name.nfg"
  printf '%s: %s bytes\n' "$name" "$(wc -c < "$out/$name.nfg")"
}

trembling=('oracle = "exact-br-trembling"' 'tremble = 1e-2')

if [ "${1:-}" = "--leduc-301" ]; then
  # 300 iterations past convergence: the population keeps growing with duplicates of the
  # equilibrium's responses, the hardest kind of meta-game for an exact solver.
  run leduc_nash_301 "${2:?usage: --leduc-301 DIR}" leduc_poker nash 300 "${trembling[@]}" \
    'convergence_tolerance = 0'
  exit 0
fi

out=tests/fixtures/meta_games
run kuhn_nash "$out" kuhn_poker nash 60 'convergence_tolerance = 0'
run kuhn_prd "$out" kuhn_poker prd 100
run kuhn_rm "$out" kuhn_poker rm 100
run kuhn_uniform "$out" kuhn_poker uniform 100
run leduc_nash "$out" leduc_poker nash 150 "${trembling[@]}"
run leduc_prd "$out" leduc_poker prd 100
run leduc_rm "$out" leduc_poker rm 60
run leduc_uniform "$out" leduc_poker uniform 100
run kuhn3_prd "$out" "kuhn_poker(players=3)" prd 15
run kuhn3_rm "$out" "kuhn_poker(players=3)" rm 15
run kuhn3_uniform "$out" "kuhn_poker(players=3)" uniform 20
