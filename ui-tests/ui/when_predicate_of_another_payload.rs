//! A `when` predicate reads the extension's own payload type.
use hookpoint::extension;

fn is_long(n: &u64) -> bool {
    *n > 10
}

#[extension(point = "greeting", when = is_long)]
fn exclaim(text: &mut String) {
    text.push('!');
}

fn main() {}
