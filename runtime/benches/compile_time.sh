#!/usr/bin/env bash
# Cold dev-build time of a user's crate with one point and one extension, three ways, in one run:
#   bare      the same program written directly on linkme (a hand-made distributed slice);
#   engine    on hookpoint with `default-features = false`;
#   defaults  on hookpoint with its default features.
# Each crate builds in a fresh target folder with the workspace's Cargo.lock (same versions), one
# after the other; a quiet machine matters (the figures are wall-clock). The slowest units of each
# build come from `cargo build --timings`. Usage: runtime/benches/compile_time.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
runs=${1:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

crate() { # name, dependencies, main.rs
    mkdir -p "$work/$1/src"
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n%s\n\n[workspace]\n' \
        "$1" "$2" >"$work/$1/Cargo.toml"
    printf '%s\n' "$3" >"$work/$1/src/main.rs"
    cp "$root/Cargo.lock" "$work/$1/"
}

linkme_version=$(sed -n 's/^linkme = "\(.*\)"/\1/p' Cargo.toml)
crate bare "linkme = \"$linkme_version\"" '
use linkme::distributed_slice;

#[distributed_slice]
static GREETING: [fn(&mut String)];

#[distributed_slice(GREETING)]
static ADD_NAME: fn(&mut String) = add_name;

fn add_name(text: &mut String) {
    text.push_str(", world");
}

fn main() {
    let mut text = String::from("hello");
    for f in GREETING {
        f(&mut text);
    }
    println!("{text}");
}'

hello_point='
hookpoint::point! {
    static GREETING: SyncPoint<String> = "greeting";
}

#[hookpoint::extension(point = GREETING)]
fn add_name(text: &mut String) {
    text.push_str(", world");
}

fn main() {
    let mut text = String::from("hello");
    GREETING.call(&mut text).expect("dispatch");
    println!("{text}");
}'
crate engine "hookpoint = { path = \"$root/runtime\", default-features = false }" "$hello_point"
crate defaults "hookpoint = { path = \"$root/runtime\" }" "$hello_point"

# The slowest units of the build in $1, from the data cargo's timings report embeds.
slowest() {
    python3 - "$1"/target/cargo-timings/cargo-timing.html <<'EOF'
import json, re, sys
html = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S).group(1))
units.sort(key=lambda u: -u["duration"])
print("    slowest: " + ", ".join(f'{u["name"]} {u["duration"]:.1f} s' for u in units[:5]))
EOF
}

declare -A total
for run in $(seq "$runs"); do
    for name in bare engine defaults; do
        rm -rf "$work/$name/target"
        start=$(date +%s.%N)
        (cd "$work/$name" && cargo build --quiet --timings 2>/dev/null)
        end=$(date +%s.%N)
        secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
        total[$name]=$secs
        syns=$(cd "$work/$name" && cargo tree -e normal,build --prefix none 2>/dev/null |
            sed -n 's/^syn v\([0-9]*\)\..*/\1/p' | sort -u | tr '\n' ' ')
        printf 'run %s  %-9s %6s s  %5sx of bare  syn majors: %s\n' "$run" "$name" "$secs" \
            "$(awk -v n="$secs" -v b="${total[bare]}" 'BEGIN { printf "%.1f", n / b }')" "${syns:-none}"
        slowest "$work/$name"
    done
done
