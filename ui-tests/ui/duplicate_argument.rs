use hookpoint::extension;

#[extension(point = "greeting", order = 10, order = 20)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
