//! Compile-fail cases of `#[extension]`, `#[extensible]` and `plugin!` (one file per rule, named after it)
//! and a few shapes that must compile. One `TestCases`, so trybuild runs one `cargo check`.

#[rustversion::attr(
    not(all(stable, since(1.95), before(1.96))),
    ignore = "ui .stderr files are blessed on rustc 1.95"
)]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("pass/*.rs");
}
