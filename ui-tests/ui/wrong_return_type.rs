use hookpoint::extension;

#[extension(point = "greeting")]
fn greet(text: &mut String) -> bool {
    text.push('!');
    true
}

#[extension(point = "greeting")]
fn check(text: &mut String) -> Result<(), std::fmt::Error> {
    text.push('?');
    Ok(())
}

fn main() {}
