#!/usr/bin/env bash
# Renders the HTML report of a synthetic results DB in headless Chromium and checks that the
# PNG is not blank (many distinct colours: plots, tables, text).
# Usage: screenshot.sh KBV MAKE_REPORT_DB OUT_DIR   (exit 77 = skipped: no Chromium)
set -euo pipefail
kbv=$1 make_db=$2 out=$3
rm -rf "$out" && mkdir -p "$out"

browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  # scripts/setup.sh installs Chromium; CI must never pass this test without rendering.
  if [ -n "${CI:-}" ]; then echo "FAIL: no headless Chromium in CI (scripts/setup.sh installs it)"; exit 1; fi
  echo "SKIP: no headless Chromium (apt-get install chromium, or run scripts/setup.sh)"
  exit 77
fi

"$make_db" "$out/results.db" > /dev/null
"$kbv" report --db "$out/results.db" --html "$out/report.html" --quiet
png="$out/report.png"
# A private profile and no GPU: runs as root in a container, leaves nothing behind.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile" \
  --screenshot="$png" --window-size=1400,2000 "file://$out/report.html" > "$out/chromium.log" 2>&1 || {
  cat "$out/chromium.log" >&2
  echo "FAIL: chromium could not render the report" >&2
  exit 1
}
[ -s "$png" ] || { echo "FAIL: no screenshot at $png" >&2; exit 1; }

if ! command -v python3 > /dev/null 2>&1; then
  # No decoder: a blank 1400x2000 page compresses to a few KiB; the report is far larger.
  size=$(stat -c %s "$png")
  [ "$size" -gt 60000 ] || { echo "FAIL: the screenshot looks blank ($size bytes)" >&2; exit 1; }
  echo "screenshot OK (size check only, no python3): $png"
  exit 0
fi
# Decode the PNG (8-bit RGB/RGBA, non-interlaced: what Chromium writes) with the standard
# library only, and count distinct colours and non-white pixels.
python3 - "$png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, f"unsupported PNG: depth {depth} type {ctype}"
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = width * bpp
prev = bytearray(stride)
colours, non_white, rows = set(), 0, 0
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
    prev = line
    if y % 4 == 0:  # sample every 4th row and column: plenty for a blank check
        rows += 1
        for x in range(0, width, 4):
            px = bytes(line[x * bpp:x * bpp + 3])
            colours.add(px)
            if px != b"\xff\xff\xff" and px != b"\xfa\xfa\xfa":
                non_white += 1
share = non_white / (rows * ((width + 3) // 4))
print(f"{width}x{height}, {len(colours)} distinct colours, {share:.1%} non-background")
if len(colours) < 32 or share < 0.02:
    sys.exit("FAIL: the screenshot looks blank")
PY
echo "screenshot OK: $png"
