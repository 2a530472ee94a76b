//! `#[extensible]` adds no lint the user's code does not trigger, and keeps the body's inner
//! attributes: this file builds under `#![deny(warnings)]` (and clippy `-D warnings` in CI).

#![deny(warnings)]

use hookpoint::extensible;

#[extensible]
fn with_inner_attribute(x: u32) -> u32 {
    #![allow(unused_variables)]
    let unused = 5;
    x
}

#[extensible]
pub fn one(x: i32) -> i32 {
    x + 1
}

#[extensible]
pub async fn two(x: i32) -> i32 {
    x + 2
}

pub struct Counter {
    n: u32,
}

#[extensible]
impl Counter {
    #[extensible]
    pub fn get(&self) -> u32 {
        self.n
    }

    #[extensible]
    pub fn bump(&mut self) -> u32 {
        #![allow(clippy::let_and_return)]
        let n = self.n + 1;
        self.n = n;
        n
    }
}

#[test]
fn bodies_with_inner_attributes_and_single_expressions_run_unchanged() {
    assert_eq!(with_inner_attribute(3), 3);
    assert_eq!(one(1), 2);
    let mut c = Counter { n: 4 };
    assert_eq!(c.get(), 4);
    assert_eq!(c.bump(), 5);
    let two = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(two(1));
    assert_eq!(two, 3);
}
