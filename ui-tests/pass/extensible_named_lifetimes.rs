//! An `#[extensible]` fn with named lifetimes; extensions write them elided.
use hookpoint::{CallEnd, extensible, extension};

#[extensible]
pub fn longest<'a, 'b: 'a>(a: &'a str, b: &'b str) -> &'a str {
    if b.len() > a.len() { b } else { a }
}

#[extension(point = LONGEST_END)]
fn keep(end: &mut CallEnd<&str>) {
    assert!(!end.result.is_empty());
}

fn main() {
    let a = String::from("short");
    let b = String::from("longer");
    assert_eq!(longest(&a, &b), "longer");
}
