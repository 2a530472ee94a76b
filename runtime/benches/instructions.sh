#!/usr/bin/env bash
# Instructions per run of each dispatch benchmark case, counted by callgrind (valgrind), with the
# ratio to its baseline. Usage: runtime/benches/instructions.sh  (needs valgrind; release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(cargo bench -p hookpoint --bench instructions --no-run 2>&1 |
    sed -n 's/.*Executable benches\/instructions.rs (\(.*\))/\1/p' | tail -1)
[ -x "$bin" ] || { echo "could not build the instructions bench" >&2; exit 1; }
count() { # case n -> total instructions
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}
printf '%-42s %12s %14s\n' case instructions "vs baseline"
"$bin" --list | while read -r name _ baseline; do
    a=$(count "$name" 1000)
    b=$(count "$name" 11000)
    n=$(( (b - a) / 10000 ))
    echo "$name $n" >> "${TMPDIR:-/tmp}/hookpoint-instructions.$$"
    ratio=""
    if [ -n "${baseline:-}" ]; then
        group=${name%/*}
        base=$(grep "^$group/$baseline " "${TMPDIR:-/tmp}/hookpoint-instructions.$$" | cut -d' ' -f2)
        ratio=$(awk -v n="$n" -v b="$base" 'BEGIN { printf "%.2fx of %d", n / b, b }')
    fi
    printf '%-42s %12d %14s\n' "$name" "$n" "$ratio"
done
rm -f "${TMPDIR:-/tmp}/hookpoint-instructions.$$"
