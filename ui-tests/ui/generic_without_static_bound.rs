use hookpoint::extensible;

#[extensible]
pub fn describe<T: std::fmt::Debug>(value: T) -> String {
    format!("{value:?}")
}

fn main() {}
