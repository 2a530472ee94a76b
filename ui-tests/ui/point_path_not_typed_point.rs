use hookpoint::extension;

const GREETING: &str = "greeting";

#[extension(point = GREETING)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
