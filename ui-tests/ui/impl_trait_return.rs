use hookpoint::extensible;

#[extensible]
pub fn words(text: String) -> impl Iterator<Item = String> {
    text.split_whitespace()
        .map(String::from)
        .collect::<Vec<_>>()
        .into_iter()
}

fn main() {}
