#!/usr/bin/env bash
# Everything that needs the GPU, in one command (the device tool's budget is short):
# builds kbv there, runs the 'gpu' test label (and the CPU tiers, which are quick with 16 cores),
# evaluates the CUDA examples, and prints a summary table last. Logs and verdicts go to $OUT.
#   On this machine first: scripts/stage_gpu_deps.sh; then run with carry [".gpu-deps"].
#   KBV_GPU_STEPS="build tests examples" selects steps; KBV_DEMO_RUNS picks a runs folder (a subset);
#   KBV_GPU_TARGETS="kbv kbv-judge kbv-sandbox" builds only those (enough for examples, hacks, demo).
#   Steps: build tests examples hacks attacks split numerics baselines idle demo throughput corpus held profile ab buildab apibatch
#   warmbatch (a batch through warm judges and through a judge each) warmcompare (their verdicts on the examples).
#   profile: KBV_PROF_ARGS (kbv run options, e.g. --ids 1,2,3): a run that builds, then a warm run whose
#   judges write their step profiles (KBV_JUDGE_PROFILE), summed by bench/probes/summarize_profile.py.
#   throughput: KBV_TP_PRESTART, KBV_TP_ARGS, KBV_TP_SECONDS, KBV_TP_CORPUS; KBV_TP_THEN (one more run
#   with those options instead, compared with the first).
set -uo pipefail
cd "$(dirname "$0")/.."
# The device tool brings back at most 8 files: everything is written under $OUT/w and packed
# into $OUT/gpu_check.tgz at the end; the summaries are copied beside it.
FINAL_OUT="${OUT:-/tmp/kbv-gpu-out}"
OUT="$FINAL_OUT/w"
mkdir -p "$OUT"
pack() {
  [ -d "$OUT" ] || return 0
  tar czf "$FINAL_OUT/gpu_check.tgz" -C "$OUT" . 2>/dev/null
  cp "$OUT"/*summary.md "$OUT/ctest.log" "$FINAL_OUT/" 2>/dev/null
  rm -rf "$OUT"
}
trap pack EXIT
trap 'pack; exit 143' TERM  # a device-side timeout still brings back what was written
STEPS="${KBV_GPU_STEPS:-build tests examples hacks attacks}"
BUILD=build-gpu
PY="$(command -v python3)"
export PATH="$(dirname "$PY"):$PATH"
export TORCH_CUDA_ARCH_LIST=9.0

deps=()
if [ ! -f /usr/include/openssl/evp.h ] && [ -d .gpu-deps ]; then
  mkdir -p .gpu-deps/lib
  ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3)" .gpu-deps/lib/libcrypto.so
  ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libssl.so.3)" .gpu-deps/lib/libssl.so
  deps+=(-DOPENSSL_ROOT_DIR="$PWD/.gpu-deps" -DOPENSSL_INCLUDE_DIR="$PWD/.gpu-deps/include"
         -DOPENSSL_CRYPTO_LIBRARY="$PWD/.gpu-deps/lib/libcrypto.so")
fi

if [ ! -f /usr/include/sqlite3.h ] && [ -d .gpu-deps ]; then
  mkdir -p .gpu-deps/lib
  ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so.0)" .gpu-deps/lib/libsqlite3.so
  deps+=(-DSQLite3_INCLUDE_DIR="$PWD/.gpu-deps/include" -DSQLite3_LIBRARY="$PWD/.gpu-deps/lib/libsqlite3.so")
fi

[ -f .gpu-deps/commit ] && deps+=(-DKBV_GIT_COMMIT="$(cat .gpu-deps/commit)")

if [[ " $STEPS " == *" build "* ]]; then
  echo "== build ($(nproc) cores)"
  start=$(date +%s)
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKBV_PYTHON="$PY" -DKBV_WITH_TORCH=ON \
        -DKBV_ENABLE_GPU_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" >"$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j"$(nproc)" --target ${KBV_GPU_TARGETS:-all} -- -k 0 >"$OUT/build.log" 2>&1 || { echo "BUILD FAILED (continuing with what built):"; grep -E "error:|FAILED" "$OUT/build.log" | head -30; }
  echo "built in $(( $(date +%s) - start )) s"
fi

if [[ " $STEPS " == *" tests "* ]]; then
  echo "== ctest -L gpu ${KBV_GPU_TEST_FILTER:+-R $KBV_GPU_TEST_FILTER}"
  # The exclusive tests judge whether the device is idle: they run after the others, one at a
  # time (RUN_SERIAL alone did not keep PRE_TEST-discovered tests apart).
  (cd "$BUILD" && ctest -L 'gpu' -LE gpu_exclusive ${KBV_GPU_TEST_FILTER:+-R "$KBV_GPU_TEST_FILTER"} ${KBV_GPU_TEST_EXCLUDE:+-E "$KBV_GPU_TEST_EXCLUDE"} --output-on-failure -j"${KBV_GPU_TEST_JOBS:-6}" --timeout 900; a=$?
                 ctest -L gpu_exclusive ${KBV_GPU_TEST_FILTER:+-R "$KBV_GPU_TEST_FILTER"} ${KBV_GPU_TEST_EXCLUDE:+-E "$KBV_GPU_TEST_EXCLUDE"} --output-on-failure -j1 --timeout 900; exit $((a | $?))) >"$OUT/ctest.log" 2>&1
  echo "ctest exit $?"; grep -E "tests passed|tests failed|\*\*\*Failed|Failed  |Timeout" "$OUT/ctest.log" | head -30
fi

if [[ " $STEPS " == *" examples "* ]]; then
  echo "== examples"
  P=examples/problems/level1; C=examples/candidates
  run() {  # name problem candidate [flags...]
    local name=$1 problem=$2 candidate=$3; shift 3
    "$BUILD/bin/kbv" eval "$problem" "$candidate" --device cuda:0 --json "$OUT/v_$name.json" --quiet \
      --build-dir /tmp/kbv-builds "$@" >>"$OUT/examples.log" 2>&1
  }
  run swish_cuda "$P/7_Swish.py" "$C/swish_cuda.py" &
  run relu_cuda "$P/19_ReLU.py" "$C/relu_cuda.py" &
  run linear_relu "$P/40_Linear_ReLU.py" "$C/linear_relu_cuda.py" &
  run raw_scratch "$P/19_ReLU.py" "$C/relu_raw_scratch.py" &
  run relu_wrong "$P/19_ReLU.py" "$C/relu_wrong.py" &
  run illegal "$P/19_ReLU.py" "$C/relu_illegal_address.py" &
  wait  # builds in parallel; the timed ones below run alone
  run shortcut_std "$P/19_ReLU.py" "$C/relu_shape_shortcut.py" --protocol standard
  run shortcut_ver "$P/19_ReLU.py" "$C/relu_shape_shortcut.py" --protocol verified
  run hang "$P/19_ReLU.py" "$C/relu_hang.py" --run-timeout 15
  run segfault "$P/19_ReLU.py" "$C/relu_crash_segfault.py"
  # Re-run the timed examples alone now that they are built: parallel builds must not share the GPU
  # with a timing loop.
  run swish_cuda "$P/7_Swish.py" "$C/swish_cuda.py"
  run relu_cuda "$P/19_ReLU.py" "$C/relu_cuda.py"
  run linear_relu "$P/40_Linear_ReLU.py" "$C/linear_relu_cuda.py"
  run raw_scratch "$P/19_ReLU.py" "$C/relu_raw_scratch.py"
  "$PY" scripts/summarize_verdicts.py "$OUT"/v_*.json | tee "$OUT/summary.md"
fi

if [[ " $STEPS " == *" hacks "* ]]; then
  echo "== hacks (standard vs strict)"
  mkdir -p "$OUT/hacks"
  hack() {  # name: standard then strict
    local f=examples/hacks/$1.py name=$1 problem
    problem=$(grep -o "examples/problems/level1/[0-9A-Za-z_]*\.py" "$f" | head -1)
    [ "$name" = degenerate_zeros ] && problem=examples/hacks/degenerate_problem.py
    [ "$name" = skip_reinit_to_flag_degenerate ] && problem=examples/hacks/degenerate_unless_reinit_problem.py
    [ -n "$problem" ] || { echo "$name: no problem path in its docstring"; return; }
    for protocol in standard strict; do
      "$BUILD/bin/kbv" eval "$problem" "$f" --device cuda:0 --protocol "$protocol" --time-budget 2 \
        --json "$OUT/hacks/v_${name}_${protocol}.json" --quiet --build-dir /tmp/kbv-builds --run-timeout "${KBV_HACKS_RUN_TIMEOUT:-120}" >>"$OUT/hacks.log" 2>&1
    done
  }
  export -f hack; export BUILD OUT KBV_HACKS_RUN_TIMEOUT
  # KBV_HACKS_JOBS > 1 shares the GPU between hacks: their outcomes stand, their speedups do not.
  for f in examples/hacks/${KBV_HACKS_FILTER:-*}.py; do
    name=$(basename "$f" .py); [[ "$name" == *_problem ]] || echo "$name"
  done | xargs -P "${KBV_HACKS_JOBS:-1}" -I{} bash -c 'hack {}'
  "$PY" scripts/summarize_verdicts.py "$OUT"/hacks/v_*.json | tee "$OUT/hacks_summary.md"
  for v in "$OUT"/hacks/v_*.json; do  # where a timed-out one was stuck (the worker's stack dump)
    "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1])); v["outcome"]=="timeout" and print(sys.argv[1], v["output_tail"][-3000:])' "$v"
  done
fi

# The attacks of examples/attacks/ on the GPU, one kbv run beside honest candidates (the CPU
# test tests/integration/test_attacks_cli.cpp checks the same on the CPU).
if [[ " $STEPS " == *" attacks "* ]]; then
  echo "== attacks"
  A="$OUT/attacks"; mkdir -p "$A/suite/level1" "$A/runs/attacks"
  cp examples/problems/level1/19_ReLU.py "$A/suite/level1/"
  # Bundled with their helper (examples/attacks/bundle.py): the sandbox sees the candidate file alone.
  i=0; pairs=()
  for f in examples/attacks/[a-z]*.py examples/candidates/relu_cuda.py; do
    [ "$(basename "$f")" = bundle.py ] && continue
    # It takes the whole disk its build entry lies on (its test gives it a tmpfs of its own).
    [ "$(basename "$f")" = disk_full_excuse.py ] && continue
    pairs+=("$f:$A/runs/attacks/level_1_problem_19_sample_${i}_kernel.py"); echo "$i $(basename "$f")" >> "$A/samples.txt"; i=$((i+1))
  done
  "$PY" examples/attacks/bundle.py --set connect_port=1 "${pairs[@]}"
  OPENAI_API_KEY=kbv-secret-marker-gpu "$BUILD/bin/kbv" run --problems "$A/suite" --runs "$A/runs" --db "$A/kbv.db" \
    --protocol strict --time-budget 1 --run-timeout 30 --sandbox-memory 8 --jobs 16 --build-dir /tmp/kbv-builds >"$A/run.log" 2>&1
  echo "kbv run exit $?"
  "$BUILD/bin/kbv" report --db "$A/kbv.db" --csv "$A/verdicts.csv" --quiet
  cut -d, -f1-12 "$A/verdicts.csv" | head -30; cat "$A/samples.txt"
  pgrep -af "kbv-attack" && echo "LEFT BEHIND" || echo "no attack process left"
  grep -l kbv-secret-marker-gpu "$A"/*.csv && echo "SECRET LEAKED" || echo "no secret in the verdicts"
fi

# The judge/sandbox split end to end, in two kbv runs (builds in parallel, evaluations one at a
# time): the CUDA examples and hacks under standard and strict (speedups against session 4's
# one-process figures; side-stream hacks must gain nothing), then the attacks under strict.
if [[ " $STEPS " == *" split "* ]]; then
  echo "== split: examples and hacks (standard, strict)"
  S="$OUT/split"; mkdir -p "$S/attacks/attacks"
  scripts/split_corpus.sh "$S"
  start=$(date +%s)
  "$BUILD/bin/kbv" run --problems "$S/suite" --runs "$S/runs" --db "$S/split.db" --protocol standard,strict \
    --time-budget "${KBV_SPLIT_BUDGET:-1}" --run-timeout 120 --jobs 16 --build-dir /tmp/kbv-builds >"$S/run.log" 2>&1
  echo "kbv run exit $? after $(( $(date +%s) - start )) s"; grep -v "^\[" "$S/run.log" | tail -8
  echo "== split: attacks (strict)"
  j=0; pairs=(); for a in forged_verdict kill_parent malformed_messages fork_children read_secrets network_connect write_outside db_rewrite build_cache_overwrite reference_patched late_verdict_escaped; do
    pairs+=("examples/attacks/$a.py:$S/attacks/attacks/level_1_problem_19_sample_${j}_kernel.py"); echo "attacks 19 $j $a" >> "$S/samples.txt"; j=$((j+1)); done
  "$PY" examples/attacks/bundle.py --set connect_port=1 "${pairs[@]}"
  start=$(date +%s)
  OPENAI_API_KEY=kbv-secret-marker-gpu "$BUILD/bin/kbv" run --problems "$S/suite" --runs "$S/attacks" --db "$S/attacks.db" \
    --protocol strict --time-budget 0.5 --run-timeout 60 --jobs 16 --build-dir /tmp/kbv-builds >"$S/attacks_run.log" 2>&1
  echo "kbv run exit $? after $(( $(date +%s) - start )) s"; sleep 4
  pgrep -af "kbv-attack" && echo "LEFT BEHIND" || echo "no attack process left"
  "$PY" scripts/summarize_split.py "$S/split.db" "$S/attacks.db" "$S/samples.txt" | tee "$OUT/split_summary.md"
  grep -c kbv-secret-marker-gpu "$S/attacks.db" 2>/dev/null | sed 's/^/secret occurrences in the attacks DB: /'
fi

# The numerics model on real GPU kernels (examples/numerics): honest kernels that only sum in
# another order must be correct under every protocol; the one that drops terms must not.
if [[ " $STEPS " == *" numerics "* ]]; then
  echo "== numerics (standard, verified, strict)"
  N="$OUT/numerics"; mkdir -p "$N/suite/level1" "$N/runs/numerics"
  cp examples/numerics/[0-9]*.py "$N/suite/level1/"
  put() { cp "examples/numerics/$1.py" "$N/runs/numerics/level_1_problem_$2_sample_$3_kernel.py"; echo "$2 $3 $1" >> "$N/samples.txt"; }
  put matmul_large_k_splitk 6 0; put matmul_large_k_drops_tail 6 1
  put matmul_transposed_a_tiled 16 0; put masked_cumsum_block_scan 93 0
  start=$(date +%s)
  "$BUILD/bin/kbv" run --problems "$N/suite" --runs "$N/runs" --db "$N/numerics.db" --protocol standard,verified,strict \
    --time-budget 0.5 --run-timeout 300 --jobs 16 --build-dir /tmp/kbv-builds >"$N/run.log" 2>&1
  echo "kbv run exit $? after $(( $(date +%s) - start )) s"; grep -v "^\[" "$N/run.log" | tail -4; cat "$N/samples.txt"
  "$PY" scripts/summarize_numerics.py "$N/numerics.db" | tee "$OUT/numerics_summary.md"
fi

# The torch_compile baseline (cold compile, then inductor's cache), hidden-test files, and the
# no-kernel candidate whose samples stay whole below the hop (the stopping rule decides on the
# ratio it reports).
if [[ " $STEPS " == *" baselines "* ]]; then
  echo "== baselines: torch_compile, hidden tests, below the hop"
  B="$OUT/baselines"; mkdir -p "$B"
  P=examples/problems/level1; C=examples/candidates; H=tests/integration/fixtures/hidden
  ev() {  # name problem candidate [flags...]
    local name=$1 problem=$2 candidate=$3; shift 3
    local start; start=$(date +%s%N)
    "$BUILD/bin/kbv" eval "$problem" "$candidate" --device cuda:0 --json "$B/v_$name.json" --quiet \
      --build-dir /tmp/kbv-builds "$@" >>"$B/eval.log" 2>&1
    echo "$name: exit $? in $(( ($(date +%s%N) - start) / 1000000 )) ms"
  }
  ev compile_cold_swish "$P/7_Swish.py" "$C/swish_cuda.py" --torch-compile --time-budget 2
  ev compile_warm_swish "$P/7_Swish.py" "$C/swish_cuda.py" --torch-compile --time-budget 2
  ev compile_linear_relu "$P/40_Linear_ReLU.py" "$C/linear_relu_cuda.py" --torch-compile --time-budget 2
  ev plain_swish "$P/7_Swish.py" "$C/swish_cuda.py" --time-budget 2
  ev hidden_honest "$H/problems/level1/1_Double.py" "$H/honest.py" --hidden-test "$H/hidden_tests/level1/1_hidden.py" --protocol verified
  ev hidden_small_only "$H/problems/level1/1_Double.py" "$H/small_values_only.py" --hidden-test "$H/hidden_tests/level1/1_hidden.py" --protocol verified
  ev hidden_counting "$H/problems/level1/1_Double.py" "$H/counting_small_values.py" --hidden-test "$H/hidden_tests_large/level1/1_hidden.py" --protocol verified --time-budget 2
  ev compile_strict_relu "$P/19_ReLU.py" "$C/relu_cuda.py" --torch-compile --protocol strict --time-budget 2
  ev shortcut_std "$P/19_ReLU.py" "$C/relu_shape_shortcut.py" --protocol standard --time-budget 2
  ev stalled_identity_std "$P/19_ReLU.py" examples/hacks/stalled_identity.py --protocol standard --time-budget 2
  "$PY" scripts/summarize_verdicts.py "$B"/v_*.json | tee "$OUT/baselines_summary.md"
  for v in "$B"/v_*.json; do
    "$PY" - "$v" <<'PYEOF'
import json, sys
v = json.load(open(sys.argv[1]))
t = v.get("timing") or {}
sp = {s["baseline"]: round(s["median"], 3) for s in t.get("speedups", [])}
ser = {s["name"]: round(s["median_ms"], 4) for s in t.get("series", [])}
d = [(x["name"], x["status"]) for x in (v.get("correctness") or {}).get("distributions", []) if x["name"].startswith("hidden")]
print(sys.argv[1].split("/")[-1], v["outcome"], "compile_s=%s" % t.get("torch_compile_seconds"), "stop=%s rounds=%s" % (t.get("stop_reason"), t.get("rounds")),
      "speedups=%s" % sp, "series_ms=%s" % ser, "hidden=%s" % d, "warnings=%s" % [w[:120] for w in v.get("warnings", [])])
PYEOF
  done | tee -a "$OUT/baselines_summary.md"
fi

# Baselines the candidate cannot slow, and memory the judge sees (docs/checks.md): the honest
# controls (their hop against the idle device's, the sandbox frozen), the persistent kernel
# (device_busy), the burners, the parked gigabyte (process_bytes). One evaluation at a time.
if [[ " $STEPS " == *" idle "* ]]; then
  echo "== idle: frozen baselines, device_busy, process memory"
  P=examples/problems/level1; H=examples/hacks; C=examples/candidates
  ev() {  # name protocol problem candidate
    "$BUILD/bin/kbv" eval "$3" "$4" --device cuda:0 --protocol "$2" --json "$OUT/i_$1.json" --quiet \
      --build-dir /tmp/kbv-builds --time-budget 1 --run-timeout 60 >>"$OUT/idle.log" 2>&1
    echo "$1: $?"
  }
  # Build the extensions in parallel first (correctness only), then evaluate one at a time.
  for c in "$C/relu_cuda.py" "$C/swish_cuda.py" "$H/persistent_kernel.py"; do
    "$BUILD/bin/kbv" eval "$P/19_ReLU.py" "$c" --device cuda:0 --no-timing --build-dir /tmp/kbv-builds --quiet --run-timeout 60 >>"$OUT/idle.log" 2>&1 &
  done; wait
  ev relu_cuda_strict strict "$P/19_ReLU.py" "$C/relu_cuda.py"
  ev swish_cuda_strict strict "$P/7_Swish.py" "$C/swish_cuda.py"
  ev swish_cuda_standard standard "$P/7_Swish.py" "$C/swish_cuda.py"
  ev persistent_strict strict "$P/19_ReLU.py" "$H/persistent_kernel.py"
  ev persistent_standard standard "$P/19_ReLU.py" "$H/persistent_kernel.py"
  ev parked_strict strict "$P/19_ReLU.py" "$H/memory_parked_in_torch.py"
  ev burners_standard standard "$P/94_MSELoss.py" "$H/burner_processes.py"
  ev backend_state_standard standard "$P/40_Linear_ReLU.py" "$H/backend_state_at_import.py"
  "$PY" scripts/summarize_verdicts.py "$OUT"/i_*.json | tee "$OUT/idle_summary.md"
  for f in "$OUT"/i_*.json; do
    "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1])); print(sys.argv[1].rsplit("/",1)[-1], v["outcome"], [f["evidence"][:300] for f in v.get("flags",[])], [w[:300] for w in v.get("warnings",[])], v.get("stage_seconds"))' "$f"
  done
fi

# The demo corpus (runs/) on the built-in suite, into a DB kept in out/ (ignored by git, so it
# stays on a warm machine between calls and a cut-short run resumes).
# bench/throughput.sh on a corpus (KBV_TP_CORPUS, default bench/corpus-l1), once per value of
# KBV_TP_PRESTART (e.g. "2 0": the first run builds, the rest find the builds cached; each gets
# its own DB), then the verdicts of the first run against each later one.
if [[ " $STEPS " == *" throughput "* ]]; then
  first=""
  for ps in ${KBV_TP_PRESTART:-2}; do
    echo "== throughput ${KBV_TP_CORPUS:-bench/corpus-l1} --prestart $ps ${KBV_TP_ARGS:-}"
    mkdir -p "$OUT/throughput-p$ps"
    OUT="$OUT/throughput-p$ps" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-500}" \
      bench/throughput.sh "${KBV_TP_CORPUS:-bench/corpus-l1}" --jobs "$(nproc)" --prestart "$ps" ${KBV_TP_ARGS:-} \
      | tee "$OUT/throughput-p$ps-summary.md"
    grep -E "kbv run: |evaluation time|done ahead" "$OUT/throughput-p$ps/run.log" | grep -v "^\[" | tail -8
    if [ -z "$first" ]; then first=$ps
    else "$PY" scripts/compare_verdicts.py "$OUT/throughput-p$first/throughput.db" "$OUT/throughput-p$ps/throughput.db" \
      | tee "$OUT/throughput-compare-$first-$ps-summary.md" | tail -25; fi
  done
  # KBV_TP_THEN: one more run on the same (now warm) build cache with these kbv run options instead
  # of KBV_TP_ARGS (e.g. "--sandbox-per-protocol --ids 1,2"), compared with the first.
  if [ -n "${KBV_TP_THEN:-}" ]; then
    echo "== throughput ${KBV_TP_CORPUS:-bench/corpus-l1} --prestart $first ${KBV_TP_THEN}"
    mkdir -p "$OUT/throughput-then"
    OUT="$OUT/throughput-then" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-500}" \
      bench/throughput.sh "${KBV_TP_CORPUS:-bench/corpus-l1}" --jobs "$(nproc)" --prestart "$first" ${KBV_TP_THEN} \
      | tee "$OUT/throughput-then-summary.md"
    "$PY" scripts/compare_verdicts.py "$OUT/throughput-then/throughput.db" "$OUT/throughput-p$first/throughput.db" \
      | tee "$OUT/throughput-compare-then-summary.md" | tail -25
  fi
fi

# ab: the values of one environment variable compared on the warm corpus (KBV_AB_VAR, KBV_AB_VALUES,
# default "off on", KBV_AB_ROUNDS alternations, default 2), after one cold run that fills the build
# cache; every warm run profiled (KBV_JUDGE_PROFILE, per value), and the last round's verdicts of
# each value against the first value's.
if [[ " $STEPS " == *" ab "* ]]; then
  var="${KBV_AB_VAR:?step ab needs KBV_AB_VAR}"; read -ra values <<< "${KBV_AB_VALUES:-off on}"
  corpus="${KBV_TP_CORPUS:-bench/corpus-l1}"; rounds="${KBV_AB_ROUNDS:-2}"
  echo "== ab $var: ${values[*]}, $rounds rounds, $corpus ${KBV_PROF_ARGS:-}"
  OUT="$OUT/ab-cold" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-300}" \
    bench/throughput.sh "$corpus" --jobs "$(nproc)" ${KBV_PROF_ARGS:-} | grep -E "^(verdicts|evaluation phase|build CPU)" | sed 's/^/cold: /'
  for r in $(seq 1 "$rounds"); do
    for v in "${values[@]}"; do
      mkdir -p "$OUT/ab-profile-$v"
      env "$var=$v" KBV_JUDGE_PROFILE="$OUT/ab-profile-$v" OUT="$OUT/ab-$v-$r" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-300}" \
        bench/throughput.sh "$corpus" --jobs "$(nproc)" ${KBV_PROF_ARGS:-} | grep -E "^(evaluation phase|speedups within|outcomes)" | sed "s/^/$var=$v round $r: /"
    done
  done | tee "$OUT/ab-runs-summary.md"
  for v in "${values[@]}"; do "$PY" bench/probes/summarize_profile.py "$OUT/ab-profile-$v" > "$OUT/ab-steps-$v-summary.md"; done
  for v in "${values[@]:1}"; do
    "$PY" scripts/compare_verdicts.py "$OUT/ab-${values[0]}-$rounds/throughput.db" "$OUT/ab-$v-$rounds/throughput.db" \
      | tee "$OUT/ab-compare-$v-summary.md" | tail -6
  done
fi

# buildab: the values of one environment variable compared on cold builds (KBV_AB_VAR, KBV_AB_VALUES,
# default "off on"): one bench/throughput.sh run per value, each into a build folder of its own that
# starts empty (the torch PCH made again too), with the build CPU a source and how each extension
# was built (build.extensions[] of the verdicts); then the verdicts of each value against the first.
if [[ " $STEPS " == *" buildab "* ]]; then
  var="${KBV_AB_VAR:?step buildab needs KBV_AB_VAR}"; read -ra values <<< "${KBV_AB_VALUES:-off on}"
  corpus="${KBV_TP_CORPUS:-bench/corpus-l1}"
  echo "== buildab $var: ${values[*]}, $corpus ${KBV_PROF_ARGS:-}"
  for v in "${values[@]}"; do
    rm -rf "/tmp/kbv-buildab-$v"; mkdir -p "/tmp/kbv-buildab-$v"
    env "$var=$v" OUT="$OUT/buildab-$v" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-300}" \
      bench/throughput.sh "$corpus" --jobs "$(nproc)" --build-dir "/tmp/kbv-buildab-$v" ${KBV_PROF_ARGS:-} \
      | grep -E "^(verdicts|evaluation phase|build phase|build CPU|speedups within|outcomes)" | sed "s/^/$var=$v: /"
    "$PY" - "$OUT/buildab-$v/throughput.db" "$var=$v" <<'PYEOF'
import collections, json, sqlite3, sys
ways = collections.Counter()
for (v,) in sqlite3.connect(sys.argv[1]).execute("SELECT verdict_json FROM verdicts"):
    for e in (json.loads(v).get("build") or {}).get("extensions", []):
        ways[(e.get("lean_prelude"), e.get("extension_h_left_out"))] += 1
print(sys.argv[2] + ": extensions by (lean_prelude, extension_h_left_out):", dict(ways))
PYEOF
  done | tee "$OUT/buildab-summary.md"
  # Then the last value again on its now-warm build folder, profiled: the warm figure of this tree.
  last="${values[-1]}"; mkdir -p "$OUT/buildab-warm-profile"
  env "$var=$last" KBV_JUDGE_PROFILE="$OUT/buildab-warm-profile" OUT="$OUT/buildab-warm" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-300}" \
    bench/throughput.sh "$corpus" --jobs "$(nproc)" --build-dir "/tmp/kbv-buildab-$last" ${KBV_PROF_ARGS:-} \
    | grep -E "^(verdicts|evaluation phase|build phase|speedups within|outcomes)" | sed "s/^/warm $var=$last: /" | tee -a "$OUT/buildab-summary.md"
  "$PY" bench/probes/summarize_profile.py "$OUT/buildab-warm-profile" > "$OUT/buildab-warm-steps-summary.md"
  for v in "${values[@]:1}"; do
    "$PY" scripts/compare_verdicts.py "$OUT/buildab-${values[0]}/throughput.db" "$OUT/buildab-$v/throughput.db" \
      | tee "$OUT/buildab-compare-$v-summary.md" | tail -6
  done
fi

# A judge held in the driver after a candidate's illegal address (session 13): relu_illegal_address
# beside relu_cuda under standard alone and under strict,standard; the judge's watchdog must end
# each such evaluation about 10 s after the candidate's process ended (runtime_error), and the
# next evaluation must run. The probe samples the judges' native stacks while they spin.
if [[ " $STEPS " == *" held "* ]]; then
  echo "== held: relu_illegal_address, the judge's watchdog"
  for protocols in standard strict,standard; do
    start=$(date +%s)
    KBV_PROBE_BUILDS=/tmp/kbv-held-builds bench/probes/illegal_address_stack.sh "$PWD/$BUILD/bin/kbv" "$OUT/held-${protocols/,/-}" "$protocols" 150 \
      > "$OUT/held-${protocols/,/-}.log" 2>&1
    echo "$protocols: $(( $(date +%s) - start )) s"; grep -E "ended after|still running" "$OUT/held-${protocols/,/-}.log"
    "$PY" -c 'import sqlite3,sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute("select sample_id, protocol, outcome, round(wall_seconds,1), substr(reason,1,240) from verdicts order by id")]' \
      "$OUT/held-${protocols/,/-}/kbv.db" 2>&1
  done
fi

if [[ " $STEPS " == *" demo "* ]]; then
  echo "== demo: kbv run (protocols ${KBV_DEMO_PROTOCOLS:-standard,verified,strict})"
  mkdir -p out/gpu-demo
  DB="${KBV_DEMO_DB:-out/gpu-demo/kbv.db}"
  start=$(date +%s)
  timeout "${KBV_DEMO_SECONDS:-400}" "$BUILD/bin/kbv" run --problems problems --runs "${KBV_DEMO_RUNS:-runs}" --db "$DB" \
    --protocol "${KBV_DEMO_PROTOCOLS:-standard,verified,strict}" --time-budget "${KBV_DEMO_BUDGET:-1}" \
    --jobs 16 >"$OUT/demo_run.log" 2>&1
  echo "kbv run exit $? after $(( $(date +%s) - start )) s"; grep -v "^\[" "$OUT/demo_run.log" | tail -12; tail -c 300 "$OUT/demo_run.log"; echo
  "$BUILD/bin/kbv" report --db "$DB" --md "$OUT/report.md" --html "$OUT/report.html" --json "$OUT/report.json" --quiet
  cp "$OUT/report.md" "$OUT/report.html" "$FINAL_OUT/" 2>/dev/null
  cp "$DB" "$FINAL_OUT/demo.db"
  head -c 6000 "$OUT/report.md"
fi

# Where a warm evaluation's time goes inside its stages: a run that builds (its figures are the
# cold ones), then the same corpus again with the builds cached and every judge writing its step
# profile (src/judge/profile.hpp).
# A batch of completions of one problem through the Python API (bench/api_batch.py, issue 36):
# correctness only, then timed; every judge writes its step profile, summed per batch.
# KBV_API_ARGS: api_batch.py's options (default: 16 completions of problems/level1/7_ReLU.py).
if [[ " $STEPS " == *" apibatch "* ]]; then
  for mode in untimed timed; do
    echo "== api batch ($mode) ${KBV_API_ARGS:-}"
    mkdir -p "$OUT/api-$mode-judges"
    extra=(); [ "$mode" = timed ] && extra=(--timing)
    KBV_BIN="$BUILD/bin/kbv" KBV_JUDGE_PROFILE="$OUT/api-$mode-judges" PYTHONPATH="$PWD/python" \
      "$PY" bench/api_batch.py --problem problems/level1/7_ReLU.py --device cuda:0 ${KBV_API_ARGS:-} "${extra[@]}" \
      --json "$OUT/api-$mode.json" 2>&1 | tee "$OUT/api-$mode-summary.md"
    "$PY" bench/probes/summarize_profile.py "$OUT/api-$mode-judges" | tee -a "$OUT/api-$mode-summary.md"
  done
fi

if [[ " $STEPS " == *" warmbatch "* ]]; then
  # A batch of one problem's completions with warm judges (the default) and with a judge each.
  for mode in timed untimed; do
    for judge in warm cold; do
      echo "== api batch ($mode, $judge) ${KBV_API_ARGS:-}"
      extra=(); [ "$mode" = timed ] && extra+=(--timing); [ "$judge" = cold ] && extra+=(--cold)
      KBV_BIN="$BUILD/bin/kbv" PYTHONPATH="$PWD/python" \
        "$PY" bench/api_batch.py --problem problems/level1/7_ReLU.py --device cuda:0 ${KBV_API_ARGS:-} "${extra[@]}" \
        --json "$OUT/api-$mode-$judge.json" 2>&1 | tee "$OUT/api-$mode-$judge-summary.md" | tail -3
    done
  done
fi

if [[ " $STEPS " == *" warmcompare "* ]]; then
  echo "== warm vs cold verdicts: examples/candidates/relu_* and examples/hacks on 19_ReLU"
  KBV_BIN="$BUILD/bin/kbv" PYTHONPATH="$PWD/python" "$PY" bench/warm_vs_cold.py --device cuda:0 ${KBV_WVC_ARGS:-} \
    examples/candidates/relu_*.py examples/hacks 2>&1 | tee "$OUT/warm-vs-cold-summary.md" | tail -70
fi

# corpus: bench/throughput.sh on each entry of KBV_CORPORA ("PATH[:SECONDS] ...", default
# "bench/corpus-kbv-torch:150 bench/corpus-kbv:300"), each stopped after its seconds as Ctrl-C would
# (the verdicts so far count), every judge writing its step profile; outcomes and steps summed. The
# same corpus twice is cold, then warm (its builds cached by the first).
if [[ " $STEPS " == *" corpus "* ]]; then
  i=0
  for entry in ${KBV_CORPORA:-bench/corpus-kbv-torch:150 bench/corpus-kbv:300}; do
    corpus="${entry%%:*}"; seconds=300; [[ "$entry" == *:* ]] && seconds="${entry##*:}"
    i=$((i + 1)); name="corpus$i-$(basename "$corpus")"
    echo "== corpus $corpus ${KBV_TP_ARGS:-} (stopped after $seconds s)"
    mkdir -p "$OUT/$name-judges"
    KBV_JUDGE_PROFILE="$OUT/$name-judges" OUT="$OUT/$name" KBV="$BUILD/bin/kbv" LIMIT="$seconds" \
      bench/throughput.sh "$corpus" --jobs "$(nproc)" ${KBV_TP_ARGS:-} | tee "$OUT/$name-summary.md"
    "$PY" bench/probes/outcomes.py "$OUT/$name/throughput.db" | tee -a "$OUT/$name-summary.md" | head -40
    "$PY" bench/probes/summarize_profile.py "$OUT/$name-judges" | tee -a "$OUT/$name-summary.md"
  done
fi

if [[ " $STEPS " == *" profile "* ]]; then
  echo "== profile ${KBV_TP_CORPUS:-bench/corpus-l1} ${KBV_PROF_ARGS:-}"
  mkdir -p "$OUT/profile-cold" "$OUT/profile-warm" "$OUT/profile-judges"
  OUT="$OUT/profile-cold" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-300}" \
    bench/throughput.sh "${KBV_TP_CORPUS:-bench/corpus-l1}" --jobs "$(nproc)" ${KBV_PROF_ARGS:-} | tee "$OUT/profile-cold-summary.md"
  KBV_JUDGE_PROFILE="$OUT/profile-judges" OUT="$OUT/profile-warm" KBV="$BUILD/bin/kbv" timeout "${KBV_TP_SECONDS:-300}" \
    bench/throughput.sh "${KBV_TP_CORPUS:-bench/corpus-l1}" --jobs "$(nproc)" ${KBV_PROF_ARGS:-} | tee "$OUT/profile-warm-summary.md"
  "$PY" bench/probes/summarize_profile.py "$OUT/profile-judges" | tee "$OUT/profile-steps-summary.md"
fi
