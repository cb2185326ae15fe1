#!/usr/bin/env bash
# kbv report / kbv export on a synthetic results DB: every output is written and well-formed,
# and a bad --db fails with a message.  Usage: cli.sh KBV MAKE_REPORT_DB OUT_DIR
set -euo pipefail
kbv=$1 make_db=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$make_db" "$out/results.db" >/dev/null
"$kbv" report --db "$out/results.db" --html "$out/report.html" --csv "$out/verdicts.csv" --json "$out/report.json" \
  > "$out/report.md"
grep -q '^# kbv report' "$out/report.md" || fail "no Markdown on stdout"
grep -q '^## Decomposition' "$out/report.md" || fail "no decomposition section"
grep -q '<svg' "$out/report.html" || fail "no plot in the HTML"
head -1 "$out/verdicts.csv" | grep -q '^run_name,level,problem_id,sample_id,' || fail "unexpected CSV header"
[ "$(wc -l < "$out/verdicts.csv")" -gt 100 ] || fail "CSV has too few rows"
grep -q '"schema": "kbv.report/1"' "$out/report.json" || fail "no JSON report"
"$kbv" report --db "$out/results.db" --protocol standard --md "$out/standard.md" > "$out/quiet.txt"
[ ! -s "$out/quiet.txt" ] || fail "--md FILE should keep stdout empty"
grep -q 'Headline protocol \*\*standard\*\*' "$out/standard.md" || fail "--protocol ignored"
"$kbv" report --fields | grep -q '| `speedup` | REAL | x |' || fail "--fields table"

# One layout, OUT/<run>/eval_results.json, one level per file: runs of two levels need --level.
if "$kbv" export --db "$out/results.db" --out "$out/export" --protocol verified > /dev/null 2> "$out/err4.txt"; then
  fail "a run of two levels must be exported one level at a time"; fi
grep -q -- "--level" "$out/err4.txt" || fail "the refusal should say --level: $(cat "$out/err4.txt")"
[ ! -e "$out/export" ] || fail "a refused export wrote files"
for level in 1 2; do
  "$kbv" export --db "$out/results.db" --out "$out/export/level$level" --level "$level" --protocol verified > "$out/export.txt"
done
for run in gpt-x claude-y llama-z; do
  for level in 1 2; do
    f="$out/export/level$level/$run/eval_results.json"
    [ -s "$f" ] || fail "missing $f"
    grep -q '"runtime_stats"' "$f" || fail "$f has no runtime_stats"
  done
done

"$kbv" export --db "$out/results.db" --out "$out/export-kbv" --level 1 --format kernelbench-verified > "$out/export-kbv.txt"
for f in "$out/export-kbv/gpt-x/eval_results.json" "$out/export-kbv/gpt-x/eval_results_hidden.json"; do
  [ -s "$f" ] || fail "missing $f"
  grep -q '"1_0": {' "$f" || fail "$f is not keyed {pid}_{sid}"
done
grep -q 'eval_results_hidden.json from verified' "$out/export-kbv.txt" || fail "export should name the hidden protocol: $(cat "$out/export-kbv.txt")"
if "$kbv" export --db "$out/results.db" --out "$out/x" --format kernelbench2 2> "$out/err3.txt"; then fail "unknown format must fail"; fi
grep -q "use kernelbench or kernelbench-verified" "$out/err3.txt" || fail "unhelpful format error: $(cat "$out/err3.txt")"

if "$kbv" report --db "$out/absent.db" > /dev/null 2> "$out/err.txt"; then fail "a missing DB must fail"; fi
grep -q 'cannot open results DB' "$out/err.txt" || fail "unhelpful error: $(cat "$out/err.txt")"
if "$kbv" report --db "$out/results.db" --protocol lenient > /dev/null 2> "$out/err2.txt"; then fail "unknown protocol must fail"; fi
grep -q "present: strict, verified, standard" "$out/err2.txt" || fail "error should list the protocols: $(cat "$out/err2.txt")"
echo "report CLI OK"
