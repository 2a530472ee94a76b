use hookpoint::extension;

#[extension(point = "greeting", priority = 10)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
