//! A test file named after a keyword: its crate is `r#async` to rustc, and `#[extensible]` points
//! must drop the raw-identifier prefix (`_functions/async/...`), as the documented rule says.

#![deny(warnings)]

use hookpoint::{CallStart, extensible, extension};

#[extensible]
pub fn one(x: i32) -> i32 {
    x + 1
}

/// A raw identifier as the fn name, too.
#[extensible]
pub fn r#match(x: i32) -> i32 {
    x * 2
}

pub struct r#Type;

#[extensible]
impl r#Type {
    #[extensible]
    pub fn r#loop(&self) -> u8 {
        1
    }
}

#[extension(point = MATCH_START)]
fn r#fn(call: &mut CallStart<(i32,), i32>) {
    call.args.0 += 10;
}

#[test]
fn point_names_drop_raw_identifier_prefixes_of_module_fn_and_type() {
    assert_eq!(ONE_START.name(), "_functions/async/one/start");
    assert_eq!(MATCH_END.name(), "_functions/async/match/end");
    assert_eq!(
        r#Type::LOOP_START.name(),
        "_functions/async/Type/loop/start"
    );
    assert_eq!(r#match(1), 22);
    assert_eq!(one(1), 2);
    assert_eq!(r#Type.r#loop(), 1);
}

#[test]
fn extension_names_drop_the_raw_identifier_prefix() {
    let points = hookpoint::introspect();
    let p = points
        .iter()
        .find(|p| p.name == "_functions/async/match/start")
        .expect("the point is listed");
    assert_eq!(p.extensions[0].name, "fn");
}
