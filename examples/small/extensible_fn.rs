//! `#[extensible]` gives a plain fn a start and an end point: `cargo run -p hookpoint-examples
//! --example extensible_fn`. A start extension may rewrite the arguments (or set a result, which
//! skips the body); an end extension sees and may rewrite the result.

use hookpoint::{CallEnd, CallStart, extensible, extension};

/// Prices an order of `items` units, in cents.
#[extensible]
pub fn price(items: u32) -> u64 {
    u64::from(items) * 250
}

/// Orders of ten or more are priced as if one were free.
#[extension(point = PRICE_START)]
fn one_free(call: &mut CallStart<(u32,), u64>) {
    if call.args.0 >= 10 {
        call.args.0 -= 1;
    }
}

/// Never below a minimum charge.
#[extension(point = PRICE_END)]
fn minimum(call: &mut CallEnd<u64>) {
    call.result = call.result.max(500);
}

fn main() {
    for items in [1, 4, 10] {
        println!("{items} items: {} cents", price(items));
    }
}
