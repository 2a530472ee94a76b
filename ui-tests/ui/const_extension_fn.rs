use hookpoint::extension;

#[extension(point = "greeting")]
const fn greet(text: &mut String) {
    let _ = text;
}

fn main() {}
