use hookpoint::extension;

#[extension(point = "greeting")]
fn greet() {}

fn main() {}
