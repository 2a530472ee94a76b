use hookpoint::{CallArgs, extensible, extension};

#[extensible]
pub fn square(n: u64) -> u64 {
    n * n
}

// The around point is a wrap point: its extensions take the request and `next`.
#[extension(point = SQUARE_AROUND)]
fn plain(_req: &mut CallArgs<(u64,)>) {}

fn main() {}
