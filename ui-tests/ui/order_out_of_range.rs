use hookpoint::extension;

#[extension(point = "greeting", order = 3000000000)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
