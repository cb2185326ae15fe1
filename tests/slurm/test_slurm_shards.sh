#!/usr/bin/env bash
# kbv slurm against a real single-node Slurm (Debian's slurm-wlm and munge, started here by
# local_slurm.sh, stopped at the end whatever happens): a 2-shard job array over a small corpus
# with the fake worker, the dependent merge job, and the merged DB compared with a single
# `kbv run` of the same corpus by natural key and every field the fake worker decides.
#   test_slurm_shards.sh KBV FAKE_WORKER
# Fails (with the daemons' logs) when Slurm cannot be started; KBV_SKIP_SLURM=1 skips it (exit 77).
set -euo pipefail
KBV="$(realpath "$1")"
FAKE_WORKER="$(realpath "$2")"
SHARDS=2
WAIT_SECONDS=150

if [ "${KBV_SKIP_SLURM:-0}" = 1 ]; then
  echo "slurm test: skipped (KBV_SKIP_SLURM=1)"
  exit 77
fi
start_time=$SECONDS
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=local_slurm.sh
source "$here/local_slurm.sh"

T="$(mktemp -d /tmp/kbv-slurm-test.XXXXXX)"
finish() {
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "slurm test: FAILED (exit $rc); what the daemons and jobs said:"
    local_slurm_logs
    for f in "$T"/work/*.log "$T"/submit.log; do
      [ -f "$f" ] && { echo "----- $f -----"; tail -n 40 "$f"; }
    done
    [ -n "${SLURM_CONF:-}" ] && { scontrol show job 2>&1 | tail -n 60 || true; }
  fi
  local_slurm_stop
  rm -rf "$T"
  exit $rc
}
trap finish EXIT
fail() { echo "slurm test: FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "slurmd must run as root to start jobs (CI machines are root); KBV_SKIP_SLURM=1 skips this test"
command -v sqlite3 >/dev/null || fail "sqlite3 not found; scripts/setup.sh installs it"

# The corpus: 4 problems, 3 runs, 14 candidates, a few failing on purpose.
mkdir -p "$T/suite/level1" "$T/runs"
for p in 1 2 3 4; do echo "# problem $p" > "$T/suite/level1/${p}_P$p.py"; done
candidate() {  # run problem sample [fake-worker directive]
  mkdir -p "$T/runs/$1"
  { echo "# candidate $1 $2 $3"; [ -n "${4:-}" ] && echo "# fake-worker: $4"; true; } \
    > "$T/runs/$1/level_1_problem_$2_sample_$3_kernel.py"
}
for run in model-a model-b model-c; do
  for p in 1 2 3 4; do candidate "$run" "$p" 0; done
done
candidate model-a 2 1 outcome=incorrect
candidate model-b 3 1 outcome=runtime_error
sed -i '$a # fake-worker: outcome=incorrect' "$T/runs/model-c/level_1_problem_4_sample_0_kernel.py"

export KBV_WORKER="$FAKE_WORKER"
run_args=(--problems "$T/suite" --runs "$T/runs" --device cpu --protocol standard,verified --jobs 1 --quiet)

# The reference: one process, one DB.
KBV_CACHE="$T/cache-single" "$KBV" run "${run_args[@]}" --db "$T/single.db" || fail "single kbv run failed"

local_slurm_start "$T/slurm" || fail "could not start a local Slurm (its logs below)"
echo "slurm test: Slurm up after $((SECONDS - start_time)) s"

# KBV_WORKER and KBV_CACHE reach the jobs through sbatch --export=ALL (kbv slurm passes it).
export KBV_CACHE="$T/cache-slurm"
(cd "$T" && "$KBV" slurm --shards $SHARDS --db "$T/merged.db" --work-dir "$T/work" -- "${run_args[@]}") > "$T/submit.log" 2>&1 \
  || fail "kbv slurm failed: $(cat "$T/submit.log")"
cat "$T/submit.log"
array_job=$(sed -n 's/^kbv slurm: array job \([0-9]*\), merge job \([0-9]*\)$/\1/p' "$T/submit.log")
merge_job=$(sed -n 's/^kbv slurm: array job \([0-9]*\), merge job \([0-9]*\)$/\2/p' "$T/submit.log")
[ -n "$array_job" ] && [ -n "$merge_job" ] || fail "no job ids in kbv slurm's output"

# Wait for the merge job: it runs only once every shard ended well.
deadline=$((SECONDS + WAIT_SECONDS))
while :; do
  info=$(scontrol show job -o "$merge_job" 2>&1 || true)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<< "$info")
  reason=$(sed -n 's/.* Reason=\([^ ]*\).*/\1/p' <<< "$info")
  case "$state" in
    COMPLETED) break ;;
    FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) fail "merge job $merge_job ended $state" ;;
  esac
  [ "$reason" = DependencyNeverSatisfied ] && fail "a shard of array job $array_job failed, so the merge never runs: $(scontrol show job -o "$array_job")"
  [ $SECONDS -lt $deadline ] || fail "merge job $merge_job not done after ${WAIT_SECONDS} s (state $state, reason $reason)"
  sleep 0.5
