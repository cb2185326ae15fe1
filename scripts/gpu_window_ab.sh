#!/usr/bin/env bash
# A/B of the call window on the GPU machine (issue 33): the tree as it is against an older kbv
# (its src/, apps/, cmake/ unpacked under .gpu-deps/old by the caller, e.g.
#   mkdir -p .gpu-deps/old && git archive <commit> -- src apps cmake CMakeLists.txt CMakePresets.json | tar x -C .gpu-deps/old
# then carry [".gpu-deps"]), on the same card in one call: both built, the demo corpus (runs/) under
# both with one build cache (old cold, new warm, old warm, so the two warm runs compare), relu_cuda
# and swish_cuda under both, scripts/compare_verdicts.py old vs new. Files under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/kbv-ab}"; mkdir -p "$OUT"
PY="$(command -v python3)"; export PATH="$(dirname "$PY"):$PATH"; export TORCH_CUDA_ARCH_LIST=9.0
deps=()
if [ ! -f /usr/include/openssl/evp.h ]; then
  mkdir -p .gpu-deps/lib
  ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3)" .gpu-deps/lib/libcrypto.so
  deps+=(-DOPENSSL_ROOT_DIR="$PWD/.gpu-deps" -DOPENSSL_INCLUDE_DIR="$PWD/.gpu-deps/include" -DOPENSSL_CRYPTO_LIBRARY="$PWD/.gpu-deps/lib/libcrypto.so")
fi
if [ ! -f /usr/include/sqlite3.h ]; then
  mkdir -p .gpu-deps/lib; ln -sf "$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so.0)" .gpu-deps/lib/libsqlite3.so
  deps+=(-DSQLite3_INCLUDE_DIR="$PWD/.gpu-deps/include" -DSQLite3_LIBRARY="$PWD/.gpu-deps/lib/libsqlite3.so")
fi
build() {  # source-dir build-dir
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKBV_PYTHON="$PY" -DKBV_WITH_TORCH=ON -DKBV_BUILD_TESTS=OFF \
        -DCMAKE_CUDA_ARCHITECTURES=90 "${deps[@]}" >"$OUT/configure-$(basename "$2").log" 2>&1 &&
  cmake --build "$2" -j"$(nproc)" --target kbv kbv-judge kbv-sandbox >"$OUT/build-$(basename "$2").log" 2>&1 ||
  { echo "BUILD FAILED: $2"; grep -E "error:" "$OUT/build-$(basename "$2").log" | head; exit 1; }
}
old=.gpu-deps/old
cp -r problems runs examples scripts "$old/" 2>/dev/null
start=$(date +%s); build . build-gpu; build "$old" build-old; echo "built both in $(( $(date +%s) - start )) s"
demo() {  # build-dir db label
  local s=$(date +%s)
  "$1/bin/kbv" run --problems problems --runs runs --db "$2" --protocol standard,verified,strict --time-budget 0.5 \
    --jobs 16 --build-dir /tmp/kbv-ab-builds >"$OUT/demo-$3.log" 2>&1
  echo "demo $3: exit $? in $(( $(date +%s) - s )) s"; grep -iE "verdicts an hour|evaluations|per hour" "$OUT/demo-$3.log" | tail -3
}
demo build-old "$OUT/old-cold.db" old-cold
demo build-gpu "$OUT/new.db" new-warm
demo build-old "$OUT/old.db" old-warm
"$PY" scripts/compare_verdicts.py "$OUT/old.db" "$OUT/new.db" > "$OUT/compare-old-new.txt"; tail -25 "$OUT/compare-old-new.txt"
for b in build-old build-gpu; do
  for p in standard strict; do
    "$b/bin/kbv" eval examples/problems/level1/19_ReLU.py examples/candidates/relu_cuda.py --device cuda:0 --protocol $p \
      --json "$OUT/relu-$b-$p.json" --quiet --build-dir /tmp/kbv-ab-builds >/dev/null 2>&1
    "$b/bin/kbv" eval examples/problems/level1/7_Swish.py examples/candidates/swish_cuda.py --device cuda:0 --protocol $p \
      --json "$OUT/swish-$b-$p.json" --quiet --build-dir /tmp/kbv-ab-builds >/dev/null 2>&1
  done
done
"$PY" - "$OUT" <<'PYEOF'
import json, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*-build-*.json"))):
    v = json.load(open(f)); t = v.get("timing") or {}
    sp = next((s for s in t.get("speedups", []) if s["baseline"] == t.get("primary_baseline")), {})
    c = next((s for s in t.get("series", []) if s["name"] == "candidate"), {})
    print(f"{os.path.basename(f):28s} {v['outcome']:10s} {sp.get('median',0):.3f}x [{sp.get('ci_low',0):.3f},{sp.get('ci_high',0):.3f}] "
          f"cand {c.get('median_ms',0):.4f} ms rounds {t.get('rounds')} checked {t.get('checked_calls')} s {t.get('seconds',0):.2f}")
PYEOF
