use hookpoint::extensible;

#[extensible]
pub fn shout(text: impl AsRef<str>) -> String {
    text.as_ref().to_uppercase()
}

fn main() {}
