use hookpoint::extension;

#[extension(point = "greeting")]
fn greet(text: &String) {
    println!("{text}");
}

fn main() {}
