//! A body may return a borrow of a `&mut` argument, as the plain fn may; `&self` methods may
//! return borrows of `self`, and `&mut self` methods owned values or borrows of other arguments.
#![deny(warnings)]

use hookpoint::extensible;

#[extensible]
pub fn first_mut(v: &mut Vec<u32>) -> &mut u32 {
    &mut v[0]
}

#[extensible]
pub async fn first_mut_async(v: &mut Vec<u32>) -> &mut u32 {
    &mut v[0]
}

pub struct Counter {
    pub n: u32,
}

#[extensible]
impl Counter {
    #[extensible]
    pub fn get(&self) -> &u32 {
        &self.n
    }

    #[extensible]
    pub fn bump(&mut self) -> u32 {
        self.n += 1;
        self.n
    }

    #[extensible]
    pub fn pick<'a>(&mut self, text: &'a str) -> &'a str {
        self.n += 1;
        text
    }
}

fn main() {
    let mut v = vec![1, 2];
    *first_mut(&mut v) += 1;
    assert_eq!(v, [2, 2]);
    drop(first_mut_async(&mut v));
    let mut c = Counter { n: 0 };
    assert_eq!(c.bump(), 1);
    assert_eq!(*c.get(), 1);
    assert_eq!(c.pick("x"), "x");
}
