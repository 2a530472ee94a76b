//! Runs with and without the `fs` feature (CI runs `cargo test -p hookpoint --no-default-features`):
//! dispatch reads the compiled-in table only, and works the same.

use hookpoint::{extensible, extension, point};

point! {
    /// A sync point.
    pub static COUNT: SyncPoint<Vec<u32>> = "static_build_count";
}

#[extension(point = COUNT, order = 2)]
fn second(v: &mut Vec<u32>) {
    v.push(2);
}

#[extension(point = COUNT, order = 1)]
fn first(v: &mut Vec<u32>) {
    v.push(1);
}

#[extension(point = "static_build_string")]
fn by_name(n: &mut u64) {
    *n += 1;
}

#[extensible]
fn double(n: u32) -> u32 {
    n * 2
}

#[extension(point = DOUBLE_END)]
fn plus_one(end: &mut hookpoint::CallEnd<u32>) {
    end.result += 1;
}

#[test]
fn typed_dispatch_runs_in_order() {
    let mut v = Vec::new();
    COUNT.call(&mut v).unwrap();
    assert_eq!(v, [1, 2]);
}

#[test]
fn string_dispatch_runs() {
    let mut n = 0u64;
    hookpoint::call_sync("static_build_string", &mut n).unwrap();
    assert_eq!(n, 1);
}

#[test]
fn extensible_end_rewrites_result() {
    assert_eq!(double(20), 41);
}

#[test]
fn registry_is_consistent() {
    hookpoint::validate().unwrap();
}