done
echo "slurm test: merge job done after $((SECONDS - start_time)) s"

q() { sqlite3 -batch -noheader "$1" "$2"; }
# Every field the fake worker decides, by natural key.
by_key="SELECT run_name, level, problem_id, sample_id, protocol, protocol_version, precision, problem_size,
  device_fingerprint, problem_sha256, candidate_sha256, outcome, reason, stage, compiled, correct
  FROM verdicts ORDER BY run_name, level, problem_id, sample_id, protocol"
single_rows=$(q "$T/single.db" "$by_key")
merged_rows=$(q "$T/merged.db" "$by_key")
[ "$(wc -l <<< "$single_rows")" = 28 ] || fail "the single run holds $(wc -l <<< "$single_rows") verdicts, not 28"
if [ "$single_rows" != "$merged_rows" ]; then
  diff <(echo "$single_rows") <(echo "$merged_rows") || true
  fail "the merged DB differs from the single run (diff above: < single, > merged)"
fi

# The shards split the work: each did some, none did a job twice, together all of it.
total=0
for ((i = 0; i < SHARDS; i++)); do
  n=$(q "$T/work/kbv-shard-$i-of-$SHARDS.db" "SELECT count(*) FROM verdicts")
  [ "$n" -gt 0 ] || fail "shard $i evaluated nothing"
  [ "$(q "$T/work/kbv-shard-$i-of-$SHARDS.db" "SELECT json_extract(options, '\$.shard') FROM runs")" = "$i/$SHARDS" ] \
    || fail "shard $i's run row does not say which shard it was"
  total=$((total + n))
done
[ "$total" = 28 ] || fail "the shards hold $total verdicts together, not 28"

# Provenance: every merged verdict points at a run copied from its shard's DB.
orphans=$(q "$T/merged.db" "SELECT count(*) FROM verdicts v LEFT JOIN runs r ON r.id = v.run_id
  WHERE json_extract(r.options, '\$.merged_from.db') IS NULL OR json_extract(r.options, '\$.merged_from.db') NOT LIKE '$T/work/kbv-shard-_-of-$SHARDS.db'
     OR json_extract(r.options, '\$.shard') IS NULL OR r.id IS NULL")
[ "$orphans" = 0 ] || fail "$orphans merged verdict(s) without their shard's run"

# Merging again changes nothing.
before=$(sqlite3 "$T/merged.db" .dump)
"$KBV" merge "$T/merged.db" "$T"/work/kbv-shard-*-of-$SHARDS.db > "$T/remerge.log" || fail "kbv merge again failed"
[ "$before" = "$(sqlite3 "$T/merged.db" .dump)" ] || fail "merging the same shards again changed the merged DB"

echo "slurm test: OK, $total verdicts in $SHARDS shards merged equal to one run; wall $((SECONDS - start_time)) s"
