use hookpoint::extension;

const ORDER: i32 = 10;

#[extension(point = "greeting", order = ORDER)]
fn greet(text: &mut String) {
    text.push('!');
}

fn main() {}
