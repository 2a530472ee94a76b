//! `after` / `before` take extension names as string literals.
use hookpoint::extension;

#[extension(point = "greeting", after = 3, before = [""])]
fn exclaim(text: &mut String) {
    text.push('!');
}

fn main() {}
