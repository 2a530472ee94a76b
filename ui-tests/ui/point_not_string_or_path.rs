use hookpoint::extension;

#[extension(point = 42)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
