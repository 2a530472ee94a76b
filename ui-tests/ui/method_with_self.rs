use hookpoint::extension;

pub struct Greeter;

impl Greeter {
    #[extension(point = "greeting")]
    fn greet(&self, text: &mut String) {
        text.push('!');
    }
}

fn main() {}
