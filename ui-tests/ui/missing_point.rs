use hookpoint::extension;

#[extension(order = 10)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
