use hookpoint::extensible;

#[extensible]
pub const fn answer() -> u32 {
    42
}

fn main() {}
